//! Unit tests of the decision tree engine through both front doors.

use super::*;
use crate::error::Error;
use crate::gate::serial_and_parallel;
use crate::machine_learning::tree::{FlatNode, TRAVERSAL_MIN_VISITS};
use crate::machine_learning::TreeError;
use crate::persistence::Persist;
use ndarray::{array, Array1, Array2};
use splitter::midpoint;

fn root(tree: &DecisionTree) -> FlatNode {
    tree.fitted.as_ref().unwrap().nodes[0]
}

/// 20 samples, classes 0 (0..10) and 1 (10..20). Binary features:
/// A splits {8 zeros, 2 ones} | {2 zeros, 8 ones}: gain 0.1927 nats, split info ln 2,
///   ratio 0.278, gini decrease 0.18;
/// B splits {4 zeros} | {6 zeros, 10 ones}: gain 0.1638, split info 0.5004, ratio 0.327,
///   gini decrease 0.125;
/// C splits {5, 5} | {5, 5}: no gain.
fn criteria_data(with_c: bool) -> (Array2<f64>, Array1<f64>) {
    let a = |i: usize| {
        if (i < 8) || (10..12).contains(&i) {
            0.0
        } else {
            1.0
        }
    };
    let b = |i: usize| if i < 4 { 0.0 } else { 1.0 };
    let c = |i: usize| if i % 10 < 5 { 0.0 } else { 1.0 };
    let d = if with_c { 3 } else { 2 };
    let x = Array2::from_shape_fn((20, d), |(i, j)| [a(i), b(i), c(i)][j]);
    let y = Array1::from_shape_fn(20, |i| if i < 10 { 0.0 } else { 1.0 });
    (x, y)
}

#[test]
fn criteria_pick_the_hand_derived_root_split() {
    let stump = |alg| {
        let (x, y) = criteria_data(true);
        let mut t = DecisionTree::with_defaults(alg, true).set_max_depth(Some(1));
        t.fit(&x, &y).unwrap();
        t
    };
    // CART and ID3 take the largest decrease (A); C4.5 the best ratio among gains at
    // least the average (0.1188 with C): B.
    assert_eq!(root(&stump(Algorithm::CART)).feature, 0);
    assert_eq!(root(&stump(Algorithm::ID3)).feature, 0);
    assert_eq!(root(&stump(Algorithm::C45)).feature, 1);
    assert_eq!(root(&stump(Algorithm::CART)).threshold, 0.5);
    // Without C the average gain (0.178) excludes B: C4.5 falls back to A.
    let (x, y) = criteria_data(false);
    let mut t = DecisionTree::with_defaults(Algorithm::C45, true).set_max_depth(Some(1));
    t.fit(&x, &y).unwrap();
    assert_eq!(root(&t).feature, 0);
    // A stump on A: leaves {8 zeros, 2 ones} and {2 zeros, 8 ones}.
    let cart = stump(Algorithm::CART);
    let p = cart
        .predict_proba(&array![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
        .unwrap();
    assert_eq!(p, array![[0.8, 0.2], [0.2, 0.8]]);
    assert_eq!(cart.feature_importances().unwrap(), &array![1.0, 0.0, 0.0]);
    assert_eq!(
        (cart.depth(), cart.n_leaves(), cart.node_count()),
        (Some(1), Some(2), Some(3))
    );
}

#[test]
fn separable_and_xor_data_are_fitted_exactly() {
    let mut t = DecisionTree::with_defaults(Algorithm::CART, true);
    t.fit(
        &array![[1.0], [2.0], [3.0], [4.0]],
        &array![0.0, 0.0, 1.0, 1.0],
    )
    .unwrap();
    assert_eq!(root(&t).threshold, 2.5);
    assert_eq!(
        t.predict(&array![[2.5], [2.6], [-9.0]]).unwrap(),
        array![0.0, 1.0, 0.0]
    );
    assert_eq!(t.classes().unwrap(), &array![0.0, 1.0]);
    // XOR: the root split gains nothing, yet the tree must go on (as scikit-learn does).
    let x = array![[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]];
    let y = array![5.0, 7.0, 7.0, 5.0];
    for alg in [Algorithm::CART, Algorithm::ID3, Algorithm::C45] {
        let mut t = DecisionTree::with_defaults(alg, true);
        t.fit(&x, &y).unwrap();
        assert_eq!(t.predict(&x).unwrap(), y, "{alg:?}");
        assert_eq!((t.depth(), t.n_leaves()), (Some(2), Some(4)));
        assert_eq!(t.score(&x, &y).unwrap(), 1.0);
    }
}

#[test]
fn regression_tree_splits_on_variance_and_respects_min_samples_leaf() {
    let x = array![[1.0], [2.0], [3.0], [4.0], [5.0], [6.0]];
    let mut t = DecisionTree::with_defaults(Algorithm::CART, false);
    t.fit(&x, &array![1.0, 1.0, 1.0, 5.0, 5.0, 5.0]).unwrap();
    assert_eq!(root(&t).threshold, 3.5);
    assert_eq!(
        t.predict(&array![[0.0], [3.5], [3.6]]).unwrap(),
        array![1.0, 1.0, 5.0]
    );
    assert!(t.predict_proba(&x).is_err());
    assert!(t.classes().is_none());
    // y = 0 0 0 0 10 with two samples per leaf at least: the cut after 2 leaves
    // 0 + 10^2/3 = 33.3 as proxy, after 3 leaves 0 + 10^2/2 = 50, so it cuts at 3.5 and
    // the right leaf {0, 10} (mean 5) is too small to split again.
    let x = array![[1.0], [2.0], [3.0], [4.0], [5.0]];
    let mut t = DecisionTree::with_defaults(Algorithm::CART, false).set_min_samples_leaf(2);
    t.fit(&x, &array![0.0, 0.0, 0.0, 0.0, 10.0]).unwrap();
    assert_eq!(root(&t).threshold, 3.5);
    assert_eq!(t.predict(&x).unwrap(), array![0.0, 0.0, 0.0, 5.0, 5.0]);
    assert_eq!(t.n_leaves(), Some(2));
    // max_depth caps the tree; min_samples_split=6 keeps a 5-sample root whole.
    let mut t = DecisionTree::with_defaults(Algorithm::CART, false).set_min_samples_split(6);
    t.fit(&x, &array![0.0, 1.0, 2.0, 3.0, 4.0]).unwrap();
    assert_eq!((t.depth(), t.n_leaves()), (Some(0), Some(1)));
    assert_eq!(t.predict(&x).unwrap(), Array1::from_elem(5, 2.0));
}

#[test]
fn midpoints_never_fall_on_the_upper_value() {
    let a = 1.0f64;
    let b = f64::from_bits(a.to_bits() + 1);
    assert_eq!(midpoint(a, b), a);
    assert_eq!(
        midpoint(f64::MAX / 2.0 * 1.5, f64::MAX),
        f64::MAX / 2.0 * 1.5 / 2.0 + f64::MAX / 2.0
    );
    assert_eq!(midpoint(-f64::MAX, f64::MAX), 0.0);
    assert_eq!(midpoint(2.0, 3.0), 2.5);
}

/// splitmix64 of (i, j, seed) mapped to [0, 1): distinct rows, no pattern a tree could use.
fn hash01(i: usize, j: usize, seed: usize) -> f64 {
    let mut z = (i as u64) << 32 ^ (j as u64) << 16 ^ seed as u64;
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) as f64 / 2f64.powi(64)
}

fn noisy(n: usize, d: usize, seed: usize) -> (Array2<f64>, Array1<f64>, Array1<f64>) {
    let x = Array2::from_shape_fn((n, d), |(i, j)| {
        (hash01(i, j, seed) * 4.0 - 2.0) * (j + 1) as f64
    });
    let score =
        |i: usize| x[[i, 0]] + 0.5 * x[[i, 1]] - x[[i, 2]] * 0.3 + ((i * 13) % 7) as f64 * 0.2;
    let yc = Array1::from_shape_fn(n, |i| (score(i) * 1.3).rem_euclid(3.0).floor());
    let yr = Array1::from_shape_fn(n, |i| score(i) * 2.0 + (i % 5) as f64);
    (x, yc, yr)
}

fn tree_bits(t: &DecisionTree) -> Vec<(u32, u64, u32)> {
    t.fitted
        .as_ref()
        .unwrap()
        .nodes
        .iter()
        .map(|n| (n.feature, n.threshold.to_bits(), n.left))
        .collect()
}

/// The four kinds of tree: the CART, ID3 and C4.5 classifiers and the CART regressor.
const TREE_KINDS: [(Algorithm, bool); 4] = [
    (Algorithm::CART, true),
    (Algorithm::ID3, true),
    (Algorithm::C45, true),
    (Algorithm::CART, false),
];

/// Fits every kind of tree, built by `new_tree`, with the split-search gate forced serial
/// and forced parallel; asserts the structures, multi-way splits, importances and
/// predictions are the same bits and that each tree has at least `min_nodes` nodes.
/// Returns how many multi-way splits each kind's tree has, in [`TREE_KINDS`] order.
fn assert_split_search_grows_alike(
    x: &Array2<f64>,
    (yc, yr): (&Array1<f64>, &Array1<f64>),
    min_nodes: usize,
    new_tree: impl Fn(Algorithm, bool) -> DecisionTree,
) -> Vec<usize> {
    let mut multiway_splits = Vec::new();
    for (alg, classify) in TREE_KINDS {
        let y = if classify { yc } else { yr };
        let (s, p) = serial_and_parallel(&SORT_SCAN_MIN_ELEMS, || {
            let mut t = new_tree(alg, classify);
            t.fit(x, y).unwrap();
            (
                tree_bits(&t),
                t.fitted.as_ref().unwrap().multiway.clone(),
                t.feature_importances().unwrap().mapv(f64::to_bits),
                t.predict(x).unwrap().mapv(f64::to_bits),
            )
        });
        assert_eq!(s, p, "{alg:?} classifier={classify}");
        assert!(s.0.len() >= min_nodes, "{alg:?}: a tree worth comparing");
        multiway_splits.push(s.1.len());
    }
    multiway_splits
}

#[test]
fn split_search_gate_serial_and_parallel_grow_the_same_tree() {
    let (x, yc, yr) = noisy(700, 9, 1);
    assert_split_search_grows_alike(&x, (&yc, &yr), 50, |alg, classify| {
        DecisionTree::with_defaults(alg, classify).set_random_state(Some(3))
    });
}

#[test]
fn traversal_gate_serial_and_parallel_predict_the_same() {
    let (x, yc, _) = noisy(2_000, 6, 2);
    let mut t = DecisionTree::with_defaults(Algorithm::CART, true);
    t.fit(&x, &yc).unwrap();
    let (s, p) = serial_and_parallel(&TRAVERSAL_MIN_VISITS, || {
        (
            t.predict(&x).unwrap().mapv(f64::to_bits),
            t.predict_proba(&x).unwrap().mapv(f64::to_bits),
        )
    });
    assert_eq!(s, p);
    // grown to purity on distinct points: the training set is memorised
    assert_eq!(t.score(&x, &yc).unwrap(), 1.0);
}

#[test]
fn proba_rows_are_leaf_class_fractions() {
    let (x, yc, _) = noisy(300, 4, 3);
    let mut t = DecisionTree::with_defaults(Algorithm::ID3, true)
        .set_max_depth(Some(3))
        .set_min_samples_leaf(5);
    t.fit(&x, &yc).unwrap();
    let p = t.predict_proba(&x).unwrap();
    let pred = t.predict(&x).unwrap();
    for (row, &label) in p.rows().into_iter().zip(pred.iter()) {
        assert!((row.sum() - 1.0).abs() < 1e-12);
        let argmax = row
            .iter()
            .enumerate()
            .fold(0, |b, (k, &v)| if v > row[b] { k } else { b });
        assert_eq!(t.classes().unwrap()[argmax], label);
    }
    assert!(t.depth().unwrap() <= 3);
    let imp = t.feature_importances().unwrap();
    assert!((imp.sum() - 1.0).abs() < 1e-12 && imp.iter().all(|&v| v >= 0.0));
}

#[test]
fn split_report_holds_counts_and_the_runner_up_of_each_split() {
    // Hand-derived: labels 0,0,1,1 on x0 = 0,1,2,3 (a perfect split after position 1)
    // and x1 = 0,2,1,3 (best split after position 0 or 2: one error either side).
    let x = array![[0.0, 0.0], [1.0, 2.0], [2.0, 1.0], [3.0, 3.0]];
    let y = array![0.0, 0.0, 1.0, 1.0];
    let mut t = DecisionTree::with_defaults(Algorithm::CART, true);
    t.fit(&x, &y).unwrap();
    let (table, targets) = t.split_report().unwrap();
    assert_eq!(table.nrows(), 3);
    let root = table.row(0);
    assert_eq!((root[0], root[1], root[2], root[3]), (0.0, 1.5, 1.0, 4.0));
    // gini score sum(c^2)/n per child: perfect split 4/2 + 4/2 = 4; the runner-up,
    // x1 after position 0 (or x0 after position 0): 1/1 + (1 + 4)/3 = 8/3
    assert_eq!(root[5], 4.0);
    assert!((root[6] - 8.0 / 3.0).abs() < 1e-15);
    assert_eq!((root[7], root[8]), (1.0, 2.0));
    assert_eq!(targets.row(0).to_vec(), vec![2.0, 2.0]);
    assert_eq!(targets.row(1).to_vec(), vec![2.0, 0.0]);
    assert!(table.row(1)[5].is_nan() && table.row(1)[0] == -1.0);
    // two identical columns: the runner-up equals the chosen score (a tie)
    let xx = Array2::from_shape_fn((4, 2), |(i, _)| x[[i, 0]]);
    t.fit(&xx, &y).unwrap();
    let (table, _) = t.split_report().unwrap();
    assert_eq!(table.row(0)[5], table.row(0)[6]);
    // a regressor reports sum, sum of squares, min and max per node
    let mut r = DecisionTree::with_defaults(Algorithm::CART, false);
    r.fit(&x, &array![1.0, 2.0, 3.0, 5.0]).unwrap();
    let (_, targets) = r.split_report().unwrap();
    assert_eq!(targets.row(0).to_vec(), vec![11.0, 39.0, 1.0, 5.0]);
}

#[test]
fn random_state_only_breaks_ties() {
    // Two identical columns: every split ties between them.
    let (x0, yc, _) = noisy(200, 3, 4);
    let x = Array2::from_shape_fn((200, 2), |(i, _)| x0[[i, 0]]);
    let mut natural = DecisionTree::with_defaults(Algorithm::CART, true);
    natural.fit(&x, &yc).unwrap();
    assert_eq!(root(&natural).feature, 0);
    let mut roots = std::collections::BTreeSet::new();
    for seed in 0..16 {
        let mut a = DecisionTree::with_defaults(Algorithm::CART, true).set_random_state(Some(seed));
        a.fit(&x, &yc).unwrap();
        let mut b = DecisionTree::with_defaults(Algorithm::CART, true).set_random_state(Some(seed));
        b.fit(&x, &yc).unwrap();
        assert_eq!(tree_bits(&a), tree_bits(&b));
        assert_eq!(a.predict(&x).unwrap(), natural.predict(&x).unwrap());
        roots.insert(root(&a).feature);
    }
    assert_eq!(roots.into_iter().collect::<Vec<_>>(), vec![0, 1]);
}

#[test]
fn bad_input_is_refused_before_work() {
    let x = array![[1.0, 2.0], [3.0, 4.0]];
    let y = array![0.0, 1.0];
    assert!(matches!(
        DecisionTree::with_defaults(Algorithm::CART, true).predict(&x),
        Err(Error::NotFitted(_))
    ));
    assert!(DecisionTree::with_defaults(Algorithm::CART, true)
        .set_min_samples_split(1)
        .fit(&x, &y)
        .is_err());
    assert!(DecisionTree::with_defaults(Algorithm::CART, true)
        .set_min_samples_leaf(0)
        .fit(&x, &y)
        .is_err());
    assert!(DecisionTree::with_defaults(Algorithm::CART, true)
        .set_max_depth(Some(0))
        .fit(&x, &y)
        .is_err());
    assert!(DecisionTree::with_defaults(Algorithm::CART, true)
        .fit(&x, &array![0.0])
        .is_err());
    assert!(DecisionTree::with_defaults(Algorithm::CART, true)
        .fit(&array![[1.0, f64::INFINITY]], &array![0.0])
        .is_err());
    assert!(DecisionTree::with_defaults(Algorithm::CART, true)
        .fit(&Array2::<f64>::zeros((0, 2)), &Array1::zeros(0))
        .is_err());
    assert!(DecisionTree::with_defaults(Algorithm::CART, true)
        .fit(&x, &array![0.0, f64::NAN])
        .is_err());
    assert!(Algorithm::parse("c5.0").is_err());
    assert_eq!(Algorithm::parse("C4.5").unwrap(), Algorithm::C45);
    let mut t = DecisionTree::with_defaults(Algorithm::CART, true);
    t.fit(&x, &y).unwrap();
    assert!(t.predict(&array![[1.0, 2.0, 3.0]]).is_err());
    assert!(t.predict(&array![[f64::NAN, 2.0]]).is_err());
}

#[test]
fn save_and_load_round_trip_and_refuse_corrupt_trees() {
    let (x, yc, _) = noisy(150, 4, 5);
    let mut t = DecisionTree::with_defaults(Algorithm::C45, true).set_max_depth(Some(4));
    t.fit(&x, &yc).unwrap();
    let back = DecisionTree::from_bytes(&t.to_bytes().unwrap()).unwrap();
    assert_eq!(
        back.predict_proba(&x).unwrap(),
        t.predict_proba(&x).unwrap()
    );
    assert_eq!(back.algorithm, Algorithm::C45);
    let mut broken = t.clone();
    broken.fitted.as_mut().unwrap().nodes[0].left = 0; // a cycle
    assert!(DecisionTree::from_bytes(&broken.to_bytes().unwrap()).is_err());
}

/// Original API: a category-XOR pattern (category 1 is class 1, categories 0 and 2 are
/// class 0) needs one multi-way split; unseen categories fall back to the node majority.
#[test]
fn original_api_categorical_split_and_fallback() {
    let x = array![[0.0], [0.0], [1.0], [1.0], [2.0], [2.0]];
    let y = array![0.0, 0.0, 1.0, 1.0, 0.0, 0.0];
    let mut t = DecisionTree::new(Algorithm::ID3, true).unwrap();
    t.set_categorical_features(vec![0]);
    t.fit(&x, &y).unwrap();
    assert!(t
        .get_root()
        .unwrap()
        .children
        .as_ref()
        .is_some_and(|c| c.len() == 3));
    assert_eq!(t.predict(&x).unwrap(), y);
    assert_eq!(t.predict_one(&[7.0]).unwrap(), 0.0);
    assert!(t
        .generate_tree_structure()
        .unwrap()
        .contains("Decision Tree Structure"));
}

/// Hand-derived: y = [0, 0, 10, 10, 100 x4] on x = 1..8. The root split at 4.5 lowers the
/// variance by 2256.25; the left child {0, 0, 10, 10} (variance 25, pure halves) would
/// lower it by 25, i.e. 12.5 once weighted by 4/8 < 20, so it stays a leaf (mean 5).
#[test]
fn original_api_min_impurity_decrease_is_node_weighted() {
    let x = array![[1.0], [2.0], [3.0], [4.0], [5.0], [6.0], [7.0], [8.0]];
    let y = array![0.0, 0.0, 10.0, 10.0, 100.0, 100.0, 100.0, 100.0];
    let mut t = DecisionTree::new(Algorithm::CART, false)
        .unwrap()
        .with_min_impurity_decrease(20.0)
        .unwrap();
    t.fit(&x, &y).unwrap();
    assert_eq!(
        t.predict(&array![[1.0], [4.0], [8.0]]).unwrap(),
        array![5.0, 5.0, 100.0]
    );
    assert!(matches!(
        t.predict_proba(&x),
        Err(Error::Tree(TreeError::NotClassificationTree))
    ));
    assert!(matches!(
        DecisionTree::new(Algorithm::C45, false),
        Err(Error::InvalidInput(_))
    ));
}

/// The leaf {2 of class 0, 1 of class 1} reports exactly [2/3, 1/3].
#[test]
fn original_api_probabilities_are_leaf_fractions() {
    let x = array![[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]];
    let y = array![1.0, 1.0, 1.0, 0.0, 0.0, 1.0];
    let mut t = DecisionTree::new(Algorithm::CART, true)
        .unwrap()
        .with_max_depth(1);
    t.fit(&x, &y).unwrap();
    let p = t.predict_proba_one(&[4.0]).unwrap();
    assert!((p[0] - 2.0 / 3.0).abs() < 1e-15 && (p[1] - 1.0 / 3.0).abs() < 1e-15);
    assert!(matches!(
        t.predict_one(&[1.0, 2.0]),
        Err(Error::DimensionMismatch {
            expected: 1,
            found: 2
        })
    ));
}

/// Original API: the presorted search gives the same tree serially and in parallel, with
/// categorical (multi-way) and numeric features mixed.
#[test]
fn original_api_serial_and_parallel_grow_the_same_tree() {
    let (x, yc, yr) = noisy(600, 6, 4);
    // Two coarse features to split multi-way.
    let x = Array2::from_shape_fn(x.dim(), |(i, j)| {
        if j < 2 {
            (x[[i, j]] * 4.0).floor()
        } else {
            x[[i, j]]
        }
    });
    let multiway_splits = assert_split_search_grows_alike(&x, (&yc, &yr), 30, |alg, classify| {
        let mut t = DecisionTree::new(alg, classify)
            .unwrap()
            .with_random_state(5);
        t.set_categorical_features(vec![0, 1]);
        t
    });
    // ID3 and C4.5 split the categorical features multi-way; CART keeps binary splits.
    for ((alg, _), n) in TREE_KINDS.iter().zip(multiway_splits) {
        assert_eq!(n == 0, *alg == Algorithm::CART, "{alg:?}");
    }
}

/// Original API: a fit saved through its node view loads back to the same predictions,
/// probabilities and node view, multi-way splits and unseen categories included.
#[test]
fn original_api_save_and_load_through_the_node_view() {
    let (x, yc, _) = noisy(300, 4, 6);
    let x = x.mapv(|v| (v * 3.0).floor());
    let mut t = DecisionTree::new(Algorithm::C45, true).unwrap();
    t.set_categorical_features(vec![1]);
    t.fit(&x, &yc).unwrap();
    assert!(!t.fitted.as_ref().unwrap().multiway.is_empty());
    let back = DecisionTree::from_bytes(&t.to_bytes().unwrap()).unwrap();
    let probe = x.mapv(|v| v + 0.5); // unseen categories
    for data in [&x, &probe] {
        assert_eq!(back.predict(data).unwrap(), t.predict(data).unwrap());
        assert_eq!(
            back.predict_proba(data).unwrap(),
            t.predict_proba(data).unwrap()
        );
    }
    assert_eq!(
        back.generate_tree_structure().unwrap(),
        t.generate_tree_structure().unwrap()
    );
    assert_eq!(back.get_parameters(), t.get_parameters());
    assert_eq!(back.get_n_classes(), t.get_n_classes());
}
