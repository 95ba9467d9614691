//! Classical machine learning estimators.

pub mod labels;
pub mod lda;
pub mod linear_regression;
pub mod linear_svc;
pub mod logistic_regression;
pub mod svc;
pub mod validation;

pub use lda::{LdaSolver, LDA};
pub use linear_regression::{LinearRegression, Penalty, Solver};
pub use linear_svc::LinearSVC;
pub use logistic_regression::{LogisticRegression, LogisticSolver};
pub use svc::{DecisionShape, SVC};
