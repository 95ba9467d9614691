//! Native `IsolationForest`.

use super::decision_tree::{parse_count, parse_random_state};
use crate::machine_learning::{Contamination, IsolationForest, MaxSamples};
use crate::persistence::Persist;
use crate::python::{f64_array, to_py_err};
use crate::RustymlError;
use ndarray::Ix2;
use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt, PyString};

fn not_fitted() -> PyErr {
    to_py_err(RustymlError::not_fitted("IsolationForest"))
}

/// `"auto"`, an integer count or a float fraction (as scikit-learn tells them apart).
fn parse_max_samples(obj: &Bound<'_, PyAny>) -> PyResult<MaxSamples> {
    if let Ok(s) = obj.cast::<PyString>() {
        return match s.to_str()? {
            "auto" => Ok(MaxSamples::Auto),
            other => Err(PyValueError::new_err(format!(
                "max_samples must be 'auto', an int or a float in (0, 1], got {other:?}"
            ))),
        };
    }
    if obj.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(
            "max_samples must be 'auto', an int or a float, got a bool",
        ));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(MaxSamples::Count(
            parse_count(Some(obj), "max_samples")?.unwrap_or(0),
        ));
    }
    if obj.is_instance_of::<PyFloat>() {
        return Ok(MaxSamples::Fraction(obj.extract()?));
    }
    // numpy scalars: integers count, floats are fractions
    if let Ok(v) = obj.extract::<i64>() {
        return Ok(MaxSamples::Count(usize::try_from(v).map_err(|_| {
            PyValueError::new_err(format!("max_samples must be at least 1, got {v}"))
        })?));
    }
    obj.extract::<f64>()
        .map(MaxSamples::Fraction)
        .map_err(|_| PyTypeError::new_err("max_samples must be 'auto', an int or a float"))
}

fn parse_contamination(obj: &Bound<'_, PyAny>) -> PyResult<Contamination> {
    if let Ok(s) = obj.cast::<PyString>() {
        return match s.to_str()? {
            "auto" => Ok(Contamination::Auto),
            other => Err(PyValueError::new_err(format!(
                "contamination must be 'auto' or a float in (0, 0.5], got {other:?}"
            ))),
        };
    }
    if obj.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(
            "contamination must be 'auto' or a float, got a bool",
        ));
    }
    obj.extract::<f64>()
        .map(Contamination::Fraction)
        .map_err(|_| PyTypeError::new_err("contamination must be 'auto' or a float in (0, 0.5]"))
}

#[pyclass(name = "IsolationForest", module = "rustyml._native.machine_learning")]
pub(crate) struct PyIsolationForest {
    inner: IsolationForest,
}

#[pymethods]
impl PyIsolationForest {
    #[new]
    #[pyo3(signature = (n_estimators = None, max_samples = None, contamination = None, random_state = None))]
    fn new(
        n_estimators: Option<&Bound<'_, PyAny>>,
        max_samples: Option<&Bound<'_, PyAny>>,
        contamination: Option<&Bound<'_, PyAny>>,
        random_state: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mut inner =
            IsolationForest::builder(parse_count(n_estimators, "n_estimators")?.unwrap_or(100))
                .with_seed(parse_random_state(random_state)?);
        if let Some(m) = max_samples {
            inner = inner.with_max_samples(parse_max_samples(m)?);
        }
        if let Some(c) = contamination {
            inner.contamination = parse_contamination(c)?;
        }
        Ok(Self { inner })
    }

    fn fit(&mut self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<()> {
        let x = f64_array::<Ix2>(x, "X")?;
        let xv = x.view();
        let model = &mut self.inner;
        crate::python::parallel::detach(py, || model.fit_checked(&xv).map(|_| ()))
            .map_err(to_py_err)
    }

    fn score_samples<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let x = f64_array::<Ix2>(x, "X")?;
        let xv = x.view();
        let model = &self.inner;
        Ok(
            crate::python::parallel::detach(py, || model.score_samples_checked(&xv))
                .map_err(to_py_err)?
                .into_pyarray(py),
        )
    }

    fn decision_function<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let x = f64_array::<Ix2>(x, "X")?;
        let xv = x.view();
        let model = &self.inner;
        Ok(
            crate::python::parallel::detach(py, || model.decision_function_checked(&xv))
                .map_err(to_py_err)?
                .into_pyarray(py),
        )
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
                .mapv(i64::from)
                .into_pyarray(py),
        )
    }

    #[getter]
    fn offset_(&self) -> PyResult<f64> {
        self.inner.offset().ok_or_else(not_fitted)
    }

    #[getter]
    fn max_samples_(&self) -> PyResult<usize> {
        self.inner.max_samples_used().ok_or_else(not_fitted)
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.to_bytes().map_err(to_py_err)?))
    }

    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        Ok(Self {
            inner: IsolationForest::from_bytes(data).map_err(to_py_err)?,
        })
    }
}
