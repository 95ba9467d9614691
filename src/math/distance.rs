//! Distances: vector to vector, row to row, and pairwise.
//!
//! Pairwise euclidean distances go through the product
//! (`|a|^2 + |b|^2 - 2 a·bᵀ`, clamped at zero), never a triple loop. Metrics without a product
//! form (manhattan, minkowski) scan rows, in parallel behind [`SCAN_F64`].

use crate::declare_gate;
use crate::error::{Error, Result};
use crate::math::matmul;
use ndarray::{Array1, Array2, ArrayRef1, ArrayView1, ArrayView2, Axis, Zip};
use rayon::prelude::*;

mod direct;
use direct::nearest_block_direct;

declare_gate! {
    /// f64 short-row scans: pairwise distance scans, arg-min over centroids, neighbourhood
    /// queries. Work = total scanned elements.
    pub SCAN_F64: reduction::scan_f64 = 262_144, "total scanned elements"
}

/// A distance metric.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Metric {
    Euclidean,
    SquaredEuclidean,
    Manhattan,
    /// Minkowski with exponent `p >= 1`.
    Minkowski(f64),
    /// Largest absolute coordinate difference (Minkowski's `p = inf`). Only the neighbour
    /// search takes it; [`Metric::parse`] and the radius engine do not.
    Chebyshev,
    /// Cosine distance `1 - a·b / (|a| |b|)`, clipped to `[0, 2]`; a zero vector is at
    /// distance 1 from every vector (scikit-learn's `cosine_distances`). Only the neighbour
    /// search takes it; [`Metric::parse`] and the radius engine do not.
    Cosine,
}

impl Metric {
    /// The power `p` of the sums this metric takes over a row (1 for Manhattan, 2 for the
    /// euclidean ones): what bounds the input's range (see
    /// [`crate::validation::check_power_sum_range`]).
    pub fn power(&self) -> f64 {
        match *self {
            Metric::Euclidean | Metric::SquaredEuclidean | Metric::Cosine => 2.0,
            Metric::Manhattan | Metric::Chebyshev => 1.0,
            Metric::Minkowski(p) => p,
        }
    }

    /// Refuse `x` when this metric's sums over its rows would overflow f64.
    pub fn check_range(&self, x: &ArrayView2<f64>, name: &str) -> Result<()> {
        crate::validation::check_power_sum_range(x, self.power(), name, "these distances")
    }

    /// Parse a scikit-learn style name (`"euclidean"`, `"sqeuclidean"`, `"manhattan"`,
    /// `"cityblock"`, `"l1"`, `"l2"`, `"minkowski"` with `p`).
    pub fn parse(name: &str, p: f64) -> Result<Self> {
        let metric = match name {
            "euclidean" | "l2" => Metric::Euclidean,
            "sqeuclidean" | "squared_euclidean" => Metric::SquaredEuclidean,
            "manhattan" | "cityblock" | "l1" => Metric::Manhattan,
            "minkowski" => Metric::Minkowski(p),
            other => {
                return Err(Error::invalid_input(format!(
                    "unknown metric {other:?}; expected one of 'euclidean', 'sqeuclidean', 'manhattan', 'minkowski'"
                )))
            }
        };
        metric.check_params()?;
        Ok(metric)
    }

    /// A Minkowski exponent must be finite and at least 1 (below 1 it is no metric).
    pub fn check_params(&self) -> Result<()> {
        if let Metric::Minkowski(p) = self {
            if !(p.is_finite() && *p >= 1.0) {
                return Err(Error::invalid_parameter(
                    "p",
                    format!("must be a finite number >= 1 for the minkowski metric, got {p}"),
                ));
            }
        }
        Ok(())
    }

    /// Distance between two equal-length vectors (lengths unchecked).
    #[inline]
    pub fn between(&self, a: ArrayView1<f64>, b: ArrayView1<f64>) -> f64 {
        match *self {
            Metric::Euclidean => squared_euclidean_unchecked(a, b).sqrt(),
            Metric::SquaredEuclidean => squared_euclidean_unchecked(a, b),
            Metric::Manhattan => fold_pairs(&a, &b, |x, y| (x - y).abs()),
            Metric::Chebyshev => chebyshev(a.iter().zip(b.iter())),
            Metric::Cosine => {
                let sq = |v: &ArrayView1<f64>| fold_pairs(v, v, |x, _| x * x);
                cosine_from(fold_pairs(&a, &b, |x, y| x * y), sq(&a), sq(&b))
            }
            Metric::Minkowski(p) => {
                if p == 1.0 {
                    Metric::Manhattan.between(a, b)
                } else if p == 2.0 {
                    Metric::Euclidean.between(a, b)
                } else {
                    fold_pairs(&a, &b, |x, y| (x - y).abs().powf(p)).powf(1.0 / p)
                }
            }
        }
    }
}

/// The cosine distance from the product `dot = a·b` and the squared norms `na = |a|^2`,
/// `nb = |b|^2` (each summed in feature order): `1 - dot / (sqrt(na) sqrt(nb))` clipped to
/// `[0, 2]`, and 1 where either vector is zero (its similarity is 0, as scikit-learn's
/// normalisation leaves a zero row zero).
#[inline]
pub fn cosine_from(dot: f64, na: f64, nb: f64) -> f64 {
    if na == 0.0 || nb == 0.0 {
        return 1.0;
    }
    (1.0 - dot / (na.sqrt() * nb.sqrt())).clamp(0.0, 2.0)
}

/// Largest `|x - y|` over the pairs (0 for none), in feature order.
#[inline]
fn chebyshev<'a>(pairs: impl Iterator<Item = (&'a f64, &'a f64)>) -> f64 {
    pairs.fold(0.0, |m, (&x, &y)| m.max((x - y).abs()))
}

/// The original crate's metric choice for neighbour and density models.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub enum DistanceCalculationMetric {
    #[default]
    Euclidean,
    Manhattan,
    /// Minkowski with exponent `p`.
    Minkowski(f64),
}

impl DistanceCalculationMetric {
    /// The engine metric this choice evaluates with.
    pub fn to_metric(self) -> Metric {
        match self {
            DistanceCalculationMetric::Euclidean => Metric::Euclidean,
            DistanceCalculationMetric::Manhattan => Metric::Manhattan,
            DistanceCalculationMetric::Minkowski(p) => Metric::Minkowski(p),
        }
    }

    /// Distance between two equal-length vectors.
    pub fn distance(&self, a: ArrayView1<f64>, b: ArrayView1<f64>) -> f64 {
        self.to_metric().between(a, b)
    }

    /// Whether `a` and `b` lie within `threshold` of each other (inclusive). Euclidean compares
    /// squared distances, so no square root is taken.
    pub fn within(&self, a: ArrayView1<f64>, b: ArrayView1<f64>, threshold: f64) -> bool {
        match self {
            DistanceCalculationMetric::Euclidean => {
                squared_euclidean_unchecked(a, b) <= threshold * threshold
            }
            other => other.distance(a, b) <= threshold,
        }
    }
}

/// Squared Euclidean distance between two equal-length rows.
pub fn squared_euclidean_distance_row(x1: &ArrayRef1<f64>, x2: &ArrayRef1<f64>) -> f64 {
    squared_euclidean_unchecked(x1.view(), x2.view())
}

/// Manhattan distance between two equal-length rows.
pub fn manhattan_distance_row(x1: &ArrayRef1<f64>, x2: &ArrayRef1<f64>) -> f64 {
    Metric::Manhattan.between(x1.view(), x2.view())
}

/// Minkowski distance of order `p` between two equal-length rows.
pub fn minkowski_distance_row(x1: &ArrayRef1<f64>, x2: &ArrayRef1<f64>, p: f64) -> f64 {
    Metric::Minkowski(p).between(x1.view(), x2.view())
}

#[inline]
fn squared_euclidean_unchecked(a: ArrayView1<f64>, b: ArrayView1<f64>) -> f64 {
    fold_pairs(&a, &b, |x, y| (x - y) * (x - y))
}

/// `sum f(a_i, b_i)` in index order. Contiguous rows take a plain slice loop (no per-call
/// `Zip` setup, which dominates short rows); the additions, and so the bits, are the same.
#[inline]
fn fold_pairs(a: &ArrayView1<f64>, b: &ArrayView1<f64>, f: impl Fn(f64, f64) -> f64) -> f64 {
    match (a.as_slice(), b.as_slice()) {
        (Some(x), Some(y)) => x.iter().zip(y).fold(0.0, |s, (&u, &v)| s + f(u, v)),
        _ => Zip::from(a).and(b).fold(0.0, |s, &x, &y| s + f(x, y)),
    }
}

/// `distance: <mismatch> (a and b)` unless the two sizes agree.
fn check_sizes_agree(a: usize, b: usize, mismatch: &str) -> Result<()> {
    if a != b {
        return Err(Error::invalid_input(format!(
            "distance: {mismatch} ({a} and {b})"
        )));
    }
    Ok(())
}

fn check_same_len(a: &ArrayView1<f64>, b: &ArrayView1<f64>) -> Result<()> {
    check_sizes_agree(a.len(), b.len(), "vectors have different lengths")
}

/// Euclidean distance between two vectors.
pub fn euclidean(a: ArrayView1<f64>, b: ArrayView1<f64>) -> Result<f64> {
    check_same_len(&a, &b)?;
    Ok(Metric::Euclidean.between(a, b))
}

/// Squared euclidean distance between two vectors.
pub fn squared_euclidean(a: ArrayView1<f64>, b: ArrayView1<f64>) -> Result<f64> {
    check_same_len(&a, &b)?;
    Ok(Metric::SquaredEuclidean.between(a, b))
}

/// Manhattan (L1) distance between two vectors.
pub fn manhattan(a: ArrayView1<f64>, b: ArrayView1<f64>) -> Result<f64> {
    check_same_len(&a, &b)?;
    Ok(Metric::Manhattan.between(a, b))
}

/// Minkowski distance of order `p >= 1` between two vectors.
pub fn minkowski(a: ArrayView1<f64>, b: ArrayView1<f64>, p: f64) -> Result<f64> {
    check_same_len(&a, &b)?;
    let metric = Metric::Minkowski(p);
    metric.check_params()?;
    Ok(metric.between(a, b))
}

fn check_same_cols(a: &ArrayView2<f64>, b: &ArrayView2<f64>) -> Result<()> {
    check_sizes_agree(
        a.ncols(),
        b.ncols(),
        "inputs have different numbers of features",
    )
}

/// Distance between corresponding rows of two equally shaped matrices.
pub fn rowwise(a: ArrayView2<f64>, b: ArrayView2<f64>, metric: Metric) -> Result<Array1<f64>> {
    metric.check_params()?;
    if a.dim() != b.dim() {
        return Err(Error::invalid_input(format!(
            "distance: row-to-row needs equal shapes, got {:?} and {:?}",
            a.dim(),
            b.dim()
        )));
    }
    let mut out = Array1::zeros(a.nrows());
    let body =
        |(o, (ra, rb)): (&mut f64, (ArrayView1<f64>, ArrayView1<f64>))| *o = metric.between(ra, rb);
    let pairs = a.outer_iter().zip(b.outer_iter());
    if SCAN_F64.allows_parallel(a.len()) {
        out.iter_mut()
            .zip(pairs)
            .collect::<Vec<_>>()
            .into_par_iter()
            .for_each(body);
    } else {
        out.iter_mut().zip(pairs).for_each(body);
    }
    Ok(out)
}

/// Distances from `q` to every row of `rows`, written to `out` (`out.len() == rows.nrows()`,
/// `q.len() == rows.ncols()`, unchecked). Serial: callers parallelise over queries. The metric
/// is resolved once per call and contiguous data is read as slices, so a short-row scan costs
/// little more than its arithmetic; every value has the bits of [`Metric::between`].
pub fn row_to_rows(metric: Metric, q: ArrayView1<f64>, rows: ArrayView2<f64>, out: &mut [f64]) {
    fn scan(
        q: &[f64],
        all: &[f64],
        out: &mut [f64],
        f: impl Fn(f64, f64) -> f64,
        finish: impl Fn(f64) -> f64,
    ) {
        for (o, r) in out.iter_mut().zip(all.chunks_exact(q.len())) {
            *o = finish(q.iter().zip(r).fold(0.0, |s, (&x, &y)| s + f(x, y)));
        }
    }
    match (q.as_slice(), rows.as_slice()) {
        (Some(qs), Some(all)) if !qs.is_empty() => match metric {
            Metric::Manhattan | Metric::Minkowski(1.0) => {
                scan(qs, all, out, |x, y| (x - y).abs(), |s| s)
            }
            Metric::SquaredEuclidean => scan(qs, all, out, |x, y| (x - y) * (x - y), |s| s),
            Metric::Chebyshev => {
                for (o, r) in out.iter_mut().zip(all.chunks_exact(qs.len())) {
                    *o = chebyshev(qs.iter().zip(r));
                }
            }
            Metric::Euclidean | Metric::Minkowski(2.0) => {
                scan(qs, all, out, |x, y| (x - y) * (x - y), f64::sqrt)
            }
            Metric::Cosine => {
                let nq = qs.iter().fold(0.0, |s, &x| s + x * x);
                for (o, r) in out.iter_mut().zip(all.chunks_exact(qs.len())) {
                    let (dot, nr) = qs
                        .iter()
                        .zip(r)
                        .fold((0.0, 0.0), |(d, n), (&x, &y)| (d + x * y, n + y * y));
                    *o = cosine_from(dot, nq, nr);
                }
            }
            Metric::Minkowski(p) => scan(
                qs,
                all,
                out,
                |x, y| (x - y).abs().powf(p),
                |s| s.powf(1.0 / p),
            ),
        },
        _ => {
            for (o, r) in out.iter_mut().zip(rows.outer_iter()) {
                *o = metric.between(q, r);
            }
        }
    }
}

/// Squared row norms.
pub fn row_sq_norms(x: ArrayView2<f64>) -> Array1<f64> {
    // Summed in feature order whatever the layout (a contiguous `dot` would unroll into
    // several partial sums), so a row's norm never depends on how its array is stored.
    x.map_axis(Axis(1), |r| r.fold(0.0, |acc, &v| acc + v * v))
}

/// Squared euclidean distances of every row of `a` to every row of `b`, through the product
/// (see [`finish_squared_euclidean`] for the exactness guard).
pub fn pairwise_squared_euclidean(a: ArrayView2<f64>, b: ArrayView2<f64>) -> Result<Array2<f64>> {
    check_same_cols(&a, &b)?;
    let an = row_sq_norms(a);
    let bn = row_sq_norms(b);
    let mut d = matmul::dot_par(a, b.t(), matmul::nested_parallelism())?;
    finish_squared_euclidean(d.view_mut(), a, an.view(), b, bn.view());
    Ok(d)
}

/// Turn a block of `a·bᵀ` into squared distances in place: `|a_i|^2 + |b_j|^2 - 2 a_i·b_j`,
/// NaN kept. Every product-based distance (pairwise, the k-nearest search of
/// [`crate::math::k_nearest`], k-means) ends here, a row at a time in
/// [`finish_squared_euclidean_row`].
///
/// The product form cancels catastrophically where the distance is small next to the norms:
/// its absolute error is bounded by about `(k + 2) u (|a_i|^2 + |b_j|^2)` (`k` features, `u`
/// the unit roundoff). Every entry within a safe multiple of that bound (negative ones
/// included) is recomputed from the differences, so near and equal rows get exact distances (a
/// zero diagonal for `pairwise(X, X)`, `2` for `[1e8, 1e8+1]` vs `[1e8+1, 1e8]`). Per element,
/// so the gate only chooses how it runs.
pub fn finish_squared_euclidean(
    mut dots: ndarray::ArrayViewMut2<f64>,
    a: ArrayView2<f64>,
    a_norms: ArrayView1<f64>,
    b: ArrayView2<f64>,
    b_norms: ArrayView1<f64>,
) {
    let b_norms = b_norms.as_standard_layout();
    let b_norms = b_norms.as_slice().expect("standard layout is contiguous");
    let finish =
        |(mut row, (ra, &na)): (ndarray::ArrayViewMut1<f64>, (ArrayView1<f64>, &f64))| match row
            .as_slice_mut()
        {
            Some(row) => finish_squared_euclidean_row(row, ra, na, b, b_norms),
            None => {
                let mut owned = row.to_vec();
                finish_squared_euclidean_row(&mut owned, ra, na, b, b_norms);
                row.iter_mut().zip(owned).for_each(|(v, o)| *v = o);
            }
        };
    let work = dots.len();
    if SCAN_F64.allows_parallel(work) {
        dots.axis_iter_mut(Axis(0))
            .into_par_iter()
            .zip(
                a.axis_iter(Axis(0))
                    .into_par_iter()
                    .zip(a_norms.axis_iter(Axis(0)).into_par_iter()),
            )
            .for_each(|(row, (ra, na))| finish((row, (ra, na.into_scalar()))));
    } else {
        dots.axis_iter_mut(Axis(0))
            .zip(a.outer_iter().zip(&a_norms))
            .for_each(finish);
    }
}

/// One row of [`finish_squared_euclidean`]: `row[j]` holds `a_row·b_j` and becomes the squared
/// distance `|a_row - b_j|^2` (`na = |a_row|^2`, `b_norms[j] = |b_j|^2`). The product form is
/// taken in one pass the compiler vectorises (on the widest vector unit the CPU has: the same
/// operations in the same order, so the same bits on every host); entries within the
/// cancellation bound, rare except for near-duplicate rows, are then re-measured from the
/// differences.
pub fn finish_squared_euclidean_row(
    row: &mut [f64],
    a_row: ArrayView1<f64>,
    na: f64,
    b: ArrayView2<f64>,
    b_norms: &[f64],
) {
    let bound = settle_bound(a_row.len());
    let mut cancelled = false;
    product_form_row(row, b_norms, na, bound, &mut cancelled);
    if cancelled {
        for (j, (v, &nb)) in row.iter_mut().zip(b_norms).enumerate() {
            if *v <= bound * (na + nb) {
                *v = squared_euclidean_unchecked(a_row, b.row(j));
            }
        }
    }
}

crate::isa::widest_isa! {
    fn product_form_row(row: &mut [f64], b_norms: &[f64], na: f64, bound: f64, cancelled: &mut bool)
        => product_form_row_inner
}

/// `row[j] = na + b_norms[j] - 2 row[j]`; `cancelled` is set when any entry lies within
/// `bound * (na + b_norms[j])` (NaN never does). Branch-free, so it vectorises.
#[inline(always)]
fn product_form_row_inner(
    row: &mut [f64],
    b_norms: &[f64],
    na: f64,
    bound: f64,
    cancelled: &mut bool,
) {
    let mut any = false;
    for (v, &nb) in row.iter_mut().zip(b_norms) {
        let d = na + nb - 2.0 * *v;
        any |= d <= bound * (na + nb);
        *v = d;
    }
    *cancelled = any;
}

/// Distances of every row of `a` to every row of `b` (`a.nrows() x b.nrows()`).
pub fn pairwise(a: ArrayView2<f64>, b: ArrayView2<f64>, metric: Metric) -> Result<Array2<f64>> {
    metric.check_params()?;
    check_same_cols(&a, &b)?;
    metric.check_range(&a, "a")?;
    metric.check_range(&b, "b")?;
    match metric {
        Metric::SquaredEuclidean => pairwise_squared_euclidean(a, b),
        Metric::Euclidean | Metric::Minkowski(2.0) => {
            let mut d = pairwise_squared_euclidean(a, b)?;
            d.mapv_inplace(f64::sqrt);
            Ok(d)
        }
        _ => {
            let mut out = Array2::zeros((a.nrows(), b.nrows()));
            let fill = |(mut row, ra): (ndarray::ArrayViewMut1<f64>, ArrayView1<f64>)| {
                for (o, rb) in row.iter_mut().zip(b.outer_iter()) {
                    *o = metric.between(ra, rb);
                }
            };
            let work = a.nrows().saturating_mul(b.len());
            if SCAN_F64.allows_parallel(work) {
                out.axis_iter_mut(Axis(0))
                    .into_par_iter()
                    .zip(a.axis_iter(Axis(0)))
                    .for_each(fill);
            } else {
                out.axis_iter_mut(Axis(0))
                    .zip(a.axis_iter(Axis(0)))
                    .for_each(fill);
            }
            Ok(out)
        }
    }
}

/// Rows per block of the nearest-row scan: a block's product (`rows x centers`) stays in L1/L2
/// and the grouping depends on the shape only, never on threads or a gate.
pub const NEAREST_BLOCK_ROWS: usize = 256;

/// Largest `centers x features` the nearest-row scan computes directly (rows scanned on the
/// vector lanes against each center, no product: [`direct`]): short rows against a few
/// centers, KMeans' usual shape, where the product's packing and the separate arg-min pass
/// cost more than the arithmetic. The choice depends on the shape only.
pub const NEAREST_DIRECT_MAX: usize = 1024;

/// The block kernel of the nearest-row scan: for every row of `x_block` the index of the
/// nearest row of `centers` in squared euclidean distance and that squared distance, written
/// into `labels` and `dist_sq`.
///
/// Distances come from `|x|^2 + |c|^2 - 2 x·c`: for `centers x features` up to
/// [`NEAREST_DIRECT_MAX`] with `x·c` summed directly in feature order, above it from one
/// serial product. A row whose nearest distance is too small for that form to resolve
/// next to the norms is re-measured exactly against every center in the error band.
/// `x_norms` and `c_norms` are the squared row norms. Ties go to the lowest center index
/// (like NumPy's `argmin`). `margin` receives each row's product-form score of the runner-up
/// center less its nearest's (infinite with one center): how far the choice stands from a
/// tie, which callers that must agree with another computation of the scores compare with
/// their rounding. Serial by design: callers fork over blocks.
pub fn nearest_block(
    x_block: ArrayView2<f64>,
    x_norms: ArrayView1<f64>,
    centers: ArrayView2<f64>,
    c_norms: ArrayView1<f64>,
    labels: &mut [usize],
    dist_sq: &mut [f64],
    margin: &mut [f64],
) {
    if centers.ncols() > 0 && centers.nrows().saturating_mul(centers.ncols()) <= NEAREST_DIRECT_MAX
    {
        nearest_block_direct(x_block, x_norms, centers, c_norms, labels, dist_sq, margin);
        return;
    }
    let dots = matmul::dot_par(x_block, centers.t(), matmul::Parallelism::Serial)
        .expect("nearest_block: caller checked the feature counts");
    let cn = c_norms.to_vec();
    for ((((row, x_row), (&xn, label)), best_d), gap) in dots
        .outer_iter()
        .zip(x_block.outer_iter())
        .zip(x_norms.iter().zip(labels.iter_mut()))
        .zip(dist_sq.iter_mut())
        .zip(margin.iter_mut())
    {
        let mut best = f64::INFINITY;
        let mut second = f64::INFINITY;
        let mut arg = 0;
        for (j, (&dot, &cn)) in row.iter().zip(c_norms.iter()).enumerate() {
            let d = cn - 2.0 * dot;
            second = second.min(d.max(best));
            if d < best {
                best = d;
                arg = j;
            }
        }
        *gap = second - best;
        let x_row = x_row
            .as_slice()
            .map_or_else(|| std::borrow::Cow::Owned(x_row.to_vec()), Into::into);
        (*label, *best_d) = settle_nearest(&x_row, xn, centers, &cn, best, arg, |j| {
            cn[j] - 2.0 * row[j]
        });
    }
}

/// Relative error bound of a product-form squared distance over `d` features: a distance
/// above `settle_bound(d) * (|x|^2 + |c|^2)` is resolved by that form.
#[inline(always)]
pub(crate) fn settle_bound(d: usize) -> f64 {
    8.0 * (d as f64 + 2.0) * f64::EPSILON
}

/// The nearest center of one row from its best product-form score `best` (`|c|^2 - 2 x·c`,
/// at center `arg`): `(arg, best + |x|^2)`, unless that distance is within
/// [`finish_squared_euclidean`]'s cancellation bound of zero, where every center whose
/// score (`score(j)`) lies in the error band is measured exactly.
#[inline]
fn settle_nearest(
    x_row: &[f64],
    xn: f64,
    centers: ArrayView2<f64>,
    c_norms: &[f64],
    best: f64,
    arg: usize,
    score: impl Fn(usize) -> f64,
) -> (usize, f64) {
    let bound = settle_bound(x_row.len());
    let nearest = best + xn;
    if nearest > bound * (xn + c_norms[arg]) {
        return (arg, nearest);
    }
    // The product form cannot resolve a distance this small next to the norms: every centre
    // that could be the nearest within the error band is measured exactly. The largest
    // centre norm widens the band.
    let max_cn = c_norms.iter().copied().fold(0.0, f64::max);
    let band = nearest + 2.0 * bound * (xn + max_cn);
    let mut exact = f64::INFINITY;
    let mut arg = arg;
    for (j, c) in centers.outer_iter().enumerate() {
        if score(j) + xn <= band {
            let e = fold_pairs(&ArrayView1::from(x_row), &c, |x, y| (x - y) * (x - y));
            if e < exact {
                exact = e;
                arg = j;
            }
        }
    }
    (arg, exact)
}

/// For every row of `x`, the index of the nearest row of `centers` (squared euclidean, through
/// the product) and that squared distance: the arg-min scan of KMeans' assignment step and of
/// every `predict` that picks the closest center. Ties go to the lowest index.
///
/// Rows run in blocks of [`NEAREST_BLOCK_ROWS`], in parallel when [`SCAN_F64`] allows
/// `rows * centers * features` scanned elements; each block is computed the same way on
/// either path, so the results are bitwise identical.
pub fn nearest_rows(
    x: ArrayView2<f64>,
    centers: ArrayView2<f64>,
) -> Result<(Vec<usize>, Array1<f64>)> {
    check_same_cols(&x, &centers)?;
    if centers.nrows() == 0 {
        return Err(Error::invalid_input(
            "distance: nearest_rows needs at least one center",
        ));
    }
    let n = x.nrows();
    let x_norms = row_sq_norms(x);
    let c_norms = row_sq_norms(centers);
    let mut labels = vec![0usize; n];
    let mut dist_sq = Array1::<f64>::zeros(n);
    let d_slice = dist_sq.as_slice_mut().expect("fresh array is contiguous");
    let block = |(b, (lab, d2)): (usize, (&mut [usize], &mut [f64]))| {
        let start = b * NEAREST_BLOCK_ROWS;
        let end = start + lab.len();
        let mut margin = vec![0.0; lab.len()];
        nearest_block(
            x.slice(ndarray::s![start..end, ..]),
            x_norms.slice(ndarray::s![start..end]),
            centers,
            c_norms.view(),
            lab,
            d2,
            &mut margin,
        );
    };
    let work = n.saturating_mul(centers.nrows()).saturating_mul(x.ncols());
    let blocks = labels
        .chunks_mut(NEAREST_BLOCK_ROWS)
        .zip(d_slice.chunks_mut(NEAREST_BLOCK_ROWS));
    if n > NEAREST_BLOCK_ROWS && SCAN_F64.allows_parallel(work) {
        blocks
            .enumerate()
            .collect::<Vec<_>>()
            .into_par_iter()
            .for_each(block);
    } else {
        blocks.enumerate().for_each(block);
    }
    Ok((labels, dist_sq))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::serial_and_parallel;
    use crate::math::bits;

    fn points(n: usize, d: usize, seed: usize) -> Array2<f64> {
        crate::math::lattice_points(n, d, seed, 10.0, 5.0)
    }

    #[test]
    fn cosine_distances_match_hand_computed_values() {
        let d = |a: &[f64], b: &[f64]| Metric::Cosine.between(arr1(a).view(), arr1(b).view());
        use ndarray::arr1;
        // a.b = 3, |a| = 5, |b| = 1: 1 - 3/5
        assert_eq!(d(&[3.0, 4.0], &[1.0, 0.0]), 1.0 - 0.6);
        // orthogonal, parallel, opposite, and a zero vector (similarity 0)
        assert_eq!(d(&[1.0, 0.0, 0.0], &[0.0, 2.0, 0.0]), 1.0);
        assert_eq!(d(&[1.0, 0.0], &[3.0, 0.0]), 0.0);
        assert_eq!(d(&[0.0, -2.0], &[0.0, 3.0]), 2.0);
        assert_eq!(d(&[0.0, 0.0], &[1.0, 5.0]), 1.0);
        assert_eq!(d(&[0.0, 0.0], &[0.0, 0.0]), 1.0);
        // (1, 1, 1) . (1, 1, 0) = 2 over sqrt(3) sqrt(2) (scikit-learn's docstring example)
        let want = 1.0 - 2.0 / (3f64.sqrt() * 2f64.sqrt());
        assert!((d(&[1.0, 1.0, 1.0], &[1.0, 1.0, 0.0]) - want).abs() <= 4.0 * f64::EPSILON);
        assert!((want - 0.183).abs() < 1e-3);
        // scale-free: a row scaled by a power of two lies where it did
        assert_eq!(
            d(&[0.5, 1.5, -2.0], &[3.0, 1.0, 1.0]),
            d(&[1.0, 3.0, -4.0], &[3.0, 1.0, 1.0])
        );
        // row scans have the bits of `between`, zero rows included
        let rows = ndarray::arr2(&[[3.0, 4.0, 0.0], [0.0, 0.0, 0.0], [-1.0, 0.5, 2.0]]);
        let q = arr1(&[1.0, 2.0, -3.0]);
        let mut out = [0.0; 3];
        row_to_rows(Metric::Cosine, q.view(), rows.view(), &mut out);
        for (o, r) in out.iter().zip(rows.outer_iter()) {
            assert_eq!(o.to_bits(), Metric::Cosine.between(q.view(), r).to_bits());
        }
        assert_eq!(out[1], 1.0);
        assert!(Metric::parse("cosine", 2.0).is_err());
    }

    #[test]
    fn vector_distances_match_hand_computed_values() {
        let a = ndarray::arr1(&[0.0, 3.0, 1.0]);
        let b = ndarray::arr1(&[4.0, 0.0, 1.0]);
        assert_eq!(euclidean(a.view(), b.view()).unwrap(), 5.0);
        assert_eq!(squared_euclidean(a.view(), b.view()).unwrap(), 25.0);
        assert_eq!(manhattan(a.view(), b.view()).unwrap(), 7.0);
        assert!(
            (minkowski(a.view(), b.view(), 3.0).unwrap() - (64.0f64 + 27.0).powf(1.0 / 3.0)).abs()
                < 1e-12
        );
        assert!(minkowski(a.view(), b.view(), 0.5).is_err());
        assert!(euclidean(a.view(), ndarray::arr1(&[1.0]).view()).is_err());
        assert!(Metric::parse("cosine", 2.0).is_err());
    }

    #[test]
    fn pairwise_matches_rowwise_scans_for_every_metric() {
        let a = points(57, 6, 1);
        let b = points(43, 6, 2);
        for metric in [
            Metric::Euclidean,
            Metric::SquaredEuclidean,
            Metric::Manhattan,
            Metric::Minkowski(3.0),
        ] {
            let d = pairwise(a.view(), b.view(), metric).unwrap();
            for i in 0..a.nrows() {
                for j in 0..b.nrows() {
                    let want = metric.between(a.row(i), b.row(j));
                    let got = d[[i, j]];
                    match metric {
                        // The product form cancels |a|^2 + |b|^2 - 2a.b: its error is relative
                        // to the norms, not to the distance (as in scikit-learn).
                        Metric::Euclidean | Metric::SquaredEuclidean => {
                            let scale = a.row(i).dot(&a.row(i)) + b.row(j).dot(&b.row(j));
                            let (g2, w2) = if metric == Metric::Euclidean {
                                (got * got, want * want)
                            } else {
                                (got, want)
                            };
                            assert!(
                                (g2 - w2).abs() <= 1e-13 * scale,
                                "{metric:?} {i} {j}: {got} vs {want}"
                            );
                        }
                        _ => assert!(
                            (got - want).abs() < 1e-12 * want.max(1.0),
                            "{metric:?} {i} {j}"
                        ),
                    }
                }
            }
        }
    }

    #[test]
    fn row_to_rows_has_the_bits_of_between() {
        let m = points(30, 5, 6);
        let q = points(3, 5, 7);
        let mut out = vec![0.0; 30];
        for metric in [
            Metric::Euclidean,
            Metric::SquaredEuclidean,
            Metric::Manhattan,
            Metric::Minkowski(1.0),
            Metric::Minkowski(2.0),
            Metric::Minkowski(2.5),
        ] {
            // contiguous (slice path) and row-reversed (fallback path)
            for rows in [m.view(), m.slice(ndarray::s![..;-1, ..])] {
                row_to_rows(metric, q.row(1), rows, &mut out);
                for (i, r) in rows.outer_iter().enumerate() {
                    assert_eq!(
                        out[i].to_bits(),
                        metric.between(q.row(1), r).to_bits(),
                        "{metric:?} {i}"
                    );
                }
            }
        }
    }

    #[test]
    fn strided_and_contiguous_rows_give_the_same_bits() {
        let m = points(40, 7, 5);
        let strided = m.t(); // columns of m.t() are strided rows of m
        for metric in [
            Metric::Euclidean,
            Metric::SquaredEuclidean,
            Metric::Manhattan,
            Metric::Minkowski(3.0),
        ] {
            for i in 0..20 {
                let fast = metric.between(m.row(i), m.row(i + 20));
                let slow = metric.between(strided.column(i), strided.column(i + 20));
                assert_eq!(fast.to_bits(), slow.to_bits(), "{metric:?} {i}");
            }
        }
    }

    #[test]
    fn nearest_rows_matches_a_brute_force_arg_min() {
        // 9 x 5: the direct kernel; 40 x 30: the product route.
        for (k, d) in [(9, 5), (40, 30)] {
            assert_eq!(k * d <= NEAREST_DIRECT_MAX, d == 5);
            nearest_rows_is_the_arg_min(&points(700, d, 5), &(points(k, d, 6) * 0.7));
        }
        // ties go to the lowest index: two identical centers
        let twins = ndarray::arr2(&[[1.0, 1.0], [0.0, 0.0], [0.0, 0.0]]);
        let (l, _) = nearest_rows(ndarray::arr2(&[[0.1, -0.1]]).view(), twins.view()).unwrap();
        assert_eq!(l, vec![1]);
        let x = points(700, 5, 5);
        assert!(nearest_rows(x.view(), points(3, 4, 1).view()).is_err());
    }

    #[test]
    fn direct_kernel_rows_do_not_depend_on_their_block() {
        // Any row, at any lane of any block (or alone), gets the same label and bits; strided
        // input gives the bits of contiguous input; a point on a center is measured exactly.
        let mut x = points(37, 7, 2);
        let c = points(13, 7, 9) * 0.6;
        x.row_mut(5).assign(&c.row(4));
        let xn = row_sq_norms(x.view());
        let cn = row_sq_norms(c.view());
        let mut whole = (vec![0; 37], vec![0.0; 37], vec![0.0; 37]);
        nearest_block(
            x.view(),
            xn.view(),
            c.view(),
            cn.view(),
            &mut whole.0,
            &mut whole.1,
            &mut whole.2,
        );
        assert_eq!((whole.0[5], whole.1[5]), (4, 0.0));
        for start in [0, 3, 11, 30] {
            let end = (start + 5).min(37);
            let (mut l, mut d2) = (vec![0; end - start], vec![0.0; end - start]);
            let mut g = vec![0.0; end - start];
            let xs = x.slice(ndarray::s![start..end, ..]);
            nearest_block(
                xs,
                xn.slice(ndarray::s![start..end]),
                c.view(),
                cn.view(),
                &mut l,
                &mut d2,
                &mut g,
            );
            assert_eq!(l, whole.0[start..end]);
            assert_eq!(bits(&d2), bits(&whole.1[start..end]));
            assert_eq!(bits(&g), bits(&whole.2[start..end]));
        }
        let fortran = x.t().as_standard_layout().into_owned().reversed_axes();
        let mut strided = (vec![0; 37], vec![0.0; 37], vec![0.0; 37]);
        nearest_block(
            fortran.view(),
            xn.view(),
            c.view(),
            cn.view(),
            &mut strided.0,
            &mut strided.1,
            &mut strided.2,
        );
        assert_eq!(strided.0, whole.0);
        assert_eq!(bits(&strided.1), bits(&whole.1));
        assert_eq!(bits(&strided.2), bits(&whole.2));
    }

    fn nearest_rows_is_the_arg_min(x: &Array2<f64>, c: &Array2<f64>) {
        let (labels, d2) = nearest_rows(x.view(), c.view()).unwrap();
        for i in 0..x.nrows() {
            let exact: Vec<f64> = c
                .outer_iter()
                .map(|cr| Metric::SquaredEuclidean.between(x.row(i), cr))
                .collect();
            let best = exact.iter().cloned().fold(f64::INFINITY, f64::min);
            // Product-form rounding is relative to the norms (see the pairwise test): a label
            // may only differ from the exact arg-min on a near tie.
            let scale = x.row(i).dot(&x.row(i)) + c.row(labels[i]).dot(&c.row(labels[i]));
            assert!(exact[labels[i]] - best <= 1e-12 * scale, "row {i}");
            assert!((d2[i] - exact[labels[i]]).abs() <= 1e-12 * scale, "row {i}");
        }
    }

    #[test]
    fn nearest_rows_serial_and_parallel_agree_bitwise() {
        // Both kernels: 11 x 6 direct, 40 x 30 through the product.
        for (k, d) in [(11, 6), (40, 30)] {
            let x = points(3 * NEAREST_BLOCK_ROWS + 17, d, 7);
            let c = points(k, d, 8) * 0.5;
            let (s, p) =
                serial_and_parallel(&SCAN_F64, || nearest_rows(x.view(), c.view()).unwrap());
            assert_eq!(s.0, p.0);
            assert_eq!(bits(&s.1), bits(&p.1));
        }
    }

    #[test]
    fn scan_gate_serial_and_parallel_agree_bitwise() {
        let a = points(300, 9, 3);
        let b = points(200, 9, 4);
        for metric in [Metric::Manhattan, Metric::Minkowski(2.5)] {
            let (s, p) =
                serial_and_parallel(&SCAN_F64, || pairwise(a.view(), b.view(), metric).unwrap());
            assert_eq!(bits(&s), bits(&p));
            let (s, p) = serial_and_parallel(&SCAN_F64, || {
                rowwise(
                    a.view(),
                    a.view().slice_move(ndarray::s![..;-1, ..]),
                    metric,
                )
                .unwrap()
            });
            assert_eq!(bits(&s), bits(&p));
        }
    }

    #[test]
    fn product_distances_are_exact_where_they_cancel_and_keep_nan() {
        let a = ndarray::array![[1e8, 1e8 + 1.0], [0.5, f64::NAN]];
        let b = ndarray::array![[1e8 + 1.0, 1e8], [3.0, 4.0]];
        let d = pairwise(a.view(), b.view(), Metric::Euclidean).unwrap();
        assert_eq!(d[[0, 0]], 2f64.sqrt());
        assert!(d[[1, 0]].is_nan() && d[[1, 1]].is_nan());
        // The same array: an exactly zero diagonal, whatever the magnitudes.
        let x = Array2::from_shape_fn((40, 7), |(i, j)| 1e6 * ((i * 7 + j) as f64).sin() + 1e3);
        let dx = pairwise_squared_euclidean(x.view(), x.view()).unwrap();
        assert!(dx.diag().iter().all(|&v| v == 0.0));
        let (serial, parallel) = crate::gate::serial_and_parallel(&SCAN_F64, || {
            pairwise_squared_euclidean(x.view(), x.view()).unwrap()
        });
        assert!(serial
            .iter()
            .zip(&parallel)
            .all(|(p, q)| p.to_bits() == q.to_bits()));
    }
}
