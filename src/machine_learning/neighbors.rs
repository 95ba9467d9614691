//! The original crate's neighbours category: `KNN<T>` at its original path
//! (`neighbors::knn::KNN`).

pub use super::knn::{WeightingStrategy, KNN};

pub mod knn {
    pub use crate::machine_learning::knn::*;
    pub use crate::math::DistanceCalculationMetric;
}
