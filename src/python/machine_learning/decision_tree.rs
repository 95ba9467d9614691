//! Native `DecisionTree`.

use crate::machine_learning::{Algorithm, DecisionTree};
use crate::persistence::Persist;
use crate::python::{f64_array, to_py_err};
use crate::RustymlError;
use ndarray::{Ix1, Ix2};
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes};

/// `random_state`: `None` or a non-negative integer.
pub(super) fn parse_random_state(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(None);
    };
    if obj.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(
            "random_state must be None or an integer, got a bool",
        ));
    }
    let v: i128 = obj
        .extract()
        .map_err(|_| PyTypeError::new_err("random_state must be None or a non-negative integer"))?;
    u64::try_from(v).map(Some).map_err(|_| {
        PyValueError::new_err(format!("random_state must be in [0, 2**64 - 1], got {v}"))
    })
}

/// An optional non-negative integer hyper-parameter (`max_depth`, `n_neighbors`).
pub(super) fn parse_count(obj: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<usize>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(None);
    };
    if obj.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "{name} must be an integer, got a bool"
        )));
    }
    let v: i128 = obj
        .extract()
        .map_err(|_| PyTypeError::new_err(format!("{name} must be an integer")))?;
    usize::try_from(v).map(Some).map_err(|_| {
        PyValueError::new_err(format!("{name} must be a non-negative integer, got {v}"))
    })
}

fn not_fitted() -> PyErr {
    to_py_err(RustymlError::not_fitted("DecisionTree"))
}

#[pyclass(name = "DecisionTree", module = "rustyml._native.machine_learning")]
pub(crate) struct PyDecisionTree {
    inner: DecisionTree,
}

#[pymethods]
impl PyDecisionTree {
    #[new]
    #[pyo3(signature = (algorithm = "cart", is_classifier = true, max_depth = None, min_samples_split = None, min_samples_leaf = None, random_state = None))]
    fn new(
        algorithm: &str,
        is_classifier: bool,
        max_depth: Option<&Bound<'_, PyAny>>,
        min_samples_split: Option<&Bound<'_, PyAny>>,
        min_samples_leaf: Option<&Bound<'_, PyAny>>,
        random_state: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let inner = DecisionTree::with_defaults(
            Algorithm::parse(algorithm).map_err(to_py_err)?,
            is_classifier,
        )
        .set_max_depth(parse_count(max_depth, "max_depth")?)
        .set_min_samples_split(parse_count(min_samples_split, "min_samples_split")?.unwrap_or(2))
        .set_min_samples_leaf(parse_count(min_samples_leaf, "min_samples_leaf")?.unwrap_or(1))
        .set_random_state(parse_random_state(random_state)?);
        Ok(Self { inner })
    }

    fn fit(&mut self, py: Python<'_>, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> PyResult<()> {
        let x = f64_array::<Ix2>(x, "X")?;
        let y = f64_array::<Ix1>(y, "y")?;
        let (xv, yv) = (x.view(), y.view());
        let model = &mut self.inner;
        crate::python::parallel::detach(py, || model.fit(&xv, &yv).map(|_| ())).map_err(to_py_err)
    }

    fn predict<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let x = f64_array::<Ix2>(x, "X")?;
        let xv = x.view();
        let model = &self.inner;
        Ok(crate::python::parallel::detach(py, || model.predict(&xv))
            .map_err(to_py_err)?
            .into_pyarray(py))
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
            crate::python::parallel::detach(py, || model.predict_proba(&xv))
                .map_err(to_py_err)?
                .into_pyarray(py),
        )
    }

    #[getter]
    fn classes_<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyArray1<f64>>>> {
        if self.inner.depth().is_none() {
            return Err(not_fitted());
        }
        Ok(self.inner.classes().map(|c| c.clone().into_pyarray(py)))
    }

    fn get_depth(&self) -> PyResult<usize> {
        self.inner.depth().ok_or_else(not_fitted)
    }

    fn get_n_leaves(&self) -> PyResult<usize> {
        self.inner.n_leaves().ok_or_else(not_fitted)
    }

    #[getter]
    fn node_count(&self) -> PyResult<usize> {
        self.inner.node_count().ok_or_else(not_fitted)
    }

    #[getter]
    fn feature_importances_<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        self.inner
            .feature_importances()
            .map(|f| f.clone().into_pyarray(py))
            .ok_or_else(not_fitted)
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.to_bytes().map_err(to_py_err)?))
    }

    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        Ok(Self {
            inner: DecisionTree::from_bytes(data).map_err(to_py_err)?,
        })
    }
}
