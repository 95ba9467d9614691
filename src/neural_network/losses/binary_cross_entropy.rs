//! Binary cross-entropy on probabilities.

use super::{clamp_prob, elementwise_grad, elementwise_mean};
use crate::error::RustymlResult;
use crate::neural_network::traits::Loss;
use crate::neural_network::Tensor;

/// `mean(-(y ln p + (1 - y) ln(1 - p)))` with `p` clamped to `[1e-7, 1 - 1e-7]`; gradient
/// `(-y / p + (1 - y) / (1 - p)) / n` where the clamp is inactive, 0 where it is active.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BinaryCrossEntropy;

impl BinaryCrossEntropy {
    pub fn new() -> Self {
        Self
    }
}

impl Loss for BinaryCrossEntropy {
    fn compute_loss(&self, y_true: &Tensor, y_pred: &Tensor) -> RustymlResult<f32> {
        elementwise_mean(y_true, y_pred, |t, p| {
            let (p, _) = clamp_prob(p);
            -(t * p.ln() + (1.0 - t) * (1.0 - p).ln())
        })
    }

    fn compute_grad(&self, y_true: &Tensor, y_pred: &Tensor) -> RustymlResult<Tensor> {
        elementwise_grad(y_true, y_pred, |t, p| match clamp_prob(p) {
            (p, true) => -t / p + (1.0 - t) / (1.0 - p),
            (_, false) => 0.0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{check_grad, t};
    use super::*;

    #[test]
    fn value_and_gradient() {
        let y = t(&[2, 2], &[0.0, 1.0, 0.3, 1.0]);
        let p = t(&[2, 2], &[0.2, 0.6, 0.5, 0.9]);
        let want = -((0.8f64).ln() + 0.6f64.ln() + 0.5f64.ln() + 0.9f64.ln()) / 4.0;
        let got = BinaryCrossEntropy.compute_loss(&y, &p).unwrap() as f64;
        assert!((got - want).abs() < 1e-6);
        check_grad(&BinaryCrossEntropy, &y, &p, 2e-3);
    }

    #[test]
    fn saturated_predictions_stay_finite() {
        let y = t(&[2], &[1.0, 0.0]);
        let p = t(&[2], &[0.0, 1.0]);
        let l = BinaryCrossEntropy.compute_loss(&y, &p).unwrap();
        assert!((l as f64 + (1e-7f64).ln()).abs() < 1e-3);
        assert!(BinaryCrossEntropy
            .compute_grad(&y, &p)
            .unwrap()
            .iter()
            .all(|g| g.is_finite()));
    }
}
