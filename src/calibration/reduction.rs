//! Ladders of the reduction gates.

use super::harness::{ladder, Family, Rung};
use crate::math::{distance, reduction};
use ndarray::{Array1, Array2};
use std::hint::black_box;

pub fn families(quick: bool) -> Vec<Family> {
    let sum_rungs = ladder(
        quick,
        [
            16_384usize,
            65_536,
            131_072,
            262_144,
            524_288,
            1_048_576,
            3_000_000,
        ],
    )
    .map(|n| {
        Rung::new(format!("sum f64 n={n}"), n, move || {
            let x = Array1::from_shape_fn(n, |i| (i as f64 * 0.37).sin());
            move || {
                black_box(reduction::sum(black_box(x.view())));
            }
        })
    })
    .collect();
    let moment_rungs = ladder(
        quick,
        [
            (4_096usize, 8usize),
            (16_384, 8),
            (32_768, 16),
            (65_536, 16),
            (262_144, 16),
        ],
    )
    .map(|(n, d)| {
        Rung::new(format!("column moments {n}x{d}"), n * d, move || {
            let x = Array2::from_shape_fn((n, d), |(i, j)| ((i * d + j) as f64 * 0.37).sin());
            move || {
                black_box(reduction::column_moments(black_box(x.view())));
            }
        })
    })
    .collect();
    let scan_rungs = ladder(
        quick,
        [
            (64usize, 64usize, 4usize),
            (128, 128, 8),
            (256, 256, 8),
            (512, 512, 8),
            (1024, 1024, 8),
        ],
    )
    .map(|(m, n, d)| {
        Rung::new(
            format!("manhattan pairwise {m}x{n} d={d}"),
            m * n * d,
            move || {
                let a = Array2::from_shape_fn((m, d), |(i, j)| ((i * d + j) as f64 * 0.11).cos());
                let b = Array2::from_shape_fn((n, d), |(i, j)| ((i * d + j) as f64 * 0.23).sin());
                move || {
                    black_box(
                        distance::pairwise(a.view(), b.view(), distance::Metric::Manhattan)
                            .unwrap(),
                    );
                }
            },
        )
    })
    .collect();
    let gram_rungs = ladder(
        quick,
        [
            (1_024usize, 8usize),
            (4_096, 16),
            (16_384, 16),
            (65_536, 16),
            (262_144, 16),
        ],
    )
    .map(|(n, d)| {
        Rung::new(format!("gram {n}x{d}"), n * d, move || {
            let x = Array2::from_shape_fn((n, d), |(i, j)| ((i * d + j) as f64 * 0.53).sin());
            move || {
                black_box(crate::math::matmul::gram(black_box(x.view())));
            }
        })
    })
    .collect();
    vec![
        Family {
            title: "f64 gram XtX (SUM_F64)".into(),
            gate: &reduction::SUM_F64,
            rungs: gram_rungs,
        },
        Family {
            title: "f64 sum (SUM_F64)".into(),
            gate: &reduction::SUM_F64,
            rungs: sum_rungs,
        },
        Family {
            title: "f64 column moments (SUM_F64)".into(),
            gate: &reduction::SUM_F64,
            rungs: moment_rungs,
        },
        Family {
            title: "f64 distance scan (SCAN_F64)".into(),
            gate: &distance::SCAN_F64,
            rungs: scan_rungs,
        },
    ]
}
