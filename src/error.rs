//! The crate's error type: the original RustyML 0.15's `Error` (same variants, same messages),
//! so code written against the original matches on it unchanged. The Python bindings map every
//! variant onto a Python exception in `python::errors`.

use thiserror::Error as ThisError;

/// Everything that can go wrong in rustyml.
#[derive(Debug, ThisError)]
pub enum Error {
    /// An input with no samples (or no features).
    #[error("input is empty: {0}")]
    EmptyInput(String),
    /// A length or width that disagrees with what the model or the other argument has.
    #[error("dimension mismatch: expected {expected}, found {found}")]
    DimensionMismatch { expected: usize, found: usize },
    /// A whole shape that disagrees.
    #[error("shape mismatch: expected {expected:?}, found {found:?}")]
    ShapeMismatch {
        expected: Vec<usize>,
        found: Vec<usize>,
    },
    /// NaN or infinity where finite values are required.
    #[error("non-finite value (NaN or infinity) encountered in {0}")]
    NonFinite(String),
    /// A hyper-parameter outside its domain.
    #[error("invalid parameter `{name}`: {reason}")]
    InvalidParameter { name: String, reason: String },
    /// Any other malformed input.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// A model used before `fit`; the payload is the model's name.
    #[error("model `{0}` has not been fitted; call `fit` before this operation")]
    NotFitted(&'static str),
    /// An iterative method that did not reach its tolerance where that is an error.
    #[error("failed to converge: {0}")]
    NotConverged(String),
    /// A numerical step that could not proceed (singular system, diverged solver).
    #[error("computation failed: {context}")]
    Computation {
        context: String,
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
    },
    /// Errors specific to neural networks.
    #[cfg(feature = "neural_network")]
    #[error(transparent)]
    NeuralNetwork(#[from] crate::neural_network::NnError),
    /// Errors specific to decision trees.
    #[cfg(feature = "machine_learning")]
    #[error(transparent)]
    Tree(#[from] crate::machine_learning::TreeError),
    /// Save/load failures.
    #[error(transparent)]
    Io(#[from] IoError),
}

/// Save/load failures.
#[derive(Debug, ThisError)]
pub enum IoError {
    #[error("I/O error: {0}")]
    Std(#[from] std::io::Error),
    #[error("serialization error: {0}")]
    Serialization(#[from] postcard::Error),
    #[error("model structure mismatch: {0}")]
    ModelStructureMismatch(String),
    #[error("unsupported model format: {0}")]
    UnsupportedModelFormat(String),
}

/// The crate's result type; every module writes it as `Result`.
pub type Result<T> = std::result::Result<T, Error>;

/// The original RustyML 0.15's name for [`Result`], kept so code written against it compiles.
pub type RustymlResult<T> = Result<T>;

impl Error {
    pub fn empty_input(what: impl Into<String>) -> Self {
        Self::EmptyInput(what.into())
    }

    pub fn dimension_mismatch(expected: usize, found: usize) -> Self {
        Self::DimensionMismatch { expected, found }
    }

    pub fn shape_mismatch(expected: impl Into<Vec<usize>>, found: impl Into<Vec<usize>>) -> Self {
        Self::ShapeMismatch {
            expected: expected.into(),
            found: found.into(),
        }
    }

    pub fn non_finite(context: impl Into<String>) -> Self {
        Self::NonFinite(context.into())
    }

    pub fn invalid_parameter(name: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::InvalidParameter {
            name: name.into(),
            reason: reason.into(),
        }
    }

    pub fn invalid_input(msg: impl Into<String>) -> Self {
        Self::InvalidInput(msg.into())
    }

    pub fn not_fitted(model: &'static str) -> Self {
        Self::NotFitted(model)
    }

    pub fn not_converged(msg: impl Into<String>) -> Self {
        Self::NotConverged(msg.into())
    }

    pub fn computation(context: impl Into<String>) -> Self {
        Self::Computation {
            context: context.into(),
            source: None,
        }
    }

    /// `backward` called on a layer before any `forward`.
    #[cfg(feature = "neural_network")]
    pub fn forward_pass_not_run(layer: &'static str) -> Self {
        Self::NeuralNetwork(crate::neural_network::NnError::ForwardPassNotRun(layer))
    }

    /// A save/load format error (bad header, wrong model type, undecodable body).
    pub fn format(msg: impl Into<String>) -> Self {
        Self::Io(IoError::UnsupportedModelFormat(msg.into()))
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Self::Io(IoError::Std(e))
    }
}

impl From<postcard::Error> for Error {
    fn from(e: postcard::Error) -> Self {
        Self::Io(IoError::Serialization(e))
    }
}

/// Attach a context to a foreign error, giving `Error::Computation` with that error as source.
pub trait Context<T> {
    fn context(self, context: impl Into<String>) -> Result<T>;
    fn with_context<F, S>(self, f: F) -> Result<T>
    where
        F: FnOnce() -> S,
        S: Into<String>;
}

impl<T, E> Context<T> for std::result::Result<T, E>
where
    E: std::error::Error + Send + Sync + 'static,
{
    fn context(self, context: impl Into<String>) -> Result<T> {
        self.map_err(|e| Error::Computation {
            context: context.into(),
            source: Some(Box::new(e)),
        })
    }

    fn with_context<F, S>(self, f: F) -> Result<T>
    where
        F: FnOnce() -> S,
        S: Into<String>,
    {
        self.map_err(|e| Error::Computation {
            context: f().into(),
            source: Some(Box::new(e)),
        })
    }
}
