//! Classical machine learning estimators.

pub mod dbscan;
pub mod decision_tree;
pub mod isolation_forest;
pub mod kmeans;
pub mod knn;
pub mod linear_regression;
pub mod meanshift;
pub mod tree;
/// Input checks, shared crate-wide (re-exported here for the models).
pub use crate::validation;

pub use dbscan::DBSCAN;
pub use decision_tree::{Algorithm, DecisionTree};
pub use isolation_forest::{Contamination, IsolationForest, MaxSamples};
pub use kmeans::{KMeans, KMeansInit, NInit};
pub use knn::{Weights, KNN};
pub use linear_regression::{LinearRegression, Penalty, Solver};
pub use meanshift::{estimate_bandwidth, MeanShift};
