//! Layers, one per file, grouped as in the original crate. Adding a layer: one file in its
//! group, one `pub mod` + re-export line here (or in the group's `mod.rs`).

pub mod activation;
pub mod layer_weight;
pub mod regularization;

pub use activation::*;
pub use regularization::*;

/// How many parameters a layer has and whether they train.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrainingParameters {
    Trainable(usize),
    NonTrainable(usize),
    NoTrainable,
}

pub mod dense;
pub mod flatten;
pub mod serialize_model;

pub use dense::*;
pub use flatten::*;
