//! Native `TSNE`.

use crate::machine_learning::{LearningRate, TsneInit, TsneMethod, TSNE};
use crate::persistence::Persist;
use crate::python::{f64_array, to_py_err};
use crate::RustymlError;
use ndarray::Ix2;
use numpy::{IntoPyArray, PyArray2};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyString};

#[pyclass(name = "TSNE", module = "rustyml._native.machine_learning")]
pub(crate) struct PyTSNE {
    inner: TSNE,
}

fn not_fitted() -> PyErr {
    to_py_err(RustymlError::not_fitted("TSNE"))
}

fn parse_learning_rate(obj: &Bound<'_, PyAny>) -> PyResult<LearningRate> {
    if let Ok(s) = obj.cast::<PyString>() {
        return match s.to_str()? {
            "auto" => Ok(LearningRate::Auto),
            other => Err(PyValueError::new_err(format!(
                "learning_rate must be 'auto' or a number > 0, got {other:?}"
            ))),
        };
    }
    if obj.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(
            "learning_rate must be 'auto' or a number > 0, got a bool",
        ));
    }
    obj.extract::<f64>()
        .map(LearningRate::Fixed)
        .map_err(|_| PyTypeError::new_err("learning_rate must be 'auto' or a number > 0"))
}

fn parse_random_state(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(None);
    };
    if obj.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(
            "random_state must be None or a non-negative int, got a bool",
        ));
    }
    match obj.extract::<i128>() {
        Ok(v) if (0..=u64::MAX as i128).contains(&v) => Ok(Some(v as u64)),
        Ok(v) => Err(PyValueError::new_err(format!(
            "random_state must be None or a non-negative int, got {v}"
        ))),
        Err(_) => Err(PyTypeError::new_err(
            "random_state must be None or a non-negative int",
        )),
    }
}

#[pymethods]
impl PyTSNE {
    #[new]
    #[pyo3(signature = (
        n_components = 2,
        perplexity = 30.0,
        early_exaggeration = 12.0,
        learning_rate = None,
        max_iter = 1000,
        n_iter_without_progress = 300,
        min_grad_norm = 1e-7,
        method = "barnes_hut",
        init = "pca",
        angle = 0.5,
        random_state = None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        n_components: i64,
        perplexity: f64,
        early_exaggeration: f64,
        learning_rate: Option<&Bound<'_, PyAny>>,
        max_iter: i64,
        n_iter_without_progress: i64,
        min_grad_norm: f64,
        method: &str,
        init: &str,
        angle: f64,
        random_state: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let learning_rate = match learning_rate {
            Some(lr) => parse_learning_rate(lr)?,
            None => LearningRate::Auto,
        };
        let count = |name: &str, v: i64| -> PyResult<usize> {
            usize::try_from(v).map_err(|_| {
                PyValueError::new_err(format!("{name} must be a non-negative int, got {v}"))
            })
        };
        let inner = TSNE::builder(count("n_components", n_components)?)
            .with_perplexity(perplexity)
            .with_early_exaggeration(early_exaggeration)
            .with_learning_rate(learning_rate)
            .with_max_iter(count("max_iter", max_iter)?)
            .with_n_iter_without_progress(count(
                "n_iter_without_progress",
                n_iter_without_progress,
            )?)
            .with_min_grad_norm(min_grad_norm)
            .with_tsne_method(TsneMethod::parse(method).map_err(to_py_err)?)
            .with_tsne_init(TsneInit::parse(init).map_err(to_py_err)?)
            .with_angle(angle)
            .with_seed(parse_random_state(random_state)?);
        Ok(Self { inner })
    }

    fn fit(&mut self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<()> {
        let x = f64_array::<Ix2>(x, "X")?;
        let xv = x.view();
        let model = &mut self.inner;
        crate::python::parallel::detach(py, || model.fit(&xv).map(|_| ())).map_err(to_py_err)
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

    #[getter]
    fn embedding_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        self.inner
            .embedding()
            .map(|a| a.clone().into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    #[getter]
    fn kl_divergence_(&self) -> PyResult<f64> {
        self.inner.kl_divergence().ok_or_else(not_fitted)
    }

    #[getter]
    fn n_iter_(&self) -> PyResult<usize> {
        self.inner.n_iter().ok_or_else(not_fitted)
    }

    #[getter]
    fn learning_rate_(&self) -> PyResult<f64> {
        self.inner.learning_rate_used().ok_or_else(not_fitted)
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.to_bytes().map_err(to_py_err)?))
    }

    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        Ok(Self {
            inner: TSNE::from_bytes(data).map_err(to_py_err)?,
        })
    }
}
