//! Native `MeanShift` and `estimate_bandwidth`.

use crate::machine_learning::{meanshift, MeanShift};
use crate::persistence::Persist;
use crate::python::{f64_array, to_py_err};
use ndarray::Ix2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

#[pyclass(name = "MeanShift", module = "rustyml._native.machine_learning")]
pub(crate) struct PyMeanShift {
    inner: MeanShift,
}

fn not_fitted() -> PyErr {
    to_py_err(crate::RustymlError::not_fitted("MeanShift"))
}

#[pymethods]
impl PyMeanShift {
    #[new]
    #[pyo3(signature = (bandwidth = None, seeds = None, bin_seeding = false, min_bin_freq = 1, cluster_all = true, max_iter = 300))]
    fn new(
        bandwidth: Option<f64>,
        seeds: Option<&Bound<'_, PyAny>>,
        bin_seeding: bool,
        min_bin_freq: usize,
        cluster_all: bool,
        max_iter: usize,
    ) -> PyResult<Self> {
        let seeds = match seeds {
            Some(s) if !s.is_none() => Some(f64_array::<Ix2>(s, "seeds")?.view().to_owned()),
            _ => None,
        };
        let mut inner = MeanShift::builder(bandwidth)
            .with_seeds(seeds)
            .with_bin_seeding(bin_seeding)
            .with_min_bin_freq(min_bin_freq)
            .with_cluster_all(cluster_all);
        inner.max_iter = max_iter;
        Ok(Self { inner })
    }

    fn fit(&mut self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<()> {
        let x = f64_array::<Ix2>(x, "X")?;
        let xv = x.view();
        let model = &mut self.inner;
        crate::python::parallel::detach(py, || model.fit_checked(&xv).map(|_| ()))
            .map_err(to_py_err)
    }

    fn predict<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let x = f64_array::<Ix2>(x, "X")?;
        let xv = x.view();
        let model = &self.inner;
        Ok(
            crate::python::parallel::detach(py, || model.predict_checked(&xv))
                .map_err(to_py_err)?
                .into_pyarray(py),
        )
    }

    #[getter]
    fn cluster_centers_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        self.inner
            .cluster_centers()
            .map(|c| c.clone().into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    #[getter]
    fn labels_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<i64>>> {
        self.inner
            .labels()
            .map(|l| l.mapv(|v| v as i64).into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    #[getter]
    fn n_iter_(&self) -> PyResult<usize> {
        self.inner.n_iter().ok_or_else(not_fitted)
    }

    #[getter]
    fn bandwidth_(&self) -> PyResult<f64> {
        self.inner.fitted_bandwidth().ok_or_else(not_fitted)
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.to_bytes().map_err(to_py_err)?))
    }

    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        Ok(Self {
            inner: MeanShift::from_bytes(data).map_err(to_py_err)?,
        })
    }
}

/// scikit-learn's `estimate_bandwidth` on all samples.
#[pyfunction]
#[pyo3(signature = (x, quantile = 0.3))]
pub(crate) fn estimate_bandwidth(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    quantile: f64,
) -> PyResult<f64> {
    let x = f64_array::<Ix2>(x, "X")?;
    let xv = x.view();
    crate::python::parallel::detach(py, || meanshift::estimate_bandwidth_all(&xv, quantile))
        .map_err(to_py_err)
}
