//! scikit-learn's split criteria (`Gini`, `Entropy`, `MSE`), their statistics accumulated in
//! scikit-learn's order: the node sums run over the node's samples as they lie, and a move of
//! the split position walks the shorter side (forward from the left sums, or backwards from the
//! node totals), so every sum rounds as scikit-learn's does.

use super::Targets;

/// The impurity measure of a tree (scikit-learn's `criterion` names in the docs of each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Criterion {
    /// `"gini"`.
    Gini,
    /// `"entropy"` / `"log_loss"` (base-2 logarithms).
    Entropy,
    /// `"squared_error"`.
    SquaredError,
    /// `"poisson"`: half the mean Poisson deviance (targets not negative).
    Poisson,
}

impl Criterion {
    pub fn is_classification(self) -> bool {
        matches!(self, Criterion::Gini | Criterion::Entropy)
    }
}

/// scikit-learn's `log`: the base-2 logarithm as `ln(x) / ln(2)`.
fn log2(x: f64) -> f64 {
    x.ln() / std::f64::consts::LN_2
}

/// scipy's `xlogy`: `x ln(y)`, and 0 where `x` is 0 (unless `y` is NaN).
fn xlogy(x: f64, y: f64) -> f64 {
    if x == 0.0 && !y.is_nan() {
        0.0
    } else {
        x * y.ln()
    }
}

/// The targets laid out for the sums: per sample (row-major, `n_outputs` per sample) its
/// class's slot in the sums (classification) or its target (regression). Built once per fit
/// and shared by a forest's trees.
pub(super) struct TargetTable {
    criterion: Criterion,
    n_outputs: usize,
    /// Per output, the offset of its classes in the sums (regression: one slot per output);
    /// the last entry is the sums' width.
    offsets: Vec<usize>,
    slots: Vec<usize>,
    values: Vec<f64>,
}

impl TargetTable {
    pub fn new(criterion: Criterion, targets: &Targets) -> Self {
        let n_outputs = targets.n_outputs();
        let mut offsets = Vec::with_capacity(n_outputs + 1);
        let mut width = 0;
        for k in 0..n_outputs {
            offsets.push(width);
            width += targets.n_classes.get(k).copied().unwrap_or(1);
        }
        offsets.push(width);
        let (mut slots, mut values) = (Vec::new(), Vec::new());
        if criterion.is_classification() {
            slots = targets
                .y
                .rows()
                .into_iter()
                .flat_map(|row| row.into_iter().zip(&offsets).map(|(&c, &o)| o + c as usize))
                .collect();
        } else {
            values = targets.y.iter().copied().collect();
        }
        TargetTable {
            criterion,
            n_outputs,
            offsets,
            slots,
            values,
        }
    }
}

/// The statistics of one node and of the two sides of a candidate split position.
#[derive(Clone)]
pub(super) struct Statistics<'a> {
    criterion: Criterion,
    table: &'a TargetTable,
    weights: &'a [f64],
    sum_total: Vec<f64>,
    sum_left: Vec<f64>,
    sum_right: Vec<f64>,
    sq_sum_total: f64,
    pub weighted_n_node_samples: f64,
    pub weighted_n_left: f64,
    pub weighted_n_right: f64,
    /// The weight of all the tree's samples.
    weighted_n_samples: f64,
    start: usize,
    end: usize,
    pos: usize,
}

impl<'a> Statistics<'a> {
    pub fn new(table: &'a TargetTable, weights: &'a [f64], weighted_n_samples: f64) -> Self {
        let width = table.offsets[table.n_outputs];
        Statistics {
            criterion: table.criterion,
            table,
            weights,
            sum_total: vec![0.0; width],
            sum_left: vec![0.0; width],
            sum_right: vec![0.0; width],
            sq_sum_total: 0.0,
            weighted_n_node_samples: 0.0,
            weighted_n_left: 0.0,
            weighted_n_right: 0.0,
            weighted_n_samples,
            start: 0,
            end: 0,
            pos: 0,
        }
    }

    /// Sample `i`'s targets (regression).
    fn targets_of(&self, i: usize) -> &'a [f64] {
        let n = self.table.n_outputs;
        &self.table.values[i * n..(i + 1) * n]
    }

    /// Adds sample `i` to `sums`: its weight to its classes' slots, or its weighted targets.
    fn add(&self, sums: &mut [f64], i: usize) {
        let w = self.weights[i];
        let n = self.table.n_outputs;
        if self.criterion.is_classification() {
            for &slot in &self.table.slots[i * n..(i + 1) * n] {
                sums[slot] += w;
            }
        } else {
            for (sum, &y) in sums.iter_mut().zip(self.targets_of(i)) {
                *sum += w * y;
            }
        }
    }

    /// Takes sample `i` out of `sums` ([`Self::add`] undone, in scikit-learn's arithmetic).
    fn subtract(&self, sums: &mut [f64], i: usize) {
        let w = self.weights[i];
        let n = self.table.n_outputs;
        if self.criterion.is_classification() {
            for &slot in &self.table.slots[i * n..(i + 1) * n] {
                sums[slot] -= w;
            }
        } else {
            for (sum, &y) in sums.iter_mut().zip(self.targets_of(i)) {
                *sum -= w * y;
            }
        }
    }

    /// scikit-learn's `init`: the node's sums over `samples[start..end]` in their order.
    pub fn init(&mut self, samples: &[usize], start: usize, end: usize) {
        self.start = start;
        self.end = end;
        self.sum_total.iter_mut().for_each(|s| *s = 0.0);
        self.sq_sum_total = 0.0;
        self.weighted_n_node_samples = 0.0;
        let mut sums = std::mem::take(&mut self.sum_total);
        for &i in &samples[start..end] {
            let w = self.weights[i];
            if self.criterion.is_classification() {
                self.add(&mut sums, i);
            } else {
                for (slot, &yk) in sums.iter_mut().zip(self.targets_of(i)) {
                    let wy = w * yk;
                    *slot += wy;
                    self.sq_sum_total += wy * yk;
                }
            }
            self.weighted_n_node_samples += w;
        }
        self.sum_total = sums;
        self.reset();
    }

    /// Everything on the right (scikit-learn's `reset`).
    pub fn reset(&mut self) {
        self.pos = self.start;
        self.sum_left.iter_mut().for_each(|s| *s = 0.0);
        self.sum_right.copy_from_slice(&self.sum_total);
        self.weighted_n_left = 0.0;
        self.weighted_n_right = self.weighted_n_node_samples;
    }

    /// Everything on the left (scikit-learn's `reverse_reset`).
    fn reverse_reset(&mut self) {
        self.pos = self.end;
        self.sum_right.iter_mut().for_each(|s| *s = 0.0);
        self.sum_left.copy_from_slice(&self.sum_total);
        self.weighted_n_right = 0.0;
        self.weighted_n_left = self.weighted_n_node_samples;
    }

    /// Moves the split to `new_pos` (scikit-learn's `update`): forward from the current
    /// position, or backwards from the node's end when that side is shorter.
    pub fn update(&mut self, samples: &[usize], new_pos: usize) {
        let mut left = std::mem::take(&mut self.sum_left);
        if new_pos - self.pos <= self.end - new_pos {
            for &i in &samples[self.pos..new_pos] {
                self.add(&mut left, i);
                self.weighted_n_left += self.weights[i];
            }
        } else {
            self.sum_left = left;
            self.reverse_reset();
            left = std::mem::take(&mut self.sum_left);
            for &i in samples[new_pos..self.end].iter().rev() {
                self.subtract(&mut left, i);
                self.weighted_n_left -= self.weights[i];
            }
        }
        self.weighted_n_right = self.weighted_n_node_samples - self.weighted_n_left;
        for ((right, &total), &l) in self.sum_right.iter_mut().zip(&self.sum_total).zip(&left) {
            *right = total - l;
        }
        self.sum_left = left;
        self.pos = new_pos;
    }

    /// The impurity of the sums of one side (or the node) of total weight `weight`.
    fn class_impurity(&self, sums: &[f64], weight: f64) -> f64 {
        let n_outputs = self.table.n_outputs;
        let mut impurity = 0.0;
        for k in 0..n_outputs {
            let counts = &sums[self.table.offsets[k]..self.table.offsets[k + 1]];
            match self.criterion {
                Criterion::Gini => {
                    let mut sq_count = 0.0;
                    for &c in counts {
                        sq_count += c * c;
                    }
                    impurity += 1.0 - sq_count / (weight * weight);
                }
                _ => {
                    for &c in counts {
                        if c > 0.0 {
                            let p = c / weight;
                            impurity -= p * log2(p);
                        }
                    }
                }
            }
        }
        impurity / n_outputs as f64
    }

    /// scikit-learn's `node_impurity`.
    pub fn node_impurity(&self, samples: &[usize]) -> f64 {
        if self.criterion.is_classification() {
            return self.class_impurity(&self.sum_total, self.weighted_n_node_samples);
        }
        let w = self.weighted_n_node_samples;
        if self.criterion == Criterion::Poisson {
            return self.poisson_loss(samples, self.start, self.end, &self.sum_total, w);
        }
        let mut impurity = self.sq_sum_total / w;
        for &s in &self.sum_total {
            let mean = s / w;
            impurity -= mean * mean;
        }
        impurity / self.sum_total.len() as f64
    }

    /// scikit-learn's `children_impurity` at the current position.
    pub fn children_impurity(&self, samples: &[usize]) -> (f64, f64) {
        let (wl, wr) = (self.weighted_n_left, self.weighted_n_right);
        if self.criterion.is_classification() {
            return (
                self.class_impurity(&self.sum_left, wl),
                self.class_impurity(&self.sum_right, wr),
            );
        }
        if self.criterion == Criterion::Poisson {
            return (
                self.poisson_loss(samples, self.start, self.pos, &self.sum_left, wl),
                self.poisson_loss(samples, self.pos, self.end, &self.sum_right, wr),
            );
        }
        let mut sq_sum_left = 0.0;
        for &i in &samples[self.start..self.pos] {
            let w = self.weights[i];
            for &yk in self.targets_of(i) {
                sq_sum_left += w * yk * yk;
            }
        }
        let sq_sum_right = self.sq_sum_total - sq_sum_left;
        let mut left = sq_sum_left / wl;
        let mut right = sq_sum_right / wr;
        for (&l, &r) in self.sum_left.iter().zip(&self.sum_right) {
            let (ml, mr) = (l / wl, r / wr);
            left -= ml * ml;
            right -= mr * mr;
        }
        let n_outputs = self.sum_total.len() as f64;
        (left / n_outputs, right / n_outputs)
    }

    /// scikit-learn's `proxy_impurity_improvement`: larger is better, comparable only within
    /// one node.
    pub fn proxy_impurity_improvement(&self, samples: &[usize]) -> f64 {
        if self.criterion.is_classification() {
            let (left, right) = self.children_impurity(samples);
            return -self.weighted_n_right * right - self.weighted_n_left * left;
        }
        let (mut left, mut right) = (0.0, 0.0);
        if self.criterion == Criterion::Poisson {
            for (&l, &r) in self.sum_left.iter().zip(&self.sum_right) {
                if l <= f64::EPSILON || r <= f64::EPSILON {
                    return f64::NEG_INFINITY;
                }
                left -= l * log2(l / self.weighted_n_left);
                right -= r * log2(r / self.weighted_n_right);
            }
            return -left - right;
        }
        for (&l, &r) in self.sum_left.iter().zip(&self.sum_right) {
            left += l * l;
            right += r * r;
        }
        left / self.weighted_n_left + right / self.weighted_n_right
    }

    /// scikit-learn's `poisson_loss` of `samples[start..end]` with target sums `sums` and
    /// weight `weight`: infinite where a sum is at most `EPSILON`.
    fn poisson_loss(
        &self,
        samples: &[usize],
        start: usize,
        end: usize,
        sums: &[f64],
        weight: f64,
    ) -> f64 {
        let mut loss = 0.0;
        for (k, &sum) in sums.iter().enumerate() {
            if sum <= f64::EPSILON {
                return f64::INFINITY;
            }
            let mean = sum / weight;
            for &i in &samples[start..end] {
                let y = self.targets_of(i)[k];
                loss += self.weights[i] * xlogy(y, y / mean);
            }
        }
        loss / (weight * sums.len() as f64)
    }

    /// scikit-learn's `impurity_improvement`: the weighted impurity decrease of the split.
    pub fn impurity_improvement(&self, parent: f64, left: f64, right: f64) -> f64 {
        let w = self.weighted_n_node_samples;
        (w / self.weighted_n_samples)
            * (parent - self.weighted_n_right / w * right - self.weighted_n_left / w * left)
    }

    /// scikit-learn's `node_value`: class fractions (stride `stride` per output) or means.
    pub fn node_value(&self, stride: usize, out: &mut Vec<f64>) {
        let w = self.weighted_n_node_samples;
        let n_outputs = self.table.n_outputs;
        for k in 0..n_outputs {
            let sums = &self.sum_total[self.table.offsets[k]..self.table.offsets[k + 1]];
            out.extend(sums.iter().map(|s| s / w));
            out.extend(std::iter::repeat_n(0.0, stride - sums.len()));
        }
    }
}
