//! The crate's error type.

use thiserror::Error;

/// Everything that can go wrong in rustyml, grouped by how a Python caller should see it.
#[derive(Debug, Error)]
pub enum RustymlError {
    /// Bad shapes, bad values, NaN/inf, empty input, bad hyper-parameters (Python `ValueError`).
    #[error("{0}")]
    InvalidInput(String),
    /// A model used before `fit` (Python `NotFittedError`, a `ValueError` subclass).
    #[error("{0}")]
    NotFitted(String),
    /// An iterative solver that could not proceed (diverged, singular system).
    #[error("{0}")]
    Numerical(String),
    /// Save/load and (de)serialisation failures.
    #[error("{0}")]
    Io(String),
}

/// Shorthand used across the crate.
pub type Result<T> = std::result::Result<T, RustymlError>;

impl RustymlError {
    /// `InvalidInput` from anything printable.
    pub fn invalid(msg: impl Into<String>) -> Self {
        Self::InvalidInput(msg.into())
    }

    /// The standard not-fitted message for `model`.
    pub fn not_fitted(model: &str) -> Self {
        Self::NotFitted(format!(
            "This {model} instance is not fitted yet. Call 'fit' with appropriate arguments before using this estimator."
        ))
    }
}

impl From<std::io::Error> for RustymlError {
    fn from(e: std::io::Error) -> Self {
        Self::Io(e.to_string())
    }
}

impl From<postcard::Error> for RustymlError {
    fn from(e: postcard::Error) -> Self {
        Self::Io(format!("could not (de)serialise model: {e}"))
    }
}
