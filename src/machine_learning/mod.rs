//! Classical machine learning estimators.

pub mod dbscan;
pub mod kmeans;
pub mod linear_regression;
pub mod meanshift;
pub mod validation;

pub use dbscan::DBSCAN;
pub use kmeans::{KMeans, KMeansInit, NInit};
pub use linear_regression::{LinearRegression, Penalty, Solver};
pub use meanshift::{estimate_bandwidth, MeanShift};
