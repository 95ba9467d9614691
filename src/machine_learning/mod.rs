//! Classical machine learning estimators.

pub mod linear_regression;
/// Input checks, shared crate-wide (re-exported here for the models).
pub use crate::validation;

pub use linear_regression::{LinearRegression, Penalty, Solver};
