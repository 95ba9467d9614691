//! Ladders of the metrics gates.

use super::harness::{ladder, Family, Rung};
use crate::metrics::checked::clustering::{self, SilhouetteMetric};
use ndarray::{Array1, Array2};
use std::hint::black_box;

pub fn families(quick: bool) -> Vec<Family> {
    let rungs = ladder(quick, [128usize, 256, 384, 512, 768, 1024, 2048])
        .map(|n| {
            Rung::new(format!("silhouette {n}x8, 5 clusters"), n * n, move || {
                let x = Array2::from_shape_fn((n, 8), |(i, j)| ((i * 8 + j) as f64 * 0.37).sin());
                let labels = Array1::from_shape_fn(n, |i| (i * 7919 % 5) as i64);
                move || {
                    black_box(
                        clustering::silhouette_score(
                            black_box(x.view()),
                            labels.view(),
                            SilhouetteMetric::default(),
                        )
                        .unwrap(),
                    );
                }
            })
        })
        .collect();
    vec![Family {
        title: "silhouette (SILHOUETTE)".into(),
        gate: &clustering::SILHOUETTE,
        rungs,
    }]
}
