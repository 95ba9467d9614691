//! Decision trees grown exactly as scikit-learn grows them, so that a tree fitted here from the
//! same data, weights and seed is scikit-learn's to the bit: its nodes, thresholds, values and
//! impurities. The scikit-learn door's `DecisionTreeClassifier` / `DecisionTreeRegressor` and
//! `IsolationForest` fit on it; rustyml's own `DecisionTree` keeps its faster presorted grower
//! (`machine_learning::tree`), which breaks ties its own way.
//!
//! What must match, and why (scikit-learn 1.9's dense splitters and depth-first builder):
//! - the generator is scikit-learn's `our_rand_r` (a 32-bit xorshift); a node draws its
//!   features with `rand_int` in a Fisher-Yates walk that skips features already known to be
//!   constant (one feature array serves the whole tree, constants moved to its front, so the
//!   draws of a node depend on every node grown before it);
//! - the best splitter sorts the node's samples in place by each drawn feature with
//!   scikit-learn's unstable introsort ([`sort`]), one feature after the other, and the first
//!   strictly best split in draw order wins; the random splitter draws a threshold uniformly
//!   between the float32 extremes and partitions with a two-ended swap;
//! - the winning split's two-ended partition orders each child's samples, and all sums run
//!   in sample order, moving the split by the shorter side ([`criterion`]);
//! - nodes are numbered depth first, left child first; a node is a leaf by scikit-learn's
//!   tests (`max_depth`, sample counts, weights, impurity at most `EPSILON`,
//!   `improvement + EPSILON < min_impurity_decrease`).
//!
//! Each tree's arithmetic is serial; a forest's trees are independent, so they grow on rayon
//! behind the tree-traversal gate and the parallel path gives the same bits.

mod criterion;
mod partitioner;
mod sort;

pub use criterion::Criterion;
pub use partitioner::{CscColumns, Features};

use crate::error::{Error, Result};
use crate::machine_learning::decision_tree::SORT_SCAN_MIN_ELEMS;
use crate::machine_learning::tree::TRAVERSAL_MIN_VISITS;
use criterion::{Statistics, TargetTable};
use ndarray::{ArrayView1, ArrayView2};
use partitioner::Partitioner;
use rayon::prelude::*;

/// scikit-learn's `RAND_R_MAX`.
const RAND_R_MAX: u32 = 0x7FFF_FFFF;
/// Values at most this far apart count as equal (scikit-learn's `FEATURE_THRESHOLD`, a
/// float32 constant: its comparisons add it to a float32 value in float32).
const FEATURE_THRESHOLD: f32 = 1e-7;

/// How a node's split is searched (scikit-learn's `splitter`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitSearch {
    /// `"best"`: every threshold between distinct values of each drawn feature.
    Best,
    /// `"random"`: one uniform threshold per drawn feature.
    Random,
}

/// The growth rules of a tree, as scikit-learn's builder receives them (after `fit` has
/// resolved fractions, `None`s and `min_samples_split = max(min_samples_split,
/// 2 min_samples_leaf)`).
#[derive(Debug, Clone, Copy)]
pub struct TreeParams {
    pub search: SplitSearch,
    pub criterion: Criterion,
    /// Features tried per node (at least one non-constant one is always tried).
    pub max_features: usize,
    pub max_depth: usize,
    pub min_samples_split: usize,
    pub min_samples_leaf: usize,
    /// The least weight a child may hold.
    pub min_weight_leaf: f64,
    pub min_impurity_decrease: f64,
    /// Best-first growth up to this many leaves (`None`: depth first).
    pub max_leaf_nodes: Option<usize>,
}

impl TreeParams {
    fn check(&self) -> Result<()> {
        if self.max_features == 0 || self.min_samples_leaf == 0 || self.min_samples_split < 2 {
            return Err(Error::invalid_input(
                "max_features and min_samples_leaf must be at least 1, min_samples_split at least 2",
            ));
        }
        if self.max_leaf_nodes.is_some_and(|m| m < 2) {
            return Err(Error::invalid_input("max_leaf_nodes must be at least 2"));
        }
        if !(self.min_weight_leaf >= 0.0 && self.min_impurity_decrease >= 0.0) {
            return Err(Error::invalid_input(
                "min_weight_leaf and min_impurity_decrease must be at least 0",
            ));
        }
        Ok(())
    }
}

/// The targets of a tree: one column per output; for a classification criterion each column
/// holds class codes `0..n_classes[k]`.
#[derive(Debug, Clone)]
pub struct Targets<'a> {
    pub y: ArrayView2<'a, f64>,
    /// Classes per output; empty for regression.
    pub n_classes: Vec<usize>,
}

impl Targets<'_> {
    pub fn n_outputs(&self) -> usize {
        self.y.ncols()
    }

    /// Values per output and node in [`GrownTree::value`].
    pub fn stride(&self) -> usize {
        self.n_classes.iter().copied().max().unwrap_or(1)
    }

    fn check(&self, n_rows: usize, criterion: Criterion) -> Result<()> {
        if self.y.nrows() != n_rows || self.y.ncols() == 0 {
            return Err(Error::invalid_input(format!(
                "y has {} rows of {} outputs for {n_rows} rows of x",
                self.y.nrows(),
                self.y.ncols()
            )));
        }
        if !self.y.iter().all(|v| v.is_finite()) {
            return Err(Error::invalid_input("y must be finite"));
        }
        if criterion.is_classification() {
            if self.n_classes.len() != self.y.ncols() {
                return Err(Error::invalid_input("one class count per output"));
            }
            for (column, &classes) in self.y.columns().into_iter().zip(&self.n_classes) {
                let valid = |c: &f64| *c >= 0.0 && c.fract() == 0.0 && (*c as usize) < classes;
                if !column.iter().all(valid) {
                    return Err(Error::invalid_input(
                        "class codes must be integers below their output's class count",
                    ));
                }
            }
        } else if !self.n_classes.is_empty() {
            return Err(Error::invalid_input(
                "a regression criterion takes no class counts",
            ));
        }
        Ok(())
    }
}

/// One grown tree in scikit-learn's node order (depth first, left child first). A leaf has
/// children `-1`, feature `-2` and threshold `-2.0`, as in scikit-learn's `Tree`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GrownTree {
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
    /// Per node and output, the class fractions (classification, `stride` slots per output)
    /// or the mean target (regression).
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

/// A node to add: its samples `start..end`, depth, parent (id, and whether this is its left
/// child), the parent's figure for its impurity (`None` for the root, whose impurity is
/// computed) and the constant features known on entry.
struct Pending {
    start: usize,
    end: usize,
    depth: usize,
    parent: Option<(usize, bool)>,
    impurity: Option<f64>,
    n_constant: usize,
}

/// A feature's best split position: scikit-learn's proxy improvement, the first right
/// position, the threshold and the side missing values would take.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    proxy: f64,
    pos: usize,
    threshold: f64,
    missing_go_to_left: bool,
}

/// scikit-learn's running best: a later candidate wins only with a strictly larger proxy.
fn keep_first_best(best: &mut Option<(usize, Candidate)>, feature: usize, candidate: Candidate) {
    if candidate.proxy > best.map_or(f64::NEG_INFINITY, |(_, b)| b.proxy) {
        *best = Some((feature, candidate));
    }
}

/// The first best split of the sorted values `fv[start..end]` (samples alike), runs of equal
/// values skipped by `next_p` (scikit-learn's `next_p`), with its rules on leaf sizes and
/// weights; the split moves through `stats` position by position, as scikit-learn's does.
fn scan_sorted(
    stats: &mut Statistics,
    samples: &[usize],
    fv: &[f32],
    next_p: impl Fn(usize) -> (usize, usize),
    start: usize,
    end: usize,
    params: &TreeParams,
) -> Option<Candidate> {
    let (min_leaf, min_weight) = (params.min_samples_leaf, params.min_weight_leaf);
    let mut best: Option<Candidate> = None;
    stats.reset();
    let mut p = start;
    while p < end {
        let (p_prev, next) = next_p(p);
        p = next;
        if p >= end {
            break;
        }
        let (n_left, n_right) = (p - start, end - p);
        if n_left < min_leaf || n_right < min_leaf {
            continue;
        }
        stats.update(samples, p);
        if stats.weighted_n_left < min_weight || stats.weighted_n_right < min_weight {
            continue;
        }
        let proxy = stats.proxy_impurity_improvement(samples);
        if proxy > best.map_or(f64::NEG_INFINITY, |b| b.proxy) {
            best = Some(Candidate {
                proxy,
                pos: p,
                threshold: f64::from(fv[p_prev]) / 2.0 + f64::from(fv[p]) / 2.0,
                missing_go_to_left: n_left > n_right,
            });
        }
    }
    best
}

/// One tree's grower: the splitter's state and the criterion's statistics.
struct Grower<'a> {
    params: TreeParams,
    stride: usize,
    part: Partitioner<'a>,
    features: Vec<usize>,
    constant_features: Vec<usize>,
    state: u32,
    stats: Statistics<'a>,
    /// Whether no result depends on the order of a node's samples: class counts of integer
    /// weights (below 2^53) are exact in any order, so every sum, proxy and impurity is.
    order_free: bool,
}

impl Grower<'_> {
    /// The best split of `feature` on `start..end` (scikit-learn's inner loop of
    /// `node_split_best`): `Err(())` if the feature is constant. Sorts the node's samples by
    /// the feature, as scikit-learn does.
    fn best_on_feature(
        &mut self,
        start: usize,
        end: usize,
        feature: usize,
    ) -> std::result::Result<Option<Candidate>, ()> {
        self.part.sort(start, end, feature);
        let fv = &self.part.feature_values;
        if fv[end - 1] <= fv[start] + FEATURE_THRESHOLD {
            return Err(());
        }
        let part = &self.part;
        Ok(scan_sorted(
            &mut self.stats,
            &part.samples,
            fv,
            |p| part.next_p(p, end),
            start,
            end,
            &self.params,
        ))
    }

    /// [`Self::best_on_feature`] on private copies of the node's samples, leaving the node
    /// as it is: for criteria whose sums are exact in any order (see `order_free`), where the
    /// features of a node can be scanned side by side.
    fn best_on_copy(&self, start: usize, end: usize, feature: usize) -> Option<Candidate> {
        let mut samples = self.part.samples[start..end].to_vec();
        let mut fv: Vec<f32> = samples
            .iter()
            .map(|&s| self.part.value(s, feature))
            .collect();
        sort::simultaneous_sort(&mut fv, &mut samples);
        let mut stats = self.stats.clone();
        let n = samples.len();
        stats.init(&samples, 0, n);
        let next_p = |mut p: usize| {
            while p + 1 < n && fv[p + 1] <= fv[p] + FEATURE_THRESHOLD {
                p += 1;
            }
            (p, p + 1)
        };
        scan_sorted(&mut stats, &samples, &fv, next_p, 0, n, &self.params).map(|c| Candidate {
            pos: c.pos + start,
            ..c
        })
    }

    /// One random split of `feature` on `start..end` (scikit-learn's inner loop of
    /// `node_split_random`): `Err(())` if the feature is constant.
    fn random_on_feature(
        &mut self,
        start: usize,
        end: usize,
        feature: usize,
    ) -> std::result::Result<Option<Candidate>, ()> {
        let (min, max) = self.part.min_max(start, end, feature);
        if max <= min + FEATURE_THRESHOLD {
            return Err(());
        }
        let (low, high) = (f64::from(min), f64::from(max));
        let mut threshold = rand_uniform(low, high, &mut self.state);
        if threshold == high {
            threshold = low;
        }
        let pos = self.part.partition_random(start, end, threshold);
        let (n_left, n_right) = (pos - start, end - pos);
        let min_weight = self.params.min_weight_leaf;
        if n_left < self.params.min_samples_leaf || n_right < self.params.min_samples_leaf {
            return Ok(None);
        }
        self.stats.reset();
        self.stats.update(&self.part.samples, pos);
        if self.stats.weighted_n_left < min_weight || self.stats.weighted_n_right < min_weight {
            return Ok(None);
        }
        Ok(Some(Candidate {
            proxy: self.stats.proxy_impurity_improvement(&self.part.samples),
            pos,
            threshold,
            missing_go_to_left: n_left > n_right,
        }))
    }

    /// scikit-learn's `node_split_best` / `node_split_random` for the node `start..end` whose
    /// first `n_known` features in the feature array are known constant; returns the split
    /// (if any) and the number of constant features for the children.
    fn split(
        &mut self,
        start: usize,
        end: usize,
        n_known: usize,
        impurity: f64,
    ) -> (Option<Split>, usize) {
        let params = self.params;
        self.part.begin_node();
        let mut f_i = self.features.len();
        let (mut n_found, mut n_drawn, mut n_visited) = (0, 0, 0);
        let mut n_total = n_known;
        let mut best: Option<(usize, Candidate)> = None;
        let mut last_feature = None;
        // Where no sum depends on the samples' order, the drawn features are only checked for
        // constancy (by their extremes, as the sorted values' ends would) in the draw loop
        // and scanned side by side after it.
        let n = end - start;
        let side_by_side = params.search == SplitSearch::Best
            && self.order_free
            && SORT_SCAN_MIN_ELEMS.allows_parallel(n.saturating_mul(params.max_features.min(f_i)));
        let mut drawn = Vec::new();
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
            let evaluated = match params.search {
                _ if side_by_side => {
                    let (min, max) = self.part.min_max(start, end, feature);
                    if max <= min + FEATURE_THRESHOLD {
                        Err(())
                    } else {
                        drawn.push(feature);
                        Ok(None)
                    }
                }
                SplitSearch::Best => self.best_on_feature(start, end, feature),
                SplitSearch::Random => self.random_on_feature(start, end, feature),
            };
            match evaluated {
                Err(()) => {
                    self.features.swap(f_j, n_total);
                    n_found += 1;
                    n_total += 1;
                    continue;
                }
                Ok(Some(candidate)) => keep_first_best(&mut best, feature, candidate),
                Ok(None) => {}
            }
            f_i -= 1;
            self.features.swap(f_i, f_j);
        }
        if side_by_side {
            let this = &*self;
            let scanned: Vec<Option<Candidate>> = drawn
                .par_iter()
                .map(|&feature| this.best_on_copy(start, end, feature))
                .collect();
            for (feature, candidate) in drawn.into_iter().zip(scanned) {
                if let Some(candidate) = candidate {
                    keep_first_best(&mut best, feature, candidate);
                }
            }
        }
        let split = best.map(|(feature, c)| {
            let (pos, threshold, missing_go_to_left) = (c.pos, c.threshold, c.missing_go_to_left);
            // the random splitter's samples are already split by its last feature
            if params.search == SplitSearch::Best || last_feature != Some(feature) {
                self.part.partition_final(start, end, feature, threshold);
            }
            self.stats.reset();
            self.stats.update(&self.part.samples, pos);
            let (impurity_left, impurity_right) = self.stats.children_impurity(&self.part.samples);
            let improvement =
                self.stats
                    .impurity_improvement(impurity, impurity_left, impurity_right);
            Split {
                pos,
                feature,
                threshold,
                impurity_left,
                impurity_right,
                improvement,
                missing_go_to_left,
            }
        });
        // The known constant features keep their order for the children; the newly found
        // ones follow them.
        self.features[..n_known].copy_from_slice(&self.constant_features[..n_known]);
        let found = self.features[n_known..n_known + n_found].to_vec();
        self.constant_features[n_known..n_known + n_found].copy_from_slice(&found);
        (split, n_total)
    }

    /// Adds `node` to `tree` (scikit-learn's `node_reset`, stopping rules, `node_split` and
    /// `_add_node`), its split searched unless a stopping rule holds. Returns the node, its
    /// split and the constant count for its children.
    fn add_node(&mut self, tree: &mut GrownTree, node: Pending) -> Added {
        let Pending {
            start,
            end,
            depth,
            parent,
            impurity,
            n_constant,
        } = node;
        let params = self.params;
        let n = end - start;
        self.stats.init(&self.part.samples, start, end);
        let weight = self.stats.weighted_n_node_samples;
        let impurity = impurity.unwrap_or_else(|| self.stats.node_impurity(&self.part.samples));
        let is_leaf = depth >= params.max_depth
            || n < params.min_samples_split
            || n < 2 * params.min_samples_leaf
            || weight < 2.0 * params.min_weight_leaf
            || impurity <= f64::EPSILON;
        let (split, n_constant) = if is_leaf {
            (None, n_constant)
        } else {
            let (found, constants) = self.split(start, end, n_constant, impurity);
            let found =
                found.filter(|s| s.improvement + f64::EPSILON >= params.min_impurity_decrease);
            (found, constants)
        };
        let id = tree.left.len();
        if let Some((parent, is_left)) = parent {
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
        tree.weighted_n_node_samples.push(weight);
        // the node's sums as `init` left them (a split search moves only the sides' sums)
        self.stats.node_value(self.stride, &mut tree.value);
        tree.depth = tree.depth.max(depth);
        let (feature, threshold, go_left) = split.as_ref().map_or((-2, -2.0, false), |s| {
            (s.feature as i64, s.threshold, s.missing_go_to_left)
        });
        tree.feature.push(feature);
        tree.threshold.push(threshold);
        tree.missing_go_to_left.push(go_left);
        Added {
            id,
            start,
            end,
            depth,
            split,
            n_constant,
        }
    }

    /// The root: all samples, its impurity to compute.
    fn root(&self) -> Pending {
        Pending {
            start: 0,
            end: self.part.samples.len(),
            depth: 0,
            parent: None,
            impurity: None,
            n_constant: 0,
        }
    }

    /// scikit-learn's `DepthFirstTreeBuilder.build`.
    fn grow_depth_first(mut self) -> GrownTree {
        let mut tree = GrownTree::default();
        let mut stack = vec![self.root()];
        while let Some(pending) = stack.pop() {
            let (start, end, depth) = (pending.start, pending.end, pending.depth);
            let node = self.add_node(&mut tree, pending);
            if let Some(s) = node.split {
                for (is_left, start, end, impurity) in [
                    (false, s.pos, end, s.impurity_right),
                    (true, start, s.pos, s.impurity_left),
                ] {
                    stack.push(Pending {
                        start,
                        end,
                        depth: depth + 1,
                        parent: Some((node.id, is_left)),
                        impurity: Some(impurity),
                        n_constant: node.n_constant,
                    });
                }
            }
        }
        tree
    }

    /// scikit-learn's `BestFirstTreeBuilder.build`: every node's split is searched when the
    /// node is added (its constant features unknown, so counted from 0), and the frontier
    /// node of largest improvement is split next until `max_leaf_nodes - 1` nodes are split;
    /// the rest become leaves. The frontier is a binary heap kept as libstdc++'s `push_heap`
    /// / `pop_heap` keep it, so ties pop in scikit-learn's order.
    fn grow_best_first(mut self, max_leaf_nodes: usize) -> GrownTree {
        let mut tree = GrownTree::default();
        let mut frontier: Vec<Option<Added>> = Vec::new();
        let root = self.root();
        let root = self.add_node(&mut tree, root);
        heap::push(&mut frontier, root);
        let mut max_split_nodes = max_leaf_nodes.saturating_sub(1);
        while let Some(record) = heap::pop(&mut frontier) {
            let id = record.id;
            match record.split {
                Some(s) if max_split_nodes > 0 => {
                    max_split_nodes -= 1;
                    let child = |is_left, start, end, impurity| Pending {
                        start,
                        end,
                        depth: record.depth + 1,
                        parent: Some((id, is_left)),
                        impurity: Some(impurity),
                        n_constant: 0,
                    };
                    let left = child(true, record.start, s.pos, s.impurity_left);
                    let left = self.add_node(&mut tree, left);
                    let right = child(false, s.pos, record.end, s.impurity_right);
                    let right = self.add_node(&mut tree, right);
                    heap::push(&mut frontier, left);
                    heap::push(&mut frontier, right);
                }
                _ => {
                    // a leaf, or a split past the budget turned into one (scikit-learn
                    // keeps such a node's missing-value side)
                    tree.left[id] = -1;
                    tree.right[id] = -1;
                    tree.feature[id] = -2;
                    tree.threshold[id] = -2.0;
                }
            }
        }
        tree
    }
}

/// A node just added, with what its expansion needs (scikit-learn's `FrontierRecord`).
struct Added {
    id: usize,
    start: usize,
    end: usize,
    depth: usize,
    split: Option<Split>,
    n_constant: usize,
}

impl Added {
    /// The frontier's order: a leaf counts as improvement 0.
    fn improvement(&self) -> f64 {
        self.split.as_ref().map_or(0.0, |s| s.improvement)
    }
}

/// libstdc++'s `push_heap` / `pop_heap` on a max-heap of frontier records by improvement
/// (scikit-learn's builder runs them with `a.improvement < b.improvement`).
mod heap {
    use super::Added;

    fn less(a: &Added, b: &Added) -> bool {
        a.improvement() < b.improvement()
    }

    /// `__push_heap`: moves the hole at `hole` up while its parent is less than `value`.
    fn sift_up(heap: &mut [Option<Added>], mut hole: usize, top: usize, value: Added) {
        while hole > top {
            let parent = (hole - 1) / 2;
            if !less(heap[parent].as_ref().unwrap(), &value) {
                break;
            }
            heap[hole] = heap[parent].take();
            hole = parent;
        }
        heap[hole] = Some(value);
    }

    /// `push_back` then `push_heap`. Every slot of the heap holds a record between calls.
    pub(super) fn push(heap: &mut Vec<Option<Added>>, value: Added) {
        let hole = heap.len();
        heap.push(None);
        sift_up(heap, hole, 0, value);
    }

    /// `pop_heap` then `back` / `pop_back`: the largest record (`__adjust_heap` moves the
    /// hole down to a leaf along the larger children, then the last record sifts up).
    pub(super) fn pop(slots: &mut Vec<Option<Added>>) -> Option<Added> {
        let len = slots.len();
        if len <= 1 {
            return slots.pop().flatten();
        }
        let value = slots[len - 1].take().unwrap();
        let top = slots[0].take();
        let n = len - 1; // the heap's length without the moved-out last record
        let mut hole = 0;
        let mut child = 0;
        while child < n.saturating_sub(1) / 2 {
            child = 2 * (child + 1);
            if less(
                slots[child].as_ref().unwrap(),
                slots[child - 1].as_ref().unwrap(),
            ) {
                child -= 1;
            }
            slots[hole] = slots[child].take();
            hole = child;
        }
        if n.is_multiple_of(2) && child == n.saturating_sub(2) / 2 {
            child = 2 * (child + 1);
            slots[hole] = slots[child - 1].take();
            hole = child - 1;
        }
        sift_up(slots, hole, 0, value);
        slots.truncate(n);
        top
    }
}

/// Grows one tree on the rows of `x` whose `weights` are positive, with the splitter seed
/// `seed` (the number scikit-learn's splitter draws from the estimator's `random_state`), over
/// the columns `columns` of `x`; the tree's features are positions in `columns`.
fn grow_one(
    x: &Features,
    table: &TargetTable,
    stride: usize,
    weights: &[f64],
    columns: &[usize],
    seed: u32,
    params: TreeParams,
) -> GrownTree {
    // scikit-learn's splitter: the samples of non-zero weight, in row order; the total
    // weight over all rows
    let samples: Vec<usize> = (0..weights.len()).filter(|&i| weights[i] != 0.0).collect();
    let mut total_weight = 0.0;
    for &w in weights {
        total_weight += w;
    }
    let d = columns.len();
    let order_free = params.criterion.is_classification()
        && matches!(x, Features::Dense(_))
        && total_weight < 2f64.powi(53)
        && weights.iter().all(|w| w.fract() == 0.0);
    let grower = Grower {
        order_free,
        params,
        stride,
        part: Partitioner::new(x.reborrow(), columns, samples),
        features: (0..d).collect(),
        constant_features: vec![0; d],
        state: seed,
        stats: Statistics::new(table, weights, total_weight),
    };
    match params.max_leaf_nodes {
        Some(max_leaf_nodes) => grower.grow_best_first(max_leaf_nodes),
        None => grower.grow_depth_first(),
    }
}

fn check_data(x: &Features, targets: &Targets, params: &TreeParams) -> Result<()> {
    params.check()?;
    targets.check(x.n_rows(), params.criterion)?;
    if x.n_cols() == 0 {
        return Err(Error::invalid_input("x needs at least one column"));
    }
    match x {
        Features::Dense(x) => {
            if !x.iter().all(|v| v.is_finite()) {
                return Err(Error::invalid_input("x must be finite"));
            }
        }
        Features::Sparse(c) => {
            let nnz = c.indices.len();
            let ends_ok = c.indptr.first() == Some(&0)
                && c.indptr.last() == Some(&nnz)
                && c.data.len() == nnz
                && c.indptr.windows(2).all(|w| w[0] <= w[1]);
            if !ends_ok {
                return Err(Error::invalid_input(
                    "sparse x: indptr must rise from 0 to the number of stored values",
                ));
            }
            let ascending = c.indptr.windows(2).all(|w| {
                let rows = &c.indices[w[0]..w[1]];
                rows.windows(2).all(|r| r[0] < r[1]) && rows.iter().all(|&r| r < c.n_rows)
            });
            if !ascending {
                return Err(Error::invalid_input(
                    "sparse x: each column's row indices must ascend without repeats, below the row count",
                ));
            }
            if !c.data.iter().all(|v| v.is_finite()) {
                return Err(Error::invalid_input("x must be finite"));
            }
        }
    }
    Ok(())
}

/// Grows the tree scikit-learn's `DecisionTreeClassifier` / `DecisionTreeRegressor` grows
/// from `x` (float32, dense or CSC, as scikit-learn converts it), `targets`, optional `sample_weight` and the
/// splitter seed `seed`.
pub fn grow_tree(
    x: Features,
    targets: &Targets,
    sample_weight: Option<ArrayView1<f64>>,
    seed: u32,
    params: TreeParams,
) -> Result<GrownTree> {
    check_data(&x, targets, &params)?;
    let n = x.n_rows();
    let weights: Vec<f64> = match sample_weight {
        Some(w) if w.len() != n => {
            return Err(Error::invalid_input(format!(
                "{} sample weights for {n} rows",
                w.len()
            )))
        }
        Some(w) => w.to_vec(),
        None => vec![1.0; n],
    };
    if !weights.iter().all(|w| w.is_finite() && *w >= 0.0) {
        return Err(Error::invalid_input(
            "sample weights must be finite and not negative",
        ));
    }
    if !weights.iter().any(|&w| w > 0.0) {
        return Err(Error::invalid_input("no sample has a positive weight"));
    }
    let columns: Vec<usize> = (0..x.n_cols()).collect();
    let table = TargetTable::new(params.criterion, targets);
    Ok(grow_one(
        &x,
        &table,
        targets.stride(),
        &weights,
        &columns,
        seed,
        params,
    ))
}

/// Grows one tree per row of `samples` (each row: the rows of `x` the tree is fit on, a row
/// drawn `k` times weighing `k`, as scikit-learn's bagging passes its draws as sample weights)
/// over the columns of the same row of `columns`, with the splitter seed of the same place in
/// `seeds`.
pub fn grow_forest(
    x: Features,
    targets: &Targets,
    samples: ArrayView2<i64>,
    columns: ArrayView2<i64>,
    seeds: &[u32],
    params: TreeParams,
) -> Result<Vec<GrownTree>> {
    check_data(&x, targets, &params)?;
    let (n, d) = (x.n_rows(), x.n_cols());
    let n_trees = seeds.len();
    if samples.nrows() != n_trees || columns.nrows() != n_trees {
        return Err(Error::invalid_input(format!(
            "one row of samples and of columns per seed: {} seeds, {} and {} rows",
            n_trees,
            samples.nrows(),
            columns.nrows()
        )));
    }
    if samples.ncols() == 0 || columns.ncols() == 0 {
        return Err(Error::invalid_input(
            "each tree needs at least one sample and one column",
        ));
    }
    let in_range = |v: &i64, bound: usize| usize::try_from(*v).is_ok_and(|v| v < bound);
    if !samples.iter().all(|v| in_range(v, n)) || !columns.iter().all(|v| in_range(v, d)) {
        return Err(Error::invalid_input(
            "a sample or column index is out of range",
        ));
    }
    let table = TargetTable::new(params.criterion, targets);
    let stride = targets.stride();
    let grow = |t: usize| {
        let mut weights = vec![0.0; n];
        for &i in samples.row(t) {
            weights[i as usize] += 1.0;
        }
        let cols: Vec<usize> = columns.row(t).iter().map(|&c| c as usize).collect();
        grow_one(&x, &table, stride, &weights, &cols, seeds[t], params)
    };
    let work = n_trees
        .saturating_mul(samples.ncols())
        .saturating_mul(params.max_depth.clamp(1, 64));
    Ok(if TRAVERSAL_MIN_VISITS.allows_parallel(work) {
        (0..n_trees).into_par_iter().map(grow).collect()
    } else {
        (0..n_trees).map(grow).collect()
    })
}

#[cfg(test)]
mod tests;
