//! Regularisation layers: dropout, noise injection, normalisation.

pub mod dropout;
pub mod noise_injection;
pub mod normalization;

pub use dropout::*;
pub use noise_injection::*;
pub use normalization::*;
pub(crate) mod stochastic;
