//! Classical machine learning estimators.

pub mod dbscan;
pub mod kmeans;
pub mod labels;
pub mod lda;
pub mod linear_regression;
pub mod linear_svc;
pub mod logistic_regression;
pub mod meanshift;
pub mod svc;
/// Input checks, shared crate-wide (re-exported here for the models).
pub use crate::validation;

pub use dbscan::DBSCAN;
pub use kmeans::{KMeans, KMeansInit, NInit};
pub use lda::{LdaSolver, LDA};
pub use linear_regression::{LinearRegression, Penalty, Solver};
pub use linear_svc::LinearSVC;
pub use logistic_regression::{LogisticRegression, LogisticSolver};
pub use meanshift::{estimate_bandwidth, MeanShift};
pub use svc::{DecisionShape, SVC};
