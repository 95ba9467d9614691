//! Mean squared error.

use super::{elementwise_grad, elementwise_mean};
use crate::error::Result;
use crate::neural_network::traits::Loss;
use crate::neural_network::Tensor;

/// `mean((y_pred - y_true)²)` over every element; gradient `2 (y_pred - y_true) / n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MeanSquaredError;

impl MeanSquaredError {
    pub fn new() -> Self {
        Self
    }
}

impl Loss for MeanSquaredError {
    fn compute_loss(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<f32> {
        elementwise_mean(y_true, y_pred, |t, p| (p - t) * (p - t))
    }

    fn compute_grad(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<Tensor> {
        elementwise_grad(y_true, y_pred, |t, p| 2.0 * (p - t))
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{check_grad, t};
    use super::*;

    #[test]
    fn value_and_gradient() {
        let y = t(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
        let p = t(&[2, 2], &[1.5, 2.0, 1.0, 5.0]);
        // (0.25 + 0 + 4 + 1) / 4
        assert!((MeanSquaredError.compute_loss(&y, &p).unwrap() - 1.3125).abs() < 1e-6);
        check_grad(&MeanSquaredError, &y, &p, 1e-3);
    }
}
