//! Mapping of [`RustymlError`] onto Python exceptions.

use crate::error::RustymlError;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;

/// `InvalidInput`/`Numerical` -> `ValueError`, `NotFitted` -> `rustyml.exceptions.NotFittedError`
/// (a `ValueError` and `AttributeError`, like scikit-learn's), `Io` -> `OSError`.
pub(crate) fn to_py_err(err: RustymlError) -> PyErr {
    match err {
        RustymlError::InvalidInput(msg) | RustymlError::Numerical(msg) => {
            PyValueError::new_err(msg)
        }
        RustymlError::Io(msg) => PyOSError::new_err(msg),
        RustymlError::NotFitted(msg) => Python::attach(|py| {
            match py
                .import("rustyml.exceptions")
                .and_then(|m| m.getattr("NotFittedError"))
            {
                Ok(cls) => {
                    PyErr::from_type(cls.cast_into().expect("NotFittedError is a type"), msg)
                }
                Err(_) => PyValueError::new_err(msg),
            }
        }),
    }
}
