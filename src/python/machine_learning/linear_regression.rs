//! Native `LinearRegression`.

use crate::machine_learning::linear_model::LeastSquaresSolver;
use crate::machine_learning::validation::{check_n_features, check_xy};
use crate::machine_learning::{LinearRegression, RegularizationType};
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
    /// Checked at fit even without a penalty, as scikit-learn's parameter validation does.
    alpha: f64,
}

fn parse_solver(
    s: &str,
    learning_rate: f64,
    max_iter: usize,
    tol: f64,
) -> PyResult<LeastSquaresSolver> {
    match s {
        "normal" => Ok(LeastSquaresSolver::Normal),
        "gradient_descent" => Ok(LeastSquaresSolver::GradientDescent {
            learning_rate,
            max_iter,
            tol,
        }),
        other => Err(PyValueError::new_err(format!(
            "solver must be 'normal' or 'gradient_descent', got {other:?}"
        ))),
    }
}

fn parse_penalty(p: Option<&str>, alpha: f64) -> PyResult<Option<RegularizationType>> {
    match p {
        None | Some("none") => Ok(None),
        Some("l1") => Ok(Some(RegularizationType::L1(alpha))),
        Some("l2") => Ok(Some(RegularizationType::L2(alpha))),
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
        // The L2 alpha is scikit-learn's Ridge alpha (on the summed squared error).
        let inner = LinearRegression::new(fit_intercept).with_unchecked(
            parse_solver(solver, learning_rate, max_iter, tol)?,
            parse_penalty(penalty, alpha)?,
            true,
        );
        Ok(Self { inner, alpha })
    }

    fn fit(&mut self, py: Python<'_>, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> PyResult<()> {
        let x = f64_array::<Ix2>(x, "X")?;
        let y = f64_array::<Ix1>(y, "y")?;
        let (xv, yv) = (x.view(), y.view());
        let model = &mut self.inner;
        let alpha = self.alpha;
        crate::python::parallel::detach(py, || {
            // scikit-learn's checks and messages first; the model's own then never fire.
            if !(alpha.is_finite() && alpha >= 0.0) {
                return Err(crate::RustymlError::invalid(format!(
                    "alpha must be a finite number >= 0, got {alpha}"
                )));
            }
            model.check_params()?;
            check_xy(&xv, &yv)?;
            model.fit(&xv, &yv).map(|_| ())
        })
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
        let width = model.get_coefficients().map_or(0, |c| c.len());
        Ok(crate::python::parallel::detach(py, || {
            if model.get_coefficients().is_some() {
                check_n_features(&xv, width, "LinearRegression")?;
            }
            model.predict(&xv)
        })
        .map_err(to_py_err)?
        .into_pyarray(py))
    }

    #[getter]
    fn coef_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        self.inner
            .get_coefficients()
            .map(|c| c.clone().into_pyarray(py))
            .ok_or_else(|| to_py_err(crate::RustymlError::not_fitted("LinearRegression")))
    }

    #[getter]
    fn intercept_(&self) -> PyResult<f64> {
        self.inner
            .get_intercept()
            .ok_or_else(|| to_py_err(crate::RustymlError::not_fitted("LinearRegression")))
    }

    #[getter]
    fn n_iter_(&self) -> PyResult<usize> {
        self.inner
            .get_actual_iterations()
            .ok_or_else(|| to_py_err(crate::RustymlError::not_fitted("LinearRegression")))
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.to_bytes().map_err(to_py_err)?))
    }

    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        let inner = LinearRegression::from_bytes(data).map_err(to_py_err)?;
        let alpha = match inner.get_regularization_type() {
            Some(RegularizationType::L1(a) | RegularizationType::L2(a)) => a,
            None => 0.0,
        };
        Ok(Self { inner, alpha })
    }
}
