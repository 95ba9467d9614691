//! Ladders of the clustering scans behind `SCAN_F64`: the KMeans arg-min scan (the nearest-row
//! kernel of every Lloyd pass and `predict`), the DBSCAN neighbour scan (grid and product
//! screening) and the MeanShift distance-row scan (bandwidth estimation).

use super::harness::{ladder, Family, Rung};
use crate::machine_learning::meanshift;
use crate::math::{distance, radius};
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

pub fn families(quick: bool) -> Vec<Family> {
    let argmin_rungs = ladder(
        quick,
        [
            (256usize, 4usize, 8usize),
            (1024, 4, 8),
            (2048, 8, 8),
            (4096, 8, 8),
            (8192, 8, 8),
            (16_384, 16, 8),
            (100_000, 16, 8),
        ],
    )
    .map(|(n, d, k)| {
        Rung::new(
            format!("nearest of {k} centers, {n}x{d}"),
            n * k * d,
            move || {
                let x = blobs(n, d, k);
                let centers = blobs(k, d, k);
                move || {
                    black_box(distance::nearest_rows(black_box(x.view()), centers.view()).unwrap());
                }
            },
        )
    })
    .collect();
    // 2-D: the grid; eps gives a few dozen neighbours per point whatever n.
    let grid_rungs = ladder(quick, [250usize, 500, 1000, 2000, 5000, 10_000, 20_000])
        .map(|n| {
            let eps = 3.0 * (60.0 / n as f64).sqrt();
            radius_rung(
                format!("grid 2-D n={n} eps={eps:.3}"),
                move || blobs(n, 2, 3),
                eps,
            )
        })
        .collect();
    let screen_rungs = ladder(
        quick,
        [
            (100usize, 8usize),
            (200, 8),
            (400, 8),
            (800, 8),
            (1500, 16),
            (3000, 16),
        ],
    )
    .map(|(n, d)| {
        radius_rung(
            format!("product screening n={n} d={d}"),
            move || blobs(n, d, 4),
            2.0,
        )
    })
    .collect();
    let bandwidth_rungs = ladder(
        quick,
        [(100usize, 2usize), (250, 2), (500, 4), (1000, 4), (2000, 4)],
    )
    .map(|(n, d)| {
        Rung::new(
            format!("estimate_bandwidth n={n} d={d}"),
            // the k-nearest engine's work: finished and selected product entries
            n * n,
            move || {
                let x = blobs(n, d, 3);
                move || {
                    black_box(meanshift::estimate_bandwidth_all(black_box(&x), 0.3).unwrap());
                }
            },
        )
    })
    .collect();
    vec![
        Family {
            title: "KMeans arg-min scan (SCAN_F64)".into(),
            gate: &distance::SCAN_F64,
            rungs: argmin_rungs,
        },
        Family {
            title: "DBSCAN neighbour scan, grid (SCAN_F64)".into(),
            gate: &distance::SCAN_F64,
            rungs: grid_rungs,
        },
        Family {
            title: "DBSCAN neighbour scan, product screening (SCAN_F64)".into(),
            gate: &distance::SCAN_F64,
            rungs: screen_rungs,
        },
        Family {
            title: "MeanShift distance rows (SCAN_F64)".into(),
            gate: &distance::SCAN_F64,
            rungs: bandwidth_rungs,
        },
    ]
}
