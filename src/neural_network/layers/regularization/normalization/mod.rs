//! Normalisation layers, one per file, over one shared engine ([`engine`]) whose passes sit
//! behind the `tuning::norm` gates.

pub mod batch_normalization;
mod common;
pub(crate) mod engine;
pub mod group_normalization;
mod grouped;
pub mod instance_normalization;
pub mod layer_normalization;
pub mod unit_normalization;

pub use batch_normalization::BatchNormalization;
pub use group_normalization::GroupNormalization;
pub use instance_normalization::InstanceNormalization;
pub use layer_normalization::{LayerNormalization, LayerNormalizationAxis};
pub use unit_normalization::{UnitNormalization, UnitNormalizationAxis};

#[cfg(test)]
mod tests;
