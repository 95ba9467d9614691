//! Native `DBSCAN`.

use crate::machine_learning::DBSCAN;
use crate::math::distance::Metric;
use crate::persistence::Persist;
use crate::python::{f64_array, to_py_err};
use ndarray::Ix2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

#[pyclass(name = "DBSCAN", module = "rustyml._native.machine_learning")]
pub(crate) struct PyDBSCAN {
    inner: DBSCAN,
}

fn not_fitted() -> PyErr {
    to_py_err(crate::RustymlError::not_fitted("DBSCAN"))
}

#[pymethods]
impl PyDBSCAN {
    /// `metric`: `"euclidean"`, `"manhattan"` (`"cityblock"`, `"l1"`), `"minkowski"` with `p`
    /// (default 2) or `"sqeuclidean"`; an unknown name is a `ValueError` here, before any work.
    #[new]
    #[pyo3(signature = (eps = 0.5, min_samples = 5, metric = "euclidean", p = None))]
    fn new(eps: f64, min_samples: usize, metric: &str, p: Option<f64>) -> PyResult<Self> {
        let metric = Metric::parse(metric, p.unwrap_or(2.0)).map_err(to_py_err)?;
        Ok(Self {
            inner: DBSCAN::builder(eps, min_samples).with_engine_metric(metric),
        })
    }

    fn fit(&mut self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<()> {
        let x = f64_array::<Ix2>(x, "X")?;
        let xv = x.view();
        let model = &mut self.inner;
        crate::python::parallel::detach(py, || model.fit_checked(&xv).map(|_| ()))
            .map_err(to_py_err)
    }

    #[getter]
    fn labels_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<i64>>> {
        self.inner
            .labels()
            .map(|l| l.mapv(|v| v as i64).into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    #[getter]
    fn core_sample_indices_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<i64>>> {
        self.inner
            .core_sample_indices()
            .map(|c| {
                c.iter()
                    .map(|&i| i as i64)
                    .collect::<Vec<_>>()
                    .into_pyarray(py)
            })
            .ok_or_else(not_fitted)
    }

    #[getter]
    fn components_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        self.inner
            .components()
            .map(|c| c.clone().into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.to_bytes().map_err(to_py_err)?))
    }

    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        Ok(Self {
            inner: DBSCAN::from_bytes(data).map_err(to_py_err)?,
        })
    }
}
