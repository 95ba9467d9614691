//! Ladder of the exp reduction of the logistic loss (`tuning::reduction::exp_reduce`).

use super::harness::{ladders, Family, Rung};
use crate::math::losses::{self, EXP_REDUCE};

pub fn families(quick: bool) -> Vec<Family> {
    ladders![quick;
        "logistic loss (EXP_REDUCE)": &EXP_REDUCE,
            [4_096, 8_192, 16_384, 32_768, 65_536, 131_072, 524_288] => logistic;
        "softmax cross-entropy (EXP_REDUCE)": &EXP_REDUCE,
            [(1_024, 10), (2_048, 10), (4_096, 8), (8_192, 4), (8_192, 10), (32_768, 10)] => softmax;
    ]
}

fn logistic(n: usize) -> Rung {
    let setup = move || {
        let z: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin() * 6.0).collect();
        let y: Vec<f64> = (0..n).map(|i| (i % 2) as f64).collect();
        (z, y, vec![0.0; n])
    };
    Rung::on(
        format!("logistic loss+grad n={n}"),
        n,
        setup,
        |(z, y, g)| losses::logistic_loss_grad(z, y, g),
    )
}

fn softmax((n, k): (usize, usize)) -> Rung {
    let setup = move || {
        let z: Vec<f64> = (0..n * k).map(|i| (i as f64 * 0.11).cos() * 4.0).collect();
        let labels: Vec<usize> = (0..n).map(|i| i % k).collect();
        (z, labels, vec![0.0; n * k])
    };
    Rung::on(
        format!("softmax loss+grad {n}x{k}"),
        n * k,
        setup,
        move |(z, labels, g)| losses::softmax_loss_grad(z, k, labels, g),
    )
}
