//! Exact fixed-radius neighbourhoods: every point within `radius` of a point.
//!
//! "Within" is decided on the *reduced* distance, computed in feature order exactly as
//! scikit-learn's trees do (`sum (a - b)^2 <= r^2` for euclidean, `sum |a - b| <= r` for
//! manhattan, `sum |a - b|^p <= r^p` for minkowski), so a point at exactly `radius` is a
//! neighbour. Three strategies, picked by shape:
//!
//! - a cell grid (cells one radius wide, `3^d` cells visited) for up to three features;
//! - product screening for euclidean metrics in more dimensions: distances from
//!   `|a|^2 + |b|^2 - 2 a·b` on centered data, with every pair whose product-form distance
//!   lies within its rounding bound of the radius re-measured exactly;
//! - a plain scan for the other metrics.
//!
//! All three return the same sets. The scan over query points runs in blocks, in parallel
//! when [`SCAN_F64`] allows the scanned elements (candidate pairs times features).

use crate::error::{Error, Result};
use crate::math::distance::{row_sq_norms, Metric, SCAN_F64};
use crate::math::given_distances::GivenGraph;
use crate::math::{matmul, reduction};
use ndarray::{ArrayView1, ArrayView2, Axis};
use rayon::prelude::*;
use std::collections::HashMap;

/// The metric as the radius engine computes it: minkowski with `p = 1` or `p = 2` is the
/// manhattan or euclidean metric (as in scikit-learn).
pub fn canonical(metric: Metric) -> Metric {
    match metric {
        Metric::Minkowski(1.0) => Metric::Manhattan,
        Metric::Minkowski(2.0) => Metric::Euclidean,
        other => other,
    }
}

/// The radius in reduced units: `r^2` for euclidean, `r^p` for minkowski, `r` otherwise
/// (for [`Metric::SquaredEuclidean`] the radius is already a squared distance).
pub fn reduced_radius(radius: f64, metric: Metric) -> f64 {
    match canonical(metric) {
        Metric::Euclidean => radius * radius,
        Metric::Minkowski(p) => radius.powf(p),
        Metric::SquaredEuclidean | Metric::Manhattan | Metric::Chebyshev | Metric::Cosine => radius,
    }
}

/// Reduced distance of two equal-length slices, summed in feature order.
#[inline]
pub fn reduced_slices(a: &[f64], b: &[f64], metric: Metric) -> f64 {
    match canonical(metric) {
        Metric::Euclidean | Metric::SquaredEuclidean => a.iter().zip(b).fold(0.0, |s, (&x, &y)| {
            let d = x - y;
            s + d * d
        }),
        Metric::Manhattan => a.iter().zip(b).fold(0.0, |s, (&x, &y)| s + (x - y).abs()),
        Metric::Chebyshev => a
            .iter()
            .zip(b)
            .fold(0.0, |m, (&x, &y)| m.max((x - y).abs())),
        Metric::Minkowski(p) => a
            .iter()
            .zip(b)
            .fold(0.0, |s, (&x, &y)| s + (x - y).abs().powf(p)),
        Metric::Cosine => {
            let sq = |v: &[f64]| v.iter().fold(0.0, |s, &x| s + x * x);
            let dot = a.iter().zip(b).fold(0.0, |s, (&x, &y)| s + x * y);
            crate::math::distance::cosine_from(dot, sq(a), sq(b))
        }
    }
}

/// Reduced distance of two equal-length vectors (any strides), summed in feature order.
#[inline]
pub fn reduced_distance(a: ArrayView1<f64>, b: ArrayView1<f64>, metric: Metric) -> f64 {
    match (a.as_slice(), b.as_slice()) {
        (Some(a), Some(b)) => reduced_slices(a, b, metric),
        _ => reduced_slices(&a.to_vec(), &b.to_vec(), metric),
    }
}

/// Decides "within the radius" from a product-form squared distance, falling back to an
/// exact measurement only when the product form cannot tell.
///
/// The product form `|a|^2 + |b|^2 - 2 a·b` over `d` features is off from the feature-order
/// sum by at most about `(4d + 3) u (|a|^2 + |b|^2)` (u = unit roundoff: `2d u` from each of
/// the dot product and the norms, `3u` from the final combination, `d u` from the reference
/// sum itself). [`Screen::within`] uses twice that, `(4d + 8) * EPSILON` with
/// `EPSILON = 2u`, so every pair outside the band is decided correctly.
#[derive(Debug, Clone, Copy)]
pub struct Screen {
    reduced_radius: f64,
    factor: f64,
}

impl Screen {
    /// A screen for squared euclidean distances against `reduced_radius` in `dims` features.
    pub fn new(reduced_radius: f64, dims: usize) -> Self {
        Self {
            reduced_radius,
            factor: (4.0 * dims as f64 + 8.0) * f64::EPSILON,
        }
    }

    /// Whether the pair is within the radius. `approx` is the product-form squared distance,
    /// `norms` the sum of both squared norms (in the coordinates of the product), `exact`
    /// measures the feature-order squared distance: called only when `approx` lies within
    /// the rounding bound of the radius.
    #[inline]
    pub fn within(&self, approx: f64, norms: f64, exact: impl FnOnce() -> f64) -> bool {
        if (approx - self.reduced_radius).abs() <= self.factor * norms {
            exact() <= self.reduced_radius
        } else {
            approx < self.reduced_radius
        }
    }

    /// Appends to `out` every sample `j` within the radius of a query, given the query's
    /// products with the samples (`dots`), its squared norm and the samples' squared norms
    /// (all in the product's coordinates); `exact(j)` measures a pair the product form
    /// cannot decide. Indices come out ascending.
    #[inline]
    pub fn scan_row(
        &self,
        dots: &[f64],
        q_norm: f64,
        norms: &[f64],
        exact: impl Fn(usize) -> f64,
        out: &mut Vec<u32>,
    ) {
        // 64 candidates at a time: branch-free verdict masks, then one pass over the set bits
        // (the undecided band is rare and re-measured exactly).
        let rr = self.reduced_radius;
        for (c, (d64, n64)) in dots.chunks(64).zip(norms.chunks(64)).enumerate() {
            let base = c * 64;
            let mut inside = 0u64;
            let mut unsure = 0u64;
            for (k, (&dot, &nj)) in d64.iter().zip(n64).enumerate() {
                let both = q_norm + nj;
                let approx = both - 2.0 * dot;
                inside |= ((approx < rr) as u64) << k;
                unsure |= (((approx - rr).abs() <= self.factor * both) as u64) << k;
            }
            let mut pending = unsure;
            while pending != 0 {
                let k = pending.trailing_zeros() as usize;
                if exact(base + k) <= rr {
                    inside |= 1 << k;
                } else {
                    inside &= !(1 << k);
                }
                pending &= pending - 1;
            }
            while inside != 0 {
                out.push((base + inside.trailing_zeros() as usize) as u32);
                inside &= inside - 1;
            }
        }
    }
}

/// Radius neighbourhoods of every point. Counts are kept for every point; neighbour lists
/// only for the points whose count reached the storage threshold given to
/// [`radius_neighbourhoods`] (DBSCAN needs only its core points' lists). Lists stay in the
/// blocks the scan wrote them in (no final copy).
#[derive(Debug, Clone, Default)]
pub struct Neighbourhoods {
    counts: Vec<usize>,
    /// Query points per block (every block but the last is full).
    rows: usize,
    blocks: Vec<BlockOut>,
}

impl Neighbourhoods {
    /// Number of points within the radius of point `i`, itself included.
    pub fn count(&self, i: usize) -> usize {
        self.counts[i]
    }

    /// Counts of every point.
    pub fn counts(&self) -> &[usize] {
        &self.counts
    }

    /// Neighbours of point `i` (itself included) when its list was stored, else empty. The
    /// order is deterministic but unspecified.
    pub fn neighbours(&self, i: usize) -> &[u32] {
        let block = &self.blocks[i / self.rows];
        let local = i % self.rows;
        &block.indices[block.offsets[local]..block.offsets[local + 1]]
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    /// Whether there are no points.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }
}

impl Neighbourhoods {
    /// The neighbourhoods of the same points `x` at a smaller `radius` (same `metric`),
    /// filtered from these lists: each stored list keeps the neighbours within `radius` by
    /// the exact feature-order distance, which is how [`radius_neighbourhoods`] decides
    /// every pair, so a stored list holds the neighbours a search at `radius` would find
    /// (its order may differ). Lists are stored where they were here and still reach
    /// `store_min`. A point
    /// whose list was not stored keeps its count here: an upper bound of its count at
    /// `radius`, below the storage threshold either way. Filters in blocks, in parallel
    /// behind [`SCAN_F64`].
    ///
    /// Errors on a negative or non-finite radius, or `x` with another number of points.
    pub fn within(
        &self,
        x: ArrayView2<f64>,
        radius: f64,
        metric: Metric,
        store_min: usize,
    ) -> Result<Neighbourhoods> {
        check_radius(radius)?;
        let (n, d) = x.dim();
        if n != self.len() {
            return Err(Error::dimension_mismatch(self.len(), n));
        }
        let metric = canonical(metric);
        let reduced = reduced_radius(radius, metric);
        let packed = x.as_standard_layout();
        let flat = packed.as_slice().expect("standard layout");
        let point = |i: usize| &flat[i * d..(i + 1) * d];
        let stored: usize = self.blocks.iter().map(|b| b.indices.len()).sum();
        let work = stored.saturating_mul(d.max(1));
        Ok(run_blocks(n, SCAN_BLOCK_ROWS, work, |range| {
            let mut out = BlockOut::with_capacity(range.len());
            for i in range {
                let list = self.neighbours(i);
                if list.is_empty() {
                    // not stored: its count at the larger radius bounds the smaller one
                    out.counts.push(self.counts[i]);
                    out.offsets.push(out.indices.len());
                    continue;
                }
                let a = point(i);
                out.indices.extend(
                    list.iter()
                        .filter(|&&j| reduced_slices(a, point(j as usize), metric) <= reduced),
                );
                out.close(store_min);
            }
            out
        }))
    }
}

/// One block of query points' results: counts, and the stored lists in compressed rows.
#[derive(Debug, Clone, Default, PartialEq)]
struct BlockOut {
    counts: Vec<usize>,
    offsets: Vec<usize>,
    indices: Vec<u32>,
}

impl BlockOut {
    fn with_capacity(rows: usize) -> Self {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        Self {
            counts: Vec::with_capacity(rows),
            offsets,
            indices: Vec::new(),
        }
    }

    /// Closes the current point's list, whose neighbours were pushed onto `indices` after
    /// the previous close: kept when it reaches `store_min`, dropped otherwise.
    #[inline]
    fn close(&mut self, store_min: usize) {
        let start = *self.offsets.last().expect("offsets start with 0");
        let found = self.indices.len() - start;
        self.counts.push(found);
        if found < store_min {
            self.indices.truncate(start);
        }
        self.offsets.push(self.indices.len());
    }
}

/// Runs `block` over `0..n` in blocks of `rows` query points, in parallel when [`SCAN_F64`]
/// allows `work`; blocks are kept in order (so the result does not depend on the path taken).
fn run_blocks(
    n: usize,
    rows: usize,
    work: usize,
    block: impl Fn(std::ops::Range<usize>) -> BlockOut + Sync,
) -> Neighbourhoods {
    let rows = rows.max(1);
    let ranges: Vec<std::ops::Range<usize>> =
        (0..n).step_by(rows).map(|s| s..(s + rows).min(n)).collect();
    let blocks: Vec<BlockOut> = if ranges.len() > 1 && SCAN_F64.allows_parallel(work) {
        ranges.into_par_iter().map(&block).collect()
    } else {
        ranges.into_iter().map(&block).collect()
    };
    let mut counts = Vec::with_capacity(n);
    for b in &blocks {
        counts.extend_from_slice(&b.counts);
    }
    Neighbourhoods {
        counts,
        rows,
        blocks,
    }
}

/// Largest cell coordinate (range / cell width) the grid accepts. Past it the rounding of
/// `(x - min) / width` could move a point by a whole cell, and a plain scan is used instead.
const GRID_MAX_CELLS_PER_AXIS: f64 = 1e8;

/// Cell widths are one radius (in coordinate units) widened by this factor, so a coordinate
/// difference of exactly one radius never spans two cell boundaries after rounding.
const GRID_WIDEN: f64 = 1.0 + 1e-6;

/// A hashed cell grid over at most three features.
struct Grid {
    dims: usize,
    /// Point indices sorted by cell.
    order: Vec<u32>,
    /// Coordinates in `order`, padded with zeros to three.
    coords: Vec<[f64; 3]>,
    /// Cell `c` holds `order[cell_start[c]..cell_start[c + 1]]`.
    cell_start: Vec<usize>,
    /// Cell of each point (by original index).
    cell_of: Vec<u32>,
    /// Neighbouring cells (itself included) of each cell, ascending.
    near_start: Vec<usize>,
    near: Vec<u32>,
}

impl Grid {
    /// Builds the grid for `x` (at most three features) with cells `bound` wide, where
    /// `bound` bounds each coordinate difference of two neighbours; `None` when the grid
    /// would be too fine for the coordinates' precision.
    fn build(x: ArrayView2<f64>, bound: f64) -> Option<Self> {
        let (n, dims) = x.dim();
        if dims == 0 || dims > 3 || !(bound > 0.0 && bound.is_finite()) || n > u32::MAX as usize {
            return None;
        }
        let width = bound * GRID_WIDEN;
        let mut mins = [0.0f64; 3];
        for (k, min) in mins.iter_mut().enumerate().take(dims) {
            let col = x.column(k);
            let lo = col.iter().cloned().fold(f64::INFINITY, f64::min);
            let hi = col.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            if (hi - lo) / width > GRID_MAX_CELLS_PER_AXIS {
                return None;
            }
            *min = lo;
        }
        let keys: Vec<[i64; 3]> = x
            .outer_iter()
            .map(|row| {
                let mut key = [0i64; 3];
                for k in 0..dims {
                    key[k] = ((row[k] - mins[k]) / width).floor() as i64;
                }
                key
            })
            .collect();
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_unstable_by_key(|&i| (keys[i as usize], i));
        let coords: Vec<[f64; 3]> = order
            .iter()
            .map(|&i| {
                let mut c = [0.0f64; 3];
                for (k, v) in c.iter_mut().enumerate().take(dims) {
                    *v = x[[i as usize, k]];
                }
                c
            })
            .collect();
        let mut cell_start = Vec::new();
        let mut cell_keys: Vec<[i64; 3]> = Vec::new();
        let mut cell_of = vec![0u32; n];
        for (pos, &i) in order.iter().enumerate() {
            let key = keys[i as usize];
            if cell_keys.last() != Some(&key) {
                cell_keys.push(key);
                cell_start.push(pos);
            }
            cell_of[i as usize] = (cell_keys.len() - 1) as u32;
        }
        cell_start.push(n);
        let lookup: HashMap<[i64; 3], u32> = cell_keys
            .iter()
            .enumerate()
            .map(|(c, &k)| (k, c as u32))
            .collect();
        let offsets: Vec<[i64; 3]> = (0..3usize.pow(dims as u32))
            .map(|code| {
                let mut off = [0i64; 3];
                let mut rest = code;
                for o in off.iter_mut().take(dims) {
                    *o = (rest % 3) as i64 - 1;
                    rest /= 3;
                }
                off
            })
            .collect();
        let mut near_start = Vec::with_capacity(cell_keys.len() + 1);
        let mut near = Vec::new();
        near_start.push(0);
        for key in &cell_keys {
            let first = near.len();
            for off in &offsets {
                let probe = [
                    key[0].saturating_add(off[0]),
                    key[1].saturating_add(off[1]),
                    key[2].saturating_add(off[2]),
                ];
                if let Some(&c) = lookup.get(&probe) {
                    near.push(c);
                }
            }
            // Sort and deduplicate this cell's list only: deduplicating the whole vector
            // rescanned every earlier list (quadratic in the number of cells).
            near[first..].sort_unstable();
            let mut kept = first;
            for pos in first..near.len() {
                if pos == first || near[pos] != near[kept - 1] {
                    near[kept] = near[pos];
                    kept += 1;
                }
            }
            near.truncate(kept);
            near_start.push(near.len());
        }
        Some(Self {
            dims,
            order,
            coords,
            cell_start,
            cell_of,
            near_start,
            near,
        })
    }

    fn cell_len(&self, c: usize) -> usize {
        self.cell_start[c + 1] - self.cell_start[c]
    }

    fn near_cells(&self, c: usize) -> &[u32] {
        &self.near[self.near_start[c]..self.near_start[c + 1]]
    }

    /// Candidate pairs the grid visits, times the features: the scan's work.
    fn work(&self) -> usize {
        (0..self.cell_start.len() - 1)
            .map(|c| {
                let candidates: usize = self
                    .near_cells(c)
                    .iter()
                    .map(|&nc| self.cell_len(nc as usize))
                    .sum();
                self.cell_len(c).saturating_mul(candidates)
            })
            .fold(0usize, usize::saturating_add)
            .saturating_mul(self.dims)
    }

    /// Appends to `found` every point within `reduced` of point `i`.
    fn query(
        &self,
        x: ArrayView2<f64>,
        i: usize,
        reduced: f64,
        metric: Metric,
        found: &mut Vec<u32>,
    ) {
        match self.dims {
            1 => self.query_d::<1>(x, i, reduced, metric, found),
            2 => self.query_d::<2>(x, i, reduced, metric, found),
            _ => self.query_d::<3>(x, i, reduced, metric, found),
        }
    }

    fn query_d<const D: usize>(
        &self,
        x: ArrayView2<f64>,
        i: usize,
        reduced: f64,
        metric: Metric,
        found: &mut Vec<u32>,
    ) {
        let mut a = [0.0f64; 3];
        for (k, v) in a.iter_mut().enumerate().take(D) {
            *v = x[[i, k]];
        }
        let cell = self.cell_of[i] as usize;
        match canonical(metric) {
            Metric::Euclidean | Metric::SquaredEuclidean => {
                self.visit::<D>(cell, &a, reduced, found, |d| d * d)
            }
            // refused at the engine's entry: the grid sums coordinate terms, chebyshev takes
            // a maximum and cosine is no coordinate sum
            Metric::Manhattan | Metric::Chebyshev | Metric::Cosine => {
                self.visit::<D>(cell, &a, reduced, found, f64::abs)
            }
            Metric::Minkowski(p) => self.visit::<D>(cell, &a, reduced, found, |d| d.abs().powf(p)),
        }
    }

    /// Scans the cells near `cell`: a candidate is in when the sum over features, in order, of
    /// `term(a_k - b_k)` is at most `reduced` (the same sum as [`reduced_slices`]).
    #[inline]
    fn visit<const D: usize>(
        &self,
        cell: usize,
        a: &[f64; 3],
        reduced: f64,
        found: &mut Vec<u32>,
        term: impl Fn(f64) -> f64,
    ) {
        for &nc in self.near_cells(cell) {
            let range = self.cell_start[nc as usize]..self.cell_start[nc as usize + 1];
            for (b, &j) in self.coords[range.clone()].iter().zip(&self.order[range]) {
                let mut s = 0.0;
                for k in 0..D {
                    s += term(a[k] - b[k]);
                }
                if s <= reduced {
                    found.push(j);
                }
            }
        }
    }
}

/// Rows of query points per block of the product-screened scan: about 32 Ki distances
/// (256 KiB) per block, at least 4 and at most 256 rows.
fn screen_block_rows(n: usize) -> usize {
    (32_768 / n.max(1)).clamp(4, 256)
}

/// Rows of query points per block of the plain scan.
const SCAN_BLOCK_ROWS: usize = 64;

/// A search radius is a finite number `>= 0`.
fn check_radius(radius: f64) -> Result<()> {
    if radius.is_finite() && radius >= 0.0 {
        Ok(())
    } else {
        Err(Error::invalid_input(format!(
            "radius must be a finite number >= 0, got {radius}"
        )))
    }
}

/// Neighbour lists hold `u32` indices.
fn check_point_count(n: usize) -> Result<()> {
    if n <= u32::MAX as usize {
        Ok(())
    } else {
        Err(Error::invalid_input(format!(
            "radius neighbourhoods support at most {} points, got {n}",
            u32::MAX
        )))
    }
}

/// Exact radius neighbourhoods of every row of `x` among the rows of `x` (each point is its
/// own neighbour). Lists are stored for the points with at least `store_min` neighbours
/// (`0` stores all).
///
/// `radius` is in the metric's units (a squared distance for
/// [`Metric::SquaredEuclidean`]). Errors on a negative or non-finite radius, more than
/// `u32::MAX` points or an invalid metric; `x` is assumed finite (estimators validate it).
pub fn radius_neighbourhoods(
    x: ArrayView2<f64>,
    radius: f64,
    metric: Metric,
    store_min: usize,
) -> Result<Neighbourhoods> {
    check_radius(radius)?;
    metric.check_params()?;
    if metric == Metric::Chebyshev {
        return Err(Error::invalid_input(
            "the radius search does not support the chebyshev metric",
        ));
    }
    if metric == Metric::Cosine {
        return Err(Error::invalid_input(
            "the radius search does not support the cosine metric",
        ));
    }
    let (n, d) = x.dim();
    check_point_count(n)?;
    let metric = canonical(metric);
    let reduced = reduced_radius(radius, metric);
    if n == 0 {
        return Ok(Neighbourhoods {
            counts: Vec::new(),
            rows: 1,
            blocks: Vec::new(),
        });
    }
    let bound = match metric {
        Metric::SquaredEuclidean => radius.sqrt(),
        _ => radius,
    };
    if let Some(grid) = Grid::build(x, bound) {
        let work = grid.work();
        return Ok(run_blocks(n, SCAN_BLOCK_ROWS, work, |range| {
            let mut out = BlockOut::with_capacity(range.len());
            for i in range {
                grid.query(x, i, reduced, metric, &mut out.indices);
                out.close(store_min);
            }
            out
        }));
    }
    let work = n.saturating_mul(n).saturating_mul(d);
    match metric {
        Metric::Euclidean | Metric::SquaredEuclidean => {
            let means: ndarray::Array1<f64> = reduction::column_moments(x)
                .iter()
                .map(|m| m.mean)
                .collect();
            let centered = &x - &means;
            let norms = row_sq_norms(centered.view());
            let screen = Screen::new(reduced, d);
            let norm_slice = norms.as_slice().expect("fresh array");
            let original = x.as_standard_layout();
            let rows = screen_block_rows(n);
            Ok(run_blocks(n, rows, work, |range| {
                let block = centered.slice(ndarray::s![range.clone(), ..]);
                let dots = matmul::dot_par(block, centered.t(), matmul::Parallelism::Serial)
                    .expect("shapes agree");
                let mut out = BlockOut::with_capacity(range.len());
                for (i, dot_row) in range.zip(dots.axis_iter(Axis(0))) {
                    let a = original.row(i);
                    let a = a.as_slice().expect("standard layout");
                    let exact = |j: usize| {
                        reduced_slices(
                            a,
                            original.row(j).as_slice().expect("standard layout"),
                            metric,
                        )
                    };
                    let dot_row = dot_row.as_slice().expect("a fresh product is row-major");
                    screen.scan_row(dot_row, norms[i], norm_slice, exact, &mut out.indices);
                    out.close(store_min);
                }
                out
            }))
        }
        _ => {
            let packed = x.as_standard_layout();
            let flat = packed.as_slice().expect("standard layout");
            Ok(run_blocks(n, SCAN_BLOCK_ROWS, work, |range| {
                let mut out = BlockOut::with_capacity(range.len());
                for i in range {
                    let a = &flat[i * d..(i + 1) * d];
                    for (j, b) in flat.chunks_exact(d.max(1)).enumerate() {
                        if reduced_slices(a, b, metric) <= reduced {
                            out.indices.push(j as u32);
                        }
                    }
                    out.close(store_min);
                }
                out
            }))
        }
    }
}

/// Radius neighbourhoods read from a precomputed distance matrix `distances` (`n x n`, row
/// `i` the distances from point `i`): `j` is a neighbour of `i` when `distances[i, j] <=
/// radius` (so `i` is its own neighbour when its diagonal entry is within the radius, as in
/// scikit-learn's precomputed radius search). Lists are stored as in
/// [`radius_neighbourhoods`]; rows are scanned in blocks, in parallel behind [`SCAN_F64`].
///
/// Errors on a non-square matrix, a negative or non-finite entry (not a distance), a
/// negative or non-finite radius, or more than `u32::MAX` points.
pub fn precomputed_neighbourhoods(
    distances: ArrayView2<f64>,
    radius: f64,
    store_min: usize,
) -> Result<Neighbourhoods> {
    check_radius(radius)?;
    let (n, m) = distances.dim();
    if n != m {
        return Err(Error::invalid_input(format!(
            "a precomputed distance matrix must be square, got shape ({n}, {m})"
        )));
    }
    check_point_count(n)?;
    if distances.iter().any(|&v| !(v.is_finite() && v >= 0.0)) {
        return Err(Error::invalid_input(
            "a precomputed distance matrix must hold finite values >= 0",
        ));
    }
    let packed = distances.as_standard_layout();
    let flat = packed.as_slice().expect("standard layout");
    Ok(run_blocks(
        n,
        SCAN_BLOCK_ROWS,
        n.saturating_mul(n),
        |range| {
            let mut out = BlockOut::with_capacity(range.len());
            for i in range {
                for (j, &v) in flat[i * n..(i + 1) * n].iter().enumerate() {
                    if v <= radius {
                        out.indices.push(j as u32);
                    }
                }
                out.close(store_min);
            }
            out
        },
    ))
}

/// Radius neighbourhoods read from a sparse distance graph among its rows' points
/// (scikit-learn's sparse `metric="precomputed"`): row `i`'s stored entries at most `radius`,
/// in stored order, one neighbour per entry. An entry not stored is no neighbour, so a point
/// is its own neighbour only where its diagonal entry is stored. Errors on a radius that is
/// negative or not finite, a column out of range or a negative distance. Reads the rows in
/// blocks, in parallel behind [`SCAN_F64`] (work: the stored entries).
pub fn graph_neighbourhoods(
    graph: &GivenGraph,
    radius: f64,
    store_min: usize,
) -> Result<Neighbourhoods> {
    check_radius(radius)?;
    let n = graph.rows();
    check_point_count(n)?;
    graph.check_distances_among(n)?;
    Ok(run_blocks(n, SCAN_BLOCK_ROWS, graph.stored(), |range| {
        let mut out = BlockOut::with_capacity(range.len());
        for i in range {
            let (values, columns) = graph.row(i);
            out.indices.extend(
                values
                    .iter()
                    .zip(columns)
                    .filter(|&(&v, _)| v <= radius)
                    .map(|(_, &j)| j as u32),
            );
            out.close(store_min);
        }
        out
    }))
}

/// The work estimate [`radius_neighbourhoods`] compares with [`SCAN_F64`] for `x`, `radius`
/// and `metric` (candidate pairs times features): for calibration ladders.
pub fn scan_work(x: ArrayView2<f64>, radius: f64, metric: Metric) -> usize {
    let (n, d) = x.dim();
    let bound = match canonical(metric) {
        Metric::SquaredEuclidean => radius.sqrt(),
        _ => radius,
    };
    match Grid::build(x, bound) {
        Some(grid) => grid.work(),
        None => n.saturating_mul(n).saturating_mul(d),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::serial_and_parallel;
    use ndarray::Array2;

    fn cloud(n: usize, d: usize, seed: u64) -> Array2<f64> {
        // Deterministic scattered points (a simple LCG), with duplicates and exact-grid values.
        let mut state = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        Array2::from_shape_fn((n, d), |(i, _)| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = ((state >> 33) % 1000) as f64 / 100.0 - 5.0;
            if i % 10 == 0 {
                v.round()
            } else {
                v
            }
        })
    }

    /// Independent oracle: every pair measured exactly.
    fn brute(x: &Array2<f64>, radius: f64, metric: Metric) -> Vec<Vec<u32>> {
        let reduced = reduced_radius(radius, metric);
        (0..x.nrows())
            .map(|i| {
                (0..x.nrows())
                    .filter(|&j| reduced_distance(x.row(i), x.row(j), metric) <= reduced)
                    .map(|j| j as u32)
                    .collect()
            })
            .collect()
    }

    fn sets(nb: &Neighbourhoods) -> Vec<Vec<u32>> {
        (0..nb.len())
            .map(|i| {
                let mut v = nb.neighbours(i).to_vec();
                v.sort_unstable();
                v
            })
            .collect()
    }

    #[test]
    fn every_strategy_matches_brute_force_sets() {
        // d = 2, 3 take the grid; d = 5 takes product screening (euclidean) or the scan.
        for d in [1, 2, 3, 5] {
            let x = cloud(240, d, d as u64);
            for (metric, radius) in [
                (Metric::Euclidean, 1.0),
                (Metric::SquaredEuclidean, 1.5),
                (Metric::Manhattan, 1.5),
                (Metric::Minkowski(3.0), 1.2),
                (Metric::Minkowski(2.0), 1.0),
            ] {
                let nb = radius_neighbourhoods(x.view(), radius, metric, 0).unwrap();
                let want = brute(&x, radius, metric);
                assert_eq!(sets(&nb), want, "d={d} {metric:?}");
                for (i, w) in want.iter().enumerate() {
                    assert_eq!(nb.count(i), w.len());
                }
            }
        }
    }

    #[test]
    fn points_at_exactly_the_radius_are_neighbours() {
        // Integer lattice: many pairs at exactly distance 1 (and sqrt(2)).
        for d in [2, 4] {
            let x = Array2::from_shape_fn((36, d), |(i, k)| {
                if k < 2 {
                    ((i / 6 * (1 - k)) + (i % 6) * k) as f64
                } else {
                    0.0
                }
            });
            let nb = radius_neighbourhoods(x.view(), 1.0, Metric::Euclidean, 0).unwrap();
            // interior lattice point: itself + 4 axis neighbours
            assert_eq!(nb.count(7), 5, "d={d}");
            // corner: itself + 2
            assert_eq!(nb.count(0), 3, "d={d}");
            let nb = radius_neighbourhoods(x.view(), 2.0, Metric::Manhattan, 0).unwrap();
            // interior point 14 = (2, 2): 1 + 4 at distance 1 + 8 at distance 2
            assert_eq!(nb.count(14), 13, "d={d}");
        }
    }

    #[test]
    fn only_lists_reaching_the_threshold_are_stored() {
        let x = cloud(200, 2, 9);
        let nb = radius_neighbourhoods(x.view(), 0.8, Metric::Euclidean, 5).unwrap();
        for i in 0..nb.len() {
            if nb.count(i) >= 5 {
                assert_eq!(nb.neighbours(i).len(), nb.count(i));
            } else {
                assert!(nb.neighbours(i).is_empty());
            }
        }
        assert!(radius_neighbourhoods(x.view(), -1.0, Metric::Euclidean, 0).is_err());
        assert!(radius_neighbourhoods(x.view(), f64::NAN, Metric::Euclidean, 0).is_err());
        assert!(radius_neighbourhoods(x.view(), 1.0, Metric::Minkowski(0.5), 0).is_err());
    }

    #[test]
    fn lists_filtered_to_a_smaller_radius_are_that_radius_search() {
        // grid (d = 2, 3), product screening or scan (d = 5); every list stored, then only
        // those of at least 6 neighbours
        for d in [2, 3, 5] {
            let x = cloud(300, d, 20 + d as u64);
            for (metric, outer, inner) in [
                (Metric::Euclidean, 1.3, 0.9),
                (Metric::Manhattan, 1.8, 1.1),
                (Metric::Minkowski(3.0), 1.2, 0.7),
                (Metric::Euclidean, 1.0, 1.0),
                (Metric::Euclidean, 1.0, 0.0),
            ] {
                let want = brute(&x, inner, metric);
                for store_min in [0, 6] {
                    let nb = radius_neighbourhoods(x.view(), outer, metric, store_min).unwrap();
                    let (s, p) = serial_and_parallel(&SCAN_F64, || {
                        nb.within(x.view(), inner, metric, store_min).unwrap()
                    });
                    assert_eq!(s.counts(), p.counts());
                    assert_eq!(sets(&s), sets(&p));
                    for (i, w) in want.iter().enumerate() {
                        let case = format!("d={d} {metric:?} {outer}->{inner} i={i}");
                        if nb.neighbours(i).is_empty() {
                            // never stored: bounded by its count at the larger radius
                            assert!(s.neighbours(i).is_empty(), "{case}");
                            assert_eq!(s.count(i), nb.count(i), "{case}");
                            assert!(w.len() <= nb.count(i) && nb.count(i) < store_min, "{case}");
                        } else {
                            assert_eq!(s.count(i), w.len(), "{case}");
                            if w.len() >= store_min {
                                assert_eq!(sets(&s)[i], *w, "{case}");
                            } else {
                                assert!(s.neighbours(i).is_empty(), "{case}");
                            }
                        }
                    }
                }
            }
        }
        let nb = radius_neighbourhoods(cloud(10, 2, 1).view(), 1.0, Metric::Euclidean, 0).unwrap();
        assert!(nb
            .within(cloud(10, 2, 1).view(), -0.5, Metric::Euclidean, 0)
            .is_err());
        assert!(nb
            .within(cloud(9, 2, 1).view(), 0.5, Metric::Euclidean, 0)
            .is_err());
    }

    #[test]
    fn tiny_radius_on_a_wide_range_falls_back_without_losing_pairs() {
        let mut x = cloud(100, 2, 4);
        x[[0, 0]] = 1e12; // range / radius far beyond the grid's precision limit
        let nb = radius_neighbourhoods(x.view(), 1e-3, Metric::Euclidean, 0).unwrap();
        assert_eq!(sets(&nb), brute(&x, 1e-3, Metric::Euclidean));
    }

    #[test]
    fn graph_neighbourhoods_take_stored_entries_only_and_keep_their_bits_across_the_gate() {
        // By hand, rows stored out of column order. Row 0: itself (stored 0.0), 2 at the
        // radius, 1 beyond it. Row 1: no diagonal entry (not its own neighbour), an explicit
        // zero to 2 (a neighbour), and 0 twice (each stored entry counts). Row 2: empty.
        let data = [1.0, 0.0, 3.0, 0.0, 0.5, 0.25];
        let indices = [2, 0, 1, 2, 0, 0];
        let indptr = [0, 3, 6, 6];
        let graph = GivenGraph::new(&data, &indices, &indptr).unwrap();
        let nb = graph_neighbourhoods(&graph, 1.0, 0).unwrap();
        assert_eq!(nb.counts(), &[2, 3, 0]);
        assert_eq!(nb.neighbours(0), &[2, 0]);
        assert_eq!(nb.neighbours(1), &[2, 0, 0]);
        assert!(nb.neighbours(2).is_empty());
        let kept = graph_neighbourhoods(&graph, 1.0, 3).unwrap();
        assert_eq!(kept.counts(), &[2, 3, 0]);
        assert!(kept.neighbours(0).is_empty() && kept.neighbours(1).len() == 3);
        // A graph storing every entry of a dense matrix: the dense reading's neighbourhoods,
        // serial and parallel alike.
        let x = cloud(300, 3, 7);
        let n = x.nrows();
        let dist = Array2::from_shape_fn((n, n), |(i, j)| {
            (0..3).map(|k| (x[[i, k]] - x[[j, k]]).abs()).sum::<f64>()
        });
        let flat: Vec<f64> = dist.iter().copied().collect();
        let columns: Vec<usize> = (0..n * n).map(|e| e % n).collect();
        let pointers: Vec<usize> = (0..=n).map(|i| i * n).collect();
        let full = GivenGraph::new(&flat, &columns, &pointers).unwrap();
        let (s, p) =
            serial_and_parallel(&SCAN_F64, || graph_neighbourhoods(&full, 1.5, 0).unwrap());
        assert_eq!(
            (&s.counts, s.rows, &s.blocks),
            (&p.counts, p.rows, &p.blocks)
        );
        let dense = precomputed_neighbourhoods(dist.view(), 1.5, 0).unwrap();
        assert_eq!(s.counts(), dense.counts());
        for i in 0..n {
            assert_eq!(s.neighbours(i), dense.neighbours(i), "point {i}");
        }
        // Not a graph of distances among its rows.
        let out_of_range = GivenGraph::new(&[1.0], &[3], &[0, 1, 1]).unwrap();
        assert!(graph_neighbourhoods(&out_of_range, 1.0, 0).is_err());
        let negative = GivenGraph::new(&[-1.0], &[1], &[0, 1, 1]).unwrap();
        assert!(graph_neighbourhoods(&negative, 1.0, 0).is_err());
        assert!(graph_neighbourhoods(&graph, f64::NAN, 0).is_err());
        assert!(GivenGraph::new(&[f64::NAN], &[0], &[0, 1]).is_err());
    }

    #[test]
    fn precomputed_neighbourhoods_read_the_matrix_and_keep_their_bits_across_the_gate() {
        // By hand: 0-1 and 1-2 at exactly the radius, 0-2 beyond it; point 2's own
        // diagonal entry is above the radius, so it is not its own neighbour.
        let d = ndarray::array![[0.0, 1.0, 3.0], [1.0, 0.0, 1.0], [3.0, 1.0, 2.0]];
        let nb = precomputed_neighbourhoods(d.view(), 1.0, 0).unwrap();
        assert_eq!(nb.counts(), &[2, 3, 1]);
        assert_eq!(nb.neighbours(0), &[0, 1]);
        assert_eq!(nb.neighbours(1), &[0, 1, 2]);
        assert_eq!(nb.neighbours(2), &[1]);
        // Lists below `store_min` are counted, not kept.
        let kept = precomputed_neighbourhoods(d.view(), 1.0, 3).unwrap();
        assert_eq!(kept.counts(), &[2, 3, 1]);
        assert!(kept.neighbours(0).is_empty() && kept.neighbours(1).len() == 3);
        // The same neighbours as the features' own search, serial and parallel alike.
        let x = cloud(300, 3, 5);
        let n = x.nrows();
        let dist = Array2::from_shape_fn((n, n), |(i, j)| {
            (0..3).map(|k| (x[[i, k]] - x[[j, k]]).abs()).sum::<f64>()
        });
        let (s, p) = serial_and_parallel(&SCAN_F64, || {
            precomputed_neighbourhoods(dist.view(), 1.5, 0).unwrap()
        });
        assert_eq!(
            (&s.counts, s.rows, &s.blocks),
            (&p.counts, p.rows, &p.blocks)
        );
        let direct = radius_neighbourhoods(x.view(), 1.5, Metric::Manhattan, 0).unwrap();
        assert_eq!(s.counts(), direct.counts());
        for i in 0..n {
            // as sets: the grid search lists neighbours in cell order
            let mut grid_order = direct.neighbours(i).to_vec();
            grid_order.sort_unstable();
            assert_eq!(s.neighbours(i), &grid_order[..], "point {i}");
        }
        // Not a distance matrix.
        assert!(precomputed_neighbourhoods(Array2::zeros((2, 3)).view(), 1.0, 0).is_err());
        let negative = ndarray::array![[0.0, -1.0], [-1.0, 0.0]];
        assert!(precomputed_neighbourhoods(negative.view(), 1.0, 0).is_err());
    }

    #[test]
    fn scan_gate_serial_and_parallel_agree() {
        for d in [2, 6] {
            let x = cloud(700, d, 11);
            for metric in [Metric::Euclidean, Metric::Manhattan] {
                let (s, p) = serial_and_parallel(&SCAN_F64, || {
                    radius_neighbourhoods(x.view(), 1.5, metric, 3).unwrap()
                });
                assert_eq!(s.counts, p.counts);
                assert_eq!(s.rows, p.rows);
                assert_eq!(s.blocks, p.blocks);
            }
        }
    }
}
