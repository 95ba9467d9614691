//! Joint probabilities `P`: per point, the Gaussian precision whose perplexity matches
//! (scikit-learn's binary search), over all pairs (`exact`) or over the nearest neighbours
//! from the crate's k-nearest engine (`barnes_hut`), then symmetrised and normalised.

use super::{per_point, MACHINE_EPSILON};
use crate::error::{Error, Result};
use crate::math::distance::Metric;
use crate::math::k_nearest::{KNearest, Queries};
use crate::math::reduction;
use ndarray::{Array1, Array2, ArrayView1, ArrayView2};

const PERPLEXITY_TOLERANCE: f64 = 1e-5;
const BINARY_SEARCH_STEPS: usize = 100;
/// Symmetric joint probabilities: dense (`exact`) or CSR over nearest neighbours (`barnes_hut`).
#[derive(Debug, Clone)]
pub(crate) enum Affinities {
    Dense(Array2<f64>),
    Sparse(SparseP),
}

impl Affinities {
    pub(super) fn scale(&mut self, factor: f64) {
        match self {
            Affinities::Dense(p) => p.mapv_inplace(|v| v * factor),
            Affinities::Sparse(p) => p.values.iter_mut().for_each(|v| *v *= factor),
        }
    }
}

/// Compressed sparse rows of a symmetric `n x n` matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct SparseP {
    /// Row `i` holds `indices[indptr[i]..indptr[i + 1]]` (ascending) and the matching values.
    pub indptr: Vec<usize>,
    pub indices: Vec<usize>,
    pub values: Vec<f64>,
}

impl SparseP {
    /// Column indices and values of row `i`.
    pub fn row(&self, i: usize) -> (&[usize], &[f64]) {
        let r = self.indptr[i]..self.indptr[i + 1];
        (&self.indices[r.clone()], &self.values[r])
    }
}

/// Cost of one distance in one binary search, in
/// [`SCAN_F64`](crate::math::distance::SCAN_F64) units (one cheap scanned element, ~1.6 ns
/// in the calibration's manhattan scan): every pass of the search takes an `exp` of each
/// distance and a search runs tens of passes; measured serially at ~150-280 ns
/// per distance (`cargo bench --bench parallel_gates -- t-SNE`).
pub const BINARY_SEARCH_COST: usize = 128;

/// [`SCAN_F64`](crate::math::distance::SCAN_F64) work of the binary searches of `n` points
/// over `m` distances each.
pub fn binary_search_work(n: usize, m: usize) -> usize {
    n.saturating_mul(m).saturating_mul(BINARY_SEARCH_COST)
}

/// Conditional probabilities `p_{j|i}` over the squared distances `dist` of point `i` (entry
/// `skip`, the point itself, gets 0) whose perplexity matches `perplexity`: scikit-learn's
/// `_binary_search_perplexity`.
pub fn conditional_probabilities(dist: &[f64], skip: Option<usize>, perplexity: f64) -> Vec<f64> {
    let desired_entropy = perplexity.ln();
    let mut p = vec![0.0; dist.len()];
    let (mut beta, mut beta_min, mut beta_max) = (1.0f64, f64::NEG_INFINITY, f64::INFINITY);
    for _ in 0..BINARY_SEARCH_STEPS {
        let mut sum_p = 0.0;
        for (j, (pj, &dj)) in p.iter_mut().zip(dist).enumerate() {
            if Some(j) != skip {
                *pj = (-dj * beta).exp();
                sum_p += *pj;
            }
        }
        if sum_p == 0.0 {
            sum_p = 1e-8;
        }
        let mut sum_dist_p = 0.0;
        for (pj, &dj) in p.iter_mut().zip(dist) {
            *pj /= sum_p;
            sum_dist_p += dj * *pj;
        }
        let entropy = sum_p.ln() + beta * sum_dist_p;
        let diff = entropy - desired_entropy;
        if diff.abs() <= PERPLEXITY_TOLERANCE {
            break;
        }
        if diff > 0.0 {
            beta_min = beta;
            beta = if beta_max == f64::INFINITY {
                beta * 2.0
            } else {
                (beta + beta_max) / 2.0
            };
        } else {
            beta_max = beta;
            beta = if beta_min == f64::NEG_INFINITY {
                beta / 2.0
            } else {
                (beta + beta_min) / 2.0
            };
        }
    }
    p
}

/// Dense symmetric `P` over all pairs (method `exact`): `max((P_cond + P_condᵀ) / sum, eps)`
/// off the diagonal, 0 on it, over the squared euclidean distances of the rows of `x`.
pub fn joint_probabilities_exact(x: ArrayView2<f64>, perplexity: f64) -> Result<Array2<f64>> {
    let dist = crate::math::distance::pairwise_squared_euclidean(x, x)?;
    Ok(joint_from_dense(dist.view(), perplexity))
}

/// [`joint_probabilities_exact`] over given squared distances (an `n x n` matrix of finite,
/// non-negative values, scikit-learn's `metric="precomputed"` or another metric's distances,
/// squared; the diagonal is checked but not read): the same `P` wherever the given
/// distances are the euclidean ones, bit for bit.
pub fn joint_probabilities_given(d2: ArrayView2<f64>, perplexity: f64) -> Result<Array2<f64>> {
    let (n, m) = d2.dim();
    if n != m {
        return Err(Error::invalid_input(format!(
            "given squared distances must form a square matrix, got {n} x {m}"
        )));
    }
    check_distance_values(d2.iter())?;
    Ok(joint_from_dense(d2, perplexity))
}

/// Given squared distances must be finite and non-negative.
fn check_distance_values<'a>(values: impl Iterator<Item = &'a f64>) -> Result<()> {
    for &v in values {
        if !v.is_finite() {
            return Err(Error::invalid_input(format!(
                "given squared distances must be finite, got {v}"
            )));
        }
        if v < 0.0 {
            return Err(Error::invalid_input(format!(
                "given squared distances must be non-negative, got {v}"
            )));
        }
    }
    Ok(())
}

/// The dense `P` of a square matrix of squared distances, whatever their source.
fn joint_from_dense(dist: ArrayView2<f64>, perplexity: f64) -> Array2<f64> {
    let n = dist.nrows();
    let rows = per_point(n, binary_search_work(n, n), |i| {
        let row = dist.row(i);
        let owned;
        let slice = match row.as_slice() {
            Some(s) => s,
            None => {
                owned = row.to_vec();
                &owned
            }
        };
        conditional_probabilities(slice, Some(i), perplexity)
    });
    let mut cond = Array2::<f64>::zeros((n, n));
    for (i, r) in rows.into_iter().enumerate() {
        cond.row_mut(i).assign(&Array1::from(r));
    }
    let mut p = &cond + &cond.t();
    let total = reduction::sum(ArrayView1::from(
        p.as_slice().expect("fresh array is contiguous"),
    ))
    .max(MACHINE_EPSILON);
    for ((i, j), v) in p.indexed_iter_mut() {
        *v = if i == j {
            0.0
        } else {
            (*v / total).max(MACHINE_EPSILON)
        };
    }
    p
}

/// The `k` nearest neighbours of every row of `x` among the others (squared euclidean,
/// ascending, ties by index; row-major `n x k` indices and squared distances), from the
/// crate's k-nearest engine ([`k_nearest`](crate::math::k_nearest)): row-chunks of `x xᵀ`,
/// exact where the product form cancels.
pub fn nearest_neighbours(x: ArrayView2<f64>, k: usize) -> Result<(Vec<usize>, Vec<f64>)> {
    if k == 0 {
        return Ok((Vec::new(), Vec::new()));
    }
    let (distances, indices) = KNearest::new(x, Metric::SquaredEuclidean).search(
        Queries::Reference {
            include_self: false,
        },
        k,
    )?;
    Ok((
        indices.into_iter().collect(),
        distances.into_iter().collect(),
    ))
}

/// Conditional probabilities of `n = rows.len() / k` points, each over its `k` neighbour
/// distances (row-major `n x k`), one binary search per point ([`conditional_probabilities`]),
/// in parallel behind [`SCAN_F64`](crate::math::distance::SCAN_F64).
pub fn conditional_probabilities_rows(rows: &[f64], k: usize, perplexity: f64) -> Vec<f64> {
    if k == 0 {
        return Vec::new();
    }
    let n = rows.len() / k;
    per_point(n, binary_search_work(n, k), |i| {
        conditional_probabilities(&rows[i * k..(i + 1) * k], None, perplexity)
    })
    .concat()
}

/// Sparse symmetric `P` over the `k` nearest neighbours (method `barnes_hut`):
/// `(P_cond + P_condᵀ) / sum`, the neighbours found among the rows of `x` (squared
/// euclidean).
pub fn joint_probabilities_knn(x: ArrayView2<f64>, perplexity: f64, k: usize) -> Result<SparseP> {
    let (neighbours, distances) = nearest_neighbours(x, k)?;
    Ok(joint_from_neighbours(
        x.nrows(),
        &neighbours,
        &distances,
        k,
        perplexity,
    ))
}

/// [`joint_probabilities_knn`] over given neighbours: row `i` of the `n x k` `indices` holds
/// `k` distinct other points (`k >= 1`) and the same row of `d2` their squared distances
/// (finite, non-negative), in any order; each row is taken nearest first, equal distances by
/// index, the order [`nearest_neighbours`] returns, so the neighbours and distances it
/// finds give the same `P`, bit for bit.
pub fn joint_probabilities_given_neighbours(
    indices: ArrayView2<usize>,
    d2: ArrayView2<f64>,
    perplexity: f64,
) -> Result<SparseP> {
    let (n, k) = indices.dim();
    if d2.dim() != (n, k) {
        return Err(Error::invalid_input(format!(
            "given neighbours: indices ({n} x {k}) and squared distances ({} x {}) must have \
             the same shape",
            d2.nrows(),
            d2.ncols()
        )));
    }
    if k == 0 || k >= n.max(1) {
        return Err(Error::invalid_input(format!(
            "given neighbours: each of the {n} points needs between 1 and n - 1 neighbours, \
             got {k}"
        )));
    }
    check_distance_values(d2.iter())?;
    let mut neighbours = Vec::with_capacity(n * k);
    let mut distances = Vec::with_capacity(n * k);
    let mut seen = vec![usize::MAX; n];
    for (i, (idx, dist)) in indices.rows().into_iter().zip(d2.rows()).enumerate() {
        for &j in idx {
            if j >= n || j == i || seen[j] == i {
                let what = if j >= n {
                    format!("index {j} out of range for {n} points")
                } else if j == i {
                    "the point itself".to_string()
                } else {
                    format!("point {j} twice")
                };
                return Err(Error::invalid_input(format!(
                    "given neighbours: row {i} lists {what}"
                )));
            }
            seen[j] = i;
        }
        let mut row: Vec<(f64, usize)> = dist.iter().copied().zip(idx.iter().copied()).collect();
        // finite values: the partial order is total (and -0.0 equals 0.0, as distances)
        row.sort_by(|a, b| {
            a.0.partial_cmp(&b.0)
                .expect("finite")
                .then_with(|| a.1.cmp(&b.1))
        });
        for (d, j) in row {
            neighbours.push(j);
            distances.push(d);
        }
    }
    Ok(joint_from_neighbours(
        n,
        &neighbours,
        &distances,
        k,
        perplexity,
    ))
}

/// The sparse `P` of `n` points' `k` neighbours (row-major `n x k` indices and squared
/// distances, each row nearest first), whatever their source.
fn joint_from_neighbours(
    n: usize,
    neighbours: &[usize],
    distances: &[f64],
    k: usize,
    perplexity: f64,
) -> SparseP {
    let cond = conditional_probabilities_rows(distances, k, perplexity);
    let cond: Vec<&[f64]> = cond.chunks(k.max(1)).collect();
    // Symmetrise: row i holds p_{j|i} at its neighbours and p_{i|j} where i is j's neighbour.
    let mut rows: Vec<Vec<(usize, f64)>> = (0..n).map(|_| Vec::with_capacity(2 * k)).collect();
    for (i, &probs) in cond.iter().enumerate() {
        for (&j, &p) in neighbours[i * k..(i + 1) * k].iter().zip(probs) {
            rows[i].push((j, p));
            rows[j].push((i, p));
        }
    }
    let mut indptr = Vec::with_capacity(n + 1);
    let mut indices = Vec::new();
    let mut values = Vec::new();
    indptr.push(0);
    for mut row in rows {
        row.sort_by_key(|e| e.0);
        for (j, p) in row {
            if indices.len() > *indptr.last().expect("starts at 0") && indices.last() == Some(&j) {
                // The same pair seen from both ends: p_{j|i} + p_{i|j} (two terms, so the sum
                // does not depend on their order).
                *values.last_mut().expect("non-empty") += p;
            } else {
                indices.push(j);
                values.push(p);
            }
        }
        indptr.push(indices.len());
    }
    let total = reduction::sum(ArrayView1::from(&values[..])).max(MACHINE_EPSILON);
    values.iter_mut().for_each(|v| *v /= total);
    SparseP {
        indptr,
        indices,
        values,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine_learning::tsne::gradient::squared_distance;
    use crate::machine_learning::tsne::test_data::blobs;
    use crate::math::matmul;

    fn entropy(p: &[f64]) -> f64 {
        -p.iter()
            .filter(|&&v| v > 0.0)
            .map(|&v| v * v.ln())
            .sum::<f64>()
    }

    #[test]
    fn binary_search_hits_the_perplexity() {
        let dist: Vec<f64> = (0..40)
            .map(|j| (j as f64 * 0.37).sin().abs() * 5.0 + j as f64 * 0.1)
            .collect();
        for perplexity in [2.0, 5.0, 15.0] {
            let p = conditional_probabilities(&dist, Some(3), perplexity);
            assert_eq!(p[3], 0.0);
            assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            // Oracle: perplexity = exp(Shannon entropy in nats); the search stops within 1e-5
            // of the target entropy.
            assert!(
                (entropy(&p) - perplexity.ln()).abs() <= 1e-5 + 1e-12,
                "perplexity {perplexity}"
            );
        }
    }

    #[test]
    fn nearest_neighbours_match_a_brute_force_scan_under_both_tilings() {
        let (x, _) = blobs(3, 20, 4);
        let n = x.nrows();
        let k = 7;
        let _lock = crate::gate::GATE_TEST_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        for (chunk, resident) in [(usize::MAX, usize::MAX), (4 * n, usize::MAX), (4 * n, 0)] {
            let (idx, d2) = crate::gate::with_gate(&matmul::CHUNK_ELEMS, chunk, || {
                crate::gate::with_gate(&matmul::CACHE_RESIDENT_MAX_BYTES, resident, || {
                    nearest_neighbours(x.view(), k).unwrap()
                })
            });
            for i in 0..n {
                let mut brute: Vec<(f64, usize)> = (0..n)
                    .filter(|&j| j != i)
                    .map(|j| (squared_distance(x.view(), i, j), j))
                    .collect();
                brute.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                for r in 0..k {
                    assert_eq!(idx[i * k + r], brute[r].1, "row {i} rank {r}");
                    assert!((d2[i * k + r] - brute[r].0).abs() < 1e-10 * brute[r].0.max(1.0));
                }
            }
        }
    }

    #[test]
    fn joint_probabilities_are_symmetric_and_normalised() {
        let (x, _) = blobs(2, 15, 3);
        let p = joint_probabilities_exact(x.view(), 5.0).unwrap();
        assert!((p.sum() - 1.0).abs() < 1e-9);
        for i in 0..30 {
            assert_eq!(p[[i, i]], 0.0);
            for j in 0..30 {
                assert_eq!(p[[i, j]], p[[j, i]]);
            }
        }
        let s = joint_probabilities_knn(x.view(), 5.0, 16).unwrap();
        assert!((s.values.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        let mut dense = Array2::<f64>::zeros((30, 30));
        for i in 0..30 {
            let (cols, vals) = s.row(i);
            assert!(cols.windows(2).all(|w| w[0] < w[1]));
            for (&j, &v) in cols.iter().zip(vals) {
                dense[[i, j]] = v;
            }
        }
        assert_eq!(dense, dense.t());
    }

    #[test]
    fn given_euclidean_distances_give_the_same_p_bit_for_bit() {
        let (x, _) = blobs(3, 12, 4);
        let n = x.nrows();
        let d2 = crate::math::distance::pairwise_squared_euclidean(x.view(), x.view()).unwrap();
        let from_x = joint_probabilities_exact(x.view(), 6.0).unwrap();
        let from_d2 = joint_probabilities_given(d2.view(), 6.0).unwrap();
        let bits = |m: &Array2<f64>| m.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&from_x), bits(&from_d2));
        // Other distances give another P: the given values are read.
        let other = joint_probabilities_given(d2.mapv(|v| v.sqrt()).view(), 6.0).unwrap();
        assert_ne!(bits(&other), bits(&from_x));

        let k = 10;
        let (idx, dist) = nearest_neighbours(x.view(), k).unwrap();
        let from_x = joint_probabilities_knn(x.view(), 6.0, k).unwrap();
        let indices = Array2::from_shape_vec((n, k), idx).unwrap();
        let distances = Array2::from_shape_vec((n, k), dist).unwrap();
        let given =
            joint_probabilities_given_neighbours(indices.view(), distances.view(), 6.0).unwrap();
        let sparse_bits = |p: &SparseP| p.values.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            (&given.indptr, &given.indices),
            (&from_x.indptr, &from_x.indices)
        );
        assert_eq!(sparse_bits(&given), sparse_bits(&from_x));
        // Each row in another order (reversed): taken nearest first, the same P.
        let reversed_idx = indices.slice(ndarray::s![.., ..;-1]).to_owned();
        let reversed_d2 = distances.slice(ndarray::s![.., ..;-1]).to_owned();
        let reordered =
            joint_probabilities_given_neighbours(reversed_idx.view(), reversed_d2.view(), 6.0)
                .unwrap();
        assert_eq!(sparse_bits(&reordered), sparse_bits(&from_x));
        // Moved distances give another P.
        let moved = joint_probabilities_given_neighbours(
            indices.view(),
            distances.mapv(|v| v * 1.5).view(),
            6.0,
        )
        .unwrap();
        assert_ne!(sparse_bits(&moved), sparse_bits(&from_x));
    }

    #[test]
    fn bad_given_distances_are_refused() {
        let good = Array2::from_shape_fn((4, 4), |(i, j)| (i as f64 - j as f64).powi(2));
        assert!(joint_probabilities_given(good.view(), 2.0).is_ok());
        let refused = |d: Array2<f64>| joint_probabilities_given(d.view(), 2.0).unwrap_err();
        assert!(refused(Array2::zeros((4, 3)))
            .to_string()
            .contains("square"));
        for (bad, word) in [
            (f64::NAN, "finite"),
            (f64::INFINITY, "finite"),
            (-1.0, "non-negative"),
        ] {
            let mut d = good.clone();
            d[[1, 2]] = bad;
            assert!(refused(d).to_string().contains(word), "{bad}");
        }

        let indices = ndarray::array![[1, 2], [0, 2], [0, 1], [1, 2]];
        let d2 = ndarray::array![[1.0, 4.0], [1.0, 1.0], [4.0, 1.0], [4.0, 1.0]];
        assert!(joint_probabilities_given_neighbours(indices.view(), d2.view(), 2.0).is_ok());
        let refused = |i: Array2<usize>, d: Array2<f64>| {
            joint_probabilities_given_neighbours(i.view(), d.view(), 2.0)
                .unwrap_err()
                .to_string()
        };
        assert!(
            refused(indices.clone(), d2.slice(ndarray::s![.., ..1]).to_owned())
                .contains("same shape")
        );
        let mut i = indices.clone();
        i[[3, 0]] = 3;
        assert!(refused(i, d2.clone()).contains("itself"));
        let mut i = indices.clone();
        i[[3, 0]] = 4;
        assert!(refused(i, d2.clone()).contains("out of range"));
        let mut i = indices.clone();
        i[[3, 0]] = 2;
        assert!(refused(i, d2.clone()).contains("twice"));
        let mut d = d2.clone();
        d[[0, 1]] = -0.5;
        assert!(refused(indices.clone(), d).contains("non-negative"));
        let mut d = d2.clone();
        d[[0, 1]] = f64::NAN;
        assert!(refused(indices.clone(), d).contains("finite"));
        assert!(refused(Array2::zeros((4, 0)), Array2::zeros((4, 0))).contains("between 1"));
        assert!(refused(
            Array2::from_shape_fn((4, 4), |(i, j)| (i + j) % 4),
            Array2::ones((4, 4))
        )
        .contains("between 1"));
    }
}
