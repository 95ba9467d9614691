//! Kernel functions and kernel matrices (linear, polynomial, RBF, sigmoid), shared by SVC
//! and KernelPCA.
//!
//! Kernel matrices are product-based: the linear, polynomial and sigmoid kernels map the
//! product `a·bᵀ` (gemmkit through [`matmul`]), the RBF kernel maps the product-form squared
//! distances of [`distance::pairwise_squared_euclidean`]. The exp/tanh maps run through the
//! gated elementwise engine ([`elementwise::exp_map_inplace`]).

use crate::error::{Error, Result};
use crate::math::{distance, elementwise, matmul, reduction};
use crate::validation::{check_power_sum_range, max_abs};
use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Zip};
use serde::{Deserialize, Serialize};

/// A positive-semi-definite-ish kernel with its parameters resolved to numbers.
///
/// * `Linear`: `k(a, b) = a·b`
/// * `Poly`: `k(a, b) = (gamma a·b + coef0)^degree`
/// * `Rbf`: `k(a, b) = exp(-gamma |a - b|^2)`
/// * `Sigmoid`: `k(a, b) = tanh(gamma a·b + coef0)`
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Kernel {
    Linear,
    Poly { gamma: f64, degree: u32, coef0: f64 },
    Rbf { gamma: f64 },
    Sigmoid { gamma: f64, coef0: f64 },
}

impl Kernel {
    /// Build a kernel from a scikit-learn name (`"linear"`, `"poly"`, `"rbf"`, `"sigmoid"`)
    /// and its parameters (each kernel ignores the ones it does not use). `gamma` must be
    /// finite and `> 0` for the kernels that use it, `coef0` finite.
    pub fn parse(name: &str, gamma: f64, degree: u32, coef0: f64) -> Result<Self> {
        let kernel = match name {
            "linear" => Kernel::Linear,
            "poly" | "polynomial" => Kernel::Poly {
                gamma,
                degree,
                coef0,
            },
            "rbf" | "gaussian" => Kernel::Rbf { gamma },
            "sigmoid" => Kernel::Sigmoid { gamma, coef0 },
            other => {
                return Err(Error::invalid_input(format!(
                    "unknown kernel {other:?}; expected one of 'linear', 'poly', 'rbf', 'sigmoid'"
                )))
            }
        };
        kernel.validate()?;
        Ok(kernel)
    }

    /// Check the parameters (what [`Kernel::parse`] checks), for kernels built directly.
    pub fn validate(&self) -> Result<()> {
        let check_gamma = |gamma: f64| {
            if gamma.is_finite() && gamma > 0.0 {
                Ok(())
            } else {
                Err(Error::invalid_input(format!(
                    "kernel gamma must be a finite number > 0, got {gamma}"
                )))
            }
        };
        let check_coef0 = |coef0: f64| {
            if coef0.is_finite() {
                Ok(())
            } else {
                Err(Error::invalid_input(format!(
                    "kernel coef0 must be finite, got {coef0}"
                )))
            }
        };
        match *self {
            Kernel::Linear => Ok(()),
            Kernel::Poly { gamma, coef0, .. } => check_gamma(gamma).and(check_coef0(coef0)),
            Kernel::Rbf { gamma } => check_gamma(gamma),
            Kernel::Sigmoid { gamma, coef0 } => check_gamma(gamma).and(check_coef0(coef0)),
        }
    }

    /// The scikit-learn name of the kernel.
    pub fn name(&self) -> &'static str {
        match self {
            Kernel::Linear => "linear",
            Kernel::Poly { .. } => "poly",
            Kernel::Rbf { .. } => "rbf",
            Kernel::Sigmoid { .. } => "sigmoid",
        }
    }

    /// `k(a, b)` for two equal-length vectors (lengths unchecked).
    #[inline]
    pub fn between(&self, a: ArrayView1<f64>, b: ArrayView1<f64>) -> f64 {
        match *self {
            Kernel::Linear => a.dot(&b),
            Kernel::Poly {
                gamma,
                degree,
                coef0,
            } => poly(gamma * a.dot(&b) + coef0, degree),
            Kernel::Rbf { gamma } => {
                let d2 = Zip::from(&a)
                    .and(&b)
                    .fold(0.0, |s, &x, &y| s + (x - y) * (x - y));
                (-gamma * d2).exp()
            }
            Kernel::Sigmoid { gamma, coef0 } => (gamma * a.dot(&b) + coef0).tanh(),
        }
    }

    /// Refuse `x` (named `name`) when this kernel's values on it, or a sum of `n_terms` of
    /// them (a decision function, an SMO gradient), would overflow f64: the products and
    /// distances behind every kernel need `|x|` within [`check_power_sum_range`]'s bound, and
    /// the linear and polynomial kernels' own values are bounded above by
    /// `(gamma * n_features * max|x|^2 + |coef0|)^degree`. NaN in `x` is another check's.
    pub fn check_range(&self, x: &ArrayView2<f64>, name: &str, n_terms: usize) -> Result<()> {
        check_power_sum_range(x, 2.0, name, "kernel values")?;
        let largest = max_abs(x);
        let dot_bound = x.ncols() as f64 * largest * largest;
        let (bound, knobs) = match *self {
            Kernel::Linear => (dot_bound, "the features' scale"),
            Kernel::Poly {
                gamma,
                degree,
                coef0,
            } => (
                poly(gamma * dot_bound + coef0.abs(), degree),
                "gamma, coef0 or degree, or the features' scale",
            ),
            Kernel::Rbf { .. } | Kernel::Sigmoid { .. } => return Ok(()),
        };
        if !(bound * n_terms.max(1) as f64).is_finite() {
            return Err(Error::invalid_input(format!(
                "{} kernel values on {name} can reach {bound:e}, and sums of {n_terms} of them \
                 overflow float64: lower {knobs}",
                self.name()
            )));
        }
        Ok(())
    }

    /// The kernel matrix `K[i, j] = k(a_i, b_j)` (`a.nrows() x b.nrows()`).
    pub fn kernel_matrix(&self, a: ArrayView2<f64>, b: ArrayView2<f64>) -> Result<Array2<f64>> {
        self.validate()?;
        if a.ncols() != b.ncols() {
            return Err(Error::invalid_input(format!(
                "kernel: inputs have different numbers of features ({} and {})",
                a.ncols(),
                b.ncols()
            )));
        }
        let n_terms = a.nrows().max(b.nrows());
        self.check_range(&a, "X", n_terms)?;
        self.check_range(&b, "X", n_terms)?;
        let product = || matmul::dot_par(a, b.t(), matmul::nested_parallelism());
        let k = match *self {
            Kernel::Linear => product()?,
            Kernel::Poly {
                gamma,
                degree,
                coef0,
            } => {
                let mut k = product()?;
                // A few multiplications per element: a cheap map, not an exp map.
                k.mapv_inplace(|v| poly(gamma * v + coef0, degree));
                k
            }
            Kernel::Rbf { gamma } => {
                let mut k = distance::pairwise_squared_euclidean(a, b)?;
                elementwise::exp_map_inplace(&mut k, |d2| (-gamma * d2).exp());
                k
            }
            Kernel::Sigmoid { gamma, coef0 } => {
                let mut k = product()?;
                elementwise::exp_map_inplace(&mut k, |v| (gamma * v + coef0).tanh());
                k
            }
        };
        Ok(k)
    }

    /// The symmetric Gram matrix `K[i, j] = k(x_i, x_j)`. Same as
    /// `kernel_matrix(x, x)`, except that the RBF diagonal is exactly 1 (the product form of
    /// the distances leaves rounding noise where the distance is exactly zero).
    pub fn gram(&self, x: ArrayView2<f64>) -> Result<Array2<f64>> {
        if let Kernel::Rbf { gamma } = *self {
            self.validate()?;
            self.check_range(&x, "X", x.nrows())?;
            let mut k = distance::pairwise_squared_euclidean(x, x)?;
            k.diag_mut().fill(0.0);
            elementwise::exp_map_inplace(&mut k, |d2| (-gamma * d2).exp());
            return Ok(k);
        }
        self.kernel_matrix(x, x)
    }

    /// `k(x_i, x_i)` for every row of `x`.
    pub fn diagonal(&self, x: ArrayView2<f64>) -> Array1<f64> {
        match *self {
            Kernel::Rbf { .. } => Array1::ones(x.nrows()),
            _ => Array1::from_iter(x.outer_iter().map(|r| self.between(r, r))),
        }
    }
}

/// `base^degree` with `0^0 = 1` (as numpy's `**` and scikit-learn's polynomial kernel).
#[inline]
fn poly(base: f64, degree: u32) -> f64 {
    base.powi(degree as i32)
}

/// The kernel matrix of `kernel` between the rows of `a` and `b` (free-function form of
/// [`Kernel::kernel_matrix`]).
pub fn kernel_matrix(
    kernel: &Kernel,
    a: ArrayView2<f64>,
    b: ArrayView2<f64>,
) -> Result<Array2<f64>> {
    kernel.kernel_matrix(a, b)
}

/// How `gamma` is chosen, as in scikit-learn's SVC.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Gamma {
    /// `1 / (n_features * X.var())` (1 when `X` is constant).
    Scale,
    /// `1 / n_features`.
    Auto,
    /// A fixed value (`> 0`).
    Value(f64),
}

impl Gamma {
    /// Parse `"scale"`, `"auto"` or a number written as a string.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "scale" => Ok(Gamma::Scale),
            "auto" => Ok(Gamma::Auto),
            other => match other.parse::<f64>() {
                Ok(v) => Gamma::value(v),
                Err(_) => Err(Error::invalid_input(format!(
                    "gamma must be 'scale', 'auto' or a number > 0, got {other:?}"
                ))),
            },
        }
    }

    /// A fixed gamma, checked finite and `> 0`.
    pub fn value(v: f64) -> Result<Self> {
        if v.is_finite() && v > 0.0 {
            Ok(Gamma::Value(v))
        } else {
            Err(Error::invalid_input(format!(
                "gamma must be a finite number > 0, got {v}"
            )))
        }
    }

    /// The concrete value for data with `n_features` columns whose overall variance is
    /// `x_variance`.
    pub fn resolve(self, n_features: usize, x_variance: f64) -> Result<f64> {
        let d = n_features as f64;
        let value = match self {
            Gamma::Value(v) => v,
            Gamma::Auto => {
                if n_features == 0 {
                    return Err(Error::invalid_parameter(
                        "gamma",
                        "auto needs at least 1 feature",
                    ));
                }
                1.0 / d
            }
            Gamma::Scale => {
                if n_features == 0 {
                    return Err(Error::invalid_parameter(
                        "gamma",
                        "scale needs at least 1 feature",
                    ));
                }
                // Constant data has no scale; scikit-learn falls back to 1.
                if x_variance > 0.0 && x_variance.is_finite() {
                    1.0 / (d * x_variance)
                } else {
                    1.0
                }
            }
        };
        if value.is_finite() && value > 0.0 {
            Ok(value)
        } else {
            Err(Error::invalid_parameter(
                "gamma",
                format!("must be finite and > 0, got {value}"),
            ))
        }
    }

    /// The number this rule gives on the training data `x` (its variance over every element).
    pub fn value_on(&self, x: ArrayView2<f64>) -> f64 {
        let d = x.ncols().max(1) as f64;
        match *self {
            Gamma::Value(v) => v,
            Gamma::Auto => 1.0 / d,
            Gamma::Scale => {
                // Variance over every element: Chan-merge the per-column moments.
                let all = reduction::column_moments(x)
                    .into_iter()
                    .fold(reduction::Moments::default(), reduction::Moments::merge);
                let var = all.variance();
                if var > 0.0 && var.is_finite() {
                    1.0 / (d * var)
                } else {
                    1.0
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::serial_and_parallel;
    use crate::math::bits;
    use ndarray::array;

    fn points(n: usize, d: usize, seed: usize) -> Array2<f64> {
        crate::math::lattice_points(n, d, seed, 25.0, 2.0)
    }

    #[test]
    fn hand_computed_kernel_values() {
        let a = array![1.0, 2.0];
        let b = array![3.0, -1.0];
        // a·b = 1, |a-b|^2 = 4 + 9 = 13
        assert_eq!(Kernel::Linear.between(a.view(), b.view()), 1.0);
        let p = Kernel::parse("poly", 0.5, 3, 1.0).unwrap();
        assert_eq!(p.between(a.view(), b.view()), 1.5f64.powi(3));
        let r = Kernel::parse("rbf", 0.1, 3, 0.0).unwrap();
        assert!((r.between(a.view(), b.view()) - (-1.3f64).exp()).abs() < 1e-16);
        let s = Kernel::parse("sigmoid", 2.0, 3, -1.0).unwrap();
        assert!((s.between(a.view(), b.view()) - 1f64.tanh()).abs() < 1e-16);
    }

    #[test]
    fn kernel_matrices_match_pairwise_evaluation() {
        let a = points(23, 4, 1);
        let b = points(17, 4, 2);
        for kernel in [
            Kernel::Linear,
            Kernel::Poly {
                gamma: 0.3,
                degree: 3,
                coef0: 1.0,
            },
            Kernel::Rbf { gamma: 0.4 },
            Kernel::Sigmoid {
                gamma: 0.05,
                coef0: 0.5,
            },
        ] {
            let k = kernel.kernel_matrix(a.view(), b.view()).unwrap();
            assert_eq!(k.dim(), (23, 17));
            for i in 0..23 {
                for j in 0..17 {
                    let want = kernel.between(a.row(i), b.row(j));
                    // Product-form distances/products round differently from the direct
                    // formula; 1e-12 relative to the unit-scale values is ample.
                    assert!(
                        (k[[i, j]] - want).abs() < 1e-12,
                        "{kernel:?} {i} {j}: {} vs {want}",
                        k[[i, j]]
                    );
                }
            }
            let g = kernel.gram(a.view()).unwrap();
            let diag = kernel.diagonal(a.view());
            for i in 0..23 {
                assert!((g[[i, i]] - diag[i]).abs() < 1e-12);
            }
        }
        let g = Kernel::Rbf { gamma: 0.4 }.gram(a.view()).unwrap();
        assert!(g.diag().iter().all(|&v| v == 1.0));
    }

    #[test]
    fn kernel_maps_agree_bitwise_serial_and_parallel() {
        let a = points(300, 5, 3);
        let b = points(250, 5, 4);
        for kernel in [
            Kernel::Rbf { gamma: 0.2 },
            Kernel::Sigmoid {
                gamma: 0.1,
                coef0: -0.3,
            },
        ] {
            let (s, p) = serial_and_parallel(&elementwise::EXP_MAP_F64, || {
                kernel.kernel_matrix(a.view(), b.view()).unwrap()
            });
            assert_eq!(bits(&s), bits(&p));
        }
    }

    #[test]
    fn bad_names_and_parameters_are_refused() {
        assert!(Kernel::parse("cosine", 1.0, 3, 0.0).is_err());
        assert!(Kernel::parse("rbf", 0.0, 3, 0.0).is_err());
        assert!(Kernel::parse("rbf", f64::NAN, 3, 0.0).is_err());
        assert!(Kernel::parse("poly", 1.0, 3, f64::INFINITY).is_err());
        assert!(Kernel::parse("linear", f64::NAN, 3, 0.0).is_ok());
        assert!(Kernel::Linear
            .kernel_matrix(points(2, 3, 0).view(), points(2, 4, 0).view())
            .is_err());
        assert!(Gamma::parse("often").is_err());
        assert!(Gamma::parse("-1").is_err());
        assert_eq!(Gamma::parse("0.5").unwrap(), Gamma::Value(0.5));
    }

    #[test]
    fn gamma_rules_follow_scikit_learn() {
        // X = [[0, 2], [2, 4]]: elements 0, 2, 2, 4 have variance 2, so scale = 1/(2*2).
        let x = array![[0.0, 2.0], [2.0, 4.0]];
        assert!((Gamma::Scale.value_on(x.view()) - 0.25).abs() < 1e-15);
        assert_eq!(Gamma::Auto.value_on(x.view()), 0.5);
        assert_eq!(
            Gamma::Scale.value_on(Array2::<f64>::ones((3, 2)).view()),
            1.0
        );
    }
}
