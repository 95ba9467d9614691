//! Classical machine learning estimators.

pub mod kernel_pca;
pub mod linear_regression;
pub mod pca;
pub mod tsne;
pub mod validation;

pub use kernel_pca::KernelPCA;
pub use linear_regression::{LinearRegression, Penalty, Solver};
pub use pca::{NComponents, PCA};
pub use tsne::{LearningRate, TsneInit, TsneMethod, TSNE};
