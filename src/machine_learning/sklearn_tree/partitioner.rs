//! scikit-learn's two partitioners: how a node's samples are ordered by one feature (sorted
//! for the best splitter, split at a threshold for the random one and for the final split).
//! The dense one reads a float32 matrix; the sparse one reads CSC columns, moving the node's
//! negative values to its front and positive ones to its back around the implicit zeros, in
//! scikit-learn's swap order, so the samples end in the same order either way scikit-learn
//! would leave them.

use super::{sort, FEATURE_THRESHOLD};

/// scikit-learn's switch between its two ways of extracting a column's non-zero values.
const EXTRACT_NNZ_SWITCH: f64 = 0.1;
use ndarray::ArrayView2;

/// Compressed sparse columns (float32 values, row indices ascending within each column and
/// without repeats, as scikit-learn's tree fit requires).
#[derive(Debug, Clone, Copy)]
pub struct CscColumns<'a> {
    pub n_rows: usize,
    pub indptr: &'a [usize],
    pub indices: &'a [usize],
    pub data: &'a [f32],
}

impl CscColumns<'_> {
    pub fn n_cols(&self) -> usize {
        self.indptr.len().saturating_sub(1)
    }
}

/// A tree's input as scikit-learn's splitters read it.
#[derive(Debug, Clone, Copy)]
pub enum Features<'a> {
    Dense(ArrayView2<'a, f32>),
    Sparse(CscColumns<'a>),
}

impl Features<'_> {
    /// The same input borrowed for a shorter time (ndarray's views do not shorten on their
    /// own).
    pub fn reborrow(&self) -> Features<'_> {
        match self {
            Features::Dense(x) => Features::Dense(x.view()),
            Features::Sparse(c) => Features::Sparse(*c),
        }
    }

    pub fn n_rows(&self) -> usize {
        match self {
            Features::Dense(x) => x.nrows(),
            Features::Sparse(c) => c.n_rows,
        }
    }

    pub fn n_cols(&self) -> usize {
        match self {
            Features::Dense(x) => x.ncols(),
            Features::Sparse(c) => c.n_cols(),
        }
    }
}

/// The node's samples and their values of the current feature.
pub(super) struct Partitioner<'a> {
    input: Features<'a>,
    /// Column of the input for each of the tree's features.
    columns: &'a [usize],
    /// The samples of positive weight, in scikit-learn's order.
    pub samples: Vec<usize>,
    pub feature_values: Vec<f32>,
    /// Sparse input: each row's position in `samples` (`usize::MAX` for rows left out).
    index_to_samples: Vec<usize>,
    /// Sparse input: the end of the negative values and the start of the positive ones
    /// (after `sort`, each side of the zeros is marked by one zero value).
    end_negative: usize,
    start_positive: usize,
    /// Sparse input: the node's samples in row order, for the binary-search extraction, and
    /// the node they belong to.
    sorted_samples: Vec<usize>,
    sorted_node: Option<(usize, usize)>,
}

impl<'a> Partitioner<'a> {
    pub fn new(input: Features<'a>, columns: &'a [usize], samples: Vec<usize>) -> Self {
        let mut index_to_samples = Vec::new();
        if let Features::Sparse(c) = input {
            index_to_samples = vec![usize::MAX; c.n_rows];
            for (p, &s) in samples.iter().enumerate() {
                index_to_samples[s] = p;
            }
        }
        Partitioner {
            input,
            columns,
            feature_values: vec![0.0; samples.len()],
            samples,
            index_to_samples,
            end_negative: usize::MAX,
            start_positive: usize::MAX,
            sorted_samples: Vec::new(),
            sorted_node: None,
        }
    }

    /// A sample's value of a feature.
    pub fn value(&self, sample: usize, feature: usize) -> f32 {
        let column = self.columns[feature];
        match self.input {
            Features::Dense(x) => x[[sample, column]],
            Features::Sparse(c) => {
                let (from, to) = (c.indptr[column], c.indptr[column + 1]);
                c.indices[from..to]
                    .binary_search(&sample)
                    .map_or(0.0, |k| c.data[from + k])
            }
        }
    }

    fn sparse_swap(&mut self, p: usize, q: usize) {
        self.samples.swap(p, q);
        self.index_to_samples[self.samples[p]] = p;
        self.index_to_samples[self.samples[q]] = q;
    }

    /// scikit-learn's `extract_nnz`: the node's non-zero values of `feature`, negative ones
    /// moved to the front of `start..end` and positive ones to its back, visited in row order.
    /// Like scikit-learn it walks the column's entries, or, where the node is small next to
    /// the column, looks its rows up in the column by binary search; both visit the same
    /// entries in the same order, so the choice changes only the time taken.
    fn extract_nonzeros(&mut self, c: CscColumns, start: usize, end: usize, feature: usize) {
        let column = self.columns[feature];
        let (from, to) = (c.indptr[column], c.indptr[column + 1]);
        let (n, n_indices) = ((end - start) as f64, (to - from) as f64);
        let sort_cost = if self.sorted_node == Some((start, end)) {
            0.0
        } else {
            n * n.log2()
        };
        let mut entries = Vec::new();
        if sort_cost + n * n_indices.log2() < EXTRACT_NNZ_SWITCH * n_indices {
            if self.sorted_node != Some((start, end)) {
                self.sorted_samples.clear();
                self.sorted_samples
                    .extend_from_slice(&self.samples[start..end]);
                self.sorted_samples.sort_unstable();
                self.sorted_node = Some((start, end));
            }
            let mut low = from;
            for &row in &self.sorted_samples {
                match c.indices[low..to].binary_search(&row) {
                    Ok(k) => {
                        entries.push(low + k);
                        low += k + 1;
                    }
                    Err(k) => low += k,
                }
            }
        } else {
            entries.extend(
                (from..to).filter(|&k| (start..end).contains(&self.index_to_samples[c.indices[k]])),
            );
        }
        let (mut end_negative, mut start_positive) = (start, end);
        for k in entries {
            let at = self.index_to_samples[c.indices[k]];
            let v = c.data[k];
            if v > 0.0 {
                start_positive -= 1;
                self.feature_values[start_positive] = v;
                self.sparse_swap(at, start_positive);
            } else if v < 0.0 {
                self.feature_values[end_negative] = v;
                self.sparse_swap(at, end_negative);
                end_negative += 1;
            }
        }
        self.end_negative = end_negative;
        self.start_positive = start_positive;
    }

    /// A new node's split search begins: its samples' sorted copy is stale.
    pub fn begin_node(&mut self) {
        self.sorted_node = None;
    }

    /// scikit-learn's `sort_samples_and_feature_values`: the node's values of `feature`
    /// ascending in `feature_values[start..end]`, the samples moved alike.
    pub fn sort(&mut self, start: usize, end: usize, feature: usize) {
        match self.input {
            Features::Dense(x) => {
                let column = self.columns[feature];
                for p in start..end {
                    self.feature_values[p] = x[[self.samples[p], column]];
                }
                sort::simultaneous_sort(
                    &mut self.feature_values[start..end],
                    &mut self.samples[start..end],
                );
                self.end_negative = usize::MAX;
                self.start_positive = usize::MAX;
            }
            Features::Sparse(c) => {
                self.extract_nonzeros(c, start, end, feature);
                let (negative, positive) = (self.end_negative, self.start_positive);
                sort::simultaneous_sort(
                    &mut self.feature_values[start..negative],
                    &mut self.samples[start..negative],
                );
                if positive < end {
                    sort::simultaneous_sort(
                        &mut self.feature_values[positive..end],
                        &mut self.samples[positive..end],
                    );
                }
                for p in (start..negative).chain(positive..end) {
                    self.index_to_samples[self.samples[p]] = p;
                }
                // one zero on each side of the zeros' block stands for all of them
                if negative < positive {
                    self.start_positive -= 1;
                    self.feature_values[self.start_positive] = 0.0;
                    if self.end_negative != self.start_positive {
                        self.feature_values[self.end_negative] = 0.0;
                        self.end_negative += 1;
                    }
                }
            }
        }
    }

    /// scikit-learn's `next_p` after `sort`: from position `p`, the last position `p_prev`
    /// of its run of equal values (within `FEATURE_THRESHOLD`) and the next position.
    pub fn next_p(&self, mut p: usize, end: usize) -> (usize, usize) {
        let step = |p: usize| {
            if p + 1 != self.end_negative {
                p + 1
            } else {
                self.start_positive
            }
        };
        let fv = &self.feature_values;
        let mut next = step(p);
        while next < end && fv[next] <= fv[p] + FEATURE_THRESHOLD {
            p = next;
            next = step(p);
        }
        (p, next)
    }

    /// scikit-learn's `find_min_max`: the extremes of the node's values of `feature`.
    pub fn min_max(&mut self, start: usize, end: usize, feature: usize) -> (f32, f32) {
        match self.input {
            Features::Dense(x) => {
                let column = self.columns[feature];
                let first = x[[self.samples[start], column]];
                let (mut min, mut max) = (first, first);
                for p in start..end {
                    let v = x[[self.samples[p], column]];
                    self.feature_values[p] = v;
                    if v < min {
                        min = v;
                    } else if v > max {
                        max = v;
                    }
                }
                (min, max)
            }
            Features::Sparse(c) => {
                self.extract_nonzeros(c, start, end, feature);
                let (negative, positive) = (self.end_negative, self.start_positive);
                let first = if negative != positive {
                    0.0
                } else {
                    self.feature_values[start]
                };
                let (mut min, mut max) = (first, first);
                for p in (start..negative).chain(positive..end) {
                    let v = self.feature_values[p];
                    if v < min {
                        min = v;
                    } else if v > max {
                        max = v;
                    }
                }
                (min, max)
            }
        }
    }

    /// Sends the values at most `threshold` to the front of `start..end` with scikit-learn's
    /// two-ended swap, on the values `min_max` (or `extract_nonzeros`) left; returns the
    /// first position on the right.
    fn partition_values(&mut self, start: usize, end: usize, threshold: f64) -> usize {
        let (mut p, mut q) = match self.input {
            Features::Dense(_) => (start, end),
            Features::Sparse(_) if threshold < 0.0 => (start, self.end_negative),
            Features::Sparse(_) if threshold > 0.0 => (self.start_positive, end),
            Features::Sparse(_) => return self.start_positive,
        };
        while p < q {
            if f64::from(self.feature_values[p]) <= threshold {
                p += 1;
            } else {
                q -= 1;
                self.feature_values.swap(p, q);
                match self.input {
                    Features::Dense(_) => self.samples.swap(p, q),
                    Features::Sparse(_) => self.sparse_swap(p, q),
                }
            }
        }
        q
    }

    /// scikit-learn's `partition_samples` of the random splitter, right after `min_max`.
    pub fn partition_random(&mut self, start: usize, end: usize, threshold: f64) -> usize {
        self.partition_values(start, end, threshold)
    }

    /// scikit-learn's `partition_samples_final`: the node's samples split by
    /// `feature <= threshold`.
    pub fn partition_final(&mut self, start: usize, end: usize, feature: usize, threshold: f64) {
        match self.input {
            Features::Dense(x) => {
                let column = self.columns[feature];
                let (mut p, mut q) = (start, end);
                while p < q {
                    if f64::from(x[[self.samples[p], column]]) <= threshold {
                        p += 1;
                    } else {
                        q -= 1;
                        self.samples.swap(p, q);
                    }
                }
            }
            Features::Sparse(c) => {
                self.extract_nonzeros(c, start, end, feature);
                self.partition_values(start, end, threshold);
            }
        }
    }
}
