//! Discriminant analysis (the original crate's `machine_learning::discriminant_analysis`).

pub use super::lda;
pub use lda::{DiscriminantSolver, Shrinkage, LDA};
