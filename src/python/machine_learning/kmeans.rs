//! Native `KMeans`.

use crate::machine_learning::{KMeans, KMeansInit, NInit};
use crate::persistence::Persist;
use crate::python::{f64_array, to_py_err};
use ndarray::Ix2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

#[pyclass(name = "KMeans", module = "rustyml._native.machine_learning")]
pub(crate) struct PyKMeans {
    inner: KMeans,
}

fn parse_init(init: &Bound<'_, PyAny>) -> PyResult<KMeansInit> {
    if let Ok(s) = init.cast::<PyString>() {
        return match s.to_str()? {
            "k-means++" => Ok(KMeansInit::KMeansPlusPlus),
            "random" => Ok(KMeansInit::Random),
            other => Err(PyValueError::new_err(format!(
                "init must be 'k-means++', 'random' or an array of shape (n_clusters, n_features), got {other:?}"
            ))),
        };
    }
    let centers = f64_array::<Ix2>(init, "init")?;
    Ok(KMeansInit::Centers(centers.view().to_owned()))
}

fn parse_n_init(n_init: &Bound<'_, PyAny>) -> PyResult<NInit> {
    if let Ok(s) = n_init.cast::<PyString>() {
        return match s.to_str()? {
            "auto" => Ok(NInit::Auto),
            other => Err(PyValueError::new_err(format!(
                "n_init must be 'auto' or a positive integer, got {other:?}"
            ))),
        };
    }
    if n_init.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err(
            "n_init must be 'auto' or a positive integer, got a bool",
        ));
    }
    match n_init.extract::<i64>() {
        Ok(n) if n >= 1 => Ok(NInit::Runs(n as usize)),
        Ok(n) => Err(PyValueError::new_err(format!(
            "n_init must be 'auto' or a positive integer, got {n}"
        ))),
        // an integer too large for i64 is a bad value, anything else a bad type
        Err(_) if n_init.is_instance_of::<pyo3::types::PyInt>() => Err(PyValueError::new_err(
            format!("n_init must be 'auto' or a positive integer below 2**63, got {n_init}"),
        )),
        Err(_) => Err(PyTypeError::new_err(
            "n_init must be 'auto' or a positive integer",
        )),
    }
}

/// `random_state`: `None` or a non-negative integer.
pub(crate) fn parse_random_state(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
    let Some(value) = value.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    if value.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err(
            "random_state must be None or a non-negative integer, got a bool",
        ));
    }
    match value.extract::<i128>() {
        Ok(v) if (0..=u64::MAX as i128).contains(&v) => Ok(Some(v as u64)),
        Ok(v) => Err(PyValueError::new_err(format!(
            "random_state must be None or an integer in [0, 2**64), got {v}"
        ))),
        Err(_) => Err(PyTypeError::new_err(
            "random_state must be None or a non-negative integer",
        )),
    }
}

fn not_fitted() -> PyErr {
    to_py_err(crate::RustymlError::not_fitted("KMeans"))
}

fn to_i32(labels: &ndarray::Array1<isize>) -> ndarray::Array1<i32> {
    labels.mapv(|l| l as i32)
}

#[pymethods]
impl PyKMeans {
    #[new]
    #[pyo3(signature = (n_clusters = 8, init = None, n_init = None, max_iter = 300, tol = 1e-4, random_state = None))]
    fn new(
        n_clusters: usize,
        init: Option<&Bound<'_, PyAny>>,
        n_init: Option<&Bound<'_, PyAny>>,
        max_iter: usize,
        tol: f64,
        random_state: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let init = match init {
            Some(i) if !i.is_none() => parse_init(i)?,
            _ => KMeansInit::KMeansPlusPlus,
        };
        let n_init = match n_init {
            Some(n) if !n.is_none() => parse_n_init(n)?,
            _ => NInit::Runs(10),
        };
        let inner = KMeans::builder(n_clusters)
            .with_init(init)
            .with_n_init_mode(n_init)
            .with_max_iter(max_iter)
            .with_tol(tol)
            .with_seed(parse_random_state(random_state)?);
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
    ) -> PyResult<Bound<'py, PyArray1<i32>>> {
        let x = f64_array::<Ix2>(x, "X")?;
        let xv = x.view();
        let model = &self.inner;
        let labels = crate::python::parallel::detach(py, || model.predict_checked(&xv))
            .map_err(to_py_err)?;
        Ok(labels.mapv(|l| l as i32).into_pyarray(py))
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

    fn score(&self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<f64> {
        let x = f64_array::<Ix2>(x, "X")?;
        let xv = x.view();
        let model = &self.inner;
        crate::python::parallel::detach(py, || model.score(&xv)).map_err(to_py_err)
    }

    #[getter]
    fn cluster_centers_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        self.inner
            .cluster_centers()
            .map(|c| c.clone().into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    #[getter]
    fn labels_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<i32>>> {
        self.inner
            .labels()
            .map(|l| to_i32(l).into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    #[getter]
    fn inertia_(&self) -> PyResult<f64> {
        self.inner.inertia().ok_or_else(not_fitted)
    }

    #[getter]
    fn n_iter_(&self) -> PyResult<usize> {
        self.inner.n_iter().ok_or_else(not_fitted)
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.to_bytes().map_err(to_py_err)?))
    }

    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        Ok(Self {
            inner: KMeans::from_bytes(data).map_err(to_py_err)?,
        })
    }
}
