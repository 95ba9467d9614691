//! Ladders of the tree gates (DecisionTree split search and traversal, IsolationForest build
//! and scoring) and of KNN's neighbour selection.

use super::harness::{ladder, Family, Rung};
use crate::machine_learning::{
    decision_tree, knn::KnnClassifier, tree, Algorithm, DecisionTree, IsolationForest,
};
use crate::math::distance::{Metric, SCAN_F64};
use ndarray::{Array1, Array2};
use std::cell::OnceCell;
use std::hint::black_box;
use std::rc::Rc;

/// splitmix64 of (i, j, seed) mapped to [-1, 1).
fn noise(i: usize, j: usize, seed: u64) -> f64 {
    let mut z = (i as u64) << 32 ^ (j as u64) << 16 ^ seed;
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) as f64 / 2f64.powi(63) - 1.0
}

fn data(n: usize, d: usize, seed: u64) -> (Array2<f64>, Array1<f64>) {
    let x = Array2::from_shape_fn((n, d), |(i, j)| noise(i, j, seed));
    let y = Array1::from_shape_fn(n, |i| {
        let s: f64 = (0..d.min(4)).map(|j| x[[i, j]]).sum::<f64>() + 0.3 * noise(i, 99, seed);
        if s > 0.0 {
            1.0
        } else {
            0.0
        }
    });
    (x, y)
}

/// A model fitted on first use and shared by the rungs that score with it, so a run that
/// never reaches those rungs never fits it.
type Shared<T> = Rc<OnceCell<T>>;

pub fn families(quick: bool) -> Vec<Family> {
    // Split search at the root: a depth-1 tree sorts every feature and scans it once.
    let split_rungs = ladder(
        quick,
        [
            (256usize, 4usize),
            (512, 8),
            (1_024, 8),
            (2_048, 8),
            (4_096, 8),
            (8_192, 16),
            (32_768, 16),
            (65_536, 16),
        ],
    )
    .map(|(n, d)| {
        Rung::new(format!("stump fit {n}x{d}"), n * d, move || {
            let (x, y) = data(n, d, 1);
            move || {
                let mut t =
                    DecisionTree::with_defaults(Algorithm::CART, true).set_max_depth(Some(1));
                black_box(t.fit(black_box(&x), &y).unwrap());
            }
        })
    })
    .collect();
    // Whole trees: every node's split search sits on one side of the gate or the other.
    let grow_shapes = if quick {
        [(500usize, 8usize), (2_000, 8), (10_000, 16)].as_slice()
    } else {
        [(500, 8), (2_000, 8), (10_000, 16), (50_000, 20)].as_slice()
    };
    let grow_rungs = grow_shapes
        .iter()
        .map(|&(n, d)| {
            Rung::new(
                format!("depth-10 tree fit {n}x{d} (root work)"),
                n * d,
                move || {
                    let (x, y) = data(n, d, 2);
                    move || {
                        let mut t = DecisionTree::with_defaults(Algorithm::CART, true)
                            .set_max_depth(Some(10));
                        black_box(t.fit(black_box(&x), &y).unwrap());
                    }
                },
            )
        })
        .collect();
    let fitted: Shared<DecisionTree> = Rc::default();
    let predict_rungs = ladder(quick, [256usize, 1_024, 4_096, 16_384, 65_536, 262_144])
        .map(|n| {
            let fitted = Rc::clone(&fitted);
            Rung::sized(format!("depth-10 tree predict n={n}"), move || {
                let model = fitted
                    .get_or_init(|| {
                        let (xt, yt) = data(20_000, 8, 3);
                        let mut t = DecisionTree::with_defaults(Algorithm::CART, true)
                            .set_max_depth(Some(10));
                        t.fit(&xt, &yt).unwrap();
                        t
                    })
                    .clone();
                let (x, _) = data(n, 8, 4);
                (n * model.depth().unwrap(), move || {
                    black_box(model.predict(black_box(&x)).unwrap());
                })
            })
        })
        .collect();
    let forest_data = || data(5_000, 16, 5).0;
    let forest: Shared<IsolationForest> = Rc::default();
    let score_rungs = ladder(quick, [4usize, 16, 64, 256, 1_024, 4_096])
        .map(|n| {
            let forest = Rc::clone(&forest);
            // 100 trees of 256 samples: leaves sit near depth 8.
            Rung::new(
                format!("forest score n={n} (100 trees)"),
                n * 100 * 8,
                move || {
                    let model = forest
                        .get_or_init(|| {
                            let mut f = IsolationForest::builder(100).with_seed(Some(0));
                            f.fit(&forest_data()).unwrap();
                            f
                        })
                        .clone();
                    let (x, _) = data(n, 16, 6);
                    move || {
                        black_box(model.score_samples(black_box(&x)).unwrap());
                    }
                },
            )
        })
        .collect();
    let build_rungs = ladder(quick, [1usize, 4, 16, 64, 256])
        .map(|trees| {
            Rung::new(
                format!("forest fit {trees} trees x 256 samples"),
                trees * 256 * 8,
                move || {
                    let x = forest_data();
                    move || {
                        let mut f = IsolationForest::builder(trees).with_seed(Some(1));
                        black_box(f.fit(black_box(&x)).unwrap());
                    }
                },
            )
        })
        .collect();
    // KNN: neighbour selection (euclidean: product then per-row top-k; manhattan: scan).
    let knn_euclid = ladder(
        quick,
        [
            (64usize, 256usize),
            (128, 1_024),
            (256, 2_048),
            (1_024, 4_096),
            (2_048, 8_192),
        ],
    )
    .map(|(q, n)| {
        Rung::new(
            format!("euclidean kneighbors {q} queries x {n} train d=32"),
            q * n,
            move || knn_kernel(KnnClassifier::new(5), q, n, 7),
        )
    })
    .collect();
    let knn_scan = ladder(
        quick,
        [
            (16usize, 256usize),
            (64, 512),
            (128, 1_024),
            (256, 2_048),
            (1_024, 4_096),
        ],
    )
    .map(|(q, n)| {
        Rung::new(
            format!("manhattan kneighbors {q} queries x {n} train d=32"),
            q * n * 32,
            move || {
                knn_kernel(
                    KnnClassifier::new(5).with_metric(Metric::Manhattan),
                    q,
                    n,
                    9,
                )
            },
        )
    })
    .collect();
    vec![
        Family {
            title: "decision tree split search (SORT_SCAN_MIN_ELEMS)".into(),
            gate: &decision_tree::SORT_SCAN_MIN_ELEMS,
            rungs: split_rungs,
        },
        Family {
            title: "decision tree fit (SORT_SCAN_MIN_ELEMS)".into(),
            gate: &decision_tree::SORT_SCAN_MIN_ELEMS,
            rungs: grow_rungs,
        },
        Family {
            title: "decision tree predict (TRAVERSAL_MIN_VISITS)".into(),
            gate: &tree::TRAVERSAL_MIN_VISITS,
            rungs: predict_rungs,
        },
        Family {
            title: "isolation forest score (TRAVERSAL_MIN_VISITS)".into(),
            gate: &tree::TRAVERSAL_MIN_VISITS,
            rungs: score_rungs,
        },
        Family {
            title: "isolation forest fit (TRAVERSAL_MIN_VISITS)".into(),
            gate: &tree::TRAVERSAL_MIN_VISITS,
            rungs: build_rungs,
        },
        Family {
            title: "KNN euclidean selection (SCAN_F64)".into(),
            gate: &SCAN_F64,
            rungs: knn_euclid,
        },
        Family {
            title: "KNN manhattan scan (SCAN_F64)".into(),
            gate: &SCAN_F64,
            rungs: knn_scan,
        },
    ]
}

/// Fit `model` on `n` points in 32-D and return the kernel asking for `q` queries' neighbours.
fn knn_kernel(mut model: KnnClassifier, q: usize, n: usize, seed: u64) -> impl FnMut() {
    let (x, y) = data(n, 32, seed);
    let (xq, _) = data(q, 32, seed + 1);
    model.fit(&x, &y).unwrap();
    move || {
        black_box(model.kneighbors(black_box(&xq), None).unwrap());
    }
}
