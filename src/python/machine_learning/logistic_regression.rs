//! Native `LogisticRegression`.

use crate::machine_learning::{LogisticRegression, LogisticSolver, Penalty};
use crate::persistence::Persist;
use crate::python::{f64_array, to_py_err};
use ndarray::{Ix1, Ix2};
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

#[pyclass(
    name = "LogisticRegression",
    module = "rustyml._native.machine_learning"
)]
pub(crate) struct PyLogisticRegression {
    inner: LogisticRegression,
}

pub(crate) fn parse_penalty(p: Option<&str>, allow_none: bool) -> PyResult<Penalty> {
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

fn parse_solver(s: &str) -> PyResult<LogisticSolver> {
    match s {
        "lbfgs" => Ok(LogisticSolver::Lbfgs),
        "gradient_descent" => Ok(LogisticSolver::GradientDescent),
        other => Err(PyValueError::new_err(format!(
            "solver must be 'lbfgs' or 'gradient_descent', got {other:?}"
        ))),
    }
}

fn not_fitted() -> PyErr {
    to_py_err(crate::RustymlError::not_fitted("LogisticRegression"))
}

#[pymethods]
impl PyLogisticRegression {
    #[new]
    #[pyo3(signature = (penalty = Some("l2"), C = 1.0, fit_intercept = true, max_iter = 100, tol = 1e-4, solver = "lbfgs", learning_rate = 0.1))]
    #[allow(non_snake_case)]
    fn new(
        penalty: Option<&str>,
        C: f64,
        fit_intercept: bool,
        max_iter: usize,
        tol: f64,
        solver: &str,
        learning_rate: f64,
    ) -> PyResult<Self> {
        let inner = LogisticRegression::with_defaults()
            .with_penalty(parse_penalty(penalty, true)?, C)
            .with_fit_intercept(fit_intercept)
            .with_max_iter(max_iter)
            .with_tol(tol)
            .with_solver(parse_solver(solver)?)
            .with_learning_rate(learning_rate);
        Ok(Self { inner })
    }

    fn fit(&mut self, py: Python<'_>, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> PyResult<()> {
        let x = f64_array::<Ix2>(x, "X")?;
        let y = f64_array::<Ix1>(y, "y")?;
        let (xv, yv) = (x.view(), y.view());
        let model = &mut self.inner;
        crate::python::parallel::detach(py, || model.fit(&xv, &yv).map(|_| ())).map_err(to_py_err)
    }

    fn predict<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let x = f64_array::<Ix2>(x, "X")?;
        let xv = x.view();
        let model = &self.inner;
        Ok(crate::python::parallel::detach(py, || model.predict(&xv))
            .map_err(to_py_err)?
            .into_pyarray(py))
    }

    fn predict_proba<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = f64_array::<Ix2>(x, "X")?;
        let xv = x.view();
        let model = &self.inner;
        Ok(
            crate::python::parallel::detach(py, || model.class_probabilities(&xv))
                .map_err(to_py_err)?
                .into_pyarray(py),
        )
    }

    fn decision_function<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = f64_array::<Ix2>(x, "X")?;
        let xv = x.view();
        let model = &self.inner;
        Ok(
            crate::python::parallel::detach(py, || model.decision_function(&xv))
                .map_err(to_py_err)?
                .into_pyarray(py),
        )
    }

    #[getter]
    fn classes_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        self.inner
            .classes()
            .map(|c| c.clone().into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    #[getter]
    fn coef_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        self.inner
            .coefficients()
            .map(|c| c.clone().into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    #[getter]
    fn intercept_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        self.inner
            .intercept()
            .map(|c| c.clone().into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    #[getter]
    fn n_iter_(&self) -> PyResult<usize> {
        self.inner.n_iter().ok_or_else(not_fitted)
    }

    #[getter]
    fn converged_(&self) -> PyResult<bool> {
        self.inner.converged().ok_or_else(not_fitted)
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.to_bytes().map_err(to_py_err)?))
    }

    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        Ok(Self {
            inner: LogisticRegression::from_bytes(data).map_err(to_py_err)?,
        })
    }
}
