//! Mapping of the crate's [`Error`] onto Python exceptions.

use crate::error::{Error, IoError};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;

/// `NotFitted` -> `rustyml.exceptions.NotFittedError` (a `ValueError` and `AttributeError`, like
/// scikit-learn's) with scikit-learn's wording; file-system failures -> `OSError`; everything
/// else (bad input, bad parameters, numerical failures, undecodable model files) -> `ValueError`,
/// except corrupt or foreign model files, which stay `OSError` as a failed load.
pub(crate) fn to_py_err(err: Error) -> PyErr {
    match err {
        Error::NotFitted(model) => {
            let msg = format!(
                "This {model} instance is not fitted yet. Call 'fit' with appropriate arguments before using this estimator."
            );
            Python::attach(|py| {
                match py
                    .import("rustyml.exceptions")
                    .and_then(|m| m.getattr("NotFittedError"))
                {
                    Ok(cls) => {
                        PyErr::from_type(cls.cast_into().expect("NotFittedError is a type"), msg)
                    }
                    Err(_) => PyValueError::new_err(msg),
                }
            })
        }
        Error::Io(IoError::Std(e)) => PyOSError::new_err(e.to_string()),
        Error::Io(IoError::UnsupportedModelFormat(msg)) => PyOSError::new_err(msg),
        Error::Io(other) => PyOSError::new_err(other.to_string()),
        Error::InvalidInput(msg) => PyValueError::new_err(msg),
        // the reason is phrased to follow the name: "tol must be a finite number >= 0, got -1"
        Error::InvalidParameter { name, reason } => {
            PyValueError::new_err(format!("{name} {reason}"))
        }
        Error::Computation { context, .. } => PyValueError::new_err(context),
        other => PyValueError::new_err(other.to_string()),
    }
}

/// A fitted model's refusal of `X` for its feature count, in scikit-learn's words. The engines
/// report the original's typed `DimensionMismatch { expected, found }`; on a read call whose
/// one array is `X` that can only be the feature count, and the Python door words it as
/// scikit-learn's `n_features_in_` check does. Other errors pass unchanged.
pub(crate) fn feature_count_in_words(err: Error, model: &str) -> Error {
    match err {
        Error::DimensionMismatch { expected, found } => Error::invalid_input(format!(
            "X has {found} features, but {model} is expecting {expected} features as input"
        )),
        other => other,
    }
}
