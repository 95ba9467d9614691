//! Native `SVC`.

use crate::machine_learning::{DecisionShape, SVC};
use crate::math::kernels::{Gamma, Kernel};
use crate::python::model::{index_array, native_estimator};
use crate::python::params::choice;
use crate::python::to_py_err;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBool;

fn parse_gamma(gamma: &Bound<'_, PyAny>) -> PyResult<Gamma> {
    if let Ok(s) = gamma.extract::<String>() {
        return Gamma::parse(&s).map_err(to_py_err);
    }
    if gamma.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(
            "gamma must be 'scale', 'auto' or a number > 0, got a bool",
        ));
    }
    let v: f64 = gamma
        .extract()
        .map_err(|_| PyTypeError::new_err("gamma must be 'scale', 'auto' or a number > 0"))?;
    Gamma::value(v).map_err(to_py_err)
}

native_estimator! {
    PySVC(SVC, "SVC");
    new(
        C: f64,
        kernel: &str,
        degree: u32,
        gamma: &Bound<'_, PyAny>,
        coef0: f64,
        tol: f64,
        cache_size: f64,
        max_iter: i64,
        decision_function_shape: &str,
    ) {
        let shape = choice(
            "decision_function_shape",
            decision_function_shape,
            &[("ovr", DecisionShape::Ovr), ("ovo", DecisionShape::Ovo)],
        )?;
        let max_iter = match max_iter {
            -1 => None,
            n if n >= 1 => Some(n as usize),
            n => {
                return Err(PyValueError::new_err(format!(
                    "max_iter must be -1 (no limit) or a positive integer, got {n}"
                )))
            }
        };
        // Refuse an unknown kernel name here already (fit checks it again with the data).
        Kernel::parse(kernel, 1.0, degree, coef0).map_err(to_py_err)?;
        Ok(SVC::with_defaults()
            .with_c(C)
            .with_kernel(kernel)
            .with_degree(degree)
            .with_gamma(parse_gamma(gamma)?)
            .with_coef0(coef0)
            .with_tol(tol)
            .with_cache_size(cache_size)
            .with_max_iter(max_iter)
            .with_decision_shape(shape))
    }
    fit(x, y) => |m, x, y| m.fit(&x, &y).map(|_| ());
    read predict => |m, x| m.predict(&x);
    read decision_function => |m, x| m.decision_scores(x);
    fitted classes_ => |m| m.classes().cloned();
    fitted support_ => |m| m.support().map(index_array);
    fitted support_vectors_ => |m| m.support_vectors().cloned();
    fitted n_support_ => |m| m.n_support().map(index_array);
    fitted dual_coef_ => |m| m.dual_coef();
    fitted intercept_ => |m| m.intercept();
    // primal weights for the linear kernel; None for the other kernels
    fitted coef_ => |m| m.classes().map(|_| m.coefficients());
    fitted n_iter_ => |m| m.n_iter().map(index_array);
    fitted converged_ => |m| m.converged();
    // the numeric gamma the fitted kernel uses (`_gamma` in scikit-learn)
    fitted gamma_ => |m| m.fitted_kernel().map(|k| match k {
        Kernel::Linear => None,
        Kernel::Poly { gamma, .. } | Kernel::Rbf { gamma } | Kernel::Sigmoid { gamma, .. } => {
            Some(gamma)
        }
    });
}
