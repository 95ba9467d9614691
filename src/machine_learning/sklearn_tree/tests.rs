//! The random splitter's forests (the best splitter is checked against scikit-learn itself
//! by the door's tests).
use super::*;
use crate::gate::serial_and_parallel;
use ndarray::{Array1, Array2};
use ndarray::{ArrayView1, ArrayView2};

fn params(max_depth: usize) -> TreeParams {
    TreeParams {
        search: SplitSearch::Random,
        criterion: Criterion::SquaredError,
        max_features: 1,
        max_depth,
        min_samples_split: 2,
        min_samples_leaf: 1,
        min_weight_leaf: 0.0,
        min_impurity_decrease: 0.0,
        max_leaf_nodes: None,
    }
}

/// A forest of regression trees on the one target `y`.
fn grow_random_split_forest(
    x: ArrayView2<f32>,
    y: ArrayView1<f64>,
    samples: ArrayView2<i64>,
    columns: ArrayView2<i64>,
    seeds: &[u32],
    params: TreeParams,
) -> Result<Vec<GrownTree>> {
    let targets = Targets {
        y: y.insert_axis(ndarray::Axis(1)),
        n_classes: vec![],
    };
    grow_forest(
        Features::Dense(x),
        &targets,
        samples,
        columns,
        seeds,
        params,
    )
}

/// A small deterministic data set: `n` rows, `d` columns, one constant column.
fn data(n: usize, d: usize) -> (Array2<f32>, Array1<f64>) {
    let x = Array2::from_shape_fn((n, d), |(i, j)| {
        if j == 1 {
            3.0
        } else {
            (((i * 37 + j * 11) % 23) as f32) * 0.5 - (j as f32)
        }
    });
    let y = Array1::from_shape_fn(n, |i| ((i * 7919) % 101) as f64 / 101.0);
    (x, y)
}

#[test]
fn the_generator_is_scikit_learns_xorshift() {
    // By hand from seed 1: 1 ^ (1 << 13) = 8193; 8193 >> 17 = 0; 8193 ^ (8193 << 5) =
    // 0x2001 ^ 0x40020 = 0x42021 = 270369. A zero seed is taken as 1.
    let mut s = 1;
    assert_eq!(rand_r(&mut s), 270_369);
    let mut z = 0;
    assert_eq!(rand_r(&mut z), 270_369);
    // rand_int's modulus and rand_uniform's order of operations
    let mut s = 1;
    assert_eq!(rand_int(5, 12, &mut s), 5 + 270_369 % 7);
    let mut s = 1;
    let u = rand_uniform(-1.0, 3.0, &mut s);
    assert_eq!(u, 4.0 * 270_369.0 / 2_147_483_647.0 - 1.0);
}

/// Every node's count, mean and threshold agree with the samples that reach it.
fn check_tree(t: &GrownTree, x: &Array2<f32>, y: &Array1<f64>, rows: &[usize], depth: usize) {
    let mut reach: Vec<Vec<usize>> = vec![Vec::new(); t.left.len()];
    for &r in rows {
        let mut node = 0usize;
        loop {
            reach[node].push(r);
            if t.left[node] < 0 {
                break;
            }
            let f = t.feature[node] as usize;
            node = if f64::from(x[[r, f]]) <= t.threshold[node] {
                t.left[node] as usize
            } else {
                t.right[node] as usize
            };
        }
    }
    for (node, members) in reach.iter().enumerate() {
        assert_eq!(t.n_node_samples[node] as usize, members.len());
        assert!(!members.is_empty());
        let mean = members.iter().map(|&r| y[r]).sum::<f64>() / members.len() as f64;
        // The same sum in another order: each order is within (n - 1) eps sum|y| of the
        // exact sum, so the two means differ by at most 2 (n - 1) eps max|y|, plus one
        // rounding of each division; here |y| < 1, so 2 n eps bounds it.
        let n = members.len() as f64;
        assert!((t.value[node] - mean).abs() <= 2.0 * n * f64::EPSILON);
        if t.left[node] >= 0 {
            let f = t.feature[node] as usize;
            let values: Vec<f64> = members.iter().map(|&r| f64::from(x[[r, f]])).collect();
            let lo = values.iter().cloned().fold(f64::INFINITY, f64::min);
            let hi = values.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            assert!(lo <= t.threshold[node] && t.threshold[node] < hi);
            assert_ne!(f, 1, "the constant column is never split");
        }
    }
    assert!(t.depth <= depth);
}

#[test]
fn trees_route_their_samples_as_their_nodes_say() {
    let (x, y) = data(200, 4);
    let samples = ndarray::arr2(&[[3i64, 9, 17, 40, 41, 77, 100, 150, 151, 199, 5, 60]]);
    let columns = ndarray::arr2(&[[0i64, 1, 2, 3]]);
    for seed in [0u32, 1, 42, 2_000_000_000] {
        let trees = grow_random_split_forest(
            x.view(),
            y.view(),
            samples.view(),
            columns.view(),
            &[seed],
            params(8),
        )
        .unwrap();
        let rows: Vec<usize> = samples.iter().map(|&i| i as usize).collect();
        check_tree(&trees[0], &x, &y, &rows, 8);
        // with 12 distinct rows and depth 8, the tree isolates beyond its root
        assert!(trees[0].left.len() > 1);
    }
}

#[test]
fn constant_rows_make_a_single_leaf() {
    let x = Array2::from_elem((10, 3), 1.5f32);
    let y = Array1::from_shape_fn(10, |i| i as f64);
    let samples = ndarray::arr2(&[[0i64, 2, 4, 6, 8]]);
    let columns = ndarray::arr2(&[[0i64, 1, 2]]);
    let t = grow_random_split_forest(
        x.view(),
        y.view(),
        samples.view(),
        columns.view(),
        &[7],
        params(5),
    )
    .unwrap();
    assert_eq!(t[0].left, vec![-1]);
    assert_eq!(t[0].value, vec![4.0]);
    // population variance of 0, 2, 4, 6, 8
    assert_eq!(t[0].impurity, vec![8.0]);
}

#[test]
fn the_gate_never_changes_a_tree() {
    let (x, y) = data(300, 5);
    let samples = Array2::from_shape_fn((16, 64), |(t, i)| ((i * 4 + t) % 300) as i64);
    let columns = Array2::from_shape_fn((16, 3), |(t, j)| ((j + t) % 5) as i64);
    let seeds: Vec<u32> = (0..16).map(|t| 1_000 + 7 * t).collect();
    let (serial, parallel) = serial_and_parallel(&TRAVERSAL_MIN_VISITS, || {
        grow_random_split_forest(
            x.view(),
            y.view(),
            samples.view(),
            columns.view(),
            &seeds,
            params(6),
        )
        .unwrap()
    });
    assert_eq!(serial, parallel);
}

#[test]
fn a_row_drawn_twice_weighs_two() {
    // depth 0: the root is the only node; its mean and variance weigh row 2 twice
    let x = Array2::from_shape_fn((4, 1), |(i, _)| i as f32);
    let y = ndarray::arr1(&[0.0, 1.0, 4.0, 0.0]);
    let samples = ndarray::arr2(&[[2i64, 1, 2]]);
    let columns = ndarray::arr2(&[[0i64]]);
    let t = grow_random_split_forest(
        x.view(),
        y.view(),
        samples.view(),
        columns.view(),
        &[3],
        params(0),
    )
    .unwrap();
    assert_eq!(t[0].n_node_samples, vec![2]);
    assert_eq!(t[0].weighted_n_node_samples, vec![3.0]);
    assert_eq!(t[0].value, vec![3.0]); // (1 + 4 + 4) / 3
    assert_eq!(t[0].impurity, vec![11.0 - 9.0]); // (1 + 16 + 16) / 3 - 3^2
}

#[test]
fn bad_indices_are_refused() {
    let (x, y) = data(20, 2);
    let cols = ndarray::arr2(&[[0i64, 1]]);
    let grow = |s: Array2<i64>, c: &Array2<i64>| {
        grow_random_split_forest(x.view(), y.view(), s.view(), c.view(), &[1], params(3))
    };
    let outside = grow(ndarray::arr2(&[[1i64, 20]]), &cols).unwrap_err();
    assert!(outside.to_string().contains("out of range"));
    let bad_column = grow(ndarray::arr2(&[[1i64, 2]]), &ndarray::arr2(&[[0i64, 2]])).unwrap_err();
    assert!(bad_column.to_string().contains("out of range"));
}

fn best(criterion: Criterion) -> TreeParams {
    TreeParams {
        search: SplitSearch::Best,
        criterion,
        max_features: usize::MAX,
        max_depth: usize::MAX,
        ..params(0)
    }
}

fn classes(codes: &[f64], n_classes: usize) -> (Array2<f64>, Vec<usize>) {
    (
        Array2::from_shape_fn((codes.len(), 1), |(i, _)| codes[i]),
        vec![n_classes],
    )
}

/// One tree by [`grow_tree`] on dense `x` and the target columns `y` (`n_classes` per
/// output, none for regression).
fn grow_dense(
    x: &Array2<f32>,
    (y, n_classes): (&Array2<f64>, &[usize]),
    weights: Option<&Array1<f64>>,
    seed: u32,
    params: TreeParams,
) -> Result<GrownTree> {
    let targets = Targets {
        y: y.view(),
        n_classes: n_classes.to_vec(),
    };
    grow_tree(
        Features::Dense(x.view()),
        &targets,
        weights.map(|w| w.view()),
        seed,
        params,
    )
}

#[test]
fn the_best_split_separates_two_classes() {
    // x = 0, 1, 2, 3 with classes 0, 0, 1, 1 (and a row of weight zero, which the splitter
    // leaves out): one split at the midpoint 1.5, two pure leaves
    let x = ndarray::arr2(&[[0.0f32], [1.0], [2.0], [3.0], [10.0]]);
    let (y, n_classes) = classes(&[0.0, 0.0, 1.0, 1.0, 0.0], 2);
    let weights = ndarray::arr1(&[1.0, 1.0, 1.0, 1.0, 0.0]);
    let t = grow_dense(
        &x,
        (&y, &n_classes),
        Some(&weights),
        5,
        best(Criterion::Gini),
    )
    .unwrap();
    assert_eq!(t.left, vec![1, -1, -1]);
    assert_eq!(t.right, vec![2, -1, -1]);
    assert_eq!(t.feature, vec![0, -2, -2]);
    assert_eq!(t.threshold, vec![1.5, -2.0, -2.0]);
    assert_eq!(t.n_node_samples, vec![4, 2, 2]);
    assert_eq!(t.impurity, vec![0.5, 0.0, 0.0]);
    assert_eq!(t.value, vec![0.5, 0.5, 1.0, 0.0, 0.0, 1.0]);
    assert_eq!(t.depth, 1);
}

#[test]
fn weights_count_as_repeated_rows() {
    // weights 1, 3 and 2: the entropy of the class weights 4 : 2, by hand
    let x = ndarray::arr2(&[[1.0f32, 0.0], [1.0, 0.0], [1.0, 0.0]]);
    let (y, n_classes) = classes(&[0.0, 0.0, 1.0], 2);
    let weights = ndarray::arr1(&[1.0, 3.0, 2.0]);
    let t = grow_dense(
        &x,
        (&y, &n_classes),
        Some(&weights),
        1,
        best(Criterion::Entropy),
    )
    .unwrap();
    let (p, q) = (4.0f64 / 6.0, 2.0f64 / 6.0);
    let entropy = -(p * (p.ln() / std::f64::consts::LN_2)) - q * (q.ln() / std::f64::consts::LN_2);
    // every column is constant: a single leaf
    assert_eq!(t.left, vec![-1]);
    assert_eq!(t.impurity, vec![entropy]);
    assert_eq!(t.weighted_n_node_samples, vec![6.0]);
    assert_eq!(t.value, vec![p, q]);
}

#[test]
fn a_split_below_min_impurity_decrease_is_a_leaf() {
    let x = ndarray::arr2(&[[0.0f32], [1.0], [2.0], [3.0]]);
    let y = ndarray::arr2(&[[0.0], [0.0], [1.0], [1.0]]);
    let mut p = best(Criterion::SquaredError);
    // the split's improvement is the whole variance, 0.25
    p.min_impurity_decrease = 0.25;
    let split = grow_dense(&x, (&y, &[]), None, 0, p).unwrap();
    assert_eq!(split.left.len(), 3);
    assert_eq!(split.value, vec![0.5, 0.0, 1.0]);
    p.min_impurity_decrease = 0.2500001;
    let leaf = grow_dense(&x, (&y, &[]), None, 0, p).unwrap();
    assert_eq!(leaf.left, vec![-1]);
}

#[test]
fn min_weight_leaf_refuses_light_children() {
    // the only splits leave a child of weight 1 or 2 out of 6
    let x = ndarray::arr2(&[[0.0f32], [1.0], [2.0]]);
    let y = ndarray::arr2(&[[0.0], [5.0], [1.0]]);
    let weights = ndarray::arr1(&[1.0, 1.0, 4.0]);
    let mut p = best(Criterion::SquaredError);
    p.min_weight_leaf = 2.5;
    let t = grow_dense(&x, (&y, &[]), Some(&weights), 0, p).unwrap();
    assert_eq!(t.left, vec![-1]);
    p.min_weight_leaf = 2.0;
    let t = grow_dense(&x, (&y, &[]), Some(&weights), 0, p).unwrap();
    assert_eq!(t.threshold[0], 1.5);
}

#[test]
fn bad_targets_and_weights_are_refused() {
    let x = ndarray::arr2(&[[0.0f32], [1.0]]);
    let (y, n_classes) = classes(&[0.0, 2.0], 2);
    let err = grow_dense(&x, (&y, &n_classes), None, 0, best(Criterion::Gini)).unwrap_err();
    assert!(err.to_string().contains("class codes"));
    let (y, n_classes) = classes(&[0.0, 1.0], 2);
    let negative = ndarray::arr1(&[1.0, -1.0]);
    let err = grow_dense(
        &x,
        (&y, &n_classes),
        Some(&negative),
        0,
        best(Criterion::Gini),
    )
    .unwrap_err();
    assert!(err.to_string().contains("not negative"));
}

#[test]
fn the_gate_never_changes_a_best_split_forest() {
    let (x, y) = data(300, 5);
    let codes: Vec<f64> = y.iter().map(|v| (v * 3.0).floor()).collect();
    let (y, n_classes) = classes(&codes, 3);
    let targets = Targets {
        y: y.view(),
        n_classes,
    };
    let samples = Array2::from_shape_fn((8, 100), |(t, i)| ((i * 3 + t) % 300) as i64);
    let columns = Array2::from_shape_fn((8, 5), |(_, j)| j as i64);
    let seeds: Vec<u32> = (0..8).map(|t| 11 + t).collect();
    let mut p = best(Criterion::Gini);
    p.max_features = 2;
    let (serial, parallel) = serial_and_parallel(&TRAVERSAL_MIN_VISITS, || {
        grow_forest(
            Features::Dense(x.view()),
            &targets,
            samples.view(),
            columns.view(),
            &seeds,
            p,
        )
        .unwrap()
    });
    assert_eq!(serial, parallel);
}

#[test]
fn the_split_search_gate_never_changes_a_tree() {
    // class counts of integer weights: a node's features are scanned side by side past the
    // gate, one after the other below it; forced both ways, the trees are equal bit for bit
    use crate::machine_learning::decision_tree::SORT_SCAN_MIN_ELEMS;
    let (x, y) = data(400, 6);
    let codes: Vec<f64> = y.iter().map(|v| (v * 4.0).floor()).collect();
    let (y, n_classes) = classes(&codes, 4);
    let weights = Array1::from_shape_fn(400, |i| (i % 3) as f64);
    for criterion in [Criterion::Gini, Criterion::Entropy] {
        let mut p = best(criterion);
        p.max_features = 4;
        let (serial, parallel) = serial_and_parallel(&SORT_SCAN_MIN_ELEMS, || {
            grow_dense(&x, (&y, &n_classes), Some(&weights), 9, p).unwrap()
        });
        assert!(serial.left.len() > 3);
        assert_eq!(serial, parallel);
    }
}
