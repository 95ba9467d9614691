//! Classical machine learning estimators.

pub mod dbscan;
pub mod kmeans;
pub mod linear_regression;
pub mod meanshift;
/// Input checks, shared crate-wide (re-exported here for the models).
pub use crate::validation;

pub use dbscan::DBSCAN;
pub use kmeans::{KMeans, KMeansInit, NInit};
pub use linear_regression::{LinearRegression, Penalty, Solver};
pub use meanshift::{estimate_bandwidth, MeanShift};
