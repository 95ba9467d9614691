//! Native `RobustScaler`.

use super::{fit_2d, map_2d, opt_array};
use crate::persistence::Persist;
use crate::python::to_py_err;
use crate::utils::RobustScaler;
use numpy::{PyArray1, PyArray2};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

#[pyclass(name = "RobustScaler", module = "rustyml._native.utils")]
pub(crate) struct PyRobustScaler {
    inner: RobustScaler,
}

#[pymethods]
impl PyRobustScaler {
    #[new]
    #[pyo3(signature = (with_centering = true, with_scaling = true, quantile_range = (25.0, 75.0)))]
    fn new(with_centering: bool, with_scaling: bool, quantile_range: (f64, f64)) -> Self {
        Self {
            inner: RobustScaler::new(with_centering, with_scaling, quantile_range),
        }
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

    fn inverse_transform<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let model = &self.inner;
        map_2d(py, x, |xv| model.inverse_transform(&xv))
    }

    #[getter]
    fn center_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
        opt_array(py, self.inner.center())
    }

    #[getter]
    fn scale_<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
        opt_array(py, self.inner.scale())
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
            inner: RobustScaler::from_bytes(data).map_err(to_py_err)?,
        })
    }
}
