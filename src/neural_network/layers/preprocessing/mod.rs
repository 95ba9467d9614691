//! Keras's preprocessing layers that compute inside a network: `Rescaling` and
//! `Normalization` (with `adapt`). Both are elementwise and differentiable, so a model can
//! train through them.

// private: `regularization` already exports a module named `normalization`
mod normalization;
pub mod rescaling;

pub use normalization::{
    adapt_statistics, normalization_keep_axes, Normalization, NORMALIZATION_EPSILON,
};
pub use rescaling::*;
