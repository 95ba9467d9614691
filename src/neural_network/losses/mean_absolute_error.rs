//! Mean absolute error.

use super::{elementwise_grad, elementwise_mean};
use crate::error::Result;
use crate::neural_network::traits::Loss;
use crate::neural_network::Tensor;

/// `mean(|y_pred - y_true|)` over every element; gradient `sign(y_pred - y_true) / n`, 0 at ties.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MeanAbsoluteError;

impl MeanAbsoluteError {
    pub fn new() -> Self {
        Self
    }
}

impl Loss for MeanAbsoluteError {
    fn compute_loss(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<f32> {
        elementwise_mean(y_true, y_pred, |t, p| (p - t).abs())
    }

    fn compute_grad(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<Tensor> {
        elementwise_grad(y_true, y_pred, |t, p| {
            if p > t {
                1.0
            } else if p < t {
                -1.0
            } else {
                0.0
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{check_grad, t};
    use super::*;

    #[test]
    fn value_and_gradient_away_from_ties() {
        let y = t(&[3], &[1.0, -2.0, 0.5]);
        let p = t(&[3], &[2.0, -1.0, 0.0]);
        assert!((MeanAbsoluteError.compute_loss(&y, &p).unwrap() - 2.5 / 3.0).abs() < 1e-6);
        check_grad(&MeanAbsoluteError, &y, &p, 1e-3);
    }
}
