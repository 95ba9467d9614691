//! Native `Normalizer`.

use super::{fit_2d, map_2d};
use crate::persistence::Persist;
use crate::python::to_py_err;
use crate::utils::{Norm, Normalizer};
use numpy::PyArray2;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

#[pyclass(name = "Normalizer", module = "rustyml._native.utils")]
pub(crate) struct PyNormalizer {
    inner: Normalizer,
}

#[pymethods]
impl PyNormalizer {
    #[new]
    #[pyo3(signature = (norm = "l2"))]
    fn new(norm: &str) -> PyResult<Self> {
        Ok(Self {
            inner: Normalizer::new(Norm::parse(norm).map_err(to_py_err)?),
        })
    }

    fn fit(&mut self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<()> {
        let model = &mut self.inner;
        fit_2d(py, x, |xv| model.fit(&xv).map(|_| ()))
    }

    fn transform<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let model = &self.inner;
        map_2d(py, x, |xv| model.transform(&xv))
    }

    fn fit_transform<'py>(
        &mut self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let model = &mut self.inner;
        map_2d(py, x, |xv| model.fit_transform(&xv))
    }

    #[getter]
    fn n_features_in_(&self) -> Option<usize> {
        self.inner.n_features_in()
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.to_bytes().map_err(to_py_err)?))
    }

    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        Ok(Self {
            inner: Normalizer::from_bytes(data).map_err(to_py_err)?,
        })
    }
}
