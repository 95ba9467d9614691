//! Classical machine learning estimators.

pub mod dbscan;
pub mod decision_tree;
pub mod error;
pub mod isolation_forest;
pub mod kernel_pca;
pub mod kmeans;
pub mod knn;
pub mod labels;
pub mod lda;
pub mod linear_regression;
pub mod linear_svc;
pub mod logistic_regression;
pub mod meanshift;
pub mod pca;
pub mod svc;
pub mod tree;
pub mod tsne;
pub mod types;
/// Input checks, shared crate-wide (re-exported here for the models).
pub use crate::validation;

pub use dbscan::DBSCAN;
pub use decision_tree::{Algorithm, DecisionTree};
pub use error::TreeError;
pub use isolation_forest::{Contamination, IsolationForest, MaxSamples};
pub use kernel_pca::KernelPCA;
pub use kmeans::{KMeans, KMeansInit, NInit};
pub use knn::{Weights, KNN};
pub use lda::{LdaSolver, LDA};
pub use linear_regression::{LinearRegression, Penalty, Solver};
pub use linear_svc::LinearSVC;
pub use logistic_regression::{LogisticRegression, LogisticSolver};
pub use meanshift::{estimate_bandwidth, MeanShift};
pub use pca::{NComponents, PCA};
pub use svc::{DecisionShape, SVC};
pub use tsne::{LearningRate, TsneInit, TsneMethod, TSNE};
pub use crate::math::DistanceCalculationMetric;
pub use crate::traits::{Fit, FitTransform, Predict, Transform};
pub use types::{Gamma, KernelType, RegularizationType};
