//! The original crate's ensemble category: `IsolationForest` at its original path
//! (`ensemble::isolation_forest::IsolationForest`).

pub use super::isolation_forest::{Contamination, IsolationForest, IsolationTree};

pub mod isolation_forest {
    pub use crate::machine_learning::isolation_forest::*;
}
