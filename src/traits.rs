//! The original crate's estimator traits. Each implementation forwards to the model's inherent
//! method of the same name, so generic code can drive any model.

use crate::error::Result;

/// Learn from `data` (`&x` or `(&x, &y)`).
pub trait Fit<D> {
    fn fit(&mut self, data: D) -> Result<&mut Self>;
}

/// Predict from a fitted model.
pub trait Predict<X> {
    type Output;
    fn predict(&self, input: X) -> Result<Self::Output>;
}

/// Transform with a fitted model.
pub trait Transform<X> {
    type Output;
    fn transform(&self, input: X) -> Result<Self::Output>;
}

/// Fit, then transform the same data.
pub trait FitTransform<D> {
    type Output;
    fn fit_transform(&mut self, data: D) -> Result<Self::Output>;
}
