//! Ladders of the f32 neural-network map gates (activations, dropout scaling).

use super::harness::{ladder, Family, Rung};
use crate::neural_network::layers::activation::{Activation, CHEAP_MAP_F32, EXP_MAP_F32};
use crate::neural_network::layers::regularization::SpatialDropout2D;
use crate::neural_network::traits::Layer;
use ndarray::{Array2, ArrayD, IxDyn};
use std::hint::black_box;

/// An `n x 64` activation input spread over [-4, 4].
fn input(elems: usize) -> ArrayD<f32> {
    let d = 64;
    Array2::from_shape_fn((elems / d, d), |(i, j)| {
        ((i * d + j) as f32 * 0.37).sin() * 4.0
    })
    .into_dyn()
}

fn map_rungs(quick: bool, activation: Activation, sizes: &[usize]) -> Vec<Rung> {
    ladder(quick, sizes.iter().copied())
        .map(|n| {
            Rung::new(format!("{} n={n}", activation.name()), n, move || {
                let x = input(n);
                let mut y = x.clone();
                move || {
                    y.assign(&x);
                    activation.forward_in_place(black_box(&mut y)).unwrap();
                }
            })
        })
        .collect()
}

pub fn families(quick: bool) -> Vec<Family> {
    let cheap = [
        262_144usize,
        1_048_576,
        2_097_152,
        4_194_304,
        8_388_608,
        16_777_216,
    ];
    let exp = [16_384usize, 65_536, 131_072, 262_144, 1_048_576];
    // [batch, 64, 64, channels]: one factor per (sample, channel) broadcast over 4096 positions.
    let spatial_rungs = ladder(
        quick,
        [(4usize, 16usize), (8, 32), (16, 64), (32, 64), (64, 64)],
    )
    .map(|(batch, channels)| {
        let shape = [batch, 64, 64, channels];
        let n: usize = shape.iter().product();
        Rung::new(format!("spatial dropout 2d {shape:?}"), n, move || {
            let x = ArrayD::from_shape_fn(IxDyn(&shape), |i| (i[1] + i[3]) as f32 * 0.01);
            let mut layer = SpatialDropout2D::new(0.3, Vec::new())
                .unwrap()
                .with_random_state(7);
            move || {
                black_box(layer.forward(black_box(&x)).unwrap());
            }
        })
    })
    .collect();
    vec![
        Family {
            title: "f32 ReLU map (CHEAP_MAP_F32)".into(),
            gate: &CHEAP_MAP_F32,
            rungs: map_rungs(quick, Activation::ReLU, &cheap),
        },
        Family {
            title: "f32 sigmoid map (EXP_MAP_F32)".into(),
            gate: &EXP_MAP_F32,
            rungs: map_rungs(quick, Activation::Sigmoid, &exp),
        },
        Family {
            title: "f32 spatial dropout scaling (SPATIAL_DROPOUT_SCALE)".into(),
            gate: crate::gate::find_gate("elementwise", "spatial_dropout_scale")
                .expect("declared with SpatialDropout"),
            rungs: spatial_rungs,
        },
    ]
}
