//! Ladders of the clustering scans behind `SCAN_F64`: the KMeans arg-min scan (the nearest-row
//! kernel of every Lloyd pass and `predict`), the DBSCAN neighbour scan (grid and product
//! screening) and the MeanShift distance-row scan (bandwidth estimation).

use super::harness::{ladders, Family, Rung};
use crate::machine_learning::meanshift;
use crate::math::distance::{self, SCAN_F64};
use crate::math::radius;
use ndarray::Array2;
use std::hint::black_box;

/// Deterministic points: `groups` blobs of spread ~1 on a ring of radius 10, plus a scramble.
fn blobs(n: usize, d: usize, groups: usize) -> Array2<f64> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    Array2::from_shape_fn((n, d), |(i, j)| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let noise = ((state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0;
        let g = (i % groups) as f64;
        let angle = g * std::f64::consts::TAU / groups as f64 + j as f64;
        10.0 * angle.cos() + noise
    })
}

pub fn families(quick: bool) -> Vec<Family> {
    ladders![quick;
        "KMeans arg-min scan (SCAN_F64)": &SCAN_F64,
            [(256, 4, 8), (1024, 4, 8), (2048, 8, 8), (4096, 8, 8), (8192, 8, 8), (16_384, 16, 8),
             (100_000, 16, 8)] => nearest_center;
        "DBSCAN neighbour scan, grid (SCAN_F64)": &SCAN_F64,
            [250, 500, 1000, 2000, 5000, 10_000, 20_000] => grid;
        "DBSCAN neighbour scan, product screening (SCAN_F64)": &SCAN_F64,
            [(100, 8), (200, 8), (400, 8), (800, 8), (1500, 16), (3000, 16)] => screening;
        "MeanShift distance rows (SCAN_F64)": &SCAN_F64,
            [(100, 2), (250, 2), (500, 4), (1000, 4), (2000, 4)] => bandwidth;
    ]
}

fn nearest_center((n, d, k): (usize, usize, usize)) -> Rung {
    let label = format!("nearest of {k} centers, {n}x{d}");
    let setup = move || (blobs(n, d, k), blobs(k, d, k));
    Rung::on(label, n * k * d, setup, |(x, centers)| {
        distance::nearest_rows(x.view(), centers.view()).unwrap()
    })
}

/// 2-D: the grid; eps gives a few dozen neighbours per point whatever n.
fn grid(n: usize) -> Rung {
    let eps = 3.0 * (60.0 / n as f64).sqrt();
    radius_rung(
        format!("grid 2-D n={n} eps={eps:.3}"),
        move || blobs(n, 2, 3),
        eps,
    )
}

fn screening((n, d): (usize, usize)) -> Rung {
    radius_rung(
        format!("product screening n={n} d={d}"),
        move || blobs(n, d, 4),
        2.0,
    )
}

/// A DBSCAN-style radius scan of `x`; its work is the scan's own estimate.
fn radius_rung(label: String, x: impl FnOnce() -> Array2<f64> + 'static, eps: f64) -> Rung {
    Rung::sized(label, move || {
        let x = x();
        let work = radius::scan_work(x.view(), eps, distance::Metric::Euclidean);
        (work, move || {
            black_box(
                radius::radius_neighbourhoods(
                    black_box(x.view()),
                    eps,
                    distance::Metric::Euclidean,
                    5,
                )
                .unwrap(),
            );
        })
    })
}

fn bandwidth((n, d): (usize, usize)) -> Rung {
    let label = format!("estimate_bandwidth n={n} d={d}");
    // the k-nearest engine's work: finished and selected product entries
    Rung::on(
        label,
        n * n,
        move || blobs(n, d, 3),
        |x| meanshift::estimate_bandwidth_all(x, 0.3).unwrap(),
    )
}
