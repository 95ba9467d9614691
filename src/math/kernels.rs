//! Kernel functions and kernel (Gram) matrices: linear, polynomial, RBF, sigmoid, cosine.
//!
//! Every kernel with a product form goes through the product (`a · bᵀ` on gemmkit), then one
//! elementwise map; RBF goes through the product-based squared euclidean distances of
//! [`crate::math::distance`]. Definitions follow scikit-learn's `pairwise_kernels`:
//!
//! | kernel | `k(x, y)` |
//! |---|---|
//! | linear | `x·y` |
//! | poly | `(gamma x·y + coef0)^degree` |
//! | rbf | `exp(-gamma |x - y|^2)` |
//! | sigmoid | `tanh(gamma x·y + coef0)` |
//! | cosine | `x·y / (|x| |y|)` (0 for a zero row) |
//!
//! `gamma = None` means `1 / n_features`, resolved from the operands when the matrix is built.

use crate::error::{Result, RustymlError};
use crate::math::{distance, matmul};
use ndarray::{Array2, ArrayView2, Axis, Zip};
use serde::{Deserialize, Serialize};

/// A kernel function with its hyper-parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Kernel {
    Linear,
    Poly {
        degree: f64,
        gamma: Option<f64>,
        coef0: f64,
    },
    Rbf {
        gamma: Option<f64>,
    },
    Sigmoid {
        gamma: Option<f64>,
        coef0: f64,
    },
    Cosine,
}

impl Kernel {
    /// Parse a scikit-learn kernel name (`"linear"`, `"poly"`/`"polynomial"`, `"rbf"`,
    /// `"sigmoid"`, `"cosine"`) with its parameters; parameters a kernel does not use are
    /// ignored. Refuses unknown names and invalid parameters.
    pub fn parse(name: &str, gamma: Option<f64>, degree: f64, coef0: f64) -> Result<Self> {
        let kernel = match name {
            "linear" => Kernel::Linear,
            "poly" | "polynomial" => Kernel::Poly { degree, gamma, coef0 },
            "rbf" => Kernel::Rbf { gamma },
            "sigmoid" => Kernel::Sigmoid { gamma, coef0 },
            "cosine" => Kernel::Cosine,
            other => {
                return Err(RustymlError::invalid(format!(
                    "unknown kernel {other:?}; expected one of 'linear', 'poly', 'rbf', 'sigmoid', 'cosine'"
                )))
            }
        };
        kernel.validate()?;
        Ok(kernel)
    }

    /// The scikit-learn name of this kernel.
    pub fn name(&self) -> &'static str {
        match self {
            Kernel::Linear => "linear",
            Kernel::Poly { .. } => "poly",
            Kernel::Rbf { .. } => "rbf",
            Kernel::Sigmoid { .. } => "sigmoid",
            Kernel::Cosine => "cosine",
        }
    }

    /// Check the hyper-parameters: `gamma` finite and > 0 when given (RBF, poly, sigmoid;
    /// scikit-learn allows `gamma >= 0`, but 0 makes every kernel constant), `degree`
    /// finite and >= 0, `coef0` finite.
    pub fn validate(&self) -> Result<()> {
        let check_gamma = |g: &Option<f64>| match g {
            Some(g) if !(g.is_finite() && *g > 0.0) => Err(RustymlError::invalid(format!(
                "gamma must be a finite number > 0, got {g}"
            ))),
            _ => Ok(()),
        };
        let check_coef0 = |c: f64| {
            if c.is_finite() {
                Ok(())
            } else {
                Err(RustymlError::invalid(format!(
                    "coef0 must be finite, got {c}"
                )))
            }
        };
        match self {
            Kernel::Linear | Kernel::Cosine => Ok(()),
            Kernel::Poly {
                degree,
                gamma,
                coef0,
            } => {
                if !(degree.is_finite() && *degree >= 0.0) {
                    return Err(RustymlError::invalid(format!(
                        "degree must be a finite number >= 0, got {degree}"
                    )));
                }
                check_gamma(gamma)?;
                check_coef0(*coef0)
            }
            Kernel::Rbf { gamma } => check_gamma(gamma),
            Kernel::Sigmoid { gamma, coef0 } => {
                check_gamma(gamma)?;
                check_coef0(*coef0)
            }
        }
    }

    /// `gamma` as used for inputs with `n_features` columns (`1 / n_features` when unset).
    pub fn resolved_gamma(&self, n_features: usize) -> Option<f64> {
        let resolve = |g: &Option<f64>| Some(g.unwrap_or(1.0 / n_features.max(1) as f64));
        match self {
            Kernel::Poly { gamma, .. } | Kernel::Rbf { gamma } | Kernel::Sigmoid { gamma, .. } => {
                resolve(gamma)
            }
            Kernel::Linear | Kernel::Cosine => None,
        }
    }

    /// `k(a_i, b_j)` for every row of `a` and `b` (`a.nrows() x b.nrows()`).
    pub fn kernel_matrix(&self, a: ArrayView2<f64>, b: ArrayView2<f64>) -> Array2<f64> {
        self.matrix(a, b, false)
    }

    /// Fallible form of [`Kernel::kernel_matrix`]: refuses operands with different numbers of
    /// columns or invalid hyper-parameters instead of panicking.
    pub fn try_kernel_matrix(&self, a: ArrayView2<f64>, b: ArrayView2<f64>) -> Result<Array2<f64>> {
        self.validate()?;
        if a.ncols() != b.ncols() {
            return Err(RustymlError::invalid(format!(
                "kernel: inputs have different numbers of features ({} and {})",
                a.ncols(),
                b.ncols()
            )));
        }
        Ok(self.matrix(a, b, false))
    }

    /// The symmetric Gram matrix `k(x_i, x_j)` of one set of rows. Exactly symmetric, and for
    /// RBF the diagonal distances are exactly zero (as scikit-learn's `euclidean_distances`
    /// sets them when `Y is X`).
    pub fn gram_matrix(&self, x: ArrayView2<f64>) -> Array2<f64> {
        self.matrix(x, x, true)
    }

    fn matrix(&self, a: ArrayView2<f64>, b: ArrayView2<f64>, same: bool) -> Array2<f64> {
        assert_eq!(
            a.ncols(),
            b.ncols(),
            "kernel_matrix: operands have different numbers of columns"
        );
        let gamma = self.resolved_gamma(a.ncols());
        let par = matmul::nested_parallelism();
        let mut k = match self {
            Kernel::Rbf { .. } => {
                let mut d =
                    distance::pairwise_squared_euclidean(a, b).expect("columns checked above");
                if same {
                    symmetrize(&mut d);
                    d.diag_mut().fill(0.0);
                }
                let g = gamma.expect("rbf has a gamma");
                // TODO(lead): exp-heavy map; gate with elementwise::exp_map_f64 once it lands.
                d.mapv_inplace(|v| (-g * v).exp());
                return d;
            }
            Kernel::Cosine => {
                let an = unit_rows(a);
                let bn = if same { an.clone() } else { unit_rows(b) };
                matmul::dot_par(an.view(), bn.t(), par).expect("columns checked above")
            }
            _ => matmul::dot_par(a, b.t(), par).expect("columns checked above"),
        };
        if same {
            symmetrize(&mut k);
        }
        match *self {
            Kernel::Poly { degree, coef0, .. } => {
                let g = gamma.expect("poly has a gamma");
                if degree.fract() == 0.0 && degree.abs() <= i32::MAX as f64 {
                    let d = degree as i32;
                    k.mapv_inplace(|v| (g * v + coef0).powi(d));
                } else {
                    k.mapv_inplace(|v| (g * v + coef0).powf(degree));
                }
            }
            Kernel::Sigmoid { coef0, .. } => {
                let g = gamma.expect("sigmoid has a gamma");
                k.mapv_inplace(|v| (g * v + coef0).tanh());
            }
            _ => {}
        }
        k
    }
}

/// Rows scaled to unit euclidean norm; zero rows stay zero (scikit-learn's `normalize`).
fn unit_rows(x: ArrayView2<f64>) -> Array2<f64> {
    let mut out = x.to_owned();
    for mut row in out.axis_iter_mut(Axis(0)) {
        let norm = row.dot(&row).sqrt();
        if norm > 0.0 {
            row.mapv_inplace(|v| v / norm);
        }
    }
    out
}

/// Replace a square matrix by `(m + mᵀ) / 2`, so both triangles hold the same bits.
fn symmetrize(m: &mut Array2<f64>) {
    let n = m.nrows();
    for i in 0..n {
        for j in 0..i {
            let v = 0.5 * (m[[i, j]] + m[[j, i]]);
            m[[i, j]] = v;
            m[[j, i]] = v;
        }
    }
}

/// Center a kernel matrix in feature space, as scikit-learn's `KernelCenterer`:
/// `k - col_mean[None, :] - row_sum[:, None] / n_fit + all_mean`, with `col_mean` and
/// `all_mean` taken from the training kernel.
pub fn center_kernel(k: &mut Array2<f64>, fit_col_means: &ndarray::Array1<f64>, fit_all_mean: f64) {
    let n_fit = fit_col_means.len() as f64;
    Zip::from(k.rows_mut()).for_each(|mut row| {
        let row_mean = row.sum() / n_fit;
        Zip::from(&mut row)
            .and(fit_col_means)
            .for_each(|v, &c| *v = *v - c - row_mean + fit_all_mean);
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn kernels_match_hand_computed_values() {
        let a = array![[1.0, 2.0], [0.0, -1.0]];
        let b = array![[3.0, 1.0]];
        // x·y: [5, -1]
        let lin = Kernel::Linear.kernel_matrix(a.view(), b.view());
        assert_eq!(lin, array![[5.0], [-1.0]]);
        let poly = Kernel::parse("poly", Some(0.5), 2.0, 1.0)
            .unwrap()
            .kernel_matrix(a.view(), b.view());
        assert_eq!(poly, array![[(2.5f64 + 1.0).powi(2)], [(0.5f64).powi(2)]]);
        // default gamma = 1 / 2 features
        let poly_default = Kernel::parse("poly", None, 3.0, 1.0)
            .unwrap()
            .kernel_matrix(a.view(), b.view());
        assert!((poly_default[[0, 0]] - 3.5f64.powi(3)).abs() < 1e-12);
        let rbf = Kernel::parse("rbf", Some(0.1), 3.0, 1.0)
            .unwrap()
            .kernel_matrix(a.view(), b.view());
        // |x - y|^2: [4 + 1, 9 + 4]
        assert!((rbf[[0, 0]] - (-0.5f64).exp()).abs() < 1e-15);
        assert!((rbf[[1, 0]] - (-1.3f64).exp()).abs() < 1e-15);
        let sig = Kernel::parse("sigmoid", Some(0.2), 3.0, -1.0)
            .unwrap()
            .kernel_matrix(a.view(), b.view());
        assert!((sig[[0, 0]] - 0.0f64.tanh()).abs() < 1e-15);
        assert!((sig[[1, 0]] - (-1.2f64).tanh()).abs() < 1e-15);
        let cos = Kernel::Cosine.kernel_matrix(a.view(), b.view());
        assert!((cos[[0, 0]] - 5.0 / (5f64.sqrt() * 10f64.sqrt())).abs() < 1e-15);
        let zero = Kernel::Cosine.kernel_matrix(array![[0.0, 0.0]].view(), b.view());
        assert_eq!(zero[[0, 0]], 0.0);
    }

    #[test]
    fn gram_matrices_are_symmetric_with_unit_rbf_diagonal() {
        let x = ndarray::Array2::from_shape_fn((23, 5), |(i, j)| {
            ((i * 5 + j) as f64 * 0.77).sin() * 3.0 + 10.0
        });
        for kernel in [
            Kernel::Linear,
            Kernel::parse("poly", None, 3.0, 1.0).unwrap(),
            Kernel::parse("rbf", Some(0.3), 3.0, 1.0).unwrap(),
            Kernel::parse("sigmoid", Some(0.01), 3.0, 0.5).unwrap(),
            Kernel::Cosine,
        ] {
            let k = kernel.gram_matrix(x.view());
            let full = kernel.kernel_matrix(x.view(), x.view());
            for i in 0..23 {
                for j in 0..23 {
                    assert_eq!(k[[i, j]].to_bits(), k[[j, i]].to_bits());
                    assert!(
                        (k[[i, j]] - full[[i, j]]).abs() <= 1e-9 * full[[i, j]].abs().max(1.0),
                        "{kernel:?}"
                    );
                }
            }
            if matches!(kernel, Kernel::Rbf { .. }) {
                assert!(k.diag().iter().all(|&v| v == 1.0));
            }
        }
    }

    #[test]
    fn bad_names_and_parameters_are_refused() {
        assert!(Kernel::parse("laplacian", None, 3.0, 1.0).is_err());
        assert!(Kernel::parse("rbf", Some(-1.0), 3.0, 1.0).is_err());
        assert!(Kernel::parse("poly", None, f64::NAN, 1.0).is_err());
        assert!(Kernel::parse("sigmoid", None, 3.0, f64::INFINITY).is_err());
        let a = array![[1.0, 2.0]];
        let b = array![[1.0]];
        assert!(Kernel::Linear
            .try_kernel_matrix(a.view(), b.view())
            .is_err());
    }

    #[test]
    fn centering_matches_explicit_double_centering() {
        let x = ndarray::Array2::from_shape_fn((9, 3), |(i, j)| ((i * 3 + j) as f64 * 1.3).cos());
        let k = Kernel::parse("rbf", Some(0.5), 3.0, 1.0)
            .unwrap()
            .gram_matrix(x.view());
        let n = 9.0;
        let col_means = k.mean_axis(Axis(0)).unwrap();
        let all = col_means.sum() / n;
        let mut c = k.clone();
        center_kernel(&mut c, &col_means, all);
        // Oracle: H K H with H = I - 1/n.
        let h = ndarray::Array2::from_shape_fn(
            (9, 9),
            |(i, j)| if i == j { 1.0 } else { 0.0 } - 1.0 / n,
        );
        let want = h.dot(&k).dot(&h);
        for (g, w) in c.iter().zip(want.iter()) {
            assert!((g - w).abs() < 1e-14);
        }
    }
}
