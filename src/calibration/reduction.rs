//! Ladders of the reduction gates.

use super::harness::{by_index, ladders, Family, Rung};
use crate::math::distance::{self, SCAN_F64};
use crate::math::reduction::{self, SUM_F64};
use ndarray::Array1;

pub fn families(quick: bool) -> Vec<Family> {
    ladders![quick;
        "f64 gram XtX (SUM_F64)": &SUM_F64,
            [(1_024, 8), (4_096, 16), (16_384, 16), (65_536, 16), (262_144, 16)] => gram;
        "f64 sum (SUM_F64)": &SUM_F64,
            [16_384, 65_536, 131_072, 262_144, 524_288, 1_048_576, 3_000_000] => sum;
        "f64 column moments (SUM_F64)": &SUM_F64,
            [(4_096, 8), (16_384, 8), (32_768, 16), (65_536, 16), (262_144, 16)] => column_moments;
        "f64 distance scan (SCAN_F64)": &SCAN_F64,
            [(64, 64, 4), (128, 128, 8), (256, 256, 8), (512, 512, 8), (1024, 1024, 8)] => manhattan;
    ]
}

fn sum(n: usize) -> Rung {
    let x = move || Array1::from_shape_fn(n, |i| (i as f64 * 0.37).sin());
    Rung::on(format!("sum f64 n={n}"), n, x, |x| reduction::sum(x.view()))
}

fn column_moments((n, d): (usize, usize)) -> Rung {
    let x = move || by_index(n, d, |t| (t * 0.37).sin());
    Rung::on(format!("column moments {n}x{d}"), n * d, x, |x| {
        reduction::column_moments(x.view())
    })
}

fn manhattan((m, n, d): (usize, usize, usize)) -> Rung {
    let setup = move || {
        let a = by_index(m, d, |t| (t * 0.11).cos());
        let b = by_index(n, d, |t| (t * 0.23).sin());
        (a, b)
    };
    let label = format!("manhattan pairwise {m}x{n} d={d}");
    Rung::on(label, m * n * d, setup, |(a, b)| {
        distance::pairwise(a.view(), b.view(), distance::Metric::Manhattan).unwrap()
    })
}

fn gram((n, d): (usize, usize)) -> Rung {
    let x = move || by_index(n, d, |t| (t * 0.53).sin());
    Rung::on(format!("gram {n}x{d}"), n * d, x, |x| {
        crate::math::matmul::gram(x.view())
    })
}
