//! Clustering metrics: external (two labelings: ARI, mutual information family, homogeneity /
//! completeness / V-measure, Fowlkes-Mallows) and internal (data and labels: silhouette,
//! Calinski-Harabasz, Davies-Bouldin), with scikit-learn's definitions and edge cases.
//!
//! The external scores work from a sparse contingency table (the non-zero cells only), so one
//! cluster per sample costs `O(n)` memory, not `O(n^2)`. The silhouette score, the one
//! quadratic metric, computes its distances through the product in row chunks and forks over
//! the chunks behind the [`SILHOUETTE`] gate.

use super::check_lengths;
use crate::declare_gate;
use crate::error::{Error, Result};
use crate::math::distance::Metric;
use crate::math::labels::{self, bincount, Label};
use crate::math::{matmul, reduction};
use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis, CowArray, Ix2};
use rayon::prelude::*;

declare_gate! {
    /// Silhouette score: row chunks of the pairwise distances. Work = `n_samples^2`
    /// (distances computed).
    pub SILHOUETTE: metrics::silhouette = 262_144, "elements"
}

/// The non-zero cells of the contingency table of two labelings with its margins.
struct Contingency {
    n: usize,
    /// Class sizes of the first labeling (`a_i`).
    rows: Vec<u64>,
    /// Cluster sizes of the second labeling (`b_j`).
    cols: Vec<u64>,
    /// `(i, j, n_ij)` for every `n_ij > 0`.
    cells: Vec<(usize, usize, u64)>,
}

fn contingency<T: Label>(
    labels_true: ArrayView1<T>,
    labels_pred: ArrayView1<T>,
) -> Result<Contingency> {
    check_lengths(
        labels_true.len(),
        labels_pred.len(),
        "labels_true",
        "labels_pred",
    )?;
    let (ct, t) = labels::encode(labels_true, "labels_true")?;
    let (cp, p) = labels::encode(labels_pred, "labels_pred")?;
    let (kt, kp, n) = (ct.len(), cp.len(), t.len());
    let cells: Vec<(usize, usize, u64)> = if kt.saturating_mul(kp) <= (4 * n).max(1 << 16) {
        let mut dense = vec![0u64; kt * kp];
        for (&a, &b) in t.iter().zip(&p) {
            dense[a * kp + b] += 1;
        }
        dense
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(idx, &c)| (idx / kp, idx % kp, c))
            .collect()
    } else {
        let mut keys: Vec<u64> = t
            .iter()
            .zip(&p)
            .map(|(&a, &b)| a as u64 * kp as u64 + b as u64)
            .collect();
        keys.sort_unstable();
        let mut cells = Vec::new();
        for key in keys {
            match cells.last_mut() {
                Some((i, j, c)) if (*i * kp + *j) as u64 == key => *c += 1,
                _ => cells.push(((key / kp as u64) as usize, (key % kp as u64) as usize, 1)),
            }
        }
        cells
    };
    let to_u64 = |v: Vec<usize>| v.into_iter().map(|c| c as u64).collect();
    Ok(Contingency {
        n,
        rows: to_u64(bincount(&t, kt)),
        cols: to_u64(bincount(&p, kp)),
        cells,
    })
}

impl Contingency {
    /// Mutual information in nats, scikit-learn's arrangement of the terms (tiny terms
    /// flushed to zero, the total clipped at zero).
    fn mutual_info(&self) -> f64 {
        if self.rows.len() == 1 || self.cols.len() == 1 {
            return 0.0;
        }
        // When one labeling refines the other (every cluster of one lies inside a single class
        // of the other) the MI is exactly the coarser labeling's entropy. Returning that value
        // keeps ratios such as AMI's `(MI - EMI) / (H - EMI)` exact where both sides cancel.
        if self.cells.len() == self.cols.len() {
            return entropy(&self.rows, self.n);
        }
        if self.cells.len() == self.rows.len() {
            return entropy(&self.cols, self.n);
        }
        let n = self.n as f64;
        let log_n = n.ln();
        let total: f64 = self
            .cells
            .iter()
            .map(|&(i, j, c)| {
                let c = c as f64;
                let nm = c / n;
                let log_outer = -((self.rows[i] * self.cols[j]) as f64).ln() + log_n + log_n;
                let term = nm * (c.ln() - log_n) + nm * log_outer;
                if term.abs() < f64::EPSILON {
                    0.0
                } else {
                    term
                }
            })
            .sum();
        total.max(0.0)
    }

    /// Sum of `C(x, 2)`-like squares used by the pair-counting scores.
    fn sum_sq(v: impl Iterator<Item = u64>) -> i128 {
        v.map(|c| i128::from(c) * i128::from(c)).sum()
    }
}

/// Entropy (nats) of a labeling from its class sizes; 0 for a single class.
fn entropy(counts: &[u64], n: usize) -> f64 {
    if counts.len() <= 1 {
        return 0.0;
    }
    let n = n as f64;
    let log_n = n.ln();
    -counts
        .iter()
        .map(|&c| (c as f64 / n) * ((c as f64).ln() - log_n))
        .sum::<f64>()
}

/// How the two entropies combine in the normalised mutual-information scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AverageMethod {
    Min,
    Geometric,
    #[default]
    Arithmetic,
    Max,
}

impl AverageMethod {
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "min" => Ok(Self::Min),
            "geometric" => Ok(Self::Geometric),
            "arithmetic" => Ok(Self::Arithmetic),
            "max" => Ok(Self::Max),
            other => Err(Error::invalid_input(format!(
                "unknown average_method {other:?}: expected 'min', 'geometric', 'arithmetic' or 'max'"
            ))),
        }
    }

    fn combine(self, u: f64, v: f64) -> f64 {
        match self {
            Self::Min => u.min(v),
            Self::Geometric => (u * v).sqrt(),
            Self::Arithmetic => (u + v) / 2.0,
            Self::Max => u.max(v),
        }
    }
}

/// Mutual information (nats) between two labelings.
pub fn mutual_info_score<T: Label>(
    labels_true: ArrayView1<T>,
    labels_pred: ArrayView1<T>,
) -> Result<f64> {
    Ok(contingency(labels_true, labels_pred)?.mutual_info())
}

/// Mutual information normalised by a mean of the two entropies: 1 for identical
/// partitions (including both a single cluster), 0 for independent ones.
pub fn normalized_mutual_info_score<T: Label>(
    labels_true: ArrayView1<T>,
    labels_pred: ArrayView1<T>,
    average_method: AverageMethod,
) -> Result<f64> {
    let c = contingency(labels_true, labels_pred)?;
    if c.rows.len() == 1 && c.cols.len() == 1 {
        return Ok(1.0);
    }
    let mi = c.mutual_info();
    if mi == 0.0 {
        return Ok(0.0);
    }
    let normalizer = average_method.combine(entropy(&c.rows, c.n), entropy(&c.cols, c.n));
    Ok(mi / normalizer)
}

/// `ln(k!)` for `k` in `0..=n`, by compensated (Neumaier) summation of `ln k`, so every entry
/// is as accurate as a log-gamma evaluation.
fn ln_factorials(n: usize) -> Vec<f64> {
    let mut table = Vec::with_capacity(n + 1);
    let mut ln_factorial = reduction::CompensatedSum::default();
    table.push(0.0);
    for k in 1..=n {
        ln_factorial.add((k as f64).ln());
        table.push(ln_factorial.value());
    }
    table
}

/// Expected mutual information of two random labelings with these margins (hypergeometric
/// model), term by term as scikit-learn's `expected_mutual_information`.
fn expected_mutual_info(c: &Contingency) -> f64 {
    let (a, b) = (&c.rows, &c.cols);
    if a.len() == 1 || b.len() == 1 {
        return 0.0;
    }
    let n = c.n;
    let nf = n as f64;
    let lf = ln_factorials(n);
    let lf_u = |k: u64| lf[k as usize];
    let max_nij = a.iter().chain(b.iter()).copied().max().unwrap_or(0) as usize;
    let log_n = nf.ln();
    let mut emi = 0.0;
    for &ai in a {
        let (log_a, gln_a, gln_na) = ((ai as f64).ln(), lf_u(ai), lf[n - ai as usize]);
        for &bj in b {
            let (log_b, gln_b, gln_nb) = ((bj as f64).ln(), lf_u(bj), lf[n - bj as usize]);
            let start = (ai as i64 - n as i64 + bj as i64).max(1) as u64;
            let end = ai.min(bj);
            for nij in start..=end {
                debug_assert!(nij as usize <= max_nij);
                let term1 = nij as f64 / nf;
                let term2 = log_n + (nij as f64).ln() - log_a - log_b;
                let gln = gln_a + gln_b + gln_na + gln_nb
                    - (lf_u(nij) + lf[n])
                    - lf_u(ai - nij)
                    - lf_u(bj - nij)
                    - lf[(n as u64 + nij - ai - bj) as usize];
                emi += term1 * term2 * gln.exp();
            }
        }
    }
    emi
}

/// Mutual information adjusted for chance: 1 for identical partitions, about 0 for random
/// ones (negative values possible).
pub fn adjusted_mutual_info_score<T: Label>(
    labels_true: ArrayView1<T>,
    labels_pred: ArrayView1<T>,
    average_method: AverageMethod,
) -> Result<f64> {
    let c = contingency(labels_true, labels_pred)?;
    if c.rows.len() == 1 && c.cols.len() == 1 {
        return Ok(1.0);
    }
    // One side unsplit, the other split: no information shared (scikit-learn's rule), whatever
    // the average method (under `min` the normaliser would be 0 = MI).
    if c.rows.len() == 1 || c.cols.len() == 1 {
        return Ok(0.0);
    }
    let mi = c.mutual_info();
    let emi = expected_mutual_info(&c);
    let normalizer = average_method.combine(entropy(&c.rows, c.n), entropy(&c.cols, c.n));
    // MI equal to the normaliser (identical partitions, or a refinement under `min`) makes
    // numerator and denominator the same number: 1 exactly, as scikit-learn's arithmetic
    // gives, even where both are ~0 and the eps clamp below would break the cancellation
    // (all singletons: MI = EMI = H).
    if mi == normalizer {
        return Ok(1.0);
    }
    // scikit-learn keeps numerator and denominator at least eps away from zero, sign preserved
    let away_from_zero = |v: f64| {
        if v < 0.0 {
            v.min(-f64::EPSILON)
        } else {
            v.max(f64::EPSILON)
        }
    };
    Ok(away_from_zero(mi - emi) / away_from_zero(normalizer - emi))
}

/// Rand index adjusted for chance, from the exact pair counts (128-bit integers).
pub fn adjusted_rand_score<T: Label>(
    labels_true: ArrayView1<T>,
    labels_pred: ArrayView1<T>,
) -> Result<f64> {
    let c = contingency(labels_true, labels_pred)?;
    let n = c.n as i128;
    let sum_squares = Contingency::sum_sq(c.cells.iter().map(|x| x.2));
    let tp = sum_squares - n;
    let fp = Contingency::sum_sq(c.cols.iter().copied()) - sum_squares;
    let fn_ = Contingency::sum_sq(c.rows.iter().copied()) - sum_squares;
    let tn = n * n - fp - fn_ - sum_squares;
    if fn_ == 0 && fp == 0 {
        return Ok(1.0);
    }
    let num = tp * tn - fn_ * fp;
    let den = (tp + fn_) * (fn_ + tn) + (tp + fp) * (fp + tn);
    Ok(2.0 * num as f64 / den as f64)
}

/// `(homogeneity, completeness, v_measure)`; `beta` weights completeness over homogeneity in
/// the V-measure (1 = harmonic mean).
pub fn homogeneity_completeness_v_measure<T: Label>(
    labels_true: ArrayView1<T>,
    labels_pred: ArrayView1<T>,
    beta: f64,
) -> Result<(f64, f64, f64)> {
    if !(beta.is_finite() && beta >= 0.0) {
        return Err(Error::invalid_input(format!(
            "beta must be a finite number >= 0, got {beta}"
        )));
    }
    let c = contingency(labels_true, labels_pred)?;
    let (h_c, h_k) = (entropy(&c.rows, c.n), entropy(&c.cols, c.n));
    let mi = c.mutual_info();
    let homogeneity = if h_c != 0.0 { mi / h_c } else { 1.0 };
    let completeness = if h_k != 0.0 { mi / h_k } else { 1.0 };
    let v = if homogeneity + completeness == 0.0 {
        0.0
    } else {
        (1.0 + beta) * homogeneity * completeness / (beta * homogeneity + completeness)
    };
    Ok((homogeneity, completeness, v))
}

/// Each cluster holds members of a single class only (1 = perfectly homogeneous).
pub fn homogeneity_score<T: Label>(
    labels_true: ArrayView1<T>,
    labels_pred: ArrayView1<T>,
) -> Result<f64> {
    homogeneity_completeness_v_measure(labels_true, labels_pred, 1.0).map(|s| s.0)
}

/// All members of a class fall in one cluster (1 = perfectly complete).
pub fn completeness_score<T: Label>(
    labels_true: ArrayView1<T>,
    labels_pred: ArrayView1<T>,
) -> Result<f64> {
    homogeneity_completeness_v_measure(labels_true, labels_pred, 1.0).map(|s| s.1)
}

/// Harmonic mean of homogeneity and completeness (weighted by `beta`).
pub fn v_measure_score<T: Label>(
    labels_true: ArrayView1<T>,
    labels_pred: ArrayView1<T>,
    beta: f64,
) -> Result<f64> {
    homogeneity_completeness_v_measure(labels_true, labels_pred, beta).map(|s| s.2)
}

/// Geometric mean of pairwise precision and recall over sample pairs.
pub fn fowlkes_mallows_score<T: Label>(
    labels_true: ArrayView1<T>,
    labels_pred: ArrayView1<T>,
) -> Result<f64> {
    let c = contingency(labels_true, labels_pred)?;
    let n = c.n as i128;
    let tk = Contingency::sum_sq(c.cells.iter().map(|x| x.2)) - n;
    if tk == 0 {
        return Ok(0.0);
    }
    let pk = Contingency::sum_sq(c.cols.iter().copied()) - n;
    let qk = Contingency::sum_sq(c.rows.iter().copied()) - n;
    let tk = tk as f64;
    Ok((tk / pk as f64).sqrt() * (tk / qk as f64).sqrt())
}

/// Cluster codes of `labels` for an internal metric on `n_rows` samples: equal length and
/// `2 <= clusters <= n_samples - 1`.
fn internal_labels<T: Label>(n_rows: usize, labels: ArrayView1<T>) -> Result<(Vec<usize>, usize)> {
    check_lengths(n_rows, labels.len(), "X", "labels")?;
    let (classes, codes) = labels::encode(labels, "labels")?;
    let k = classes.len();
    if k < 2 || k > n_rows - 1 {
        return Err(Error::invalid_input(format!(
            "Number of labels is {k}. Valid values are 2 to n_samples - 1 (inclusive)"
        )));
    }
    Ok((codes, k))
}

fn check_data(x: &ArrayView2<f64>) -> Result<()> {
    crate::validation::check_features(x, "X")
}

/// The distance the silhouette uses between samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SilhouetteMetric {
    /// Distances between the rows of `X`.
    Distance(Metric),
    /// `X` is already the `n x n` distance matrix.
    Precomputed,
}

impl SilhouetteMetric {
    /// `"precomputed"` or a [`Metric`] name (`p` for minkowski).
    pub fn parse(name: &str, p: f64) -> Result<Self> {
        if name == "precomputed" {
            Ok(Self::Precomputed)
        } else {
            Metric::parse(name, p).map(Self::Distance)
        }
    }
}

impl Default for SilhouetteMetric {
    fn default() -> Self {
        Self::Distance(Metric::Euclidean)
    }
}

/// Rows per chunk of the silhouette's distance work: at least 64 rows (so packing the right
/// operand stays a small share of each product), about 2 MiB of distances otherwise. A
/// function of the shape only, so both gate paths cut the same chunks.
fn silhouette_chunk_rows(n: usize) -> usize {
    ((1usize << 18) / n.max(1)).max(64).min(n.max(1))
}

/// Samples sorted by cluster: `order[s]` = original index of sorted position `s`,
/// `offsets[c]..offsets[c + 1]` = the sorted positions of cluster `c`.
fn sort_by_cluster(codes: &[usize], k: usize) -> (Vec<usize>, Vec<usize>) {
    let counts = bincount(codes, k);
    let mut offsets = vec![0usize; k + 1];
    for c in 0..k {
        offsets[c + 1] = offsets[c] + counts[c];
    }
    let mut next = offsets.clone();
    let mut order = vec![0usize; codes.len()];
    for (i, &c) in codes.iter().enumerate() {
        order[next[c]] = i;
        next[c] += 1;
    }
    (order, offsets)
}

/// The silhouette of one sample from its row of distances to every sample (sorted order).
fn sample_silhouette(row: &[f64], own: usize, offsets: &[usize]) -> f64 {
    let k = offsets.len() - 1;
    let own_size = offsets[own + 1] - offsets[own];
    if own_size <= 1 {
        return 0.0;
    }
    let mut intra = 0.0;
    let mut inter = f64::INFINITY;
    for c in 0..k {
        let total = reduction::lane_sum(&row[offsets[c]..offsets[c + 1]]);
        if c == own {
            intra = total / (own_size - 1) as f64;
        } else {
            inter = inter.min(total / (offsets[c + 1] - offsets[c]) as f64);
        }
    }
    let s = (inter - intra) / intra.max(inter);
    // 0/0 (coincident samples) counts as 0, as scikit-learn's nan_to_num
    if s.is_nan() {
        0.0
    } else {
        s
    }
}

/// Silhouette coefficient of every sample, `(b - a) / max(a, b)` with `a` the mean distance
/// to the own cluster and `b` the mean distance to the nearest other cluster; 0 for samples
/// alone in their cluster.
pub fn silhouette_samples<T: Label>(
    x: ArrayView2<f64>,
    labels: ArrayView1<T>,
    metric: SilhouetteMetric,
) -> Result<Array1<f64>> {
    check_data(&x)?;
    let n = x.nrows();
    if metric == SilhouetteMetric::Precomputed {
        if x.ncols() != n {
            return Err(Error::invalid_input(format!(
                "a precomputed distance matrix must be square, got {} x {}",
                n,
                x.ncols()
            )));
        }
        if let Some(i) = (0..n).find(|&i| x[[i, i]].abs() > 100.0 * f64::EPSILON) {
            return Err(Error::invalid_input(format!(
                "The precomputed distance matrix contains non-zero elements on the diagonal (first at {i}). Use np.fill_diagonal(X, 0)."
            )));
        }
        if x.iter().any(|&v| v < 0.0) {
            return Err(Error::invalid_input(
                "The precomputed distance matrix contains negative values",
            ));
        }
    }
    let (codes, k) = internal_labels(n, labels)?;
    let (order, offsets) = sort_by_cluster(&codes, k);
    let cluster_of_sorted: Vec<usize> = order.iter().map(|&i| codes[i]).collect();
    let xs: Array2<f64> = match metric {
        SilhouetteMetric::Precomputed => Array2::zeros((0, 0)),
        SilhouetteMetric::Distance(_) => x.select(Axis(0), &order),
    };
    let norms: Vec<f64> = match metric {
        SilhouetteMetric::Distance(
            Metric::Euclidean | Metric::SquaredEuclidean | Metric::Minkowski(2.0),
        ) => crate::math::distance::row_sq_norms(xs.view()).to_vec(),
        _ => Vec::new(),
    };
    let step = silhouette_chunk_rows(n);
    // Silhouettes of sorted positions start..start + rows.
    let chunk = |start: usize| -> Vec<f64> {
        let end = (start + step).min(n);
        let mut dist = match metric {
            SilhouetteMetric::Distance(
                Metric::Euclidean | Metric::SquaredEuclidean | Metric::Minkowski(2.0),
            ) => {
                let block = xs.slice(ndarray::s![start..end, ..]);
                let mut d = matmul::dot_par(block, xs.t(), matmul::Parallelism::Serial)
                    .expect("shapes agree");
                let sqrt = metric != SilhouetteMetric::Distance(Metric::SquaredEuclidean);
                for (mut row, &ni) in d.rows_mut().into_iter().zip(&norms[start..end]) {
                    for (v, &nj) in row.iter_mut().zip(&norms) {
                        // scikit-learn's order of operations: -2 a.b + |a|^2 + |b|^2, clamped
                        let sq = ((-2.0 * *v + ni) + nj).max(0.0);
                        *v = if sqrt { sq.sqrt() } else { sq };
                    }
                }
                d
            }
            SilhouetteMetric::Distance(m) => Array2::from_shape_fn((end - start, n), |(r, j)| {
                m.between(xs.row(start + r), xs.row(j))
            }),
            SilhouetteMetric::Precomputed => {
                Array2::from_shape_fn((end - start, n), |(r, j)| x[[order[start + r], order[j]]])
            }
        };
        (start..end)
            .zip(dist.rows_mut())
            .map(|(i, mut row)| {
                row[i] = 0.0; // a sample's distance to itself is exactly 0
                let row = row.as_slice().expect("fresh row-major block");
                sample_silhouette(row, cluster_of_sorted[i], &offsets)
            })
            .collect()
    };
    let starts: Vec<usize> = (0..n).step_by(step).collect();
    let per_chunk: Vec<Vec<f64>> =
        if starts.len() > 1 && SILHOUETTE.allows_parallel(n.saturating_mul(n)) {
            starts.into_par_iter().map(chunk).collect()
        } else {
            starts.into_iter().map(chunk).collect()
        };
    let mut out = Array1::<f64>::zeros(n);
    for (s, v) in per_chunk.into_iter().flatten().enumerate() {
        out[order[s]] = v;
    }
    Ok(out)
}

/// Mean silhouette coefficient over all samples (see [`silhouette_samples`]).
pub fn silhouette_score<T: Label>(
    x: ArrayView2<f64>,
    labels: ArrayView1<T>,
    metric: SilhouetteMetric,
) -> Result<f64> {
    let s = silhouette_samples(x, labels, metric)?;
    Ok(reduction::sum(s.view()) / s.len() as f64)
}

/// `x`, rescaled by a power of two when its magnitude would overflow squared distances.
/// Calinski-Harabasz and Davies-Bouldin are scale-invariant and a power-of-two scale is exact,
/// so the score is unchanged where the unscaled arithmetic was finite.
fn overflow_safe(x: ArrayView2<f64>) -> CowArray<f64, Ix2> {
    let max = x.fold(0.0f64, |m, v| m.max(v.abs()));
    if max > 2f64.powi(400) {
        let scale = 2f64.powi(-(max.log2().floor() as i32));
        CowArray::from(x.mapv(|v| v * scale))
    } else {
        CowArray::from(x)
    }
}

/// Per-cluster sizes and centroids (means).
fn centroids(x: &ArrayView2<f64>, codes: &[usize], k: usize) -> (Vec<usize>, Array2<f64>) {
    let sizes = bincount(codes, k);
    let mut sums = Array2::<f64>::zeros((k, x.ncols()));
    for (row, &c) in x.outer_iter().zip(codes) {
        let mut s = sums.row_mut(c);
        s += &row;
    }
    for (mut s, &size) in sums.outer_iter_mut().zip(&sizes) {
        s /= size as f64;
    }
    (sizes, sums)
}

/// Variance ratio criterion: between-cluster over within-cluster dispersion, scaled by
/// `(n - k) / (k - 1)`; 1.0 when every sample sits on its centroid.
pub fn calinski_harabasz_score<T: Label>(x: ArrayView2<f64>, labels: ArrayView1<T>) -> Result<f64> {
    check_data(&x)?;
    let (codes, k) = internal_labels(x.nrows(), labels)?;
    let x = overflow_safe(x);
    let x = x.view();
    let n = x.nrows();
    let (sizes, cent) = centroids(&x, &codes, k);
    let mean = x.sum_axis(Axis(0)) / n as f64;
    let extra: f64 = cent
        .outer_iter()
        .zip(&sizes)
        .map(|(c, &size)| {
            size as f64
                * c.iter()
                    .zip(&mean)
                    .map(|(a, b)| (a - b) * (a - b))
                    .sum::<f64>()
        })
        .sum();
    let intra: f64 = x
        .outer_iter()
        .zip(&codes)
        .map(|(row, &c)| {
            row.iter()
                .zip(cent.row(c))
                .map(|(a, b)| (a - b) * (a - b))
                .sum::<f64>()
        })
        .sum();
    if intra == 0.0 {
        return Ok(1.0);
    }
    Ok(extra * (n - k) as f64 / (intra * (k as f64 - 1.0)))
}

/// Mean over clusters of the worst `(s_i + s_j) / d(c_i, c_j)`, `s` the mean distance to the
/// centroid; lower is better. 0.0 when all spreads or all centroid distances are ~0.
pub fn davies_bouldin_score<T: Label>(x: ArrayView2<f64>, labels: ArrayView1<T>) -> Result<f64> {
    check_data(&x)?;
    let (codes, k) = internal_labels(x.nrows(), labels)?;
    let x = overflow_safe(x);
    let x = x.view();
    let (sizes, cent) = centroids(&x, &codes, k);
    let mut intra = vec![0.0f64; k];
    for (row, &c) in x.outer_iter().zip(&codes) {
        intra[c] += Metric::Euclidean.between(row, cent.row(c));
    }
    for (s, &size) in intra.iter_mut().zip(&sizes) {
        *s /= size as f64;
    }
    let cd = Array2::from_shape_fn((k, k), |(i, j)| {
        if i == j {
            0.0
        } else {
            Metric::Euclidean.between(cent.row(i), cent.row(j))
        }
    });
    // np.allclose(v, 0): |v| <= 1e-8
    if intra.iter().all(|v| v.abs() <= 1e-8) || cd.iter().all(|v| v.abs() <= 1e-8) {
        return Ok(0.0);
    }
    let total: f64 = (0..k)
        .map(|i| {
            (0..k)
                .map(|j| {
                    let d = if cd[[i, j]] == 0.0 {
                        f64::INFINITY
                    } else {
                        cd[[i, j]]
                    };
                    (intra[i] + intra[j]) / d
                })
                .fold(f64::NEG_INFINITY, f64::max)
        })
        .sum();
    Ok(total / k as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::serial_and_parallel;
    use ndarray::arr1;

    #[test]
    fn pair_scores_by_hand() {
        // true {0,0,1,1}, pred {0,0,0,1}: contingency [[2,0],[1,1]]
        let t = arr1(&[0i64, 0, 1, 1]);
        let p = arr1(&[0i64, 0, 0, 1]);
        // pair counts: tp = sum n_ij^2 - n = 6 - 4 = 2; fp = (9+1) - 6 = 4; fn = (4+4) - 6 = 2;
        // tn = 16 - 4 - 2 - 6 = 4 -> ARI = 2 (2*4 - 2*4) / (...) = 0
        assert_eq!(adjusted_rand_score(t.view(), p.view()).unwrap(), 0.0);
        assert_eq!(adjusted_rand_score(t.view(), t.view()).unwrap(), 1.0);
        // FMI = tk / sqrt(pk qk) = 2 / sqrt(6 * 4)
        assert!(
            (fowlkes_mallows_score(t.view(), p.view()).unwrap() - 2.0 / 24f64.sqrt()).abs() < 1e-15
        );
        // label permutations do not matter
        let renamed = arr1(&[7i64, 7, 3, 3]);
        assert_eq!(adjusted_rand_score(t.view(), renamed.view()).unwrap(), 1.0);
        assert!(
            (normalized_mutual_info_score(t.view(), renamed.view(), AverageMethod::Arithmetic)
                .unwrap()
                - 1.0)
                .abs()
                < 1e-15
        );
        assert!(
            (adjusted_mutual_info_score(t.view(), renamed.view(), AverageMethod::Arithmetic)
                .unwrap()
                - 1.0)
                .abs()
                < 1e-15
        );
    }

    #[test]
    fn information_scores_by_hand() {
        // true {0,0,1,1}, pred {0,0,0,1}; H(C) = ln 2, H(K) = -(3/4 ln 3/4 + 1/4 ln 1/4)
        // MI = 1/2 ln(2*4/(2*3)) + 1/4 ln(1*4/(2*3)) + 1/4 ln(1*4/(2*1))
        let t = arr1(&[0i64, 0, 1, 1]);
        let p = arr1(&[0i64, 0, 0, 1]);
        let mi = 0.5 * (4.0f64 / 3.0).ln() + 0.25 * (2.0f64 / 3.0).ln() + 0.25 * 2f64.ln();
        let hc = 2f64.ln();
        let hk = -(0.75 * 0.75f64.ln() + 0.25 * 0.25f64.ln());
        assert!((mutual_info_score(t.view(), p.view()).unwrap() - mi).abs() < 1e-15);
        let (h, c, v) = homogeneity_completeness_v_measure(t.view(), p.view(), 1.0).unwrap();
        assert!((h - mi / hc).abs() < 1e-15 && (c - mi / hk).abs() < 1e-15);
        assert!((v - 2.0 * h * c / (h + c)).abs() < 1e-15);
        let nmi =
            normalized_mutual_info_score(t.view(), p.view(), AverageMethod::Geometric).unwrap();
        assert!((nmi - mi / (hc * hk).sqrt()).abs() < 1e-15);
        // single cluster each: perfect by convention
        let one = arr1(&[4i64, 4, 4]);
        assert_eq!(
            normalized_mutual_info_score(one.view(), one.view(), AverageMethod::Arithmetic)
                .unwrap(),
            1.0
        );
        assert_eq!(
            homogeneity_score(one.view(), arr1(&[1i64, 2, 3]).view()).unwrap(),
            1.0
        );
    }

    #[test]
    fn expected_mutual_info_matches_enumeration() {
        // Independent oracle: average MI over all 4!/(2!2!) = 6 distinct relabelings of the
        // predicted {0,0,1,1} against true {0,0,1,1} -- every arrangement is equally likely
        // under the hypergeometric model.
        let t = [0i64, 0, 1, 1];
        let arrangements = [
            [0, 0, 1, 1],
            [0, 1, 0, 1],
            [0, 1, 1, 0],
            [1, 0, 0, 1],
            [1, 0, 1, 0],
            [1, 1, 0, 0],
        ];
        let mean_mi = arrangements
            .iter()
            .map(|a| mutual_info_score(arr1(&t).view(), arr1(&a.map(|v: i64| v)).view()).unwrap())
            .sum::<f64>()
            / 6.0;
        let c = contingency(arr1(&t).view(), arr1(&[0i64, 1, 0, 1]).view()).unwrap();
        assert!((expected_mutual_info(&c) - mean_mi).abs() < 1e-14);
        let lf = ln_factorials(20);
        assert!((lf[20] - (1..=20).map(|k| k as f64).product::<f64>().ln()).abs() < 1e-13);
    }

    #[test]
    fn sparse_contingency_matches_the_definition() {
        // 300 classes of two and 301 shifted pairs: 90_300 possible cells > 65_536, so the
        // sort-based sparse table is used. Oracle: MI straight from its definition.
        let n = 600usize;
        let t: Vec<i64> = (0..n as i64).map(|i| i / 2).collect();
        let p: Vec<i64> = (0..n as i64).map(|i| (i + 1) / 2).collect();
        let c = contingency(arr1(&t).view(), arr1(&p).view()).unwrap();
        assert_eq!(c.cells.len(), n);
        let mut joint = std::collections::HashMap::<(i64, i64), f64>::new();
        let mut mt = std::collections::HashMap::<i64, f64>::new();
        let mut mp = std::collections::HashMap::<i64, f64>::new();
        for (&a, &b) in t.iter().zip(&p) {
            *joint.entry((a, b)).or_default() += 1.0;
            *mt.entry(a).or_default() += 1.0;
            *mp.entry(b).or_default() += 1.0;
        }
        let nf = n as f64;
        let mi: f64 = joint
            .iter()
            .map(|(&(a, b), &c)| c / nf * (nf * c / (mt[&a] * mp[&b])).ln())
            .sum();
        assert!((mutual_info_score(arr1(&t).view(), arr1(&p).view()).unwrap() - mi).abs() < 1e-12);
        // A refinement (every singleton inside one class): MI is exactly H(true), so AMI's
        // `(MI - EMI) / (min(H) - EMI)` cancels to 1 instead of amplifying rounding noise.
        let singletons: Vec<i64> = (0..n as i64).collect();
        let ami = adjusted_mutual_info_score(
            arr1(&t).view(),
            arr1(&singletons).view(),
            AverageMethod::Min,
        )
        .unwrap();
        assert_eq!(ami, 1.0);
        let (h, c, _) =
            homogeneity_completeness_v_measure(arr1(&t).view(), arr1(&singletons).view(), 1.0)
                .unwrap();
        assert_eq!(h, 1.0);
        // completeness = ln 300 / ln 600
        assert!((c - 300f64.ln() / 600f64.ln()).abs() < 1e-14);
    }

    fn blobs() -> (Array2<f64>, Vec<i64>) {
        let mut rows = Vec::new();
        let mut labels = Vec::new();
        for i in 0..90 {
            let c = (i % 3) as f64;
            rows.extend([
                c * 4.0 + ((i * 37) % 11) as f64 * 0.1,
                -c + ((i * 53) % 7) as f64 * 0.13,
            ]);
            labels.push((i % 3) as i64 * 10);
        }
        (Array2::from_shape_vec((90, 2), rows).unwrap(), labels)
    }

    #[test]
    fn silhouette_matches_a_direct_double_loop() {
        let (x, labels) = blobs();
        let n = x.nrows();
        let mut want = vec![0.0; n];
        for i in 0..n {
            let mut sums = std::collections::BTreeMap::<i64, (f64, usize)>::new();
            for (j, &lj) in labels.iter().enumerate() {
                if i != j {
                    let d = Metric::Euclidean.between(x.row(i), x.row(j));
                    let e = sums.entry(lj).or_default();
                    e.0 += d;
                    e.1 += 1;
                }
            }
            let a = sums[&labels[i]].0 / sums[&labels[i]].1 as f64;
            let b = sums
                .iter()
                .filter(|(l, _)| **l != labels[i])
                .map(|(_, (s, c))| s / *c as f64)
                .fold(f64::INFINITY, f64::min);
            want[i] = (b - a) / a.max(b);
        }
        let got = silhouette_samples(x.view(), arr1(&labels).view(), SilhouetteMetric::default())
            .unwrap();
        for (g, w) in got.iter().zip(&want) {
            // product-form distances: error relative to the squared norms (~16 here)
            assert!((g - w).abs() < 1e-12, "{g} vs {w}");
        }
        let score =
            silhouette_score(x.view(), arr1(&labels).view(), SilhouetteMetric::default()).unwrap();
        assert!((score - want.iter().sum::<f64>() / n as f64).abs() < 1e-12);
        // precomputed distances give the same scores
        let d = crate::math::distance::pairwise(x.view(), x.view(), Metric::Manhattan).unwrap();
        let pre = silhouette_samples(
            d.view(),
            arr1(&labels).view(),
            SilhouetteMetric::Precomputed,
        )
        .unwrap();
        let direct = silhouette_samples(
            x.view(),
            arr1(&labels).view(),
            SilhouetteMetric::Distance(Metric::Manhattan),
        )
        .unwrap();
        assert_eq!(pre, direct);
        // one label, or one cluster per sample, is refused
        let err = silhouette_score(
            x.view(),
            arr1(&vec![1i64; n]).view(),
            SilhouetteMetric::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("Number of labels is 1"), "{err}");
    }

    #[test]
    fn silhouette_gate_serial_and_parallel_agree_bitwise() {
        let n = 700; // > 64-row chunks, so the parallel path has several tasks
        let x = Array2::from_shape_fn((n, 5), |(i, j)| {
            ((i * 5 + j) as f64 * 0.377).sin() * (1.0 + j as f64)
        });
        let labels: Vec<i64> = (0..n as i64).map(|i| (i * 7919) % 6).collect();
        for metric in [
            SilhouetteMetric::default(),
            SilhouetteMetric::Distance(Metric::Manhattan),
        ] {
            let (s, p) = serial_and_parallel(&SILHOUETTE, || {
                silhouette_samples(x.view(), arr1(&labels).view(), metric).unwrap()
            });
            assert_eq!(
                s.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                p.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn ami_of_identical_singleton_partitions_is_one() {
        // every sample its own cluster in both: MI = EMI = H, the ratio is 1 by definition
        let t = arr1(&[0i64, 1]);
        for m in [
            AverageMethod::Arithmetic,
            AverageMethod::Min,
            AverageMethod::Max,
        ] {
            assert_eq!(
                adjusted_mutual_info_score(t.view(), t.view(), m).unwrap(),
                1.0
            );
        }
        let many = arr1(&[5i64, 3, 9, 1, 0]);
        let renamed = arr1(&[0i64, 1, 2, 3, 4]);
        assert_eq!(
            adjusted_mutual_info_score(many.view(), renamed.view(), AverageMethod::Arithmetic)
                .unwrap(),
            1.0
        );
    }

    #[test]
    fn davies_bouldin_and_calinski_survive_huge_values() {
        // clusters {0, 1} and {10, 11}: s = [1/2, 1/2], centroid distance 10 -> DB 0.1;
        // CH = (2*25 + 2*25) * 2 / (4 * 0.25 * 1) = 200. Squares of 2^1000-scaled values
        // overflow, a power-of-two scale is exact, so the scaled scores are the same bits.
        let base = Array2::from_shape_vec((4, 1), vec![0.0, 1.0, 10.0, 11.0]).unwrap();
        let l = arr1(&[0i64, 0, 1, 1]);
        let huge = base.mapv(|v| v * 2f64.powi(1000));
        let db = davies_bouldin_score(base.view(), l.view()).unwrap();
        assert!((db - 0.1).abs() < 1e-15);
        assert_eq!(davies_bouldin_score(huge.view(), l.view()).unwrap(), db);
        let ch = calinski_harabasz_score(base.view(), l.view()).unwrap();
        assert_eq!(ch, 200.0);
        assert_eq!(calinski_harabasz_score(huge.view(), l.view()).unwrap(), ch);
        // not a power of two: equal up to rounding
        let big = base.mapv(|v| v * 1.5e300);
        assert!((davies_bouldin_score(big.view(), l.view()).unwrap() - 0.1).abs() < 1e-12);
    }

    #[test]
    fn calinski_and_davies_by_hand() {
        // two clusters on a line: {0, 2} and {10, 12}; centroids 1 and 11, grand mean 6
        let x = Array2::from_shape_vec((4, 1), vec![0.0, 2.0, 10.0, 12.0]).unwrap();
        let l = arr1(&[0i64, 0, 1, 1]);
        // extra = 2*25 + 2*25 = 100, intra = 4 -> 100 * (4-2) / (4 * 1) = 50
        assert_eq!(calinski_harabasz_score(x.view(), l.view()).unwrap(), 50.0);
        // s = [1, 1], centroid distance 10 -> (1+1)/10 = 0.2
        assert!((davies_bouldin_score(x.view(), l.view()).unwrap() - 0.2).abs() < 1e-15);
        let same = Array2::from_shape_vec((4, 1), vec![1.0, 1.0, 5.0, 5.0]).unwrap();
        assert_eq!(calinski_harabasz_score(same.view(), l.view()).unwrap(), 1.0);
        assert_eq!(davies_bouldin_score(same.view(), l.view()).unwrap(), 0.0);
    }
}
