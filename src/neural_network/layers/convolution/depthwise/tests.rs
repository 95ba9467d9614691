//! The family's layers against central differences, fused against unfused activations,
//! serial against parallel runs, and Keras's shapes, counts and weight containers.

use super::engine::CONV_NAIVE_PARALLEL_MIN_FLOPS;
use super::{DepthwiseConv1D, DepthwiseConv2D, PaddingType, SeparableConv1D, SeparableConv2D};
use crate::error::Error;
use crate::gate::serial_and_parallel;
use crate::neural_network::layers::activation::Activation;
use crate::neural_network::layers::gradient_check::check_layer_gradients;
use crate::neural_network::layers::layer_weight::LayerWeight;
use crate::neural_network::layers::TrainingParameters;
use crate::neural_network::traits::Layer;
use crate::neural_network::Tensor;
use ndarray::{Array1, Dimension, IxDyn};

fn ramp(shape: &[usize], scale: f32) -> Tensor {
    Tensor::from_shape_fn(IxDyn(shape), |i| {
        let k: usize = i
            .slice()
            .iter()
            .enumerate()
            .map(|(a, &v)| v * (a + 3))
            .sum();
        ((k * 7 % 19) as f32 - 9.0) * scale
    })
}

/// Every input and parameter gradient against central differences. h balances truncation
/// (smooth activations, O(h²)) against f32 rounding of the outputs (~eps·Σ|c·out| / h); the
/// bound is that rounding for these sizes.
fn check_gradients(layer: &mut dyn Layer, x: &Tensor) {
    let upstream = |shape: &[usize]| ramp(shape, 0.1).mapv(|v| v + 1.05);
    let grads = check_layer_gradients(layer, x, upstream, 1e-2, |_| 3e-3);
    assert!(!grads.is_empty());
}

#[test]
fn depthwise_gradients_match_central_differences() {
    for (pad, stride, dil, dm) in [
        (PaddingType::Valid, 1, 1, 1),
        (PaddingType::Same, 2, 1, 2),
        (PaddingType::Same, 1, 2, 3),
    ] {
        let mut l = DepthwiseConv1D::new(3, vec![2, 9, 2], stride, Activation::Tanh)
            .unwrap()
            .with_padding(pad)
            .with_dilation_rate(dil)
            .unwrap()
            .with_depth_multiplier(dm)
            .unwrap()
            .with_random_state(4);
        check_gradients(&mut l, &ramp(&[2, 9, 2], 0.1));
        let mut l =
            DepthwiseConv2D::new((3, 2), vec![1, 6, 5, 2], (stride, 1), Activation::Sigmoid)
                .unwrap()
                .with_padding(pad)
                .with_dilation_rate((dil, 1))
                .unwrap()
                .with_depth_multiplier(dm)
                .unwrap()
                .with_random_state(5);
        check_gradients(&mut l, &ramp(&[1, 6, 5, 2], 0.1));
    }
}

#[test]
fn separable_gradients_match_central_differences() {
    for (pad, stride, dil, dm) in [
        (PaddingType::Valid, 1, 1, 1),
        (PaddingType::Same, 2, 1, 2),
        (PaddingType::Same, 1, 2, 2),
    ] {
        let mut l = SeparableConv1D::new(3, 3, vec![2, 9, 2], stride, dm, Activation::Tanh)
            .unwrap()
            .with_padding(pad)
            .with_dilation_rate(dil)
            .unwrap()
            .with_random_state(6);
        check_gradients(&mut l, &ramp(&[2, 9, 2], 0.1));
        let mut l = SeparableConv2D::new(
            2,
            (2, 3),
            vec![1, 5, 6, 2],
            (1, stride),
            dm,
            // smooth: a (Leaky)ReLU kink within h of an output breaks the difference quotient
            Activation::Sigmoid,
        )
        .unwrap()
        .with_padding(pad)
        .with_dilation_rate((1, dil))
        .unwrap()
        .with_random_state(7);
        check_gradients(&mut l, &ramp(&[1, 5, 6, 2], 0.1));
    }
}

/// The pointwise stage fuses (Leaky)ReLU into the product: the same bits as the linear
/// layer's output passed through the activation afterwards.
#[test]
fn fused_leaky_relu_equals_linear_then_activation() {
    let make = |act| {
        SeparableConv2D::new(3, (2, 2), vec![2, 5, 5, 2], (1, 1), 2, act)
            .unwrap()
            .with_random_state(8)
    };
    let x = ramp(&[2, 5, 5, 2], 0.1);
    let slope = 0.2;
    let leaky = make(Activation::LeakyReLU {
        negative_slope: slope,
    })
    .predict(&x)
    .unwrap();
    let linear = make(Activation::Linear).predict(&x).unwrap();
    let want = linear.mapv(|v| if v > 0.0 { v } else { v * slope });
    assert_eq!(bits(&leaky), bits(&want));
}

fn bits(t: &Tensor) -> Vec<u32> {
    t.iter().map(|v| v.to_bits()).collect()
}

/// Forward, input gradient and every parameter gradient, at batch 1 and 3.
fn run(layer: &mut dyn Layer, x: &Tensor) -> (Vec<u32>, Vec<u32>, Vec<Vec<u32>>) {
    let out = layer.forward(x).unwrap();
    let dx = layer.backward(&ramp(out.shape(), 0.05)).unwrap();
    let params = layer
        .parameters()
        .iter()
        .map(|p| p.grad.iter().map(|v| v.to_bits()).collect())
        .collect();
    (bits(&out), bits(&dx), params)
}

#[test]
fn gate_never_changes_a_bit() {
    for batch in [1, 3] {
        let x1 = ramp(&[batch, 300, 8], 0.1);
        let x2 = ramp(&[batch, 24, 20, 6], 0.1);
        let (s, p) = serial_and_parallel(&CONV_NAIVE_PARALLEL_MIN_FLOPS, || {
            let mut a = DepthwiseConv1D::new(5, vec![batch, 300, 8], 2, Activation::ReLU)
                .unwrap()
                .with_depth_multiplier(2)
                .unwrap()
                .with_padding(PaddingType::Same)
                .with_random_state(1);
            let mut b =
                DepthwiseConv2D::new((3, 3), vec![batch, 24, 20, 6], (1, 1), Activation::Tanh)
                    .unwrap()
                    .with_random_state(2);
            let mut c = SeparableConv1D::new(7, 5, vec![batch, 300, 8], 1, 2, Activation::Linear)
                .unwrap()
                .with_random_state(3);
            let mut d = SeparableConv2D::new(
                5,
                (3, 3),
                vec![batch, 24, 20, 6],
                (2, 2),
                1,
                Activation::ReLU,
            )
            .unwrap()
            .with_padding(PaddingType::Same)
            .with_random_state(4);
            [
                run(&mut a, &x1),
                run(&mut b, &x2),
                run(&mut c, &x1),
                run(&mut d, &x2),
            ]
        });
        assert_eq!(s, p, "batch {batch}");
    }
}

#[test]
fn shapes_counts_and_weight_containers_follow_keras() {
    let l = SeparableConv2D::new(4, (3, 3), vec![2, 8, 8, 3], (2, 2), 2, Activation::Linear)
        .unwrap()
        .with_padding(PaddingType::Same);
    assert_eq!(l.output_shape(), "(2, 4, 4, 4)");
    assert_eq!(
        l.param_count(),
        TrainingParameters::Trainable(3 * 3 * 3 * 2 + 6 * 4 + 4)
    );
    let LayerWeight::SeparableConv2D(w) = l.get_weights() else {
        panic!("wrong container")
    };
    assert_eq!(w.pointwise_weight.shape(), &[1, 1, 6, 4]);
    let l = DepthwiseConv2D::new((3, 3), vec![1, 9, 9, 2], (1, 1), Activation::Linear)
        .unwrap()
        .with_dilation_rate((2, 2))
        .unwrap()
        .with_use_bias(false);
    assert_eq!(l.output_shape(), "(1, 5, 5, 2)");
    assert_eq!(l.param_count(), TrainingParameters::Trainable(18));
    // a dilated span wider than the input is refused when set
    assert!(matches!(
        DepthwiseConv1D::new(3, vec![1, 4, 1], 1, Activation::Linear)
            .unwrap()
            .with_dilation_rate(2),
        Err(Error::InvalidInput(_))
    ));
}

#[test]
fn no_bias_layers_ignore_the_bias_and_train_only_their_kernels() {
    let make = |use_bias| {
        SeparableConv1D::new(2, 3, vec![1, 6, 2], 1, 1, Activation::Linear)
            .unwrap()
            .with_random_state(9)
            .with_use_bias(use_bias)
    };
    let (mut without, with) = (make(false), make(true));
    let (dw, pw) = match without.get_weights() {
        LayerWeight::SeparableConv1D(w) => (
            w.depthwise_weight.into_owned(),
            w.pointwise_weight.into_owned(),
        ),
        _ => panic!("wrong container"),
    };
    without
        .set_weights(dw, pw, Array1::from_elem(2, 5.0))
        .unwrap();
    let x = ramp(&[1, 6, 2], 0.1);
    let y = without.forward(&x).unwrap();
    assert_eq!(bits(&y), bits(&with.predict(&x).unwrap()));
    without.backward(&Tensor::ones(y.raw_dim())).unwrap();
    assert_eq!(without.parameters().len(), 2);
}

/// The paths the family had before it moved into this folder name the same items.
#[test]
fn former_paths_name_the_same_items() {
    use crate::neural_network::layers::convolution as conv;
    use ndarray::{Ix3, Ix4};
    use std::any::TypeId;
    assert_eq!(
        TypeId::of::<conv::depthwise_common::DepthwiseConv<Ix4>>(),
        TypeId::of::<conv::depthwise_conv_2d::DepthwiseConv2D>()
    );
    assert_eq!(
        TypeId::of::<conv::depthwise_common::SeparableConv<Ix3>>(),
        TypeId::of::<conv::separable_conv_1d::SeparableConv1D>()
    );
    assert_eq!(
        TypeId::of::<conv::depthwise_common::DepthwiseStage<Ix3>>(),
        TypeId::of::<super::DepthwiseStage<Ix3>>()
    );
    assert_eq!(
        TypeId::of::<conv::depthwise_engine::DepthwiseGeometry>(),
        TypeId::of::<super::engine::DepthwiseGeometry>()
    );
}
