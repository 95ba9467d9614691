//! Native `LogisticRegression`.

use crate::machine_learning::logistic_newton::NewtonStop;
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

/// `stop_`'s word for how a Newton run ended: `"converged"`, `"max_iter"` (cut by
/// `max_iter`) or `"handover"` (where scikit-learn goes on otherwise, or a decision within
/// rounding); `None` for the other solvers.
fn stop_name(stop: NewtonStop) -> &'static str {
    match stop {
        NewtonStop::Converged => "converged",
        NewtonStop::MaxIter => "max_iter",
        NewtonStop::Handover => "handover",
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
    fitted stop_ => |m| m.n_iter().map(|_| m.newton_stop().map(stop_name));
    {
        /// `fit` with one weight per sample (finite, `>= 0`, positive sum; `None`: all ones):
        /// the weighted mean loss, the penalty over the weight sum (scikit-learn's
        /// `sample_weight`); started at `start_coef` (one row per output) and
        /// `start_intercept` instead of zero where given (scikit-learn's `warm_start`).
        #[pyo3(signature = (x, y, sample_weight, *, start_coef=None, start_intercept=None))]
        fn fit_weighted<'py>(
            &self,
            py: Python<'py>,
            x: &Bound<'py, PyAny>,
            y: &Bound<'py, PyAny>,
            sample_weight: Option<&Bound<'py, PyAny>>,
            start_coef: Option<&Bound<'py, PyAny>>,
            start_intercept: Option<&Bound<'py, PyAny>>,
        ) -> PyResult<()> {
            if start_coef.is_none() && start_intercept.is_some() {
                return Err(PyValueError::new_err(
                    "start_intercept needs start_coef (the start is both)",
                ));
            }
            let x = f64_array::<Ix2>(x, "X")?;
            let y = f64_array::<Ix1>(y, "y")?;
            let w = sample_weight
                .map(|w| f64_array::<Ix1>(w, "sample_weight"))
                .transpose()?;
            let coef = start_coef
                .map(|c| f64_array::<Ix2>(c, "start_coef"))
                .transpose()?;
            let intercept = start_intercept
                .map(|b| f64_array::<Ix1>(b, "start_intercept"))
                .transpose()?;
            let (xv, yv) = (x.view(), y.view());
            let wv = w.as_ref().map(|w| w.view());
            let start = coef
                .as_ref()
                .map(|c| (c.view(), intercept.as_ref().map(|b| b.view())));
            self.inner
                .write(py, |m| m.fit_weighted_from(&xv, &yv, wv, start).map(|_| ()))
                .map_err(to_py_err)
        }
    }
}
