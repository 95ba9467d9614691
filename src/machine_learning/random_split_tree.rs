//! Regression trees of random splits, grown exactly as scikit-learn's random splitter grows
//! them (`ExtraTreeRegressor` with the squared error, as `IsolationForest` uses it): the same
//! xorshift draws of features and thresholds, the same depth-first node order, the same
//! in-place partitions and the same summation order, so a forest grown here from the same seeds
//! and subsamples is scikit-learn's to the bit.
//!
//! What must match and why:
//! - the generator is scikit-learn's `our_rand_r` (a 32-bit xorshift); a node draws a feature
//!   with `rand_int`, skipping features already known to be constant (the splitter keeps one
//!   feature array for the whole tree and moves constant ones to its front, so the draws of a
//!   node depend on every node grown before it), then a threshold uniformly between the
//!   feature's float32 minimum and maximum;
//! - the node's samples are partitioned in place (a two-ended swap), which orders the samples
//!   of every child; node sums run in that order, so values and impurities round alike;
//! - the squared-error statistics follow scikit-learn's criterion: the left sum runs forward
//!   or, when the left side is longer, backwards from the total.
//!
//! Trees are independent, so a forest is grown on rayon behind the tree-traversal gate; each
//! tree's arithmetic is serial, so the parallel path gives the same bits.

use crate::error::{Error, Result};
use crate::machine_learning::tree::TRAVERSAL_MIN_VISITS;
use ndarray::{ArrayView1, ArrayView2};
use rayon::prelude::*;

/// scikit-learn's `RAND_R_MAX`.
const RAND_R_MAX: u32 = 0x7FFF_FFFF;
/// A feature whose range is at most this is constant on the node (scikit-learn's
/// `FEATURE_THRESHOLD`).
const FEATURE_THRESHOLD: f64 = 1e-7;

/// The growth limits of every tree of a forest (scikit-learn's names).
#[derive(Debug, Clone, Copy)]
pub struct RandomSplitParams {
    /// Features tried per node (at least one non-constant one is always tried).
    pub max_features: usize,
    pub max_depth: usize,
    pub min_samples_split: usize,
    pub min_samples_leaf: usize,
}

/// One grown tree in scikit-learn's node order (depth first, left child first). A leaf has
/// children `-1`, feature `-2` and threshold `-2.0`, as in scikit-learn's `Tree`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RandomSplitTree {
    pub left: Vec<i64>,
    pub right: Vec<i64>,
    pub feature: Vec<i64>,
    pub threshold: Vec<f64>,
    pub impurity: Vec<f64>,
    pub n_node_samples: Vec<i64>,
    /// The total weight of each node's samples.
    pub weighted_n_node_samples: Vec<f64>,
    /// Whether missing values would go left (scikit-learn's rule without missing values:
    /// the larger child).
    pub missing_go_to_left: Vec<bool>,
    /// The mean target of each node.
    pub value: Vec<f64>,
    /// The depth of the deepest node.
    pub depth: usize,
}

/// scikit-learn's `our_rand_r`.
fn rand_r(state: &mut u32) -> u32 {
    if *state == 0 {
        *state = 1;
    }
    *state ^= *state << 13;
    *state ^= *state >> 17;
    *state ^= *state << 5;
    *state % (RAND_R_MAX + 1)
}

/// scikit-learn's `rand_int`: uniform in `low..high`.
fn rand_int(low: usize, high: usize, state: &mut u32) -> usize {
    low + rand_r(state) as usize % (high - low)
}

/// scikit-learn's `rand_uniform`: in `[low, high)`, evaluated in its order.
fn rand_uniform(low: f64, high: f64, state: &mut u32) -> f64 {
    (high - low) * f64::from(rand_r(state)) / f64::from(RAND_R_MAX) + low
}

/// A node waiting on the depth-first stack.
struct Pending {
    start: usize,
    end: usize,
    depth: usize,
    /// The parent's id and whether this is its left child.
    parent: Option<(usize, bool)>,
    impurity: f64,
    n_constant: usize,
}

/// The chosen split of a node.
struct Split {
    pos: usize,
    feature: usize,
    threshold: f64,
    impurity_left: f64,
    impurity_right: f64,
    improvement: f64,
    missing_go_to_left: bool,
}

/// One tree's grower: the data, the splitter's state and the node sums.
struct Grower<'a> {
    x: ArrayView2<'a, f32>,
    y: ArrayView1<'a, f64>,
    /// Column of `x` for each of the tree's features.
    columns: &'a [usize],
    params: RandomSplitParams,
    /// The tree's distinct rows with their weights (how often each was drawn), in
    /// scikit-learn's sample order for the node being grown.
    samples: Vec<(usize, f64)>,
    features: Vec<usize>,
    constant_features: Vec<usize>,
    state: u32,
    /// The node's statistics (scikit-learn's `sum_total`, `sq_sum_total`, weight).
    sum: f64,
    sq_sum: f64,
    weight: f64,
    /// All samples' weight (scikit-learn's `weighted_n_samples`).
    total_weight: f64,
}

impl Grower<'_> {
    fn value(&self, sample: usize, feature: usize) -> f32 {
        self.x[[sample, self.columns[feature]]]
    }

    /// scikit-learn's `node_reset`: the sums over `start..end` in sample order.
    fn reset_node(&mut self, start: usize, end: usize) {
        let (mut sum, mut sq_sum, mut weight) = (0.0, 0.0, 0.0);
        for &(i, w) in &self.samples[start..end] {
            let wy = w * self.y[i];
            sum += wy;
            sq_sum += wy * self.y[i];
            weight += w;
        }
        self.sum = sum;
        self.sq_sum = sq_sum;
        self.weight = weight;
    }

    /// The left sum and weight after moving `start..pos` left (scikit-learn's `update` from
    /// a reset, which walks the shorter side).
    fn left_sum(&self, start: usize, pos: usize, end: usize) -> (f64, f64) {
        if pos - start <= end - pos {
            let (mut sum, mut weight) = (0.0, 0.0);
            for &(i, w) in &self.samples[start..pos] {
                sum += w * self.y[i];
                weight += w;
            }
            (sum, weight)
        } else {
            let (mut sum, mut weight) = (self.sum, self.weight);
            for &(i, w) in self.samples[pos..end].iter().rev() {
                sum -= w * self.y[i];
                weight -= w;
            }
            (sum, weight)
        }
    }

    /// Sends `x[feature] <= threshold` to the front of `start..end`; the first right position.
    fn partition(&mut self, start: usize, end: usize, feature: usize, threshold: f64) -> usize {
        let (mut p, mut q) = (start, end);
        while p < q {
            if f64::from(self.value(self.samples[p].0, feature)) <= threshold {
                p += 1;
            } else {
                q -= 1;
                self.samples.swap(p, q);
            }
        }
        q
    }

    /// scikit-learn's `node_split_random` for the node `start..end` whose first
    /// `n_known` features in the feature array are known constant; returns the split (if any)
    /// and the number of constant features for the children.
    fn split(
        &mut self,
        start: usize,
        end: usize,
        n_known: usize,
        impurity: f64,
    ) -> (Option<Split>, usize) {
        let params = self.params;
        let mut f_i = self.features.len();
        let (mut n_found, mut n_drawn, mut n_visited) = (0, 0, 0);
        let mut n_total = n_known;
        let mut best: Option<(usize, usize, f64)> = None; // (pos, feature, threshold)
        let mut best_proxy = f64::NEG_INFINITY;
        let mut last_feature = None;
        while f_i > n_total && (n_visited < params.max_features || n_visited <= n_found + n_drawn) {
            n_visited += 1;
            let mut f_j = rand_int(n_drawn, f_i - n_found, &mut self.state);
            if f_j < n_known {
                self.features.swap(n_drawn, f_j);
                n_drawn += 1;
                continue;
            }
            f_j += n_found;
            let feature = self.features[f_j];
            last_feature = Some(feature);
            let first = self.value(self.samples[start].0, feature);
            let (mut min, mut max) = (first, first);
            for &(s, _) in &self.samples[start + 1..end] {
                let v = self.value(s, feature);
                if v < min {
                    min = v;
                } else if v > max {
                    max = v;
                }
            }
            if f64::from(max) <= f64::from(min) + FEATURE_THRESHOLD {
                self.features.swap(f_j, n_total);
                n_found += 1;
                n_total += 1;
                continue;
            }
            f_i -= 1;
            self.features.swap(f_i, f_j);
            let (low, high) = (f64::from(min), f64::from(max));
            let mut threshold = rand_uniform(low, high, &mut self.state);
            if threshold == high {
                threshold = low;
            }
            let pos = self.partition(start, end, feature, threshold);
            if pos - start < params.min_samples_leaf || end - pos < params.min_samples_leaf {
                continue;
            }
            let (sum_left, weight_left) = self.left_sum(start, pos, end);
            let (sum_right, weight_right) = (self.sum - sum_left, self.weight - weight_left);
            let proxy = sum_left * sum_left / weight_left + sum_right * sum_right / weight_right;
            if proxy > best_proxy {
                best_proxy = proxy;
                best = Some((pos, feature, threshold));
            }
        }
        let split = best.map(|(pos, feature, threshold)| {
            if last_feature != Some(feature) {
                self.partition(start, end, feature, threshold);
            }
            let (sum_left, weight_left) = self.left_sum(start, pos, end);
            let (sum_right, weight_right) = (self.sum - sum_left, self.weight - weight_left);
            let mut sq_left = 0.0;
            for &(i, w) in &self.samples[start..pos] {
                sq_left += w * self.y[i] * self.y[i];
            }
            let sq_right = self.sq_sum - sq_left;
            let mean_left = sum_left / weight_left;
            let mean_right = sum_right / weight_right;
            let impurity_left = sq_left / weight_left - mean_left * mean_left;
            let impurity_right = sq_right / weight_right - mean_right * mean_right;
            let improvement = (self.weight / self.total_weight)
                * (impurity
                    - weight_right / self.weight * impurity_right
                    - weight_left / self.weight * impurity_left);
            Split {
                pos,
                feature,
                threshold,
                impurity_left,
                impurity_right,
                improvement,
                missing_go_to_left: pos - start > end - pos,
            }
        });
        // The known constant features keep their order for the children; the newly found
        // ones follow them.
        self.features[..n_known].copy_from_slice(&self.constant_features[..n_known]);
        let found = self.features[n_known..n_known + n_found].to_vec();
        self.constant_features[n_known..n_known + n_found].copy_from_slice(&found);
        (split, n_total)
    }

    fn grow(mut self) -> RandomSplitTree {
        let mut tree = RandomSplitTree::default();
        let mut stack = vec![Pending {
            start: 0,
            end: self.samples.len(),
            depth: 0,
            parent: None,
            impurity: f64::INFINITY,
            n_constant: 0,
        }];
        let params = self.params;
        let mut first = true;
        while let Some(node) = stack.pop() {
            let (start, end) = (node.start, node.end);
            let n = end - start;
            self.reset_node(start, end);
            let mut is_leaf = node.depth >= params.max_depth
                || n < params.min_samples_split
                || n < 2 * params.min_samples_leaf;
            let impurity = if first {
                first = false;
                let mean = self.sum / self.weight;
                self.sq_sum / self.weight - mean * mean
            } else {
                node.impurity
            };
            is_leaf |= impurity <= f64::EPSILON;
            let mut n_constant = node.n_constant;
            let split = if is_leaf {
                None
            } else {
                let (found, constants) = self.split(start, end, node.n_constant, impurity);
                n_constant = constants;
                // scikit-learn: a leaf when `improvement + EPSILON < min_impurity_decrease`
                found.filter(|s| {
                    (s.improvement + f64::EPSILON).partial_cmp(&0.0)
                        != Some(std::cmp::Ordering::Less)
                })
            };
            let id = tree.left.len();
            if let Some((parent, is_left)) = node.parent {
                let slot = if is_left {
                    &mut tree.left
                } else {
                    &mut tree.right
                };
                slot[parent] = id as i64;
            }
            tree.left.push(-1);
            tree.right.push(-1);
            tree.impurity.push(impurity);
            tree.n_node_samples.push(n as i64);
            tree.weighted_n_node_samples.push(self.weight);
            tree.value.push(self.sum / self.weight);
            tree.depth = tree.depth.max(node.depth);
            match split {
                Some(s) => {
                    tree.feature.push(s.feature as i64);
                    tree.threshold.push(s.threshold);
                    tree.missing_go_to_left.push(s.missing_go_to_left);
                    for (is_left, start, end, impurity) in [
                        (false, s.pos, end, s.impurity_right),
                        (true, start, s.pos, s.impurity_left),
                    ] {
                        stack.push(Pending {
                            start,
                            end,
                            depth: node.depth + 1,
                            parent: Some((id, is_left)),
                            impurity,
                            n_constant,
                        });
                    }
                }
                None => {
                    tree.feature.push(-2);
                    tree.threshold.push(-2.0);
                    tree.missing_go_to_left.push(false);
                }
            }
        }
        tree
    }
}

/// Grows one tree per row of `samples` (each row: the rows of `x` the tree is fit on, a row
/// drawn `k` times weighing `k`, as scikit-learn's bagging passes its draws as sample weights)
/// over the columns of the same row of `columns`, with the splitter seed of the same place in
/// `seeds` (the number scikit-learn's splitter draws from the tree's `random_state`). `y` holds
/// one target per row of `x`.
pub fn grow_random_split_forest(
    x: ArrayView2<f32>,
    y: ArrayView1<f64>,
    samples: ArrayView2<i64>,
    columns: ArrayView2<i64>,
    seeds: &[u32],
    params: RandomSplitParams,
) -> Result<Vec<RandomSplitTree>> {
    let (n, d) = x.dim();
    let n_trees = seeds.len();
    if samples.nrows() != n_trees || columns.nrows() != n_trees {
        return Err(Error::invalid_input(format!(
            "one row of samples and of columns per seed: {} seeds, {} and {} rows",
            n_trees,
            samples.nrows(),
            columns.nrows()
        )));
    }
    if y.len() != n {
        return Err(Error::invalid_input(format!(
            "y has {} values for {n} rows of x",
            y.len()
        )));
    }
    if samples.ncols() == 0 || columns.ncols() == 0 {
        return Err(Error::invalid_input(
            "each tree needs at least one sample and one column",
        ));
    }
    if params.max_features == 0 || params.min_samples_leaf == 0 || params.min_samples_split < 2 {
        return Err(Error::invalid_input(
            "max_features and min_samples_leaf must be at least 1, min_samples_split at least 2",
        ));
    }
    if !x.iter().all(|v| v.is_finite()) || !y.iter().all(|v| v.is_finite()) {
        return Err(Error::invalid_input("x and y must be finite"));
    }
    let in_range = |v: &i64, bound: usize| usize::try_from(*v).is_ok_and(|v| v < bound);
    if !samples.iter().all(|v| in_range(v, n)) || !columns.iter().all(|v| in_range(v, d)) {
        return Err(Error::invalid_input(
            "a sample or column index is out of range",
        ));
    }
    let grow = |t: usize| {
        let mut drawn: Vec<usize> = samples.row(t).iter().map(|&i| i as usize).collect();
        drawn.sort_unstable();
        // scikit-learn's splitter: each drawn row once, in row order, weighing its draws
        let mut chosen: Vec<(usize, f64)> = Vec::with_capacity(drawn.len());
        for i in drawn {
            match chosen.last_mut() {
                Some((last, w)) if *last == i => *w += 1.0,
                _ => chosen.push((i, 1.0)),
            }
        }
        let cols: Vec<usize> = columns.row(t).iter().map(|&c| c as usize).collect();
        let total_weight = samples.ncols() as f64;
        let d_tree = cols.len();
        Grower {
            x,
            y,
            columns: &cols,
            params,
            samples: chosen,
            features: (0..d_tree).collect(),
            constant_features: vec![0; d_tree],
            state: seeds[t],
            sum: 0.0,
            sq_sum: 0.0,
            weight: 0.0,
            total_weight,
        }
        .grow()
    };
    let work = n_trees
        .saturating_mul(samples.ncols())
        .saturating_mul(params.max_depth.max(1));
    Ok(if TRAVERSAL_MIN_VISITS.allows_parallel(work) {
        (0..n_trees).into_par_iter().map(grow).collect()
    } else {
        (0..n_trees).map(grow).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::serial_and_parallel;
    use ndarray::{Array1, Array2};

    fn params(max_depth: usize) -> RandomSplitParams {
        RandomSplitParams {
            max_features: 1,
            max_depth,
            min_samples_split: 2,
            min_samples_leaf: 1,
        }
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
    fn check_tree(
        t: &RandomSplitTree,
        x: &Array2<f32>,
        y: &Array1<f64>,
        rows: &[usize],
        depth: usize,
    ) {
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
        let bad_column =
            grow(ndarray::arr2(&[[1i64, 2]]), &ndarray::arr2(&[[0i64, 2]])).unwrap_err();
        assert!(bad_column.to_string().contains("out of range"));
    }
}
