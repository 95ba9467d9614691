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

pub mod embedding;
#[cfg(test)]
pub(crate) mod gradient_check;
pub mod identity;
pub(crate) mod initializers;
pub(crate) mod layer_util;
pub mod masking;
pub mod permute;
pub mod preprocessing;
pub mod repeat_vector;
pub mod reshape;
pub mod size_guard;
pub mod time_distributed;

pub use embedding::*;
pub use identity::*;
pub use masking::*;
pub use permute::*;
pub use preprocessing::*;
pub use repeat_vector::*;
pub use reshape::*;
pub use time_distributed::*;

pub mod dense;
pub mod flatten;
pub mod serialize_model;

pub use dense::*;
pub use flatten::*;

pub mod border;
pub mod convolution;
pub mod merge;
pub mod pooling;
pub mod recurrent;
pub mod upsampling;

pub use border::*;
pub use convolution::*;
pub use pooling::*;
pub use recurrent::*;
pub use upsampling::*;
