//! Ladder of the exp reduction of the logistic loss (`tuning::reduction::exp_reduce`).

use crate::harness::{Family, Rung};
use rustyml::math::losses;
use std::hint::black_box;

pub fn families() -> Vec<Family> {
    let binary = [4_096usize, 8_192, 16_384, 32_768, 65_536, 131_072, 524_288]
        .into_iter()
        .map(|n| {
            let z: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin() * 6.0).collect();
            let y: Vec<f64> = (0..n).map(|i| (i % 2) as f64).collect();
            let mut g = vec![0.0; n];
            Rung::new(format!("logistic loss+grad n={n}"), n, move || {
                black_box(losses::logistic_loss_grad(black_box(&z), &y, &mut g));
            })
        })
        .collect();
    let softmax = [
        (1_024usize, 10usize),
        (2_048, 10),
        (4_096, 8),
        (8_192, 4),
        (8_192, 10),
        (32_768, 10),
    ]
    .into_iter()
    .map(|(n, k)| {
        let z: Vec<f64> = (0..n * k).map(|i| (i as f64 * 0.11).cos() * 4.0).collect();
        let labels: Vec<usize> = (0..n).map(|i| i % k).collect();
        let mut g = vec![0.0; n * k];
        Rung::new(format!("softmax loss+grad {n}x{k}"), n * k, move || {
            black_box(losses::softmax_loss_grad(black_box(&z), k, &labels, &mut g));
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
