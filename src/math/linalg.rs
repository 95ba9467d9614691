//! Small dense linear algebra (solves and eigen-decompositions of `d x d` matrices) on
//! nalgebra's pure-Rust decompositions, with ndarray at the edges.

use crate::error::{Result, RustymlError};
use nalgebra::DMatrix;
use ndarray::{Array1, Array2, ArrayView1, ArrayView2};

fn to_na(a: ArrayView2<f64>) -> DMatrix<f64> {
    DMatrix::from_fn(a.nrows(), a.ncols(), |i, j| a[[i, j]])
}

fn from_na(m: &DMatrix<f64>) -> Array2<f64> {
    Array2::from_shape_fn((m.nrows(), m.ncols()), |(i, j)| m[(i, j)])
}

/// Eigen-decomposition of a symmetric matrix: eigenvalues in descending order and the
/// matching eigenvectors as columns.
pub fn symmetric_eigen(a: ArrayView2<f64>) -> Result<(Array1<f64>, Array2<f64>)> {
    if a.nrows() != a.ncols() {
        return Err(RustymlError::invalid(format!(
            "symmetric_eigen: matrix is {:?}, not square",
            a.dim()
        )));
    }
    if a.iter().any(|v| !v.is_finite()) {
        return Err(RustymlError::Numerical(
            "symmetric_eigen: matrix has NaN or infinite entries".into(),
        ));
    }
    let eig = nalgebra::SymmetricEigen::new(to_na(a));
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
        return Err(RustymlError::invalid(format!(
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
}
