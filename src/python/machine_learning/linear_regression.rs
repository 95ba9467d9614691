//! Native `LinearRegression`.

use crate::machine_learning::{LinearRegression, Penalty, Solver};
use crate::persistence::Persist;
use crate::python::{f64_array, to_py_err};
use ndarray::{Ix1, Ix2};
use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

#[pyclass(name = "LinearRegression", module = "rustyml._native.machine_learning")]
pub(crate) struct PyLinearRegression {
    inner: LinearRegression,
}

fn parse_solver(s: &str) -> PyResult<Solver> {
    match s {
        "normal" => Ok(Solver::Normal),
        "gradient_descent" => Ok(Solver::GradientDescent),
        other => Err(PyValueError::new_err(format!(
            "solver must be 'normal' or 'gradient_descent', got {other:?}"
        ))),
    }
}

fn parse_penalty(p: Option<&str>) -> PyResult<Penalty> {
    match p {
        None | Some("none") => Ok(Penalty::None),
        Some("l1") => Ok(Penalty::L1),
        Some("l2") => Ok(Penalty::L2),
        Some(other) => Err(PyValueError::new_err(format!(
            "penalty must be None, 'l1' or 'l2', got {other:?}"
        ))),
    }
}

#[pymethods]
impl PyLinearRegression {
    #[new]
    #[pyo3(signature = (fit_intercept = true, solver = "normal", penalty = None, alpha = 0.0, learning_rate = 0.01, max_iter = 1000, tol = 1e-6))]
    fn new(
        fit_intercept: bool,
        solver: &str,
        penalty: Option<&str>,
        alpha: f64,
        learning_rate: f64,
        max_iter: usize,
        tol: f64,
    ) -> PyResult<Self> {
        let inner = LinearRegression::new(fit_intercept)
            .with_solver(parse_solver(solver)?)
            .with_penalty(parse_penalty(penalty)?, alpha)
            .with_learning_rate(learning_rate)
            .with_max_iter(max_iter)
            .with_tol(tol);
        Ok(Self { inner })
    }

    fn fit(&mut self, py: Python<'_>, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> PyResult<()> {
        let x = f64_array::<Ix2>(x, "X")?;
        let y = f64_array::<Ix1>(y, "y")?;
        let (xv, yv) = (x.view(), y.view());
        let model = &mut self.inner;
        py.detach(|| model.fit(&xv, &yv).map(|_| ()))
            .map_err(to_py_err)
    }

    fn predict<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let x = f64_array::<Ix2>(x, "X")?;
        let xv = x.view();
        let model = &self.inner;
        Ok(py
            .detach(|| model.predict(&xv))
            .map_err(to_py_err)?
            .into_pyarray(py))
    }

    #[getter]
    fn coef_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        self.inner
            .coefficients()
            .map(|c| c.clone().into_pyarray(py))
            .ok_or_else(|| to_py_err(crate::RustymlError::not_fitted("LinearRegression")))
    }

    #[getter]
    fn intercept_(&self) -> PyResult<f64> {
        self.inner
            .intercept()
            .ok_or_else(|| to_py_err(crate::RustymlError::not_fitted("LinearRegression")))
    }

    #[getter]
    fn n_iter_(&self) -> PyResult<usize> {
        self.inner
            .n_iter()
            .ok_or_else(|| to_py_err(crate::RustymlError::not_fitted("LinearRegression")))
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.to_bytes().map_err(to_py_err)?))
    }

    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        Ok(Self {
            inner: LinearRegression::from_bytes(data).map_err(to_py_err)?,
        })
    }
}
