//! rustyml: machine learning with a Rust core, rayon parallelism behind calibrated work
//! gates, gemmkit matrix products and a Python front.
//!
//! See `ARCHITECTURE.md` for the module map, the gate mechanism and the data path.

mod accessors;
pub mod error;
pub mod gate;
mod isa;
pub mod parallel;
pub mod persistence;
pub mod prelude;
#[cfg(any(
    feature = "machine_learning",
    feature = "neural_network",
    feature = "utils"
))]
pub mod random;
#[cfg(any(feature = "machine_learning", feature = "utils"))]
pub mod traits;
pub mod tuning;

#[cfg(feature = "math")]
pub mod math;

#[cfg(feature = "machine_learning")]
pub mod machine_learning;

#[cfg(feature = "metrics")]
pub mod metrics;

#[cfg(feature = "neural_network")]
pub mod neural_network;

#[cfg(feature = "utils")]
pub mod utils;

#[cfg(any(feature = "machine_learning", feature = "utils", feature = "metrics"))]
pub mod validation;

#[cfg(feature = "calibration")]
pub mod calibration;

#[cfg(feature = "python")]
mod python;

/// The Python extension's allocator (see Cargo.toml's `mimalloc` entry for why).
#[cfg(feature = "python")]
#[global_allocator]
static GLOBAL_ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub use error::{Error, Result};
#[cfg(any(
    feature = "machine_learning",
    feature = "neural_network",
    feature = "utils"
))]
pub use random::{clear_global_seed, set_global_seed};
