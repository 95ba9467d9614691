//! Native `LDA` (scikit-learn's `LinearDiscriminantAnalysis`).

use crate::machine_learning::{DiscriminantSolver, LDA};
use crate::persistence::Persist;
use crate::python::{f64_array, to_py_err};
use ndarray::{Ix1, Ix2};
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

#[pyclass(name = "LDA", module = "rustyml._native.machine_learning")]
pub(crate) struct PyLDA {
    inner: LDA,
}

fn parse_solver(name: &str) -> PyResult<DiscriminantSolver> {
    match name {
        "svd" => Ok(DiscriminantSolver::SVD),
        "eigen" => Ok(DiscriminantSolver::Eigen),
        other => Err(pyo3::exceptions::PyValueError::new_err(format!(
            "solver must be 'svd' or 'eigen', got {other:?}"
        ))),
    }
}

fn not_fitted() -> PyErr {
    to_py_err(crate::RustymlError::not_fitted("LDA"))
}

#[pymethods]
impl PyLDA {
    #[new]
    #[pyo3(signature = (solver = "svd", n_components = None, priors = None, tol = 1e-4))]
    fn new(
        solver: &str,
        n_components: Option<usize>,
        priors: Option<Vec<f64>>,
        tol: f64,
    ) -> PyResult<Self> {
        let inner = LDA::with_defaults()
            .with_solver(parse_solver(solver)?)
            .with_n_components(n_components)
            .with_priors(priors)
            .with_tol(tol);
        Ok(Self { inner })
    }

    fn fit(&mut self, py: Python<'_>, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> PyResult<()> {
        let x = f64_array::<Ix2>(x, "X")?;
        let y = f64_array::<Ix1>(y, "y")?;
        let (xv, yv) = (x.view(), y.view());
        let model = &mut self.inner;
        crate::python::parallel::detach(py, || model.fit_labels(xv, yv)).map_err(to_py_err)
    }

    fn predict<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let x = f64_array::<Ix2>(x, "X")?;
        let xv = x.view();
        let model = &self.inner;
        Ok(
            crate::python::parallel::detach(py, || model.predict_labels(xv))
                .map_err(to_py_err)?
                .into_pyarray(py),
        )
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
            crate::python::parallel::detach(py, || model.class_probabilities(xv))
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
            crate::python::parallel::detach(py, || model.decision_scores(xv))
                .map_err(to_py_err)?
                .into_pyarray(py),
        )
    }

    fn transform<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = f64_array::<Ix2>(x, "X")?;
        let xv = x.view();
        let model = &self.inner;
        Ok(crate::python::parallel::detach(py, || model.transform(&xv))
            .map_err(to_py_err)?
            .into_pyarray(py))
    }

    #[getter]
    fn classes_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        self.inner
            .classes()
            .map(|a| a.clone().into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    #[getter]
    fn means_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        self.inner
            .means()
            .map(|a| a.clone().into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    #[getter]
    fn priors_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        self.inner
            .priors()
            .map(|a| a.clone().into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    #[getter]
    fn xbar_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        self.inner
            .xbar()
            .map(|a| a.clone().into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    #[getter]
    fn scalings_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        self.inner
            .scalings()
            .map(|a| a.clone().into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    #[getter]
    fn explained_variance_ratio_<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        self.inner
            .explained_variance_ratio()
            .map(|a| a.clone().into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    #[getter]
    fn coef_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        self.inner
            .coefficients()
            .map(|a| a.clone().into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    #[getter]
    fn intercept_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        self.inner
            .intercept()
            .map(|a| a.clone().into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.to_bytes().map_err(to_py_err)?))
    }

    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        Ok(Self {
            inner: LDA::from_bytes(data).map_err(to_py_err)?,
        })
    }
}
