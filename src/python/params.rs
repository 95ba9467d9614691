//! Hyper-parameter parsing shared by the native estimator constructors: one wording per kind
//! of value, whichever estimator takes it. A bool is refused wherever a number is expected
//! (Python's `True` is an int), as scikit-learn's parameter validation does.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt};

fn given<'a, 'py>(obj: Option<&'a Bound<'py, PyAny>>) -> Option<&'a Bound<'py, PyAny>> {
    obj.filter(|o| !o.is_none())
}

/// `random_state`: `None` or an integer in `[0, 2**64)`.
pub(crate) fn random_state(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
    let Some(obj) = given(obj) else {
        return Ok(None);
    };
    if obj.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(
            "random_state must be None or a non-negative integer, got a bool",
        ));
    }
    match obj.extract::<i128>() {
        Ok(v) => u64::try_from(v).map(Some).map_err(|_| {
            PyValueError::new_err(format!(
                "random_state must be None or an integer in [0, 2**64), got {v}"
            ))
        }),
        Err(_) if obj.is_instance_of::<PyInt>() => Err(PyValueError::new_err(format!(
            "random_state must be None or an integer in [0, 2**64), got {obj}"
        ))),
        Err(_) => Err(PyTypeError::new_err(
            "random_state must be None or a non-negative integer",
        )),
    }
}

/// An optional non-negative integer (`max_depth`, `n_neighbors`, ...): `None` stays `None`.
pub(crate) fn count(obj: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<usize>> {
    let Some(obj) = given(obj) else {
        return Ok(None);
    };
    if obj.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "{name} must be an integer, got a bool"
        )));
    }
    let out_of_range = || {
        PyValueError::new_err(format!(
            "{name} must be a non-negative integer small enough for the native model, got {obj}"
        ))
    };
    match obj.extract::<i128>() {
        Ok(v) => usize::try_from(v).map(Some).map_err(|_| out_of_range()),
        Err(_) if obj.is_instance_of::<PyInt>() => Err(out_of_range()),
        Err(_) => Err(PyTypeError::new_err(format!("{name} must be an integer"))),
    }
}

/// A required non-negative integer.
pub(crate) fn required_count(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<usize> {
    count(Some(obj), name)?
        .ok_or_else(|| PyTypeError::new_err(format!("{name} must be an integer, got None")))
}

/// One of a fixed set of names: `name must be 'a', 'b' or 'c', got "x"`.
pub(crate) fn choice<T: Copy>(name: &str, value: &str, options: &[(&str, T)]) -> PyResult<T> {
    if let Some((_, v)) = options.iter().find(|(k, _)| *k == value) {
        return Ok(*v);
    }
    let quoted: Vec<String> = options.iter().map(|(k, _)| format!("'{k}'")).collect();
    let listed = match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    };
    Err(PyValueError::new_err(format!(
        "{name} must be {listed}, got {value:?}"
    )))
}
