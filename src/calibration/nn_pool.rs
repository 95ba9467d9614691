//! Ladders of the pooling gate (`pool::parallel_min_ops`, work = window taps): one training
//! forward and backward of a 2x2 max pooling and of a global average pooling at batch 1, at
//! sizes on both sides of the shipped 12_000.

use super::harness::{ladders, Family, Rung};
use crate::neural_network::layers::pooling::{GlobalAveragePooling2D, MaxPooling2D};
use crate::neural_network::traits::Layer;
use ndarray::{ArrayD, Dimension, IxDyn};

pub fn families(quick: bool) -> Vec<Family> {
    let gate = crate::gate::find_gate("pool", "parallel_min_ops").expect("declared by the engine");
    ladders![quick;
        // `[1, side, side, channels]` through 2x2 max pooling: work = side^2 * channels taps.
        "MaxPooling2D 2x2 forward + backward (pool::parallel_min_ops)": gate,
            [(16, 8), (16, 16), (24, 16), (32, 16), (48, 16), (64, 32), (128, 64)]
            => |(side, channels)| pooling_rung("max 2x2", side, channels, |shape| {
                MaxPooling2D::new((2, 2), shape.to_vec()).unwrap()
            });
        // `[1, side, side, channels]` through global average pooling (one cell, channel slices).
        "GlobalAveragePooling2D batch 1 forward + backward (pool::parallel_min_ops)": gate,
            [(8, 64), (16, 64), (16, 128), (32, 128), (32, 512), (64, 512)]
            => |(side, channels)| pooling_rung("global avg", side, channels, |_| {
                GlobalAveragePooling2D::new()
            });
    ]
}

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

/// A rung timing one forward and backward of `layer` on a `[1, side, side, channels]` input.
fn pooling_rung<L: Layer + 'static>(
    what: &str,
    side: usize,
    channels: usize,
    layer: impl FnOnce(&[usize]) -> L + 'static,
) -> Rung {
    let shape = vec![1, side, side, channels];
    let label = format!("{what} {shape:?}");
    let setup = move || {
        let x = input(&shape);
        let mut layer = layer(&shape);
        let g = layer.forward(&x).unwrap().mapv(|v| v * 0.5 + 0.1);
        (layer, x, g)
    };
    Rung::on(label, side * side * channels, setup, |(layer, x, g)| {
        layer.forward(x).unwrap();
        layer.backward(g).unwrap()
    })
}
