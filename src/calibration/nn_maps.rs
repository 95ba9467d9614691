//! Ladders of the f32 neural-network map gates (activations, dropout scaling).

use super::harness::{ladders, Family, Rung, MEMORY_BOUND_SIZES};
use crate::neural_network::layers::activation::{Activation, CHEAP_MAP_F32, EXP_MAP_F32};
use crate::neural_network::layers::regularization::SpatialDropout2D;
use crate::neural_network::traits::Layer;
use ndarray::{Array2, ArrayD, IxDyn};

/// An `n x 64` activation input spread over [-4, 4].
fn input(elems: usize) -> ArrayD<f32> {
    let d = 64;
    Array2::from_shape_fn((elems / d, d), |(i, j)| {
        ((i * d + j) as f32 * 0.37).sin() * 4.0
    })
    .into_dyn()
}

fn map(activation: Activation) -> impl FnMut(usize) -> Rung {
    move |n| {
        Rung::map_in_place(
            format!("{} n={n}", activation.name()),
            n,
            move || input(n),
            move |y| activation.forward_in_place(y).unwrap(),
        )
    }
}

/// `[batch, 64, 64, channels]`: one factor per (sample, channel) broadcast over 4096 positions.
fn spatial_dropout((batch, channels): (usize, usize)) -> Rung {
    let shape = [batch, 64, 64, channels];
    let n: usize = shape.iter().product();
    let setup = move || {
        let x = ArrayD::from_shape_fn(IxDyn(&shape), |i| (i[1] + i[3]) as f32 * 0.01);
        let layer = SpatialDropout2D::new(0.3, Vec::new())
            .unwrap()
            .with_random_state(7);
        (layer, x)
    };
    Rung::on(
        format!("spatial dropout 2d {shape:?}"),
        n,
        setup,
        |(layer, x)| layer.forward(x).unwrap(),
    )
}

pub fn families(quick: bool) -> Vec<Family> {
    ladders![quick;
        "f32 ReLU map (CHEAP_MAP_F32)": &CHEAP_MAP_F32, MEMORY_BOUND_SIZES => map(Activation::ReLU);
        "f32 sigmoid map (EXP_MAP_F32)": &EXP_MAP_F32,
            [16_384, 65_536, 131_072, 262_144, 1_048_576] => map(Activation::Sigmoid);
        "f32 spatial dropout scaling (SPATIAL_DROPOUT_SCALE)":
            crate::gate::find_gate("elementwise", "spatial_dropout_scale")
                .expect("declared with SpatialDropout"),
            [(4, 16), (8, 32), (16, 64), (32, 64), (64, 64)] => spatial_dropout;
    ]
}
