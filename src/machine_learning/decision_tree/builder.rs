//! Grows the flat tree. Every feature is sorted once; each node then owns a contiguous
//! segment of every feature's sorted sample list, and a chosen split partitions every segment
//! stably (in parallel over features behind [`SORT_SCAN_MIN_ELEMS`]), so children stay sorted
//! without re-sorting. Nodes are grown depth first from an explicit stack.

use super::criterion::{class_impurity, xlogx_table, Criterion};
use super::flat_tree::{FlatTree, MultiwaySplit, SplitReport, MULTIWAY, REPORT_COLUMNS};
use super::splitter::{Chosen, NodeStats, SplitSearch, Target};
use super::SORT_SCAN_MIN_ELEMS;
use crate::machine_learning::tree::FlatNode;
use ndarray::{Array1, ArrayView2};
use rayon::prelude::*;

/// What limits and steers the growth; checked by the estimator before it gets here.
pub(super) struct Growth {
    pub search: SplitSearch,
    /// Features in tie-break priority order.
    pub order: Vec<usize>,
    /// Per feature: split it multi-way by category ([`SplitSearch::Decrease`] only).
    pub categorical: Vec<bool>,
    pub max_depth: usize,
    pub min_split: usize,
    pub min_leaf: usize,
    pub min_impurity_decrease: f64,
}

/// One feature's sorted sample indices and values.
type SegmentMut<'s> = (&'s mut [u32], &'s mut [f64]);

/// Run `split` on every feature's (indices, values) column of the presorted arrays, across
/// workers when `work` passes the gate: the columns are disjoint, so the result is the same.
fn each_feature_column<F>(idx: &mut [u32], val: &mut [f64], n: usize, work: usize, split: F)
where
    F: Fn((usize, SegmentMut)) + Sync + Send,
{
    if SORT_SCAN_MIN_ELEMS.allows_parallel(work) {
        idx.par_chunks_mut(n)
            .zip(val.par_chunks_mut(n))
            .enumerate()
            .for_each(split);
    } else {
        idx.chunks_mut(n)
            .zip(val.chunks_mut(n))
            .enumerate()
            .for_each(split);
    }
}

thread_local! {
    /// The right half of a segment being partitioned, reused across nodes by each thread.
    static RIGHT_SCRATCH: std::cell::RefCell<(Vec<u32>, Vec<f64>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

pub(super) struct Builder<'a> {
    x: ArrayView2<'a, f64>,
    pub(super) n: usize,
    pub(super) d: usize,
    pub(super) target: Target<'a>,
    pub(super) criterion: Criterion,
    pub(super) growth: Growth,
    /// `xlogx[c] = c ln c` for the entropy proxies.
    pub(super) xlogx: Vec<f64>,
    /// Feature `f`'s sample indices (and values), sorted by value within each node segment:
    /// `idx[f * n .. (f + 1) * n]`.
    pub(super) idx: Vec<u32>,
    pub(super) val: Vec<f64>,
    goes_left: Vec<bool>,
    /// The child of each sample at a multi-way split (empty without categorical features).
    child_of: Vec<u32>,
}

impl<'a> Builder<'a> {
    pub(super) fn new(
        x: ArrayView2<'a, f64>,
        target: Target<'a>,
        criterion: Criterion,
        growth: Growth,
    ) -> Self {
        let (n, d) = x.dim();
        let growth_has_categories = growth.categorical.contains(&true);
        let xlogx = if criterion.uses_entropy() && growth.search == SplitSearch::Proxy {
            xlogx_table(n)
        } else {
            Vec::new()
        };
        Self {
            x,
            n,
            d,
            target,
            criterion,
            growth,
            xlogx,
            idx: vec![0; n * d],
            val: vec![0.0; n * d],
            goes_left: vec![false; n],
            child_of: if growth_has_categories {
                vec![0; n]
            } else {
                Vec::new()
            },
        }
    }

    /// Sort every feature's samples by (value, index).
    fn presort(&mut self) {
        let (n, x) = (self.n, self.x);
        let sort_feature = |(f, (ic, vc)): (usize, (&mut [u32], &mut [f64]))| {
            let mut pairs: Vec<(f64, u32)> = x
                .column(f)
                .iter()
                .enumerate()
                .map(|(i, &v)| (v, i as u32))
                .collect();
            pairs.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            for (k, (v, i)) in pairs.into_iter().enumerate() {
                ic[k] = i;
                vc[k] = v;
            }
        };
        if SORT_SCAN_MIN_ELEMS.allows_parallel(n * self.d) {
            self.idx
                .par_chunks_mut(n)
                .zip(self.val.par_chunks_mut(n))
                .enumerate()
                .for_each(sort_feature);
        } else {
            self.idx
                .chunks_mut(n)
                .zip(self.val.chunks_mut(n))
                .enumerate()
                .for_each(sort_feature);
        }
    }

    fn node_stats(&self, s: usize, e: usize) -> NodeStats {
        // Any feature's segment holds the node's samples; feature 0's order is as good as any.
        let members = &self.idx[s..e];
        let n = (e - s) as f64;
        let exact = self.growth.search == SplitSearch::Decrease;
        match self.target {
            Target::Classes { codes, n_classes } => {
                let mut counts = vec![0u32; n_classes];
                for &i in members {
                    counts[codes[i as usize] as usize] += 1;
                }
                let impurity = match self.criterion {
                    _ if exact => {
                        let counts: Vec<usize> = counts.iter().map(|&c| c as usize).collect();
                        class_impurity(self.criterion, &counts, e - s)
                    }
                    Criterion::Gini => {
                        1.0 - counts
                            .iter()
                            .map(|&c| (c as f64 / n) * (c as f64 / n))
                            .sum::<f64>()
                    }
                    _ => {
                        // H = ln n - sum(c ln c) / n
                        let sum_clogc: f64 = counts.iter().map(|&c| self.xlogx[c as usize]).sum();
                        ((self.xlogx[e - s] - sum_clogc) / n).max(0.0)
                    }
                };
                let pure = counts.iter().any(|&c| c as usize == e - s);
                NodeStats {
                    counts,
                    sum: 0.0,
                    sum_sq: 0.0,
                    min: 0.0,
                    max: 0.0,
                    mean: 0.0,
                    impurity,
                    pure,
                }
            }
            Target::Values(y) => {
                // The original API sums in sample order (two passes, so a constant target
                // has exactly zero variance); the door in feature 0's order.
                let in_sample_order;
                let members = if exact {
                    let mut m = members.to_vec();
                    m.sort_unstable();
                    in_sample_order = m;
                    &in_sample_order[..]
                } else {
                    members
                };
                let sum: f64 = members.iter().map(|&i| y[i as usize]).sum();
                let mean = sum / n;
                let impurity = if exact {
                    members
                        .iter()
                        .map(|&i| (y[i as usize] - mean).powi(2))
                        .sum::<f64>()
                        / n
                } else {
                    members
                        .iter()
                        .map(|&i| (y[i as usize] - mean) * (y[i as usize] - mean))
                        .sum::<f64>()
                        / n
                };
                let (mut sum_sq, mut min, mut max) = (0.0, f64::INFINITY, f64::NEG_INFINITY);
                for &i in members {
                    let v = y[i as usize];
                    sum_sq += v * v;
                    min = min.min(v);
                    max = max.max(v);
                }
                let pure = if exact {
                    impurity <= 0.0
                } else {
                    impurity <= f64::EPSILON
                };
                NodeStats {
                    counts: Vec::new(),
                    sum,
                    sum_sq,
                    min,
                    max,
                    mean,
                    impurity,
                    pure,
                }
            }
        }
    }

    /// Split the segment `s..e` of every feature stably into the first `n_left` samples of
    /// `chosen` (left) and the rest (right).
    fn partition(&mut self, s: usize, e: usize, chosen: usize, n_left: usize) {
        let n = self.n;
        let chosen_seg = &self.idx[chosen * n + s..chosen * n + e];
        for (k, &i) in chosen_seg.iter().enumerate() {
            self.goes_left[i as usize] = k < n_left;
        }
        let goes_left = &self.goes_left;
        let split = |(f, (ic, vc)): (usize, SegmentMut)| {
            if f == chosen {
                return; // already ordered: its first n_left samples are the left child
            }
            RIGHT_SCRATCH.with_borrow_mut(|(si, sv)| {
                si.clear();
                sv.clear();
                let mut w = s;
                for k in s..e {
                    let (i, v) = (ic[k], vc[k]);
                    if goes_left[i as usize] {
                        ic[w] = i;
                        vc[w] = v;
                        w += 1;
                    } else {
                        si.push(i);
                        sv.push(v);
                    }
                }
                ic[w..e].copy_from_slice(si);
                vc[w..e].copy_from_slice(sv);
            });
        };
        each_feature_column(&mut self.idx, &mut self.val, n, (e - s) * self.d, split);
    }

    /// Split the segment `s..e` of every feature stably into the runs of `chosen` ending at
    /// `s + ends[k]` (the children of a multi-way split, in `chosen`'s value order).
    fn partition_multiway(&mut self, s: usize, e: usize, chosen: usize, ends: &[usize]) {
        let n = self.n;
        let mut start = 0;
        for (k, &end) in ends.iter().enumerate() {
            for &i in &self.idx[chosen * n + s + start..chosen * n + s + end] {
                self.child_of[i as usize] = k as u32;
            }
            start = end;
        }
        let child_of = &self.child_of;
        let split = |(f, (ic, vc)): (usize, SegmentMut)| {
            if f == chosen {
                return; // already grouped by value
            }
            let pairs: Vec<(u32, f64)> = (s..e).map(|k| (ic[k], vc[k])).collect();
            let mut next: Vec<usize> = std::iter::once(0)
                .chain(ends[..ends.len() - 1].iter().copied())
                .map(|o| s + o)
                .collect();
            for (i, v) in pairs {
                let k = child_of[i as usize] as usize;
                ic[next[k]] = i;
                vc[next[k]] = v;
                next[k] += 1;
            }
        };
        each_feature_column(&mut self.idx, &mut self.val, n, (e - s) * self.d, split);
    }

    /// The leaf of a node with `stats` over `size` samples: pushes its values (class
    /// fractions, or the mean) and returns its prediction (the majority class, ties to the
    /// lowest as NumPy's argmax, or the mean).
    fn leaf_value(
        stats: &NodeStats,
        size: usize,
        classes: Option<&Array1<f64>>,
        values: &mut Vec<f64>,
    ) -> f64 {
        match classes {
            Some(classes) => {
                let best = stats.counts.iter().enumerate().fold(0, |b, (k, &c)| {
                    if c > stats.counts[b] {
                        k
                    } else {
                        b
                    }
                });
                values.extend(stats.counts.iter().map(|&c| c as f64 / size as f64));
                classes[best]
            }
            None => {
                values.push(stats.mean);
                stats.mean
            }
        }
    }

    pub(super) fn build(mut self, classes: Option<Array1<f64>>) -> FlatTree {
        self.presort();
        let n_outputs = match self.target {
            Target::Classes { n_classes, .. } => n_classes,
            Target::Values(_) => 1,
        };
        let mut nodes = vec![FlatNode::EMPTY];
        let mut multiway: Vec<MultiwaySplit> = Vec::new();
        // Per node: samples and impurity, for the importances.
        let mut info = vec![(0usize, 0.0f64)];
        let mut values = Vec::new();
        let target_width = match self.target {
            Target::Classes { n_classes, .. } => n_classes,
            Target::Values(_) => 4,
        };
        let mut report = SplitReport {
            nodes: vec![f64::NAN; REPORT_COLUMNS],
            targets: vec![0.0; target_width],
            target_width,
        };
        let any_categorical = self.growth.categorical.contains(&true);
        let (mut depth_max, mut n_leaves, mut depth_sum) = (0usize, 0usize, 0usize);
        let mut stack = vec![(0usize, 0usize, self.n, 0usize)];
        while let Some((id, s, e, depth)) = stack.pop() {
            let stats = self.node_stats(s, e);
            let size = e - s;
            info[id] = (size, stats.impurity);
            // A multi-way split ignores min_samples_leaf, so it may split a smaller node.
            let splittable = depth < self.growth.max_depth
                && size >= self.growth.min_split
                && (size >= 2 * self.growth.min_leaf || any_categorical)
                && !stats.pure;
            let split = if splittable {
                self.choose_split(s, e, &stats)
            } else {
                None
            };
            let targets = &mut report.targets[id * target_width..(id + 1) * target_width];
            if stats.counts.is_empty() {
                targets.copy_from_slice(&[stats.sum, stats.sum_sq, stats.min, stats.max]);
            } else {
                for (t, &c) in targets.iter_mut().zip(&stats.counts) {
                    *t = c as f64;
                }
            }
            let row = &mut report.nodes[id * REPORT_COLUMNS..(id + 1) * REPORT_COLUMNS];
            row[..5].copy_from_slice(&[-1.0, f64::NAN, -1.0, size as f64, stats.impurity]);
            match split {
                Some(Chosen::Binary(feature, cand)) => {
                    row[0] = feature as f64;
                    row[1] = cand.threshold;
                    row[2] = nodes.len() as f64;
                    row[5..].copy_from_slice(&[cand.proxy, cand.runner_up, cand.low, cand.high]);
                    self.partition(s, e, feature, cand.n_left);
                    let left = nodes.len();
                    nodes.extend([FlatNode::EMPTY, FlatNode::EMPTY]);
                    info.extend([(0, 0.0), (0, 0.0)]);
                    report.nodes.extend([f64::NAN; 2 * REPORT_COLUMNS]);
                    report
                        .targets
                        .extend(std::iter::repeat_n(0.0, 2 * target_width));
                    nodes[id] = FlatNode::split(feature, cand.threshold, left);
                    stack.push((left + 1, s + cand.n_left, e, depth + 1));
                    stack.push((left, s, s + cand.n_left, depth + 1));
                }
                Some(Chosen::Multiway { feature, ends }) => {
                    row[0] = feature as f64;
                    row[2] = nodes.len() as f64;
                    self.partition_multiway(s, e, feature, &ends);
                    // Children: the fallback leaf for unseen categories (this node's
                    // prediction), then one per category.
                    let first = nodes.len();
                    let m = ends.len();
                    nodes.extend(std::iter::repeat_n(FlatNode::EMPTY, m + 1));
                    info.extend(std::iter::repeat_n((0, 0.0), m + 1));
                    report
                        .nodes
                        .extend(std::iter::repeat_n(f64::NAN, (m + 1) * REPORT_COLUMNS));
                    report
                        .targets
                        .extend(std::iter::repeat_n(0.0, (m + 1) * target_width));
                    let fallback = Self::leaf_value(&stats, size, classes.as_ref(), &mut values);
                    nodes[first] = FlatNode::leaf(n_leaves as u32, fallback);
                    n_leaves += 1;
                    depth_max = depth_max.max(depth + 1);
                    let vals = &self.val[feature * self.n + s..feature * self.n + e];
                    let mut categories = Vec::with_capacity(m);
                    let mut start = 0;
                    for (k, &end) in ends.iter().enumerate() {
                        categories.push(vals[start]);
                        stack.push((first + 1 + k, s + start, s + end, depth + 1));
                        start = end;
                    }
                    nodes[id] = FlatNode {
                        threshold: 0.0,
                        feature: MULTIWAY,
                        left: multiway.len() as u32,
                    };
                    multiway.push(MultiwaySplit {
                        feature: feature as u32,
                        categories,
                        first: first as u32,
                    });
                }
                None => {
                    let prediction = Self::leaf_value(&stats, size, classes.as_ref(), &mut values);
                    nodes[id] = FlatNode::leaf(n_leaves as u32, prediction);
                    n_leaves += 1;
                    depth_max = depth_max.max(depth);
                    depth_sum += depth * size;
                }
            }
        }
        let mut importances = Array1::<f64>::zeros(self.d);
        for (node, &(size, impurity)) in nodes.iter().zip(&info) {
            if node.is_leaf() {
                continue;
            }
            let (feature, children) = if node.feature == MULTIWAY {
                let split = &multiway[node.left as usize];
                let first = split.first as usize + 1;
                (split.feature, first..first + split.categories.len())
            } else {
                (node.feature, node.left as usize..node.left as usize + 2)
            };
            let decrease = children.fold(size as f64 * impurity, |d, c| {
                d - info[c].0 as f64 * info[c].1
            });
            importances[feature as usize] += decrease.max(0.0);
        }
        let total = importances.sum();
        if total > 0.0 {
            importances /= total;
        }
        FlatTree {
            nodes,
            multiway,
            values,
            n_outputs,
            classes,
            n_features: self.d,
            depth: depth_max,
            n_leaves,
            mean_depth: depth_sum as f64 / self.n as f64,
            feature_importances: importances,
            report: Some(report),
        }
    }
}
