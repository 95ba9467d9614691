//! Best-split search at one node, over the node's presorted feature segments. Each feature is
//! scanned on its own (in parallel behind [`SORT_SCAN_MIN_ELEMS`]) and the winner is picked
//! afterwards in the fixed feature order, so the serial and parallel paths agree bit for bit.
//!
//! Two scorings, chosen by [`SplitSearch`]: the scikit-learn door's monotone proxies
//! (threshold by information gain, C4.5 features by gain ratio among above-average gains),
//! and the original API's exact impurity decreases in bits, gain ratio for every C4.5
//! candidate, multi-way splits on categorical features and `min_impurity_decrease`.

use super::builder::Builder;
use super::criterion::{class_impurity, split_score, variance_from_sums, Criterion};
use super::SORT_SCAN_MIN_ELEMS;
use rayon::prelude::*;

/// How the split search scores and restricts candidate splits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SplitSearch {
    /// scikit-learn's: monotone proxies of the decrease in nats; binary splits only.
    Proxy,
    /// The original API's: exact decreases in bits (variance for regression), gain ratio for
    /// every C4.5 candidate, multi-way categorical splits, `min_impurity_decrease`, and node
    /// statistics summed in sample order.
    Decrease,
}

/// The training target as the split search sees it.
pub(super) enum Target<'a> {
    Classes { codes: &'a [u32], n_classes: usize },
    Values(&'a [f64]),
}

/// Statistics of the samples at one node.
pub(super) struct NodeStats {
    /// Class counts (classifier) or empty.
    pub counts: Vec<u32>,
    /// Sum of targets, of their squares, and their range (regressor).
    pub sum: f64,
    pub sum_sq: f64,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub impurity: f64,
    pub pure: bool,
}

/// The best split found on one feature.
#[derive(Debug, Clone, Copy)]
pub(super) struct Candidate {
    /// A quantity that increases with the impurity decrease, comparable across features of
    /// one node (for [`SplitSearch::Decrease`], the score itself).
    pub proxy: f64,
    /// The best score of any other legal split on this feature (`-inf` when none).
    pub runner_up: f64,
    pub n_left: usize,
    pub threshold: f64,
    /// The feature values on either side of the threshold.
    pub low: f64,
    pub high: f64,
}

/// The split chosen at a node.
pub(super) enum Chosen {
    /// `x[feature] <= threshold` goes left.
    Binary(usize, Candidate),
    /// One child per distinct value of the feature; `ends` are the children's segment ends
    /// relative to the node start, in increasing value order.
    Multiway { feature: usize, ends: Vec<usize> },
}

/// One feature's best split under [`SplitSearch::Decrease`].
struct Scored {
    score: f64,
    decrease: f64,
    split: Chosen,
}

/// Threshold between two consecutive distinct sorted values: their midpoint, or the lower
/// value when the midpoint rounds onto the upper one (or overflows), so `x <= threshold`
/// always separates them.
#[inline]
pub(super) fn midpoint(a: f64, b: f64) -> f64 {
    let t = a / 2.0 + b / 2.0;
    if t == b || !t.is_finite() {
        a
    } else {
        t
    }
}

impl Builder<'_> {
    /// The node's best split, or `None` when no legal split exists.
    pub(super) fn choose_split(&self, s: usize, e: usize, stats: &NodeStats) -> Option<Chosen> {
        match self.growth.search {
            SplitSearch::Proxy => self
                .best_split(s, e, stats)
                .map(|(f, c)| Chosen::Binary(f, c)),
            SplitSearch::Decrease => self.best_decrease(s, e, stats),
        }
    }

    /// `scan(f)` for every feature, in parallel behind the gate.
    fn per_feature<T: Send>(
        &self,
        s: usize,
        e: usize,
        scan: impl Fn(usize) -> T + Sync + Send,
    ) -> Vec<T> {
        if SORT_SCAN_MIN_ELEMS.allows_parallel((e - s) * self.d) {
            (0..self.d).into_par_iter().map(scan).collect()
        } else {
            (0..self.d).map(scan).collect()
        }
    }

    /// Best split of feature `f` over the node segment `s..e`.
    fn scan_feature(&self, f: usize, s: usize, e: usize, stats: &NodeStats) -> Option<Candidate> {
        let base = f * self.n;
        let vals = &self.val[base + s..base + e];
        let idx = &self.idx[base + s..base + e];
        let n = e - s;
        let min_leaf = self.growth.min_leaf;
        if vals[0] == vals[n - 1] {
            return None; // constant on this node
        }
        // The best split so far (after position `best_i`, left = 0..=best_i) and the best
        // score of any other legal split, kept in locals rather than in a `Candidate`: this
        // runs for every legal position, and a store per position costs a third of the scan.
        let mut best_proxy = f64::NEG_INFINITY;
        let mut best_i = usize::MAX;
        let mut runner_up = f64::NEG_INFINITY;
        let mut consider = |i: usize, proxy: f64| {
            // Greater or unordered: a NaN score replaces the best, as a first score does.
            let replaces = matches!(
                proxy.partial_cmp(&best_proxy),
                Some(std::cmp::Ordering::Greater) | None
            );
            if best_i == usize::MAX || replaces {
                runner_up = runner_up.max(best_proxy);
                best_proxy = proxy;
                best_i = i;
            } else {
                runner_up = runner_up.max(proxy);
            }
        };
        let first = min_leaf - 1; // the smallest legal i
        let last = n - min_leaf; // one past the largest legal i
        if first >= last {
            return None;
        }
        match (&self.target, self.criterion) {
            (Target::Classes { codes, .. }, Criterion::Gini) => {
                let mut left = vec![0u64; stats.counts.len()];
                let mut right: Vec<u64> = stats.counts.iter().map(|&c| c as u64).collect();
                let mut sq_l: u64 = 0;
                let mut sq_r: u64 = right.iter().map(|c| c * c).sum();
                for i in 0..last {
                    let c = codes[idx[i] as usize] as usize;
                    sq_l += 2 * left[c] + 1;
                    sq_r -= 2 * right[c] - 1;
                    left[c] += 1;
                    right[c] -= 1;
                    if i >= first && vals[i] < vals[i + 1] {
                        let (nl, nr) = ((i + 1) as f64, (n - i - 1) as f64);
                        consider(i, sq_l as f64 / nl + sq_r as f64 / nr);
                    }
                }
            }
            (Target::Classes { codes, .. }, _) => {
                let xlogx = &self.xlogx;
                let mut left = vec![0usize; stats.counts.len()];
                let mut right: Vec<usize> = stats.counts.iter().map(|&c| c as usize).collect();
                let mut s_l = 0.0;
                let mut s_r: f64 = right.iter().map(|&c| xlogx[c]).sum();
                for i in 0..last {
                    let c = codes[idx[i] as usize] as usize;
                    s_l += xlogx[left[c] + 1] - xlogx[left[c]];
                    s_r -= xlogx[right[c]] - xlogx[right[c] - 1];
                    left[c] += 1;
                    right[c] -= 1;
                    if i >= first && vals[i] < vals[i + 1] {
                        // n * (weighted child entropy) = nl ln nl - s_l + nr ln nr - s_r
                        consider(i, (s_l - xlogx[i + 1]) + (s_r - xlogx[n - i - 1]));
                    }
                }
            }
            (Target::Values(y), _) => {
                let mut sum_l = 0.0;
                for i in 0..last {
                    sum_l += y[idx[i] as usize];
                    if i >= first && vals[i] < vals[i + 1] {
                        let sum_r = stats.sum - sum_l;
                        let (nl, nr) = ((i + 1) as f64, (n - i - 1) as f64);
                        consider(i, sum_l * sum_l / nl + sum_r * sum_r / nr);
                    }
                }
            }
        }
        (best_i != usize::MAX).then(|| Candidate {
            proxy: best_proxy,
            runner_up,
            n_left: best_i + 1,
            threshold: midpoint(vals[best_i], vals[best_i + 1]),
            low: vals[best_i],
            high: vals[best_i + 1],
        })
    }

    /// The node's best split as `(feature, candidate)`, or `None` when no legal split exists.
    fn best_split(&self, s: usize, e: usize, stats: &NodeStats) -> Option<(usize, Candidate)> {
        let scan = |f: usize| self.scan_feature(f, s, e, stats);
        let per_feature = self.per_feature(s, e, scan);
        let ranked = self
            .growth
            .order
            .iter()
            .filter_map(|&f| per_feature[f].map(|c| (f, c)));
        if self.criterion == Criterion::GainRatio {
            let n = (e - s) as f64;
            let xlogx = &self.xlogx;
            // gain = H(parent) - weighted child entropy; split info = entropy of the (nl, nr) split.
            let scored: Vec<(usize, Candidate, f64, f64)> = ranked
                .map(|(f, c)| {
                    let gain = stats.impurity + c.proxy / n;
                    let split_info = (xlogx[e - s] - xlogx[c.n_left] - xlogx[e - s - c.n_left]) / n;
                    (f, c, gain, gain / split_info)
                })
                .collect();
            if scored.is_empty() {
                return None;
            }
            let average = scored.iter().map(|t| t.2).sum::<f64>() / scored.len() as f64;
            // The tolerance only absorbs rounding: when every gain is equal the computed mean
            // can land an ulp above them all. Gains are at most ln(n_classes) nats, so 1e-12
            // is far below any real difference between two of them.
            let mut best: Option<(usize, Candidate, f64)> = None;
            for (f, c, gain, ratio) in scored {
                if gain >= average - 1e-12 && best.is_none_or(|b| ratio > b.2) {
                    best = Some((f, c, ratio));
                }
            }
            best.map(|(f, mut c, _)| {
                c.runner_up = f64::NAN;
                (f, c)
            })
        } else {
            // The runner-up of the chosen split: the best other split of its feature, or
            // the best split of any other feature.
            let mut others = f64::NEG_INFINITY;
            let best = ranked.fold(
                None,
                |best: Option<(usize, Candidate)>, (f, c)| match best {
                    Some(b) if c.proxy <= b.1.proxy => {
                        others = others.max(c.proxy);
                        Some(b)
                    }
                    _ => {
                        if let Some(b) = best {
                            others = others.max(b.1.proxy);
                        }
                        Some((f, c))
                    }
                },
            );
            best.map(|(f, mut c)| {
                c.runner_up = c.runner_up.max(others);
                (f, c)
            })
        }
    }

    /// [`SplitSearch::Decrease`]: the highest-scoring split over the features in tie-break
    /// order (the first wins ties), kept only if its decrease, weighted by the node's share
    /// of the samples, reaches `min_impurity_decrease`.
    fn best_decrease(&self, s: usize, e: usize, stats: &NodeStats) -> Option<Chosen> {
        let mut per_feature = self.per_feature(s, e, |f| self.scan_decrease(f, s, e, stats));
        let mut best: Option<Scored> = None;
        for &f in &self.growth.order {
            if let Some(c) = per_feature[f].take() {
                if best.as_ref().is_none_or(|b| c.score > b.score) {
                    best = Some(c);
                }
            }
        }
        let best = best?;
        let weighted = (e - s) as f64 / self.n as f64 * best.decrease;
        // The tolerance absorbs rounding of a decrease equal to the threshold.
        if weighted + 1e-12 < self.growth.min_impurity_decrease {
            return None;
        }
        Some(best.split)
    }

    /// [`SplitSearch::Decrease`] on feature `f` over `s..e`: the multi-way split of a
    /// categorical feature, or the best midpoint threshold leaving `min_samples_leaf` samples
    /// on each side (the first wins ties).
    fn scan_decrease(&self, f: usize, s: usize, e: usize, stats: &NodeStats) -> Option<Scored> {
        let base = f * self.n;
        let vals = &self.val[base + s..base + e];
        let idx = &self.idx[base + s..base + e];
        let n = e - s;
        let criterion = self.criterion;
        if vals[0] == vals[n - 1] {
            return None; // constant on this node
        }
        if self.growth.categorical[f] {
            return self.scan_categories(f, vals, idx, stats);
        }
        let leaf = self.growth.min_leaf;
        let mut best: Option<Scored> = None;
        let mut consider = |cut: usize, children: f64| {
            let decrease = stats.impurity - children;
            let score = split_score(criterion, decrease, [cut, n - cut].into_iter(), n);
            if best.as_ref().is_none_or(|b| score > b.score) {
                let (low, high) = (vals[cut - 1], vals[cut]);
                let c = Candidate {
                    proxy: score,
                    runner_up: f64::NAN,
                    n_left: cut,
                    threshold: midpoint(low, high),
                    low,
                    high,
                };
                best = Some(Scored {
                    score,
                    decrease,
                    split: Chosen::Binary(f, c),
                });
            }
        };
        let legal = |cut: usize| cut >= leaf && n - cut >= leaf && vals[cut - 1] < vals[cut];
        match self.target {
            Target::Classes { codes, .. } => {
                let mut left = vec![0usize; stats.counts.len()];
                let mut right: Vec<usize> = stats.counts.iter().map(|&c| c as usize).collect();
                for cut in 1..n {
                    let c = codes[idx[cut - 1] as usize] as usize;
                    left[c] += 1;
                    right[c] -= 1;
                    if legal(cut) {
                        let children = cut as f64 / n as f64
                            * class_impurity(criterion, &left, cut)
                            + (n - cut) as f64 / n as f64
                                * class_impurity(criterion, &right, n - cut);
                        consider(cut, children);
                    }
                }
            }
            Target::Values(y) => {
                let (mut sum_l, mut sq_l) = (0.0, 0.0);
                let (mut sum_r, mut sq_r) = (0.0, 0.0);
                for &i in idx {
                    let v = y[i as usize];
                    sum_r += v;
                    sq_r += v * v;
                }
                for cut in 1..n {
                    let v = y[idx[cut - 1] as usize];
                    sum_l += v;
                    sq_l += v * v;
                    sum_r -= v;
                    sq_r -= v * v;
                    if legal(cut) {
                        let children = cut as f64 / n as f64 * variance_from_sums(sum_l, sq_l, cut)
                            + (n - cut) as f64 / n as f64
                                * variance_from_sums(sum_r, sq_r, n - cut);
                        consider(cut, children);
                    }
                }
            }
        }
        best
    }

    /// The multi-way split of a categorical feature's segment (sorted, so each category is
    /// one run); `None` for a single category. Classifiers only.
    fn scan_categories(
        &self,
        f: usize,
        vals: &[f64],
        idx: &[u32],
        stats: &NodeStats,
    ) -> Option<Scored> {
        let Target::Classes { codes, n_classes } = self.target else {
            return None;
        };
        let n = vals.len();
        let mut ends = Vec::new();
        let mut start = 0;
        for k in 1..=n {
            if k == n || vals[k] != vals[start] {
                ends.push(k);
                start = k;
            }
        }
        if ends.len() < 2 {
            return None;
        }
        let children: f64 = ends
            .iter()
            .scan(0, |start, &end| {
                let mut counts = vec![0usize; n_classes];
                for &i in &idx[*start..end] {
                    counts[codes[i as usize] as usize] += 1;
                }
                let part = end - *start;
                *start = end;
                Some(part as f64 / n as f64 * class_impurity(self.criterion, &counts, part))
            })
            .sum();
        let decrease = stats.impurity - children;
        let sizes = ends.iter().scan(0, |start, &end| {
            let part = end - *start;
            *start = end;
            Some(part)
        });
        Some(Scored {
            score: split_score(self.criterion, decrease, sizes, n),
            decrease,
            split: Chosen::Multiway { feature: f, ends },
        })
    }
}
