//! Errors specific to decision trees.

use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Error)]
pub enum TreeError {
    #[error("operation requires a classification tree")]
    NotClassificationTree,
    #[error("corrupt tree structure: {0}")]
    CorruptStructure(&'static str),
}
