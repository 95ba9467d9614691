//! Ladders of the liblinear replica's side-by-side gate: a four-class one-vs-rest fit of the
//! primal squared hinge (TRON, one problem per class), and a binary fit beside its rounding
//! probe (the LinearSVC door's pair).

use super::harness::{ladders, Family, Rung};
use crate::machine_learning::sklearn_liblinear::{
    train, train_pair, Rows, Solver, TrainSettings, SIDE_BY_SIDE_MIN_ENTRIES,
};

/// `n x d` dense rows (splitmix noise in [-1, 1), bias 1) and `classes` labels that the
/// first columns decide up to noise.
fn problem(n: usize, d: usize, classes: i32) -> (Rows<'static>, Vec<i32>, Vec<f64>) {
    let noise = |i: usize| {
        let mut z = (i as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) as f64 / 2f64.powi(63) - 1.0
    };
    let x: Vec<f64> = (0..n * d).map(noise).collect();
    let y = (0..n)
        .map(|r| {
            let s = x[r * d] + 0.5 * x[r * d + 1] + 0.3 * noise(n * d + r);
            ((s + 1.5) / 3.0 * classes as f64).clamp(0.0, (classes - 1) as f64) as i32
        })
        .collect();
    (Rows::from_dense(&x, n, d, 1.0).unwrap(), y, x)
}

fn settings() -> TrainSettings<'static> {
    TrainSettings {
        solver: Solver::SquaredHingePrimal,
        eps: 1e-4,
        c: 1.0,
        class_weight: &[],
        max_iter: 1000,
        seed: 0,
    }
}

fn one_vs_rest((n, d): (usize, usize)) -> Rung {
    Rung::on(
        format!("4-class TRON fit {n}x{d}"),
        (n * (d + 1)) * 4,
        move || problem(n, d, 4),
        |(rows, y, _)| train(rows, y, &vec![1.0; y.len()], &settings()).unwrap(),
    )
}

fn beside_probe((n, d): (usize, usize)) -> Rung {
    Rung::on(
        format!("TRON fit and its probe {n}x{d}"),
        (n * (d + 1)) * 2,
        move || {
            let (rows, y, x) = problem(n, d, 2);
            let moved: Vec<f64> = x.iter().map(|v| v * (1.0 + 4.0 * f64::EPSILON)).collect();
            (rows, Rows::from_dense(&moved, n, d, 1.0).unwrap(), y)
        },
        |(rows, moved, y)| train_pair(rows, moved, y, &vec![1.0; y.len()], &settings()),
    )
}

pub fn families(quick: bool) -> Vec<Family> {
    ladders![quick;
        "liblinear one-vs-rest TRON (SIDE_BY_SIDE_MIN_ENTRIES)": &SIDE_BY_SIDE_MIN_ENTRIES,
            [(8, 2), (16, 4), (64, 8), (256, 8), (2_048, 16), (8_192, 32), (32_768, 32)] => one_vs_rest;
        "liblinear fit beside its probe (SIDE_BY_SIDE_MIN_ENTRIES)": &SIDE_BY_SIDE_MIN_ENTRIES,
            [(8, 2), (16, 4), (64, 8), (256, 8), (2_048, 16), (8_192, 32), (32_768, 32)] => beside_probe;
    ]
}
