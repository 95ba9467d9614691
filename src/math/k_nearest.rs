//! The k-nearest search: for every query row, the `k` reference rows nearest to it. One engine
//! for KNN's neighbours, t-SNE's nearest-neighbour affinities and MeanShift's bandwidth
//! estimate.
//!
//! * Euclidean distances (squared, plain, Minkowski `p = 2`) come from tiles of the product
//!   `queries · referenceᵀ`, every row of a tile finished by
//!   [`distance::finish_squared_euclidean_row`] (exact where the product form cancels), so the
//!   full distance matrix never exists. Up to [`SHORT_LIST_MAX`] neighbours, a block of query
//!   rows walks the reference in tiles of [`REFERENCE_TILE_ROWS`], each product tile small
//!   enough to stay in the core's L2 while its rows extend their short lists; more neighbours
//!   need whole rows, from row-chunks of at most [`CHUNK_CAP_ELEMS`]
//!   ([`matmul::tiled_product_capped`]). Other metrics scan the reference rows
//!   ([`distance::row_to_rows`]).
//! * Selection is by the total order (distance, then reference index): the result is the
//!   first `k` rows of a full sort, whichever way it is found. A sorted short list with
//!   vectorised screening for `k <= SHORT_LIST_MAX`, a partition of the row above.
//! * Query rows run in blocks (tiled search) or tasks of [`ROWS_PER_TASK`] (row-chunks) in
//!   parallel behind [`SCAN_F64`](crate::math::distance::SCAN_F64); every row is finished and
//!   selected on its own, and the tiling policy never changes a product's bits (gemmkit's
//!   sums run over the features in one order whatever the tile), so neither the gate, the
//!   tiling, the chunking knobs nor the thread count changes a result.

use crate::error::{Error, Result};
use crate::math::distance::{self, Metric, SCAN_F64};
use crate::math::matmul;
use gemmkit_ndarray::Parallelism;
use ndarray::{s, Array2, ArrayView1, ArrayView2, CowArray, Ix1};
use rayon::prelude::*;
use std::sync::Mutex;

/// Beyond this many neighbours the selection partitions the whole row instead of keeping a
/// sorted short list.
pub const SHORT_LIST_MAX: usize = 32;

/// Largest product chunk (8 MiB of f64): two chunks in flight stay in a shared L3, so each
/// chunk's rows are selected from cache while it is hot. Measured on 5k queries x 20k
/// reference rows (d = 32): 64-row chunks take half the time of the default `chunk_elems`
/// (1677-row, 268 MB chunks). The tiling never changes a bit (see [`matmul::row_chunks`]).
pub const CHUNK_CAP_ELEMS: usize = 1 << 20;

/// Query rows per rayon task of the selection.
pub const ROWS_PER_TASK: usize = 8;

/// Reference rows per product tile of the tiled search: with [`QUERY_BLOCK_MAX_ROWS`] query
/// rows a tile is 1 MiB of f64, resident in a core's L2 (2 MiB on Sapphire Rapids, 1 MiB on
/// Zen 4/5: there it falls to L3, still shared by no other worker), and each row's stretch
/// (4 KiB) sits in L1 between its finish and its selection.
pub const REFERENCE_TILE_ROWS: usize = 512;

/// Most query rows per block of the tiled search (a worker's unit; blocks are never shorter
/// than [`matmul::min_chunk_rows`]). Each block re-packs the whole reference for the
/// product; at 256 rows that packing is a few percent of the block's multiply-adds (`d` of
/// them per packed element).
pub const QUERY_BLOCK_MAX_ROWS: usize = 256;

/// Whose neighbours are searched.
#[derive(Debug, Clone, Copy)]
pub enum Queries<'a> {
    /// Separate query rows (as many features as the reference).
    Rows(ArrayView2<'a, f64>),
    /// The reference rows themselves. Without `include_self`, row `i` is left out of its own
    /// candidates (by index: a duplicate of it still counts).
    Reference { include_self: bool },
}

/// Reference rows prepared for searching under one metric.
pub struct KNearest<'a> {
    reference: ArrayView2<'a, f64>,
    /// Squared row norms (product metrics only; empty otherwise).
    sq_norms: CowArray<'a, f64, Ix1>,
    metric: Metric,
}

impl<'a> KNearest<'a> {
    /// Search `reference` under `metric` (squared norms computed here when the metric goes
    /// through the product).
    pub fn new(reference: ArrayView2<'a, f64>, metric: Metric) -> Self {
        let sq_norms = if through_product(metric) {
            distance::row_sq_norms(reference).into()
        } else {
            ndarray::Array1::zeros(0).into()
        };
        Self {
            reference,
            sq_norms,
            metric,
        }
    }

    /// As [`KNearest::new`] with the squared row norms already at hand (as
    /// [`distance::row_sq_norms`] computes them; `sq_norms.len() == reference.nrows()`).
    pub fn with_sq_norms(
        reference: ArrayView2<'a, f64>,
        sq_norms: ArrayView1<'a, f64>,
        metric: Metric,
    ) -> Self {
        debug_assert_eq!(sq_norms.len(), reference.nrows());
        Self {
            reference,
            sq_norms: sq_norms.into(),
            metric,
        }
    }

    /// Distances to and indices of the `k` nearest reference rows of every query, nearest
    /// first (`n_queries x k`), in the metric's own units (squared for
    /// [`Metric::SquaredEuclidean`]).
    pub fn search(&self, queries: Queries, k: usize) -> Result<(Array2<f64>, Array2<usize>)> {
        let n = self.n_queries(queries);
        let flat = self.select(queries, k, Select::Sorted)?;
        let (mut dist, ind): (Vec<f64>, Vec<usize>) = flat.into_iter().unzip();
        if matches!(self.metric, Metric::Euclidean | Metric::Minkowski(2.0)) {
            dist.iter_mut().for_each(|v| *v = v.sqrt());
        }
        let shape = (n, k);
        Ok((
            Array2::from_shape_vec(shape, dist).expect("n x k selections"),
            Array2::from_shape_vec(shape, ind).expect("n x k selections"),
        ))
    }

    /// Index of the `k`-th nearest reference row (`k >= 1`; ties by index, as in
    /// [`KNearest::search`]) of every query: the last column of `search`, without sorting
    /// the nearer ones.
    pub fn kth(&self, queries: Queries, k: usize) -> Result<Vec<usize>> {
        Ok(self
            .select(queries, k, Select::Kth)?
            .into_iter()
            .map(|(_, j)| j)
            .collect())
    }

    fn n_queries(&self, queries: Queries) -> usize {
        match queries {
            Queries::Rows(q) => q.nrows(),
            Queries::Reference { .. } => self.reference.nrows(),
        }
    }

    fn check(&self, queries: Queries, k: usize) -> Result<()> {
        if let Queries::Rows(q) = queries {
            if q.ncols() != self.reference.ncols() {
                return Err(Error::invalid_input(format!(
                    "k-nearest: queries have {} features, the reference {}",
                    q.ncols(),
                    self.reference.ncols()
                )));
            }
        }
        let candidates = match queries {
            Queries::Reference {
                include_self: false,
            } => self.reference.nrows().saturating_sub(1),
            _ => self.reference.nrows(),
        };
        if k == 0 || k > candidates {
            return Err(Error::invalid_input(format!(
                "k-nearest: k must lie in 1..={candidates}, got {k}"
            )));
        }
        Ok(())
    }

    /// Row-major `n_queries x width` selections (`width` = `k` sorted, or 1: the `k`-th).
    fn select(&self, queries: Queries, k: usize, how: Select) -> Result<Vec<(f64, usize)>> {
        self.select_planned(queries, k, how, Plan::Auto)
    }

    /// [`KNearest::select`] along a chosen path (tests pin the paths against each other).
    fn select_planned(
        &self,
        queries: Queries,
        k: usize,
        how: Select,
        plan: Plan,
    ) -> Result<Vec<(f64, usize)>> {
        self.check(queries, k)?;
        let width = match how {
            Select::Sorted => k,
            Select::Kth => 1,
        };
        let n_ref = self.reference.nrows();
        let skips_self = matches!(
            queries,
            Queries::Reference {
                include_self: false
            }
        );
        let (q, q_norms) = match queries {
            Queries::Rows(q) => (
                q,
                if through_product(self.metric) {
                    distance::row_sq_norms(q).into()
                } else {
                    CowArray::from(ndarray::Array1::zeros(0))
                },
            ),
            Queries::Reference { .. } => (self.reference, self.sq_norms.view().into()),
        };
        let mut out = vec![(0.0, 0usize); q.nrows() * width];
        let selector = Selector { k, how };
        // With fewer query rows than two blocks the tiled search would run on one worker:
        // whole rows keep both busy (each chunk's product parallel inside gemmkit).
        let one_block = q.nrows() < 2 * matmul::min_chunk_rows();
        let parallel = SCAN_F64.allows_parallel(q.nrows().saturating_mul(n_ref));
        let tiled = match plan {
            Plan::Auto => k <= SHORT_LIST_MAX && !(one_block && parallel),
            Plan::RowChunks => false,
            Plan::Tiled { .. } => true,
        };
        if through_product(self.metric) && tiled {
            let q_norms = q_norms.as_slice().expect("row norms are contiguous");
            let (block_rows, tile_cols) = match plan {
                Plan::Tiled {
                    block_rows,
                    tile_cols,
                } => (Some(block_rows), tile_cols),
                _ => (None, REFERENCE_TILE_ROWS),
            };
            let shape = (block_rows, tile_cols.min(n_ref));
            self.tiled_short_lists(q, q_norms, skips_self, selector, shape, &mut out);
        } else if through_product(self.metric) {
            let out = Mutex::new(&mut out[..]);
            let ref_norms = self.sq_norms.as_slice().expect("row norms are contiguous");
            matmul::tiled_product_capped(
                q,
                self.reference.t(),
                CHUNK_CAP_ELEMS,
                |start, mut chunk| {
                    let rows = chunk.nrows();
                    let dots = chunk
                        .as_slice_mut()
                        .expect("product chunks are whole rows of a row-major buffer");
                    let mut picked = vec![(0.0, 0usize); rows * width];
                    for_each_row_task(
                        rows,
                        n_ref,
                        rows.saturating_mul(n_ref),
                        dots,
                        &mut picked,
                        width,
                        |r, dots, _, picked, list| {
                            let i = start + r;
                            distance::finish_squared_euclidean_row(
                                dots,
                                q.row(i),
                                q_norms[i],
                                self.reference,
                                ref_norms,
                            );
                            selector.select(dots, skips_self.then_some(i), list, picked);
                        },
                    );
                    let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
                    out[start * width..(start + rows) * width].copy_from_slice(&picked);
                },
            )?;
        } else {
            let metric = self.metric;
            let work = q
                .nrows()
                .saturating_mul(n_ref)
                .saturating_mul(q.ncols().max(1));
            let mut buffer: Vec<f64> = Vec::new();
            for_each_row_task(
                q.nrows(),
                n_ref,
                work,
                &mut buffer,
                &mut out,
                width,
                |i, _, row_buf, picked, list| {
                    distance::row_to_rows(metric, q.row(i), self.reference, row_buf);
                    selector.select(row_buf, skips_self.then_some(i), list, picked);
                },
            );
        }
        Ok(out)
    }

    /// The tiled search (product metrics, `k <= SHORT_LIST_MAX`): blocks of query rows, each
    /// walking the reference tile by tile (in index order, so each row's short list only ever
    /// sees increasing indices, as over a whole row) and filling its rows of `out`.
    fn tiled_short_lists(
        &self,
        q: ArrayView2<f64>,
        q_norms: &[f64],
        skips_self: bool,
        selector: Selector,
        (block_rows, tile_cols): (Option<usize>, usize),
        out: &mut [(f64, usize)],
    ) {
        if q.nrows() == 0 {
            return;
        }
        let n_ref = self.reference.nrows();
        let k = selector.k;
        let width = out.len() / q.nrows();
        let ref_norms = self.sq_norms.as_slice().expect("row norms are contiguous");
        let work = q.nrows().saturating_mul(n_ref);
        let parallel = SCAN_F64.allows_parallel(work);
        // Several blocks per worker, so a slow worker on a shared machine is made up for.
        let block_rows = block_rows.unwrap_or(if parallel {
            q.nrows()
                .div_ceil(4 * crate::parallel::num_threads())
                .min(QUERY_BLOCK_MAX_ROWS)
        } else {
            QUERY_BLOCK_MAX_ROWS
        });
        // Blocks and tiles are cut as the row-chunks are (`matmul::row_chunks`: starts on
        // the microkernel's alignment, never shorter than gemmkit's small-shape routes), so
        // each entry takes the route and the summation order of one whole product: neither
        // the block nor the tile size changes a bit.
        let tiles = matmul::row_chunks(n_ref, 1, tile_cols);
        let widest = tiles.iter().map(|t| t.len()).max().unwrap_or(0);
        let mut rest = &mut out[..];
        let mut blocks = Vec::new();
        for rows in matmul::row_chunks(q.nrows(), 1, block_rows) {
            let (picked, tail) = rest.split_at_mut(rows.len() * width);
            blocks.push((rows, picked));
            rest = tail;
        }
        let block = |(rows, picked): (std::ops::Range<usize>, &mut [(f64, usize)])| {
            let start = rows.start;
            let queries = q.slice(s![rows.clone(), ..]);
            let mut tile = Array2::<f64>::zeros((rows.len(), widest));
            let mut lists: Vec<Vec<(f64, usize)>> =
                (0..rows.len()).map(|_| Vec::with_capacity(k)).collect();
            for cols in &tiles {
                let (first, end) = (cols.start, cols.end);
                let reference = self.reference.slice(s![first..end, ..]);
                {
                    let mut product = tile.slice_mut(s![.., ..cols.len()]);
                    if q.ncols() == 0 {
                        product.fill(0.0);
                    } else {
                        gemmkit_ndarray::gemm(
                            1.0,
                            &queries,
                            &reference.t(),
                            0.0,
                            &mut product,
                            Parallelism::Serial,
                        );
                    }
                }
                let flat = tile
                    .as_slice_mut()
                    .expect("a fresh tile is row-major and contiguous");
                for (r, list) in lists.iter_mut().enumerate() {
                    let i = start + r;
                    let row = &mut flat[r * widest..r * widest + cols.len()];
                    distance::finish_squared_euclidean_row(
                        row,
                        q.row(i),
                        q_norms[i],
                        reference,
                        &ref_norms[first..end],
                    );
                    let skip = (skips_self && cols.contains(&i)).then(|| i - first);
                    extend_short_list(row, first, skip, k, list);
                }
            }
            for (list, picked) in lists.iter().zip(picked.chunks_mut(width)) {
                match selector.how {
                    Select::Sorted => picked.copy_from_slice(list),
                    Select::Kth => picked[0] = list[k - 1],
                }
            }
        };
        if parallel && blocks.len() > 1 {
            blocks.into_par_iter().for_each(block);
        } else {
            blocks.into_iter().for_each(block);
        }
    }
}

/// Whether `metric` is measured through the product.
fn through_product(metric: Metric) -> bool {
    matches!(
        metric,
        Metric::Euclidean | Metric::SquaredEuclidean | Metric::Minkowski(2.0)
    )
}

/// One task of [`for_each_row_task`]: its index, its product rows (or an empty slice) and its
/// rows' selections.
type RowTask<'a> = (usize, (&'a mut [f64], &'a mut [(f64, usize)]));

/// Run `body(row, product_row, scan_buffer, picked_row, selection_list)` for `rows` rows in
/// tasks of [`ROWS_PER_TASK`], forking when there is more than one task and [`SCAN_F64`]
/// allows `work`. `product` holds `rows x n_ref` product rows, or is empty (the body fills
/// `scan_buffer`, `n_ref` long, itself); `picked` holds `width` selections per row.
fn for_each_row_task<F>(
    rows: usize,
    n_ref: usize,
    work: usize,
    product: &mut [f64],
    picked: &mut [(f64, usize)],
    width: usize,
    body: F,
) where
    F: Fn(usize, &mut [f64], &mut [f64], &mut [(f64, usize)], &mut Vec<(f64, usize)>) + Sync,
{
    let with_product = !product.is_empty();
    let task = |(t, (product, picked)): RowTask| {
        let mut list = Vec::new();
        let mut row_buf = if with_product {
            Vec::new()
        } else {
            vec![0.0; n_ref]
        };
        for (r, picked) in picked.chunks_mut(width).enumerate() {
            let row = t * ROWS_PER_TASK + r;
            let product_row = if with_product {
                &mut product[r * n_ref..(r + 1) * n_ref]
            } else {
                &mut []
            };
            body(row, product_row, &mut row_buf, picked, &mut list);
        }
    };
    let task_rows = ROWS_PER_TASK * n_ref;
    let n_tasks = rows.div_ceil(ROWS_PER_TASK);
    // An empty product slice stands in for every task's (scans fill their own buffer).
    let product_chunks: Vec<&mut [f64]> = if with_product {
        product.chunks_mut(task_rows).collect()
    } else {
        (0..n_tasks).map(|_| <&mut [f64]>::default()).collect()
    };
    let tasks = product_chunks
        .into_iter()
        .zip(picked.chunks_mut(ROWS_PER_TASK * width))
        .enumerate();
    if n_tasks > 1 && SCAN_F64.allows_parallel(work) {
        tasks.collect::<Vec<_>>().into_par_iter().for_each(task);
    } else {
        tasks.for_each(task);
    }
}

/// Which path a product-metric selection takes (only tests pick one).
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(test), allow(dead_code))]
enum Plan {
    /// Tiled up to [`SHORT_LIST_MAX`] neighbours, row-chunks beyond.
    Auto,
    /// Whole product rows from [`matmul::tiled_product_capped`] (any `k`).
    RowChunks,
    /// Tiles of `block_rows x tile_cols` (`k <= SHORT_LIST_MAX` only).
    Tiled { block_rows: usize, tile_cols: usize },
}

/// What a row's selection keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Select {
    /// The `k` nearest, nearest first.
    Sorted,
    /// Only the `k`-th nearest.
    Kth,
}

#[derive(Clone, Copy)]
struct Selector {
    k: usize,
    how: Select,
}

impl Selector {
    /// Select from one row of distances `d` (entry `skip` left out) into `picked`.
    fn select(
        &self,
        d: &[f64],
        skip: Option<usize>,
        best: &mut Vec<(f64, usize)>,
        picked: &mut [(f64, usize)],
    ) {
        if self.k <= SHORT_LIST_MAX {
            short_list(d, skip, self.k, best);
        } else {
            partition(d, skip, self.k, self.how == Select::Sorted, best);
        }
        match self.how {
            Select::Sorted => picked.copy_from_slice(best),
            Select::Kth => picked[0] = best[self.k - 1],
        }
    }
}

/// The segments of `0..n` left after taking out `skip`.
fn segments(n: usize, skip: Option<usize>) -> [std::ops::Range<usize>; 2] {
    match skip {
        Some(s) if s < n => [0..s, s + 1..n],
        _ => [0..n, n..n],
    }
}

/// The `k` smallest of `d` (but `skip`) as `(distance, index)` by distance then index, by a
/// sorted short list. Indices arrive in increasing order, so a newcomer only passes strictly
/// larger distances: it lands after every equal one kept. Blocks of 8 are first screened with
/// a branch-free `<` (vectorised); distances are never NaN or -0.0, where `<` and `total_cmp`
/// would disagree.
fn short_list(d: &[f64], skip: Option<usize>, k: usize, best: &mut Vec<(f64, usize)>) {
    best.clear();
    extend_short_list(d, 0, skip, k, best);
}

/// [`short_list`] carried on over the next stretch of a row: `d[j]` is the distance to
/// reference row `offset + j` (`skip` counted within `d`), every index already in `best` lies
/// below `offset`, and `best` holds up to `k` entries sorted by distance then index.
fn extend_short_list(
    d: &[f64],
    offset: usize,
    skip: Option<usize>,
    k: usize,
    best: &mut Vec<(f64, usize)>,
) {
    let insert = |best: &mut Vec<(f64, usize)>, v: f64, j: usize| {
        let mut pos = best.len() - 1;
        while pos > 0 && best[pos - 1].0.total_cmp(&v).is_gt() {
            best[pos] = best[pos - 1];
            pos -= 1;
        }
        best[pos] = (v, j);
    };
    const BLOCK: usize = 8;
    for range in segments(d.len(), skip) {
        let mut start = range.start;
        while start < range.end && best.len() < k {
            best.push((d[start], offset + start));
            insert(best, d[start], offset + start);
            start += 1;
        }
        if start == range.end {
            continue;
        }
        let mut worst = best[k - 1].0;
        while start < range.end {
            let end = (start + BLOCK).min(range.end);
            let block = &d[start..end];
            if block.iter().fold(false, |any, &v| any | (v < worst)) {
                for (off, &v) in block.iter().enumerate() {
                    if v.total_cmp(&worst).is_lt() {
                        insert(best, v, offset + start + off);
                        worst = best[k - 1].0;
                    }
                }
            }
            start = end;
        }
    }
}

/// The `k` smallest of `d` (but `skip`) by partitioning the whole row; sorted by distance
/// then index when `sorted`, else only `best[k - 1]` is in place.
fn partition(d: &[f64], skip: Option<usize>, k: usize, sorted: bool, best: &mut Vec<(f64, usize)>) {
    let order = |a: &(f64, usize), b: &(f64, usize)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1));
    best.clear();
    for range in segments(d.len(), skip) {
        best.extend(d[range.clone()].iter().copied().zip(range));
    }
    best.select_nth_unstable_by(k - 1, order);
    best.truncate(k);
    if sorted {
        best.sort_unstable_by(order);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::serial_and_parallel;

    /// The reference rows as their own queries, each row among its own candidates ...
    fn including_self<'a>() -> Queries<'a> {
        Queries::Reference { include_self: true }
    }

    /// ... and each row left out of them.
    fn excluding_self<'a>() -> Queries<'a> {
        Queries::Reference {
            include_self: false,
        }
    }

    fn points(n: usize, d: usize, seed: usize) -> Array2<f64> {
        crate::math::lattice_points(n, d, seed * 7, 10.0, 5.0)
    }

    /// The oracle: every candidate measured on its own, fully sorted by (distance, index).
    fn brute(
        reference: &Array2<f64>,
        q: ArrayView1<f64>,
        skip: Option<usize>,
        metric: Metric,
    ) -> Vec<(f64, usize)> {
        let mut all: Vec<(f64, usize)> = reference
            .outer_iter()
            .enumerate()
            .filter(|&(j, _)| Some(j) != skip)
            .map(|(j, r)| (metric.between(q, r), j))
            .collect();
        all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        all
    }

    #[test]
    fn short_list_and_partition_agree_with_a_full_sort() {
        let d: Vec<f64> = (0..500).map(|i| ((i * 37) % 50) as f64).collect(); // many ties
        for skip in [None, Some(0), Some(17), Some(499)] {
            let mut full: Vec<(f64, usize)> = d
                .iter()
                .copied()
                .zip(0..)
                .filter(|&(_, j)| Some(j) != skip)
                .collect();
            full.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let mut best = Vec::new();
            for k in [1, 5, SHORT_LIST_MAX] {
                short_list(&d, skip, k, &mut best);
                assert_eq!(best, full[..k], "k={k} skip={skip:?}");
            }
            for k in [1, 5, SHORT_LIST_MAX + 1, 200, full.len()] {
                partition(&d, skip, k, true, &mut best);
                assert_eq!(best, full[..k], "k={k} skip={skip:?}");
                partition(&d, skip, k, false, &mut best);
                assert_eq!(best[k - 1], full[k - 1], "k={k} skip={skip:?}");
            }
        }
    }

    #[test]
    fn search_matches_a_brute_force_sort_for_every_metric_and_query_kind() {
        let reference = points(300, 5, 1);
        let q = points(70, 5, 2) * 0.9;
        for metric in [
            Metric::Euclidean,
            Metric::SquaredEuclidean,
            Metric::Manhattan,
            Metric::Minkowski(3.0),
            Metric::Chebyshev,
            Metric::Cosine,
        ] {
            let engine = KNearest::new(reference.view(), metric);
            for (queries, k) in [
                (Queries::Rows(q.view()), 7),
                (Queries::Rows(q.view()), 40),
                (including_self(), 5),
                (excluding_self(), 5),
                (excluding_self(), 299),
            ] {
                let (d, i) = engine.search(queries, k).unwrap();
                let kth = engine.kth(queries, k).unwrap();
                let rows = match queries {
                    Queries::Rows(q) => q.to_owned(),
                    _ => reference.clone(),
                };
                let skip_self = matches!(
                    queries,
                    Queries::Reference {
                        include_self: false
                    }
                );
                for r in 0..rows.nrows() {
                    let want = brute(&reference, rows.row(r), skip_self.then_some(r), metric);
                    let got: Vec<usize> = i.row(r).to_vec();
                    if through_product(metric) {
                        // Product-form rounding is relative to the norms (about (d + 2) u
                        // (|q|^2 + |r|^2), see `distance::finish_squared_euclidean`): compare
                        // squared distances rank by rank, and check each returned index
                        // really lies at its distance; near-equal distances may trade places.
                        let squared = |v: f64| {
                            if metric == Metric::SquaredEuclidean {
                                v
                            } else {
                                v * v
                            }
                        };
                        let scale = rows.row(r).dot(&rows.row(r)) + 2.0 * 5.0 * 5.0 * 5.0;
                        for c in 0..k {
                            let at = squared(metric.between(rows.row(r), reference.row(got[c])));
                            for other in [squared(want[c].0), at] {
                                assert!(
                                    (squared(d[[r, c]]) - other).abs() <= 1e-13 * scale,
                                    "{metric:?} k={k} row {r} rank {c}"
                                );
                            }
                        }
                    } else {
                        // Scans have the bits of `Metric::between`: exactly the sorted oracle.
                        let want_d: Vec<u64> = want[..k].iter().map(|w| w.0.to_bits()).collect();
                        let want_i: Vec<usize> = want[..k].iter().map(|w| w.1).collect();
                        assert_eq!(
                            d.row(r).mapv(f64::to_bits).to_vec(),
                            want_d,
                            "{metric:?} k={k} row {r}"
                        );
                        assert_eq!(got, want_i, "{metric:?} k={k} row {r}");
                    }
                    assert_eq!(kth[r], got[k - 1], "{metric:?} k={k} row {r}");
                    if skip_self {
                        assert!(!got.contains(&r));
                    }
                }
            }
        }
    }

    #[test]
    fn product_distances_are_exact_at_duplicates_and_keep_their_index_order() {
        // Rows far from the origin with duplicates: the product form cancels, the finish
        // re-measures, so duplicates sit at exactly 0 and keep index order.
        let mut reference = points(50, 4, 3) + 1e6;
        for dup in [10, 30, 31] {
            let src = reference.row(3).to_owned();
            reference.row_mut(dup).assign(&src);
        }
        let engine = KNearest::new(reference.view(), Metric::SquaredEuclidean);
        let (d, i) = engine.search(including_self(), 4).unwrap();
        assert_eq!(i.row(3).to_vec(), vec![3, 10, 30, 31]);
        assert_eq!(d.row(3).to_vec(), vec![0.0; 4]);
        let (_, i) = engine.search(excluding_self(), 3).unwrap();
        assert_eq!(i.row(30).to_vec(), vec![3, 10, 31]);
    }

    #[test]
    fn tiled_search_has_the_bits_of_whole_product_rows() {
        // Uneven tiles and blocks (and duplicates far from the origin, where the finish
        // re-measures) against whole rows: gemmkit sums each entry over the features in one
        // order whatever the tile, so every distance and index agrees bit for bit.
        let mut reference = points(300, 9, 5) * 1.3;
        for dup in [40, 41, 290] {
            let src = reference.row(7).to_owned();
            reference.row_mut(dup).assign(&src);
        }
        let mut far = reference.clone() + 1e7;
        let src = far.row(3).to_owned();
        far.row_mut(12).assign(&src);
        let q = points(70, 9, 6) * 0.7;
        for (reference, metric) in [
            (&reference, Metric::Euclidean),
            (&reference, Metric::SquaredEuclidean),
            (&far, Metric::SquaredEuclidean),
        ] {
            let engine = KNearest::new(reference.view(), metric);
            let q_far = q.clone()
                + if metric == Metric::SquaredEuclidean {
                    1e7
                } else {
                    0.0
                };
            for (queries, k) in [
                (Queries::Rows(q.view()), 1),
                (Queries::Rows(q_far.view()), 5),
                (including_self(), 4),
                (excluding_self(), SHORT_LIST_MAX),
            ] {
                for how in [Select::Sorted, Select::Kth] {
                    let whole = engine
                        .select_planned(queries, k, how, Plan::RowChunks)
                        .unwrap();
                    let bits = |v: Vec<(f64, usize)>| {
                        v.into_iter()
                            .map(|(d, i)| (d.to_bits(), i))
                            .collect::<Vec<_>>()
                    };
                    let whole = bits(whole);
                    for (block_rows, tile_cols) in [(1, 1), (3, 7), (16, 64), (500, 300), (64, 512)]
                    {
                        let plan = Plan::Tiled {
                            block_rows,
                            tile_cols,
                        };
                        let (s, p) = serial_and_parallel(&SCAN_F64, || {
                            bits(engine.select_planned(queries, k, how, plan).unwrap())
                        });
                        assert_eq!(s, whole, "{metric:?} k={k} {how:?} {plan:?}");
                        assert_eq!(p, whole, "{metric:?} k={k} {how:?} {plan:?} parallel");
                    }
                }
            }
        }
    }

    #[test]
    fn bad_k_and_feature_counts_are_refused() {
        let reference = points(10, 3, 1);
        let engine = KNearest::new(reference.view(), Metric::Euclidean);
        assert!(engine.search(Queries::Rows(reference.view()), 0).is_err());
        assert!(engine.search(Queries::Rows(reference.view()), 11).is_err());
        assert!(engine.search(excluding_self(), 10).is_err());
        assert!(engine
            .search(Queries::Rows(points(2, 4, 1).view()), 1)
            .is_err());
    }

    #[test]
    fn gate_tiling_and_thread_count_never_change_a_bit() {
        let reference = points(400, 6, 3);
        let q = points(150, 6, 4) * 0.8;
        let bits = |r: (Array2<f64>, Array2<usize>)| (r.0.mapv(f64::to_bits), r.1);
        for metric in [Metric::Euclidean, Metric::Manhattan] {
            let engine = KNearest::new(reference.view(), metric);
            for (queries, k) in [
                (Queries::Rows(q.view()), 5),
                (Queries::Rows(q.view()), 60),
                (excluding_self(), 9),
            ] {
                let (s, p) = serial_and_parallel(&SCAN_F64, || {
                    (
                        bits(engine.search(queries, k).unwrap()),
                        engine.kth(queries, k).unwrap(),
                    )
                });
                assert_eq!(s, p, "{metric:?} k={k}");
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(3)
                    .build()
                    .unwrap();
                let three = pool.install(|| bits(engine.search(queries, k).unwrap()));
                assert_eq!(three, s.0, "{metric:?} k={k}");
            }
        }
        let _lock = crate::gate::GATE_TEST_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let engine = KNearest::new(reference.view(), Metric::Euclidean);
        let reference_run = bits(engine.search(Queries::Rows(q.view()), 7).unwrap());
        for resident in [usize::MAX, 0] {
            let tiled = crate::gate::with_gate(&matmul::CHUNK_ELEMS, 50 * 400, || {
                crate::gate::with_gate(&matmul::CACHE_RESIDENT_MAX_BYTES, resident, || {
                    bits(engine.search(Queries::Rows(q.view()), 7).unwrap())
                })
            });
            assert_eq!(tiled, reference_run, "resident={resident}");
        }
    }
}
