//! Native `MinMaxScaler`.

use super::{fit_2d, map_2d, opt_array};
use crate::persistence::Persist;
use crate::python::to_py_err;
use crate::utils::MinMaxScaler;
use numpy::{PyArray1, PyArray2};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

#[pyclass(name = "MinMaxScaler", module = "rustyml._native.utils")]
pub(crate) struct PyMinMaxScaler {
    inner: MinMaxScaler,
}

#[pymethods]
impl PyMinMaxScaler {
    #[new]
    #[pyo3(signature = (feature_range = (0.0, 1.0), clip = false))]
    fn new(feature_range: (f64, f64), clip: bool) -> Self {
        Self {
            inner: MinMaxScaler::new(feature_range, clip),
        }
    }

    fn fit(&mut self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<()> {
        let model = &mut self.inner;
        fit_2d(py, x, |xv| model.fit(&xv).map(|_| ()))
    }

    fn partial_fit(&mut self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<()> {
        let model = &mut self.inner;
        fit_2d(py, x, |xv| model.partial_fit(&xv).map(|_| ()))
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

    fn inverse_transform<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let model = &self.inner;
        map_2d(py, x, |xv| model.inverse_transform(&xv))
    }

    #[getter]
    fn data_min_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
        opt_array(py, self.inner.data_min())
    }

    #[getter]
    fn data_max_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
        opt_array(py, self.inner.data_max())
    }

    #[getter]
    fn data_range_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
        opt_array(py, self.inner.data_range())
    }

    #[getter]
    fn scale_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
        opt_array(py, self.inner.scale())
    }

    #[getter]
    fn min_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
        opt_array(py, self.inner.min())
    }

    #[getter]
    fn n_samples_seen_(&self) -> Option<usize> {
        self.inner.n_samples_seen()
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
            inner: MinMaxScaler::from_bytes(data).map_err(to_py_err)?,
        })
    }
}
