//! Nearest neighbours read from distances the caller already has (scikit-learn's
//! `metric="precomputed"`): nothing is computed, only selected.
//!
//! * A dense `queries x reference` matrix: every entry of a row is a candidate; the `k`
//!   smallest are returned nearest first, equal values by column. Any selection by value
//!   agrees with this one except where the row's order is decided by equal values, so the
//!   result also says whether it was (see [`nearest_in_dense_rows`]): a caller that must
//!   agree with another implementation's tie rule can tell when it cannot.
//! * A sparse graph in CSR form: only a row's stored entries are candidates (an absent entry is
//!   not a zero distance), ordered by value with equal values kept in their stored order (a
//!   stable sort), so the answer is fully determined by the input.

use crate::error::{Error, Result};
use ndarray::{Array2, ArrayView2};
use rayon::prelude::*;

/// The `k` nearest candidates of every query row, nearest first.
#[derive(Debug, Clone, PartialEq)]
pub struct GivenNeighbours {
    /// `n_queries x k` distances (the given entries, bit for bit).
    pub distances: Array2<f64>,
    /// `n_queries x k` column indices.
    pub indices: Array2<usize>,
}

fn nan_error() -> Error {
    Error::invalid_input("given distances: NaN entry")
}

/// The `k` smallest entries of every row of `distances` (`1 <= k <= ncols`), ties by column,
/// and whether the answer is tie-free: no row's first `k` values, nor its `k`-th and next
/// value, are equal, so every ordering by value selects and orders them alike.
pub fn nearest_in_dense_rows(
    distances: ArrayView2<f64>,
    k: usize,
) -> Result<(GivenNeighbours, bool)> {
    let (n, width) = distances.dim();
    if k == 0 || k > width {
        return Err(Error::invalid_input(format!(
            "given distances: k must lie in 1..={width}, got {k}"
        )));
    }
    if distances.iter().any(|v| v.is_nan()) {
        return Err(nan_error());
    }
    // one more than asked for, where there is one: the boundary of the selection is tie-free
    // only when the k-th value is strictly below the next
    let kept = (k + 1).min(width);
    let rows: Vec<(Vec<(f64, usize)>, bool)> = (0..n)
        .into_par_iter()
        .map(|i| {
            let row = distances.row(i);
            let mut candidates: Vec<(f64, usize)> = row.iter().copied().zip(0..).collect();
            let by_value_then_column =
                |a: &(f64, usize), b: &(f64, usize)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1));
            if kept < width {
                candidates.select_nth_unstable_by(kept - 1, by_value_then_column);
                candidates.truncate(kept);
            }
            candidates.sort_unstable_by(by_value_then_column);
            // -0.0 and 0.0 compare equal as distances even though total_cmp orders them
            let tie_free = candidates.windows(2).all(|w| w[0].0 < w[1].0);
            candidates.truncate(k);
            (candidates, tie_free)
        })
        .collect();
    Ok(assemble(n, k, rows))
}

/// Two distances of a graph (never NaN: checked on construction) by value, `-0.0` equal to
/// `0.0` as NumPy compares them.
fn by_value(a: f64, b: f64) -> std::cmp::Ordering {
    a.partial_cmp(&b).expect("a given graph holds no NaN")
}

/// A sparse distance graph in CSR form: row `i` holds the distances `data[indptr[i]..indptr[i +
/// 1]]` to the points `indices[..]` of the same range. Checked once on construction: the row
/// pointer starts at 0 and runs without decreasing up to the number of entries, the two
/// entry arrays have one length, and no distance is NaN.
#[derive(Debug, Clone, Copy)]
pub struct GivenGraph<'a> {
    data: &'a [f64],
    indices: &'a [usize],
    indptr: &'a [usize],
}

impl<'a> GivenGraph<'a> {
    /// The graph of `data`, column `indices` and row pointer `indptr`, checked.
    pub fn new(data: &'a [f64], indices: &'a [usize], indptr: &'a [usize]) -> Result<Self> {
        let bad = |what: &str| Error::invalid_input(format!("given graph: {what}"));
        if indptr.is_empty() || indptr[0] != 0 || data.len() != indices.len() {
            return Err(bad("inconsistent CSR arrays"));
        }
        if indptr.windows(2).any(|w| w[0] > w[1]) || indptr[indptr.len() - 1] != data.len() {
            return Err(bad(
                "row pointer not non-decreasing up to the number of entries",
            ));
        }
        if data.iter().any(|v| v.is_nan()) {
            return Err(nan_error());
        }
        Ok(Self {
            data,
            indices,
            indptr,
        })
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.indptr.len() - 1
    }

    /// Number of stored entries.
    pub fn stored(&self) -> usize {
        self.data.len()
    }

    /// Row `i`'s stored distances and their columns, in stored order.
    pub fn row(&self, i: usize) -> (&'a [f64], &'a [usize]) {
        let (start, stop) = (self.indptr[i], self.indptr[i + 1]);
        (&self.data[start..stop], &self.indices[start..stop])
    }

    /// The positions of the stored entries with every row in order of value, equal values
    /// (`-0.0` and `0.0` among them) in stored order: a stable sort of each row, as NumPy's
    /// mergesort sorts it (scikit-learn's `sort_graph_by_row_values`).
    pub fn value_order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.stored()).collect();
        for i in 0..self.rows() {
            let (start, stop) = (self.indptr[i], self.indptr[i + 1]);
            order[start..stop].sort_by(|&p, &q| by_value(self.data[p], self.data[q]));
        }
        order
    }

    /// Errors unless every column lies below `columns` (a square graph's rows: its points)
    /// and no distance is negative: what a graph of distances between `columns` points holds.
    pub fn check_distances_among(&self, columns: usize) -> Result<()> {
        if let Some(&j) = self.indices.iter().find(|&&j| j >= columns) {
            return Err(Error::invalid_input(format!(
                "given graph: column {j} out of range for {columns} points"
            )));
        }
        if self.data.iter().any(|&v| v < 0.0) {
            return Err(Error::invalid_input("given graph: negative distances"));
        }
        Ok(())
    }
}

/// The `k` smallest stored entries of every row of `graph`, equal values in stored order;
/// every row must hold at least `k`. Also whether every row was stored in non-decreasing
/// order already.
pub fn nearest_in_graph_rows(graph: &GivenGraph, k: usize) -> Result<(GivenNeighbours, bool)> {
    if k == 0 {
        return Err(Error::invalid_input("given graph: k must be at least 1"));
    }
    if graph.indptr.windows(2).any(|w| w[1] - w[0] < k) {
        return Err(Error::invalid_input(
            "given graph: a row holds fewer than k entries",
        ));
    }
    let rows: Vec<(Vec<(f64, usize)>, bool)> = (0..graph.rows())
        .into_par_iter()
        .map(|i| {
            let (values, columns) = graph.row(i);
            let sorted = values.windows(2).all(|w| w[0] <= w[1]);
            let mut stored: Vec<(f64, usize)> = values
                .iter()
                .copied()
                .zip(columns.iter().copied())
                .collect();
            if !sorted {
                // stable: equal values keep their stored order
                stored.sort_by(|a, b| by_value(a.0, b.0));
            }
            stored.truncate(k);
            (stored, sorted)
        })
        .collect();
    Ok(assemble(graph.rows(), k, rows))
}

/// The rows' selections as matrices, and whether every row's flag holds.
fn assemble(n: usize, k: usize, rows: Vec<(Vec<(f64, usize)>, bool)>) -> (GivenNeighbours, bool) {
    let mut distances = Array2::zeros((n, k));
    let mut indices = Array2::zeros((n, k));
    let mut all = true;
    for (i, (row, flag)) in rows.into_iter().enumerate() {
        all &= flag;
        for (c, (d, j)) in row.into_iter().enumerate() {
            distances[[i, c]] = d;
            indices[[i, c]] = j;
        }
    }
    (GivenNeighbours { distances, indices }, all)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn dense_rows_select_the_smallest_entries_nearest_first() {
        let d = array![[3.0, 0.5, 2.0, 9.0], [1.0, 4.0, 0.25, 2.5]];
        let (got, tie_free) = nearest_in_dense_rows(d.view(), 3).unwrap();
        assert_eq!(got.indices, array![[1, 2, 0], [2, 0, 3]]);
        assert_eq!(got.distances, array![[0.5, 2.0, 3.0], [0.25, 1.0, 2.5]]);
        assert!(tie_free);
        // all columns: nothing beyond the selection to compare with
        let (all, tie_free) = nearest_in_dense_rows(d.view(), 4).unwrap();
        assert_eq!(all.indices.row(0).to_vec(), vec![1, 2, 0, 3]);
        assert!(tie_free);
    }

    #[test]
    fn dense_ties_are_ordered_by_column_and_reported() {
        // inside the selection
        let (inside, tie_free) =
            nearest_in_dense_rows(array![[2.0, 1.0, 1.0, 5.0]].view(), 3).unwrap();
        assert_eq!(inside.indices.row(0).to_vec(), vec![1, 2, 0]);
        assert!(!tie_free);
        // at its boundary: the k-th equals the next
        let (boundary, tie_free) =
            nearest_in_dense_rows(array![[2.0, 1.0, 2.0, 5.0]].view(), 2).unwrap();
        assert_eq!(boundary.indices.row(0).to_vec(), vec![1, 0]);
        assert!(!tie_free);
        // beyond it: irrelevant
        let (_, tie_free) = nearest_in_dense_rows(array![[2.0, 1.0, 5.0, 5.0]].view(), 2).unwrap();
        assert!(tie_free);
        // signed zeros are equal distances
        let (_, tie_free) = nearest_in_dense_rows(array![[0.0, -0.0, 1.0]].view(), 2).unwrap();
        assert!(!tie_free);
    }

    #[test]
    fn dense_matches_a_full_sort_on_many_rows() {
        let d = Array2::from_shape_fn((40, 57), |(i, j)| ((i * 31 + j * 17) % 97) as f64 * 0.5);
        for k in [1, 5, 56, 57] {
            let (got, _) = nearest_in_dense_rows(d.view(), k).unwrap();
            for i in 0..40 {
                let mut all: Vec<(f64, usize)> = d.row(i).iter().copied().zip(0..).collect();
                all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                let want: Vec<usize> = all[..k].iter().map(|p| p.1).collect();
                assert_eq!(got.indices.row(i).to_vec(), want, "row {i} k {k}");
            }
        }
    }

    #[test]
    fn dense_refuses_bad_k_and_nan() {
        let d = array![[1.0, 2.0]];
        assert!(nearest_in_dense_rows(d.view(), 0).is_err());
        assert!(nearest_in_dense_rows(d.view(), 3).is_err());
        assert!(nearest_in_dense_rows(array![[1.0, f64::NAN]].view(), 1).is_err());
    }

    /// The graph's checks and the selection, as one call.
    fn graph_nearest(
        data: &[f64],
        indices: &[usize],
        indptr: &[usize],
        k: usize,
    ) -> Result<(GivenNeighbours, bool)> {
        nearest_in_graph_rows(&GivenGraph::new(data, indices, indptr)?, k)
    }

    #[test]
    fn graph_rows_sort_stably_and_keep_only_stored_entries() {
        // row 0: stored (col 3: 2.0), (col 0: 1.0), (col 2: 2.0) -> 0, then 3 before 2
        // row 1: stored already sorted: (col 1: 0.5), (col 0: 0.75)
        let data = [2.0, 1.0, 2.0, 0.5, 0.75];
        let indices = [3, 0, 2, 1, 0];
        let indptr = [0, 3, 5];
        let (got, stored_sorted) = graph_nearest(&data, &indices, &indptr, 2).unwrap();
        assert_eq!(got.indices, array![[0, 3], [1, 0]]);
        assert_eq!(got.distances, array![[1.0, 2.0], [0.5, 0.75]]);
        assert!(!stored_sorted); // row 0 was stored out of order
        let (first, stored_sorted) = graph_nearest(&[0.5, 0.75], &[1, 0], &[0, 2], 1).unwrap();
        assert!(stored_sorted);
        assert_eq!(first.indices, array![[1]]);
    }

    #[test]
    fn value_order_sorts_each_row_stably_as_numpy_mergesort() {
        // row 0: 2.0, 1.0, 2.0, -0.0, 0.0 -> -0.0 and 0.0 tie (stored order), then 1.0, then
        // the two 2.0 in stored order; row 1 empty; row 2 one entry
        let data = [2.0, 1.0, 2.0, -0.0, 0.0, 5.0];
        let indices = [4, 1, 0, 3, 2, 0];
        let indptr = [0, 5, 5, 6];
        let graph = GivenGraph::new(&data, &indices, &indptr).unwrap();
        assert_eq!(graph.value_order(), vec![3, 4, 1, 0, 2, 5]);
    }

    #[test]
    fn graph_refuses_short_rows_and_corrupt_arrays() {
        let (data, indices) = ([1.0, 2.0, 3.0], [0, 1, 0]);
        assert!(graph_nearest(&data, &indices, &[0, 2, 3], 2).is_err());
        assert!(graph_nearest(&data, &indices, &[0, 2, 3], 1).is_ok());
        assert!(graph_nearest(&data, &indices, &[0, 3, 2], 1).is_err());
        assert!(graph_nearest(&data, &indices, &[0, 2, 4], 1).is_err());
        assert!(graph_nearest(&data, &indices[..2], &[0, 2, 3], 1).is_err());
        assert!(graph_nearest(&data, &indices, &[1, 2, 3], 1).is_err());
        assert!(graph_nearest(&data, &indices, &[0, 2, 3], 0).is_err());
    }
}
