//! Native `KernelPCA`.

use crate::machine_learning::KernelPCA;
use crate::python::model::native_estimator;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

native_estimator! {
    PyKernelPCA(KernelPCA, "KernelPCA");
    new(n_components: Option<i64>, kernel: &str, gamma: Option<f64>, degree: f64, coef0: f64) {
        let n_components = match n_components {
            Some(k) if k < 1 => {
                return Err(PyValueError::new_err(format!(
                    "n_components must be >= 1 or None, got {k}"
                )))
            }
            k => k.map(|k| k as usize),
        };
        let whole = degree.is_finite() && degree.fract() == 0.0;
        if !(whole && (0.0..=u32::MAX as f64).contains(&degree)) {
            return Err(PyValueError::new_err(format!(
                "degree must be a non-negative integer, got {degree}"
            )));
        }
        Ok(KernelPCA::builder(n_components, kernel)
            .with_gamma(gamma)
            .with_degree(degree as u32)
            .with_coef0(coef0))
    }
    fit(x) => |m, x| m.fit_checked(&x).map(|_| ());
    read transform => |m, x| m.transform_checked(&x);
    write fit_transform => |m, x| m.fit_transform_checked(&x);
    fitted eigenvalues_ => |m| m.eigenvalues().cloned();
    fitted eigenvectors_ => |m| m.eigenvectors().cloned();
    fitted X_fit_ => |m| m.x_fit().cloned();
    fitted gamma_ => |m| m.x_fit().map(|_| m.gamma_used());
}
