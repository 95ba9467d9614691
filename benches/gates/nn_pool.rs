//! Ladders of the pooling gate (`pool::parallel_min_ops`, work = window taps): one training
//! forward and backward of a 2x2 max pooling and of a global average pooling at batch 1, at
//! sizes on both sides of the shipped 12_000.

use crate::harness::{Family, Rung};
use ndarray::{ArrayD, Dimension, IxDyn};
use rustyml::neural_network::layers::pooling::{GlobalAveragePooling2D, MaxPooling2D};
use rustyml::neural_network::traits::Layer;
use std::hint::black_box;

fn input(shape: &[usize]) -> ArrayD<f32> {
    ArrayD::from_shape_fn(IxDyn(shape), |i| {
        (i.slice()
            .iter()
            .enumerate()
            .map(|(k, &v)| (k + 1) * v)
            .sum::<usize>() as f32
            * 0.37)
            .sin()
    })
}

/// `[1, side, side, channels]` through 2x2 max pooling: work = side^2 * channels taps.
fn max_rungs() -> Vec<Rung> {
    [
        (16usize, 8usize),
        (16, 16),
        (24, 16),
        (32, 16),
        (48, 16),
        (64, 32),
        (128, 64),
    ]
    .into_iter()
    .map(|(side, channels)| {
        let shape = vec![1, side, side, channels];
        let x = input(&shape);
        let mut layer = MaxPooling2D::new((2, 2), shape.clone()).unwrap();
        let g = layer.forward(&x).unwrap().mapv(|v| v * 0.5 + 0.1);
        Rung::new(
            format!("max 2x2 {shape:?}"),
            side * side * channels,
            move || {
                black_box(layer.forward(black_box(&x)).unwrap());
                black_box(layer.backward(black_box(&g)).unwrap());
            },
        )
    })
    .collect()
}

/// `[1, side, side, channels]` through global average pooling (one cell, channel slices).
fn global_rungs() -> Vec<Rung> {
    [
        (8usize, 64usize),
        (16, 64),
        (16, 128),
        (32, 128),
        (32, 512),
        (64, 512),
    ]
    .into_iter()
    .map(|(side, channels)| {
        let shape = vec![1, side, side, channels];
        let x = input(&shape);
        let mut layer = GlobalAveragePooling2D::new();
        let g = layer.forward(&x).unwrap().mapv(|v| v * 0.5 + 0.1);
        Rung::new(
            format!("global avg {shape:?}"),
            side * side * channels,
            move || {
                black_box(layer.forward(black_box(&x)).unwrap());
                black_box(layer.backward(black_box(&g)).unwrap());
            },
        )
    })
    .collect()
}

pub fn families() -> Vec<Family> {
    let gate =
        rustyml::gate::find_gate("pool", "parallel_min_ops").expect("declared by the engine");
    vec![
        Family {
            title: "MaxPooling2D 2x2 forward + backward (pool::parallel_min_ops)".into(),
            gate,
            rungs: max_rungs(),
        },
        Family {
            title: "GlobalAveragePooling2D batch 1 forward + backward (pool::parallel_min_ops)"
                .into(),
            gate,
            rungs: global_rungs(),
        },
    ]
}
