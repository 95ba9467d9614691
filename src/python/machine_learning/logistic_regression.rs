//! Native `LogisticRegression`.

use crate::machine_learning::{LogisticRegression, LogisticSolver, Penalty};
use crate::python::model::native_estimator;
use crate::python::params::choice;
use crate::python::{f64_array, to_py_err};
use ndarray::{Ix1, Ix2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// `"l1"`, `"l2"`, and `None` (or `"none"`) where the model can go without a penalty.
pub(super) fn parse_penalty(p: Option<&str>, allow_none: bool) -> PyResult<Penalty> {
    match p {
        None | Some("none") if allow_none => Ok(Penalty::None),
        Some("l1") => Ok(Penalty::L1),
        Some("l2") => Ok(Penalty::L2),
        other => Err(PyValueError::new_err(format!(
            "penalty must be {}'l1' or 'l2', got {other:?}",
            if allow_none { "None, " } else { "" }
        ))),
    }
}

native_estimator! {
    PyLogisticRegression(LogisticRegression, "LogisticRegression");
    new(
        penalty: Option<&str>,
        C: f64,
        fit_intercept: bool,
        max_iter: usize,
        tol: f64,
        solver: &str,
        learning_rate: f64,
    ) {
        let solver = choice(
            "solver",
            solver,
            &[
                ("lbfgs", LogisticSolver::Lbfgs),
                ("gradient_descent", LogisticSolver::GradientDescent),
                ("newton-cholesky", LogisticSolver::NewtonCholesky),
                ("newton-cg", LogisticSolver::NewtonCg),
            ],
        )?;
        Ok(LogisticRegression::with_defaults()
            .with_penalty(parse_penalty(penalty, true)?, C)
            .with_fit_intercept(fit_intercept)
            .with_max_iter(max_iter)
            .with_tol(tol)
            .with_solver(solver)
            .with_learning_rate(learning_rate))
    }
    fit(x, y) => |m, x, y| m.fit(&x, &y).map(|_| ());
    read predict => |m, x| m.predict(&x);
    read predict_proba => |m, x| m.class_probabilities(&x);
    read decision_function => |m, x| m.decision_function(&x);
    fitted classes_ => |m| m.classes().cloned();
    fitted coef_ => |m| m.coefficients().cloned();
    fitted intercept_ => |m| m.intercept().cloned();
    fitted n_iter_ => |m| m.n_iter();
    fitted converged_ => |m| m.converged();
    {
        /// `fit` with one weight per sample (finite, `>= 0`, positive sum): the weighted mean
        /// loss, the penalty over the weight sum (scikit-learn's `sample_weight`).
        fn fit_weighted<'py>(
            &self,
            py: Python<'py>,
            x: &Bound<'py, PyAny>,
            y: &Bound<'py, PyAny>,
            sample_weight: &Bound<'py, PyAny>,
        ) -> PyResult<()> {
            let x = f64_array::<Ix2>(x, "X")?;
            let y = f64_array::<Ix1>(y, "y")?;
            let w = f64_array::<Ix1>(sample_weight, "sample_weight")?;
            let (xv, yv, wv) = (x.view(), y.view(), w.view());
            self.inner
                .write(py, |m| m.fit_weighted(&xv, &yv, Some(wv)).map(|_| ()))
                .map_err(to_py_err)
        }
    }
}
