//! The original crate's clustering category: `KMeans`, `DBSCAN`, `MeanShift` at their
//! original paths (`clustering::kmeans::KMeans`, `clustering::mean_shift::MeanShift`, ...).

pub use super::dbscan::DBSCAN;
pub use super::kmeans::KMeans;
pub use super::meanshift::{estimate_bandwidth, MeanShift};

pub mod kmeans {
    pub use crate::machine_learning::kmeans::*;
}

pub mod dbscan {
    pub use crate::machine_learning::dbscan::*;
    pub use crate::math::DistanceCalculationMetric;
}

pub mod mean_shift {
    pub use crate::machine_learning::meanshift::*;
}
