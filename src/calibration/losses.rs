//! Ladder of the exp reduction of the logistic loss (`tuning::reduction::exp_reduce`).

use super::harness::{ladder, Family, Rung};
use crate::math::losses;
use std::hint::black_box;

pub fn families(quick: bool) -> Vec<Family> {
    let binary = ladder(
        quick,
        [4_096usize, 8_192, 16_384, 32_768, 65_536, 131_072, 524_288],
    )
    .map(|n| {
        Rung::new(format!("logistic loss+grad n={n}"), n, move || {
            let z: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin() * 6.0).collect();
            let y: Vec<f64> = (0..n).map(|i| (i % 2) as f64).collect();
            let mut g = vec![0.0; n];
            move || {
                black_box(losses::logistic_loss_grad(black_box(&z), &y, &mut g));
            }
        })
    })
    .collect();
    let softmax = ladder(
        quick,
        [
            (1_024usize, 10usize),
            (2_048, 10),
            (4_096, 8),
            (8_192, 4),
            (8_192, 10),
            (32_768, 10),
        ],
    )
    .map(|(n, k)| {
        Rung::new(format!("softmax loss+grad {n}x{k}"), n * k, move || {
            let z: Vec<f64> = (0..n * k).map(|i| (i as f64 * 0.11).cos() * 4.0).collect();
            let labels: Vec<usize> = (0..n).map(|i| i % k).collect();
            let mut g = vec![0.0; n * k];
            move || {
                black_box(losses::softmax_loss_grad(black_box(&z), k, &labels, &mut g));
            }
        })
    })
    .collect();
    vec![
        Family {
            title: "logistic loss (EXP_REDUCE)".into(),
            gate: &losses::EXP_REDUCE,
            rungs: binary,
        },
        Family {
            title: "softmax cross-entropy (EXP_REDUCE)".into(),
            gate: &losses::EXP_REDUCE,
            rungs: softmax,
        },
    ]
}
