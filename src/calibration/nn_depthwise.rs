//! Ladders of the direct depthwise convolution gate (forward and backward passes), batch 1 and
//! batch 8, 3x3 kernels over channels-last images.

use super::harness::{ladders, Family, Rung};
use crate::neural_network::layers::activation::Activation;
use crate::neural_network::layers::convolution::depthwise::engine::CONV_NAIVE_PARALLEL_MIN_FLOPS;
use crate::neural_network::layers::convolution::{DepthwiseConv2D, PaddingType};
use crate::neural_network::traits::Layer;
use ndarray::{ArrayD, IxDyn};

/// `(batch, side, channels)`: per-pass FLOPs `2 * batch * side² * channels * 9` from ~37k to ~75M.
const SHAPES: [(usize, usize, usize); 7] = [
    (1, 16, 8),
    (1, 32, 16),
    (1, 48, 32),
    (1, 64, 64),
    (8, 32, 32),
    (1, 112, 64),
    (8, 64, 64),
];

pub fn families(quick: bool) -> Vec<Family> {
    ladders![quick;
        "direct depthwise convolution forward (CONV_NAIVE_PARALLEL_MIN_FLOPS)":
            &CONV_NAIVE_PARALLEL_MIN_FLOPS, SHAPES => forward;
        "direct depthwise convolution backward (CONV_NAIVE_PARALLEL_MIN_FLOPS)":
            &CONV_NAIVE_PARALLEL_MIN_FLOPS, SHAPES => backward;
    ]
}

fn flops(batch: usize, side: usize, channels: usize) -> usize {
    2 * batch * side * side * channels * 9
}

fn layer_and_input(batch: usize, side: usize, channels: usize) -> (DepthwiseConv2D, ArrayD<f32>) {
    let shape = [batch, side, side, channels];
    let x = ArrayD::from_shape_fn(IxDyn(&shape), |i| {
        ((i[1] * 3 + i[2] + i[3]) % 13) as f32 * 0.1
    });
    let layer = DepthwiseConv2D::new((3, 3), shape.to_vec(), (1, 1), Activation::Linear)
        .unwrap()
        .with_padding(PaddingType::Same)
        .with_random_state(3);
    (layer, x)
}

fn forward((b, s, c): (usize, usize, usize)) -> Rung {
    let label = format!("depthwise 3x3 forward [{b}, {s}, {s}, {c}]");
    Rung::on(
        label,
        flops(b, s, c),
        move || layer_and_input(b, s, c),
        |(layer, x)| layer.predict(x).unwrap(),
    )
}

fn backward((b, s, c): (usize, usize, usize)) -> Rung {
    let setup = move || {
        let (mut layer, x) = layer_and_input(b, s, c);
        let out = layer.forward(&x).unwrap();
        let grad = ArrayD::from_elem(out.raw_dim(), 0.5f32);
        (layer, grad)
    };
    let label = format!("depthwise 3x3 backward [{b}, {s}, {s}, {c}]");
    Rung::on(label, flops(b, s, c), setup, |(layer, grad)| {
        layer.backward(grad).unwrap()
    })
}
