//! Classical machine learning estimators.

pub mod decision_tree;
pub mod isolation_forest;
pub mod knn;
pub mod linear_regression;
pub mod tree;
pub mod validation;

pub use decision_tree::{Algorithm, DecisionTree};
pub use isolation_forest::{Contamination, IsolationForest, MaxSamples};
pub use knn::{Weights, KNN};
pub use linear_regression::{LinearRegression, Penalty, Solver};
