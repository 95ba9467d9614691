//! Ladders of the metrics gates.

use super::harness::{by_index, ladders, Family, Rung};
use crate::metrics::checked::clustering::{self, SilhouetteMetric, SILHOUETTE};
use ndarray::Array1;

pub fn families(quick: bool) -> Vec<Family> {
    ladders![quick;
        "silhouette (SILHOUETTE)": &SILHOUETTE, [128, 256, 384, 512, 768, 1024, 2048] => silhouette;
    ]
}

fn silhouette(n: usize) -> Rung {
    let setup = move || {
        let x = by_index(n, 8, |t| (t * 0.37).sin());
        let labels = Array1::from_shape_fn(n, |i| (i * 7919 % 5) as i64);
        (x, labels)
    };
    Rung::on(
        format!("silhouette {n}x8, 5 clusters"),
        n * n,
        setup,
        |(x, labels)| {
            clustering::silhouette_score(x.view(), labels.view(), SilhouetteMetric::default())
                .unwrap()
        },
    )
}
