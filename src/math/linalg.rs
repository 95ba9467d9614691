//! Small dense linear algebra (solves and eigen-decompositions of `d x d` matrices) on
//! nalgebra's pure-Rust decompositions, with ndarray at the edges.

use crate::error::{Error, Result};
use crate::math::matmul;
use nalgebra::DMatrix;
use ndarray::{Array1, Array2, ArrayView1, ArrayView2};

fn to_na(a: ArrayView2<f64>) -> DMatrix<f64> {
    DMatrix::from_fn(a.nrows(), a.ncols(), |i, j| a[[i, j]])
}

fn from_na(m: &DMatrix<f64>) -> Array2<f64> {
    Array2::from_shape_fn((m.nrows(), m.ncols()), |(i, j)| m[(i, j)])
}

/// Iteration bound for nalgebra's QR-type sweeps on a `d x d` problem: converging ones take a
/// few sweeps per eigen/singular value, so this is reached only when the iteration cannot
/// converge (entries near overflow turn its rotations into NaN, and an unbounded loop spins
/// forever).
pub fn max_iterations(d: usize) -> usize {
    d.saturating_mul(100).max(10_000)
}

/// Eigen-decomposition of a symmetric matrix: eigenvalues in descending order and the
/// matching eigenvectors as columns.
pub fn symmetric_eigen(a: ArrayView2<f64>) -> Result<(Array1<f64>, Array2<f64>)> {
    if a.nrows() != a.ncols() {
        return Err(Error::invalid_input(format!(
            "symmetric_eigen: matrix is {:?}, not square",
            a.dim()
        )));
    }
    if a.iter().any(|v| !v.is_finite()) {
        return Err(Error::computation(
            "symmetric_eigen: matrix has NaN or infinite entries",
        ));
    }
    let eig = nalgebra::SymmetricEigen::try_new(to_na(a), f64::EPSILON, max_iterations(a.nrows()))
        .filter(|e| e.eigenvalues.iter().all(|v| v.is_finite()))
        .ok_or_else(|| {
            Error::computation(
                "symmetric_eigen: the decomposition did not converge (entries too large: \
                 non-finite intermediate results)",
            )
        })?;
    let mut order: Vec<usize> = (0..eig.eigenvalues.len()).collect();
    order.sort_by(|&i, &j| eig.eigenvalues[j].total_cmp(&eig.eigenvalues[i]));
    let values = Array1::from_iter(order.iter().map(|&i| eig.eigenvalues[i]));
    let vectors = Array2::from_shape_fn((a.nrows(), order.len()), |(r, c)| {
        eig.eigenvectors[(r, order[c])]
    });
    Ok((values, vectors))
}

/// Solve `a x = b` for symmetric positive semi-definite `a`.
///
/// Cholesky when `a` is positive definite; otherwise the minimum-norm least-squares solution
/// through the eigen-decomposition (what `numpy.linalg.lstsq` returns for a rank-deficient
/// system), discarding eigenvalues below `max_eigenvalue * d * eps`.
pub fn solve_symmetric(a: ArrayView2<f64>, b: ArrayView1<f64>) -> Result<Array1<f64>> {
    let d = a.nrows();
    if a.ncols() != d || b.len() != d {
        return Err(Error::invalid_input(format!(
            "solve_symmetric: matrix {:?} and right-hand side of length {} do not match",
            a.dim(),
            b.len()
        )));
    }
    let rhs = nalgebra::DVector::from_iterator(d, b.iter().copied());
    if let Some(chol) = nalgebra::Cholesky::new(to_na(a)) {
        let x = chol.solve(&rhs);
        if x.iter().all(|v| v.is_finite()) {
            // Cholesky succeeds on nearly singular systems too; keep it only when well conditioned.
            let diag = chol.l_dirty().diagonal();
            let (lo, hi) = diag.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &v| {
                (lo.min(v.abs()), hi.max(v.abs()))
            });
            if lo > hi * 1e-7 {
                return Ok(Array1::from_iter(x.iter().copied()));
            }
        }
    }
    let (values, vectors) = symmetric_eigen(a)?;
    let cutoff = values.iter().fold(0.0f64, |m, v| m.max(v.abs())) * d as f64 * f64::EPSILON;
    let projected = vectors.t().dot(&b);
    let scaled = Array1::from_iter(projected.iter().zip(values.iter()).map(|(&p, &l)| {
        if l > cutoff {
            p / l
        } else {
            0.0
        }
    }));
    Ok(vectors.dot(&scaled))
}

/// The `k` largest (algebraic) eigenvalues of a symmetric matrix, descending, with their
/// eigenvectors as columns.
///
/// Large matrices with few wanted pairs go through a block Krylov (block Lanczos with full
/// reorthogonalisation) Rayleigh-Ritz iteration on gemmkit products: block size `k + 8` (so an
/// eigenvalue repeated up to that many times is still found), a fixed-seed start block
/// (deterministic results), and convergence when every wanted Ritz pair's residual
/// `|A u - theta u|` is below `1e-13 * |theta_max|`. Anything else, or a search that has not
/// converged by a basis of `min(n / 2, 20 * block)` vectors, takes the dense
/// [`symmetric_eigen`].
pub fn symmetric_eigen_top(a: ArrayView2<f64>, k: usize) -> Result<(Array1<f64>, Array2<f64>)> {
    let n = a.nrows();
    if a.ncols() != n {
        return Err(Error::invalid_input(format!(
            "symmetric_eigen_top: matrix is {:?}, not square",
            a.dim()
        )));
    }
    if k > n {
        return Err(Error::invalid_input(format!(
            "symmetric_eigen_top: asked for {k} eigenpairs of a {n} x {n} matrix"
        )));
    }
    let block = k + 8;
    if n > KRYLOV_MIN_N && 4 * block <= n {
        if a.iter().any(|v| !v.is_finite()) {
            return Err(Error::computation(
                "symmetric_eigen_top: matrix has NaN or infinite entries",
            ));
        }
        if let Some(found) = block_krylov_top(a, k, block)? {
            return Ok(found);
        }
    }
    let (values, vectors) = symmetric_eigen(a)?;
    Ok((
        values.slice(ndarray::s![..k]).to_owned(),
        vectors.slice(ndarray::s![.., ..k]).to_owned(),
    ))
}

/// Below this size the dense decomposition is cheap enough.
const KRYLOV_MIN_N: usize = 256;

/// Block Krylov Rayleigh-Ritz for the top `k` eigenpairs; `None` when it does not converge
/// within its basis budget.
fn block_krylov_top(
    a: ArrayView2<f64>,
    k: usize,
    block: usize,
) -> Result<Option<(Array1<f64>, Array2<f64>)>> {
    use rand::{Rng, SeedableRng};
    let n = a.nrows();
    let cap = (n / 2).min(20 * block).max(block);
    let mut q = Array2::<f64>::zeros((n, cap)); // orthonormal basis
    let mut aq = Array2::<f64>::zeros((n, cap)); // a · basis
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x5eed);
    let start = Array2::from_shape_fn((n, block), |_| rng.random::<f64>() * 2.0 - 1.0);
    let mut m = 0usize; // basis vectors so far
    let mut last = append_orthonormal(&mut q, &mut m, start);
    loop {
        // Extend a·basis by the newest block.
        let new_cols = m - last;
        if new_cols > 0 {
            let product = matmul::dot(a, q.slice(ndarray::s![.., last..m]))?;
            aq.slice_mut(ndarray::s![.., last..m]).assign(&product);
        }
        // Rayleigh-Ritz on the whole basis.
        let basis = q.slice(ndarray::s![.., ..m]);
        let image = aq.slice(ndarray::s![.., ..m]);
        let mut t = matmul::dot(basis.t(), image)?;
        for i in 0..m {
            for j in 0..i {
                let v = 0.5 * (t[[i, j]] + t[[j, i]]);
                t[[i, j]] = v;
                t[[j, i]] = v;
            }
        }
        let (theta, s) = symmetric_eigen(t.view())?;
        let top = s.slice(ndarray::s![.., ..k]);
        let u = matmul::dot(basis, top)?;
        let au = matmul::dot(image, top)?;
        let scale = theta
            .iter()
            .fold(0.0f64, |acc, v| acc.max(v.abs()))
            .max(f64::MIN_POSITIVE);
        let converged = (0..k).all(|c| {
            let r: f64 = au
                .column(c)
                .iter()
                .zip(u.column(c).iter())
                .map(|(&x, &y)| (x - theta[c] * y).powi(2))
                .sum();
            r.sqrt() <= 1e-13 * scale
        });
        if converged {
            return Ok(Some((theta.slice(ndarray::s![..k]).to_owned(), u)));
        }
        if new_cols == 0 || m + block > cap {
            return Ok(None);
        }
        // Next Krylov block: a · (newest block), orthogonalised against the basis.
        let next = aq.slice(ndarray::s![.., last..m]).to_owned();
        last = m;
        append_orthonormal(&mut q, &mut m, next);
    }
}

/// Orthogonalise the columns of `w` against `q[:, ..m]` (classical Gram-Schmidt, twice) and
/// among themselves (modified Gram-Schmidt, twice); append the columns that keep more than
/// `1e-10` of their norm to `q` at `m`. Returns the index of the first appended column.
fn append_orthonormal(q: &mut Array2<f64>, m: &mut usize, mut w: Array2<f64>) -> usize {
    let first = *m;
    if first > 0 {
        for _ in 0..2 {
            let basis = q.slice(ndarray::s![.., ..first]);
            let coef = matmul::dot(basis.t(), w.view()).expect("shapes match");
            let proj = matmul::dot(basis, coef.view()).expect("shapes match");
            w -= &proj;
        }
    }
    for j in 0..w.ncols() {
        if *m >= q.ncols() {
            break;
        }
        let mut v = w.column(j).to_owned();
        let before = v.dot(&v).sqrt();
        if before == 0.0 {
            continue;
        }
        for _ in 0..2 {
            for i in first..*m {
                let qi = q.column(i);
                let p = qi.dot(&v);
                v.scaled_add(-p, &qi);
            }
        }
        let after = v.dot(&v).sqrt();
        if after <= 1e-10 * before {
            continue;
        }
        v.mapv_inplace(|x| x / after);
        q.column_mut(*m).assign(&v);
        *m += 1;
    }
    first
}

/// `a x = b` by Cholesky for a symmetric positive definite `a`, with `a`'s reciprocal
/// condition number in the 1-norm, `1 / (|a|_1 |a^-1|_1)` (computed from the inverse, not
/// estimated, so a caller can tell "well conditioned" apart from what LAPACK's estimate would
/// call singular). `None` where the factorisation fails (`a` not positive definite to
/// rounding) or the solution is not finite.
pub fn cholesky_solve_with_rcond(
    a: ArrayView2<f64>,
    b: ArrayView1<f64>,
) -> Option<(Array1<f64>, f64)> {
    let d = a.nrows();
    if a.ncols() != d || b.len() != d {
        return None;
    }
    let chol = nalgebra::Cholesky::new(to_na(a))?;
    let x = chol.solve(&nalgebra::DVector::from_iterator(d, b.iter().copied()));
    if !x.iter().all(|v| v.is_finite()) {
        return None;
    }
    let column_sum_max = |m: &DMatrix<f64>| {
        m.column_iter()
            .map(|c| c.iter().map(|v| v.abs()).sum::<f64>())
            .fold(0.0f64, f64::max)
    };
    let rcond = 1.0 / (column_sum_max(&to_na(a)) * column_sum_max(&chol.inverse()));
    Some((Array1::from_iter(x.iter().copied()), rcond))
}

/// ndarray to nalgebra, for models that call nalgebra's decompositions directly.
pub fn to_nalgebra(a: ArrayView2<f64>) -> DMatrix<f64> {
    to_na(a)
}

/// Back to ndarray.
pub fn from_nalgebra(m: &DMatrix<f64>) -> Array2<f64> {
    from_na(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// A hand case: [[4, 2], [2, 3]] x = [2, 1] has x = [0.5, 0]; the inverse is
    /// [[3, -2], [-2, 4]] / 8, so |a|_1 = 6, |a^-1|_1 = 6 / 8 and rcond = 8 / 36.
    #[test]
    fn cholesky_solve_hand_case() {
        let a = array![[4.0, 2.0], [2.0, 3.0]];
        let (x, rcond) = cholesky_solve_with_rcond(a.view(), array![2.0, 1.0].view()).unwrap();
        assert!((x[0] - 0.5).abs() < 1e-15 && x[1].abs() < 1e-15, "{x}");
        assert!((rcond - 8.0 / 36.0).abs() < 1e-15, "{rcond}");
    }

    /// Indefinite and singular matrices have no Cholesky factor (or an infinite condition).
    #[test]
    fn cholesky_solve_refuses_indefinite_matrices() {
        let indefinite = array![[1.0, 2.0], [2.0, 1.0]];
        assert!(cholesky_solve_with_rcond(indefinite.view(), array![1.0, 1.0].view()).is_none());
        let singular = array![[1.0, 1.0], [1.0, 1.0]];
        match cholesky_solve_with_rcond(singular.view(), array![1.0, 1.0].view()) {
            None => {}
            Some((_, rcond)) => assert!(rcond < 1e-12, "{rcond}"),
        }
    }

    #[test]
    fn solves_definite_and_rank_deficient_systems() {
        let a = array![[4.0, 1.0], [1.0, 3.0]];
        let b = array![1.0, 2.0];
        let x = solve_symmetric(a.view(), b.view()).unwrap();
        // Hand-derived: x = [1/11, 7/11]
        assert!((x[0] - 1.0 / 11.0).abs() < 1e-14 && (x[1] - 7.0 / 11.0).abs() < 1e-14);
        // Rank one: [[1,1],[1,1]] x = [2,2]; minimum-norm solution is [1,1].
        let s = array![[1.0, 1.0], [1.0, 1.0]];
        let x = solve_symmetric(s.view(), array![2.0, 2.0].view()).unwrap();
        assert!((x[0] - 1.0).abs() < 1e-12 && (x[1] - 1.0).abs() < 1e-12);
    }

    #[test]
    fn eigenvalues_come_sorted_with_matching_vectors() {
        let a = array![[2.0, 0.0, 0.0], [0.0, 5.0, 0.0], [0.0, 0.0, 1.0]];
        let (values, vectors) = symmetric_eigen(a.view()).unwrap();
        assert_eq!(values.to_vec(), vec![5.0, 2.0, 1.0]);
        let av = a.dot(&vectors);
        for c in 0..3 {
            for r in 0..3 {
                assert!((av[[r, c]] - values[c] * vectors[[r, c]]).abs() < 1e-12);
            }
        }
    }

    /// A symmetric matrix with the given spectrum in a rotated basis (oracle: known eigenvalues).
    fn with_spectrum(values: &[f64], seed: u64) -> (Array2<f64>, Array2<f64>) {
        use rand::{Rng, SeedableRng};
        let n = values.len();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let raw = Array2::from_shape_fn((n, n), |_| rng.random::<f64>() - 0.5);
        let (_, q) = symmetric_eigen((&raw + &raw.t()).view()).unwrap(); // random orthogonal
        let scaled = &q * &Array1::from(values.to_vec());
        (scaled.dot(&q.t()), q)
    }

    #[test]
    fn top_eigenpairs_match_the_dense_decomposition() {
        // Decaying spectrum (like an RBF kernel), with the top value repeated twice.
        let n: i32 = 300;
        let mut values: Vec<f64> = (0..n).map(|i| 50.0 * 0.9f64.powi(i)).collect();
        values[1] = values[0];
        let (a, _) = with_spectrum(&values, 3);
        let k = 5;
        let (got, vectors) = symmetric_eigen_top(a.view(), k).unwrap();
        // The Krylov path itself converged (no dense fallback), to the same pairs.
        let (krylov, _) = block_krylov_top(a.view(), k, k + 8)
            .unwrap()
            .expect("converges");
        assert_eq!(krylov, got);
        let mut sorted = values.clone();
        sorted.sort_by(|x, y| y.total_cmp(x));
        for c in 0..k {
            assert!((got[c] - sorted[c]).abs() < 1e-11 * sorted[0], "value {c}");
            let v = vectors.column(c);
            let av = a.dot(&v);
            let r = (&av - &(&v * got[c])).mapv(|x| x * x).sum().sqrt();
            assert!(r < 1e-11 * sorted[0], "residual {c}: {r}");
            for d in 0..k {
                let want = if c == d { 1.0 } else { 0.0 };
                assert!((v.dot(&vectors.column(d)) - want).abs() < 1e-10);
            }
        }
        // Small matrices take the dense path; same answer there.
        let (small, _) = with_spectrum(&values[..40], 4);
        let (dense_vals, _) = symmetric_eigen(small.view()).unwrap();
        let (top_vals, _) = symmetric_eigen_top(small.view(), 3).unwrap();
        assert_eq!(top_vals, dense_vals.slice(ndarray::s![..3]));
        assert!(symmetric_eigen_top(small.view(), 41).is_err());
    }
}
