//! Classical machine learning estimators.

pub mod linear_regression;
pub mod validation;

pub use linear_regression::{LinearRegression, Penalty, Solver};
