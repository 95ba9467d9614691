//! Ladders of the t-SNE per-point scans (binary searches for the affinities, Barnes-Hut
//! gradient rows), which fork behind `reduction::scan_f64`.

use super::harness::{ladder, Family, Rung};
use crate::machine_learning::tsne;
use crate::math::distance;
use ndarray::Array2;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::hint::black_box;

/// `n` points in 10-D around 10 centres (digit-like clusters).
fn clustered(n: usize, seed: u64) -> Array2<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let centres = Array2::from_shape_fn((10, 10), |_| rng.random::<f64>() * 20.0);
    Array2::from_shape_fn((n, 10), |(i, j)| {
        centres[[i % 10, j]] + rng.random::<f64>() * 4.0 - 2.0
    })
}

/// Each row's `k` smallest squared distances to the other points, like the kNN affinities.
fn nearest_distances(n: usize, k: usize) -> Vec<f64> {
    let x = clustered(n, 1);
    let d = distance::pairwise_squared_euclidean(x.view(), x.view()).unwrap();
    d.outer_iter()
        .enumerate()
        .flat_map(|(i, row)| {
            let mut r: Vec<f64> = row
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(_, &v)| v)
                .collect();
            r.sort_by(f64::total_cmp);
            r.truncate(k);
            r
        })
        .collect()
}

pub fn families(quick: bool) -> Vec<Family> {
    let perplexity = 30.0;
    let search_rungs = ladder(quick, [64usize, 128, 256, 512, 1024, 2048])
        .map(|n| {
            let k = (n - 1).min(91);
            Rung::new(
                format!("binary searches n={n} k={k}"),
                tsne::binary_search_work(n, k),
                move || {
                    let rows = nearest_distances(n, k);
                    move || {
                        black_box(tsne::conditional_probabilities_rows(
                            black_box(&rows),
                            k,
                            perplexity,
                        ));
                    }
                },
            )
        })
        .collect();
    let gradient_rungs = ladder(quick, [64usize, 128, 256, 512, 1024, 2048, 4096])
        .map(|n| {
            Rung::sized(format!("Barnes-Hut gradient n={n} 2-D"), move || {
                let k = (n - 1).min(91);
                let x = clustered(n, 2);
                let p = tsne::joint_probabilities_knn(x.view(), perplexity, k).unwrap();
                let mut rng = ChaCha8Rng::seed_from_u64(3);
                let y = Array2::from_shape_fn((n, 2), |_| rng.random::<f64>() * 40.0 - 20.0);
                let work = tsne::barnes_hut_work(n, p.values.len(), 2);
                (work, move || {
                    black_box(tsne::barnes_hut_gradient(&p, y.view(), 0.5, false));
                })
            })
        })
        .collect();
    vec![
        Family {
            title: "t-SNE binary searches (SCAN_F64)".into(),
            gate: &distance::SCAN_F64,
            rungs: search_rungs,
        },
        Family {
            title: "t-SNE Barnes-Hut gradient (SCAN_F64)".into(),
            gate: &distance::SCAN_F64,
            rungs: gradient_rungs,
        },
    ]
}
