//! rustyml: machine learning with a Rust core, rayon parallelism behind calibrated work
//! gates, gemmkit matrix products and a Python front.
//!
//! See `ARCHITECTURE.md` for the module map, the gate mechanism and the data path.

pub mod error;
pub mod gate;
pub mod persistence;
pub mod tuning;

#[cfg(feature = "math")]
pub mod math;

#[cfg(feature = "machine_learning")]
pub mod machine_learning;

#[cfg(feature = "metrics")]
pub mod metrics;

#[cfg(feature = "utils")]
pub mod utils;

#[cfg(any(feature = "machine_learning", feature = "utils", feature = "metrics"))]
pub mod validation;

#[cfg(feature = "python")]
mod python;

pub use error::{Result, RustymlError};
