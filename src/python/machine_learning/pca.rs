//! Native `PCA`.

use crate::machine_learning::{NComponents, PCA};
use crate::persistence::Persist;
use crate::python::{f64_array, to_py_err};
use crate::RustymlError;
use ndarray::Ix2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt};

#[pyclass(name = "PCA", module = "rustyml._native.machine_learning")]
pub(crate) struct PyPCA {
    inner: PCA,
}

/// `None` -> all, an int -> that many, a float in (0, 1) -> a variance fraction (checked at fit).
fn parse_n_components(obj: Option<&Bound<'_, PyAny>>) -> PyResult<NComponents> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(NComponents::All);
    };
    if obj.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(
            "n_components must be None, an int or a float in (0, 1), got a bool",
        ));
    }
    if obj.is_instance_of::<PyInt>()
        || obj.hasattr("__index__")? && !obj.is_instance_of::<PyFloat>()
    {
        let k: i64 = obj.extract()?;
        if k < 0 {
            return Err(PyValueError::new_err(format!(
                "n_components must be >= 1, got {k}"
            )));
        }
        return Ok(NComponents::Count(k as usize));
    }
    if let Ok(r) = obj.extract::<f64>() {
        return Ok(NComponents::VarianceRatio(r));
    }
    Err(PyTypeError::new_err(
        "n_components must be None, an int or a float in (0, 1)",
    ))
}

fn not_fitted() -> PyErr {
    to_py_err(RustymlError::not_fitted("PCA"))
}

#[pymethods]
impl PyPCA {
    #[new]
    #[pyo3(signature = (n_components = None, whiten = false))]
    fn new(n_components: Option<&Bound<'_, PyAny>>, whiten: bool) -> PyResult<Self> {
        Ok(Self {
            inner: PCA::builder(parse_n_components(n_components)?).with_whiten(whiten),
        })
    }

    fn fit(&mut self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<()> {
        let x = f64_array::<Ix2>(x, "X")?;
        let xv = x.view();
        let model = &mut self.inner;
        crate::python::parallel::detach(py, || model.fit_checked(&xv).map(|_| ()))
            .map_err(to_py_err)
    }

    fn fit_transform<'py>(
        &mut self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = f64_array::<Ix2>(x, "X")?;
        let xv = x.view();
        let model = &mut self.inner;
        Ok(
            crate::python::parallel::detach(py, || model.fit_transform_checked(&xv))
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
        Ok(
            crate::python::parallel::detach(py, || model.transform_checked(&xv))
                .map_err(to_py_err)?
                .into_pyarray(py),
        )
    }

    fn inverse_transform<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = f64_array::<Ix2>(x, "X")?;
        let xv = x.view();
        let model = &self.inner;
        Ok(
            crate::python::parallel::detach(py, || model.inverse_transform_checked(&xv))
                .map_err(to_py_err)?
                .into_pyarray(py),
        )
    }

    #[getter]
    fn components_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        self.inner
            .components()
            .map(|a| a.clone().into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    #[getter]
    fn explained_variance_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        self.inner
            .explained_variance()
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
    fn singular_values_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        self.inner
            .singular_values()
            .map(|a| a.clone().into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    #[getter]
    fn mean_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        self.inner
            .mean()
            .map(|a| a.clone().into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    #[getter]
    fn n_components_(&self) -> PyResult<usize> {
        self.inner.n_components_().ok_or_else(not_fitted)
    }

    #[getter]
    fn noise_variance_(&self) -> PyResult<f64> {
        self.inner.noise_variance().ok_or_else(not_fitted)
    }

    #[getter]
    fn n_samples_(&self) -> PyResult<usize> {
        self.inner.n_samples().ok_or_else(not_fitted)
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.to_bytes().map_err(to_py_err)?))
    }

    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        Ok(Self {
            inner: PCA::from_bytes(data).map_err(to_py_err)?,
        })
    }
}
