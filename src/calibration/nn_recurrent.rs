//! Ladder of the recurrent gate (`recurrent::parallel_min_flops`, work = FLOPs of the
//! per-step recurrent products): one training forward and backward of an LSTM over 10 steps
//! at batch 32 (two blocks of batch rows), units on both sides of the shipped 48_000_000.

use super::harness::{ladder, Family, Rung};
use crate::neural_network::layers::activation::Activation;
use crate::neural_network::layers::recurrent::LSTM;
use crate::neural_network::traits::Layer;
use ndarray::Array3;
use std::hint::black_box;

const BATCH: usize = 32;
const STEPS: usize = 10;
const FEATURES: usize = 8;

/// `[32, 10, 8]` through `LSTM(units)`: work = 2 * steps * batch * units * 4 units.
fn lstm_rungs(quick: bool) -> Vec<Rung> {
    ladder(quick, [8usize, 16, 32, 48, 64, 96, 128, 192, 256])
        .map(|units| {
            Rung::new(
                format!("LSTM({units}) on [{BATCH}, {STEPS}, {FEATURES}]"),
                2 * STEPS * BATCH * units * 4 * units,
                move || {
                    let x = Array3::from_shape_fn((BATCH, STEPS, FEATURES), |(b, t, f)| {
                        ((b * 7 + t * 3 + f) as f32 * 0.37).sin()
                    })
                    .into_dyn();
                    let mut layer = LSTM::new(FEATURES, units, Activation::Tanh)
                        .expect("valid dimensions")
                        .with_random_state(1);
                    let g = layer.forward(&x).expect("valid input").mapv(|v| 0.5 - v);
                    move || {
                        black_box(layer.forward(black_box(&x)).unwrap());
                        black_box(layer.backward(black_box(&g)).unwrap());
                    }
                },
            )
        })
        .collect()
}

pub fn families(quick: bool) -> Vec<Family> {
    let gate = crate::gate::find_gate("recurrent", "parallel_min_flops")
        .expect("declared by the recurrent engine");
    vec![Family {
        title: "LSTM batch 32 forward + backward (recurrent::parallel_min_flops)".into(),
        gate,
        rungs: lstm_rungs(quick),
    }]
}
