//! Label arrays at the boundary. The Python wrappers hand the native layer int64 or float64
//! 1-D arrays (strings and other types are encoded to int64 codes in Python first); both
//! arrays of a pair share one dtype. [`with_label_pair!`] and [`with_labels!`] expand a body
//! once per dtype, so every generic metric runs on the array in place.

use numpy::{
    PyArray1, PyArrayDescrMethods, PyArrayMethods, PyReadonlyArray1, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// A 1-D label array in one of the two native label dtypes.
pub(crate) enum Labels<'py> {
    I64(PyReadonlyArray1<'py, i64>),
    F64(PyReadonlyArray1<'py, f64>),
}

/// Borrow `obj` as int64 or float64 labels.
pub(crate) fn labels<'py>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<Labels<'py>> {
    let arr = obj
        .cast::<PyUntypedArray>()
        .map_err(|_| PyTypeError::new_err(format!("{name} must be a numpy.ndarray")))?;
    if arr.ndim() != 1 {
        return Err(PyValueError::new_err(format!(
            "{name} must be 1-dimensional, got an array of shape {:?}",
            arr.shape()
        )));
    }
    let py = obj.py();
    let dtype = arr.dtype();
    if dtype.is_equiv_to(&numpy::dtype::<i64>(py)) {
        Ok(Labels::I64(obj.cast::<PyArray1<i64>>()?.readonly()))
    } else if dtype.is_equiv_to(&numpy::dtype::<f64>(py)) {
        Ok(Labels::F64(obj.cast::<PyArray1<f64>>()?.readonly()))
    } else {
        Err(PyTypeError::new_err(format!(
            "{name} must have dtype int64 or float64"
        )))
    }
}

/// Two label arrays of the same dtype.
pub(crate) enum LabelPair<'py> {
    I64(PyReadonlyArray1<'py, i64>, PyReadonlyArray1<'py, i64>),
    F64(PyReadonlyArray1<'py, f64>, PyReadonlyArray1<'py, f64>),
}

pub(crate) fn label_pair<'py>(
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    names: (&str, &str),
) -> PyResult<LabelPair<'py>> {
    match (labels(a, names.0)?, labels(b, names.1)?) {
        (Labels::I64(x), Labels::I64(y)) => Ok(LabelPair::I64(x, y)),
        (Labels::F64(x), Labels::F64(y)) => Ok(LabelPair::F64(x, y)),
        _ => Err(PyTypeError::new_err(format!(
            "{} and {} must share one dtype",
            names.0, names.1
        ))),
    }
}

/// A scalar label (`pos_label`) in the dtype of the arrays.
pub(crate) fn label_i64(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<i64> {
    if let Ok(v) = obj.extract::<i64>() {
        return Ok(v);
    }
    match obj.extract::<f64>() {
        Ok(v) if v.fract() == 0.0 && v.abs() < 9.0e15 => Ok(v as i64),
        _ => Err(PyValueError::new_err(format!(
            "{name}={} is not a valid label for integer labels",
            obj.repr().map(|r| r.to_string()).unwrap_or_default()
        ))),
    }
}

pub(crate) fn label_f64(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<f64> {
    obj.extract::<f64>().map_err(|_| {
        PyValueError::new_err(format!(
            "{name}={} is not a valid label for numeric labels",
            obj.repr().map(|r| r.to_string()).unwrap_or_default()
        ))
    })
}

/// Inputs at least this long release the GIL; shorter ones return before the round trip
/// would pay.
pub(crate) const DETACH_MIN_LEN: usize = 8192;

/// Run `body` with the GIL released when `len` is large enough.
pub(crate) fn maybe_detach<R: Send>(
    py: Python<'_>,
    len: usize,
    body: impl FnOnce() -> R + Send,
) -> R {
    if len >= DETACH_MIN_LEN {
        crate::python::parallel::detach(py, body)
    } else {
        body()
    }
}

/// Expand `$body` with `$t`/`$p` bound to the two label views of a [`LabelPair`] and `$T` to
/// their element type.
macro_rules! with_label_pair {
    ($pair:expr, |$t:ident, $p:ident, $T:ident| $body:expr) => {
        match $pair {
            $crate::python::labels::LabelPair::I64(a, b) => {
                #[allow(dead_code)]
                type $T = i64;
                let ($t, $p) = (a.as_array(), b.as_array());
                $body
            }
            $crate::python::labels::LabelPair::F64(a, b) => {
                #[allow(dead_code)]
                type $T = f64;
                let ($t, $p) = (a.as_array(), b.as_array());
                $body
            }
        }
    };
}

/// Expand `$body` with `$y` bound to the view of a [`Labels`] and `$T` to its element type.
macro_rules! with_labels {
    ($labels:expr, |$y:ident, $T:ident| $body:expr) => {
        match $labels {
            $crate::python::labels::Labels::I64(a) => {
                #[allow(dead_code)]
                type $T = i64;
                let $y = a.as_array();
                $body
            }
            $crate::python::labels::Labels::F64(a) => {
                #[allow(dead_code)]
                type $T = f64;
                let $y = a.as_array();
                $body
            }
        }
    };
}

pub(crate) use {with_label_pair, with_labels};
