//! Evaluation metrics (regression, classification, clustering).

pub mod regression;

pub use regression::r2_score;
