//! Ladders of the tree gates (DecisionTree split search and traversal, IsolationForest build
//! and scoring) and of KNN's neighbour selection.

use super::harness::{ladders, Family, Rung};
use crate::machine_learning::decision_tree::SORT_SCAN_MIN_ELEMS;
use crate::machine_learning::tree::TRAVERSAL_MIN_VISITS;
use crate::machine_learning::{knn::KnnClassifier, Algorithm, DecisionTree, IsolationForest};
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
    let split_search = ladders![quick;
        // Split search at the root: a depth-1 tree sorts every feature and scans it once.
        "decision tree split search (SORT_SCAN_MIN_ELEMS)": &SORT_SCAN_MIN_ELEMS,
            [(256, 4), (512, 8), (1_024, 8), (2_048, 8), (4_096, 8), (8_192, 16), (32_768, 16),
             (65_536, 16)] => |(n, d)| tree_fit(format!("stump fit {n}x{d}"), n, d, 1, 1);
    ];
    let others = ladders![quick;
        "decision tree predict (TRAVERSAL_MIN_VISITS)": &TRAVERSAL_MIN_VISITS,
            [256, 1_024, 4_096, 16_384, 65_536, 262_144] => tree_predict(Rc::default());
        "isolation forest score (TRAVERSAL_MIN_VISITS)": &TRAVERSAL_MIN_VISITS,
            [4, 16, 64, 256, 1_024, 4_096] => forest_score(Rc::default());
        "isolation forest fit (TRAVERSAL_MIN_VISITS)": &TRAVERSAL_MIN_VISITS,
            [1, 4, 16, 64, 256] => forest_fit;
        // KNN: neighbour selection (euclidean: product then per-row top-k; manhattan: scan).
        "KNN euclidean selection (SCAN_F64)": &SCAN_F64,
            [(64, 256), (128, 1_024), (256, 2_048), (1_024, 4_096), (2_048, 8_192)] => knn_euclidean;
        "KNN manhattan scan (SCAN_F64)": &SCAN_F64,
            [(16, 256), (64, 512), (128, 1_024), (256, 2_048), (1_024, 4_096)] => knn_manhattan;
    ];
    split_search
        .into_iter()
        .chain([whole_trees(quick)])
        .chain(others)
        .collect()
}

/// Whole trees: every node's split search sits on one side of the gate or the other. Quick mode
/// leaves out the largest tree rather than thinning the ladder.
fn whole_trees(quick: bool) -> Family {
    let shapes = if quick {
        [(500usize, 8usize), (2_000, 8), (10_000, 16)].as_slice()
    } else {
        [(500, 8), (2_000, 8), (10_000, 16), (50_000, 20)].as_slice()
    };
    Family {
        title: "decision tree fit (SORT_SCAN_MIN_ELEMS)".into(),
        gate: &SORT_SCAN_MIN_ELEMS,
        rungs: shapes
            .iter()
            .map(|&(n, d)| {
                tree_fit(
                    format!("depth-10 tree fit {n}x{d} (root work)"),
                    n,
                    d,
                    2,
                    10,
                )
            })
            .collect(),
    }
}

/// A CART tree of `max_depth` fitted on `data(n, d, seed)`.
fn tree_fit(label: String, n: usize, d: usize, seed: u64, max_depth: usize) -> Rung {
    Rung::on(
        label,
        n * d,
        move || data(n, d, seed),
        move |(x, y)| {
            let mut t =
                DecisionTree::with_defaults(Algorithm::CART, true).set_max_depth(Some(max_depth));
            t.fit(x, y).unwrap();
            t
        },
    )
}

fn tree_predict(fitted: Shared<DecisionTree>) -> impl FnMut(usize) -> Rung {
    move |n| {
        let fitted = Rc::clone(&fitted);
        Rung::sized(format!("depth-10 tree predict n={n}"), move || {
            let model = fitted
                .get_or_init(|| {
                    let (xt, yt) = data(20_000, 8, 3);
                    let mut t =
                        DecisionTree::with_defaults(Algorithm::CART, true).set_max_depth(Some(10));
                    t.fit(&xt, &yt).unwrap();
                    t
                })
                .clone();
            let (x, _) = data(n, 8, 4);
            let work = n * model.depth().unwrap();
            (work, move || {
                black_box(model.predict(black_box(&x)).unwrap());
            })
        })
    }
}

fn forest_data() -> Array2<f64> {
    data(5_000, 16, 5).0
}

fn forest_score(forest: Shared<IsolationForest>) -> impl FnMut(usize) -> Rung {
    move |n| {
        let forest = Rc::clone(&forest);
        // 100 trees of 256 samples: leaves sit near depth 8.
        let label = format!("forest score n={n} (100 trees)");
        let setup = move || {
            let model = forest
                .get_or_init(|| {
                    let mut f = IsolationForest::builder(100).with_seed(Some(0));
                    f.fit(&forest_data()).unwrap();
                    f
                })
                .clone();
            (model, data(n, 16, 6).0)
        };
        Rung::on(label, n * 100 * 8, setup, |(model, x)| {
            model.score_samples(x).unwrap()
        })
    }
}

fn forest_fit(trees: usize) -> Rung {
    let label = format!("forest fit {trees} trees x 256 samples");
    Rung::on(label, trees * 256 * 8, forest_data, move |x| {
        let mut f = IsolationForest::builder(trees).with_seed(Some(1));
        f.fit(x).unwrap();
        f
    })
}

fn knn_euclidean((q, n): (usize, usize)) -> Rung {
    let label = format!("euclidean kneighbors {q} queries x {n} train d=32");
    Rung::on(
        label,
        q * n,
        move || knn_fitted(KnnClassifier::new(5), q, n, 7),
        knn_query,
    )
}

fn knn_manhattan((q, n): (usize, usize)) -> Rung {
    let label = format!("manhattan kneighbors {q} queries x {n} train d=32");
    let model = KnnClassifier::new(5).with_metric(Metric::Manhattan);
    Rung::on(
        label,
        q * n * 32,
        move || knn_fitted(model, q, n, 9),
        knn_query,
    )
}

/// `model` fitted on `n` points in 32-D, and `q` query points.
fn knn_fitted(
    mut model: KnnClassifier,
    q: usize,
    n: usize,
    seed: u64,
) -> (KnnClassifier, Array2<f64>) {
    let (x, y) = data(n, 32, seed);
    let (xq, _) = data(q, 32, seed + 1);
    model.fit(&x, &y).unwrap();
    (model, xq)
}

fn knn_query((model, xq): &mut (KnnClassifier, Array2<f64>)) -> (Array2<f64>, Array2<usize>) {
    model.kneighbors(xq, None).unwrap()
}
