//! The original crate's shared hyper-parameter types: regularisation, kernel and gamma choices.
//! Kernels evaluate through the crate's one kernel engine (`math::kernels`).

use crate::error::{Error, Result};
use crate::math::kernels::Kernel;
use ndarray::{Array2, ArrayRef2, ArrayView1};
use serde::{Deserialize, Serialize};

/// A penalty and its strength.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
pub enum RegularizationType {
    L1(f64),
    L2(f64),
}

/// How a kernel's `gamma` is chosen: the kernel engine's rule, one type for both doors.
pub use crate::math::kernels::Gamma;

/// A kernel function.
#[derive(Debug, Copy, Clone, PartialEq, Deserialize, Serialize)]
pub enum KernelType {
    Linear,
    Poly {
        degree: u32,
        gamma: Gamma,
        coef0: f64,
    },
    RBF {
        gamma: Gamma,
    },
    Sigmoid {
        gamma: Gamma,
        coef0: f64,
    },
    Cosine,
}

impl KernelType {
    /// The same kernel with a concrete `Gamma::Value`.
    pub fn resolve_gamma(&self, n_features: usize, x_variance: f64) -> Result<KernelType> {
        let r = |g: Gamma| g.resolve(n_features, x_variance).map(Gamma::Value);
        Ok(match *self {
            KernelType::Poly {
                degree,
                gamma,
                coef0,
            } => KernelType::Poly {
                degree,
                gamma: r(gamma)?,
                coef0,
            },
            KernelType::RBF { gamma } => KernelType::RBF { gamma: r(gamma)? },
            KernelType::Sigmoid { gamma, coef0 } => KernelType::Sigmoid {
                gamma: r(gamma)?,
                coef0,
            },
            other => other,
        })
    }

    /// Checks the parameters that do not depend on the data.
    pub fn validate(&self) -> Result<()> {
        let gamma_ok = |g: Gamma| match g {
            Gamma::Value(v) if !(v.is_finite() && v > 0.0) => Err(Error::invalid_parameter(
                "gamma",
                format!("must be finite and > 0, got {v}"),
            )),
            _ => Ok(()),
        };
        match *self {
            KernelType::Poly {
                degree,
                gamma,
                coef0,
            } => {
                if degree == 0 {
                    return Err(Error::invalid_parameter("degree", "must be at least 1"));
                }
                if !coef0.is_finite() {
                    return Err(Error::invalid_parameter("coef0", "must be finite"));
                }
                gamma_ok(gamma)
            }
            KernelType::RBF { gamma } => gamma_ok(gamma),
            KernelType::Sigmoid { gamma, coef0 } => {
                if !coef0.is_finite() {
                    return Err(Error::invalid_parameter("coef0", "must be finite"));
                }
                // The original accepts any finite sigmoid gamma (tanh stays bounded).
                match gamma {
                    Gamma::Value(v) if !v.is_finite() => Err(Error::invalid_parameter(
                        "gamma",
                        format!("must be finite, got {v}"),
                    )),
                    _ => Ok(()),
                }
            }
            KernelType::Linear | KernelType::Cosine => Ok(()),
        }
    }

    /// The engine's kernel for a resolved `self` (an unresolved gamma is taken as `Auto`
    /// for `n_features`). `None` for the cosine kernel, which the engine does not carry.
    pub(crate) fn to_engine(self, n_features: usize) -> Option<Kernel> {
        let g = |g: Gamma| match g {
            Gamma::Value(v) => v,
            _ => 1.0 / n_features.max(1) as f64,
        };
        match self {
            KernelType::Linear => Some(Kernel::Linear),
            KernelType::Poly {
                degree,
                gamma,
                coef0,
            } => Some(Kernel::Poly {
                gamma: g(gamma),
                degree,
                coef0,
            }),
            KernelType::RBF { gamma } => Some(Kernel::Rbf { gamma: g(gamma) }),
            KernelType::Sigmoid { gamma, coef0 } => Some(Kernel::Sigmoid {
                gamma: g(gamma),
                coef0,
            }),
            KernelType::Cosine => None,
        }
    }

    /// `k(x1, x2)` for two equal-length vectors.
    pub fn compute(&self, x1: ArrayView1<f64>, x2: ArrayView1<f64>) -> f64 {
        match self.to_engine(x1.len()) {
            Some(k) => k.between(x1, x2),
            None => cosine(x1, x2),
        }
    }

    /// The kernel matrix `K[i, j] = k(x_i, y_j)`.
    pub fn compute_matrix(&self, x: &ArrayRef2<f64>, y: &ArrayRef2<f64>) -> Array2<f64> {
        let (xv, yv) = (x.view(), y.view());
        match self.to_engine(x.ncols()) {
            Some(k) => match k.kernel_matrix(xv, yv) {
                Ok(m) => m,
                // Bad parameters or widths: fall back to the pairwise definition, which
                // yields NaN for unusable parameters rather than hiding them.
                Err(_) => Array2::from_shape_fn((x.nrows(), y.nrows()), |(i, j)| {
                    k.between(xv.row(i), yv.row(j))
                }),
            },
            None => Array2::from_shape_fn((x.nrows(), y.nrows()), |(i, j)| {
                cosine(xv.row(i), yv.row(j))
            }),
        }
    }
}

/// Cosine similarity; 0 when either vector is all zeros (scikit-learn's convention).
fn cosine(a: ArrayView1<f64>, b: ArrayView1<f64>) -> f64 {
    let na = a.dot(&a).sqrt();
    let nb = b.dot(&b).sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        a.dot(&b) / (na * nb)
    }
}
