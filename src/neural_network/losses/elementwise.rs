//! Keras's elementwise regression losses: Huber, log-cosh, mean absolute percentage error and
//! mean squared logarithmic error. Keras averages each over the last axis and then over the
//! samples, which for equal-length rows is the mean over every element.

use super::{elementwise_grad, elementwise_mean, EPSILON};
use crate::error::{Error, Result};
use crate::neural_network::traits::Loss;
use crate::neural_network::Tensor;

/// Huber: `0.5 e²` where `|e| <= delta`, else `delta |e| - 0.5 delta²`, with `e = p - t`;
/// gradient `e` clipped to `[-delta, delta]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Huber {
    delta: f64,
}

impl Huber {
    /// `delta` finite and >= 0 (Keras's default is 1).
    pub fn new(delta: f32) -> Result<Self> {
        if !(delta.is_finite() && delta >= 0.0) {
            return Err(Error::invalid_parameter(
                "delta",
                format!("must be finite and >= 0, got {delta}"),
            ));
        }
        Ok(Self {
            delta: delta as f64,
        })
    }
}

impl Loss for Huber {
    fn compute_loss(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<f32> {
        let d = self.delta;
        elementwise_mean(y_true, y_pred, |t, p| {
            let e = p - t;
            if e.abs() <= d {
                0.5 * e * e
            } else {
                d * e.abs() - 0.5 * d * d
            }
        })
    }

    fn compute_grad(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<Tensor> {
        let d = self.delta;
        elementwise_grad(y_true, y_pred, |t, p| (p - t).clamp(-d, d))
    }
}

/// `ln cosh(p - t)`, computed as `x + softplus(-2x) - ln 2` so that it cannot overflow;
/// gradient `tanh(p - t)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LogCosh;

fn softplus(z: f64) -> f64 {
    z.max(0.0) + (-z.abs()).exp().ln_1p()
}

impl Loss for LogCosh {
    fn compute_loss(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<f32> {
        elementwise_mean(y_true, y_pred, |t, p| {
            let x = p - t;
            x + softplus(-2.0 * x) - std::f64::consts::LN_2
        })
    }

    fn compute_grad(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<Tensor> {
        elementwise_grad(y_true, y_pred, |t, p| (p - t).tanh())
    }
}

/// `100 |t - p| / max(|t|, 1e-7)`; gradient `100 sign(p - t) / max(|t|, 1e-7)`, 0 at ties.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MeanAbsolutePercentageError;

impl Loss for MeanAbsolutePercentageError {
    fn compute_loss(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<f32> {
        elementwise_mean(y_true, y_pred, |t, p| {
            100.0 * (t - p).abs() / t.abs().max(EPSILON)
        })
    }

    fn compute_grad(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<Tensor> {
        elementwise_grad(y_true, y_pred, |t, p| {
            let sign = if p > t {
                1.0
            } else if p < t {
                -1.0
            } else {
                0.0
            };
            100.0 * sign / t.abs().max(EPSILON)
        })
    }
}

/// `(ln(max(p, 1e-7) + 1) - ln(max(t, 1e-7) + 1))²`; the gradient is 0 where the floor on
/// `p` is active.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MeanSquaredLogarithmicError;

impl Loss for MeanSquaredLogarithmicError {
    fn compute_loss(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<f32> {
        elementwise_mean(y_true, y_pred, |t, p| {
            let d = (p.max(EPSILON) + 1.0).ln() - (t.max(EPSILON) + 1.0).ln();
            d * d
        })
    }

    fn compute_grad(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<Tensor> {
        elementwise_grad(y_true, y_pred, |t, p| {
            if p < EPSILON {
                return 0.0;
            }
            let d = (p + 1.0).ln() - (t.max(EPSILON) + 1.0).ln();
            2.0 * d / (p + 1.0)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{check_grad, t};
    use super::*;

    #[test]
    fn values_by_hand_and_gradients_by_finite_differences() {
        let y = t(&[2, 2], &[1.0, -2.0, 0.5, 3.0]);
        let p = t(&[2, 2], &[1.3, 0.5, 0.4, 1.0]);
        // Errors 0.3, 2.5, -0.1, -2: Huber(1) = 0.045, 2.0, 0.005, 1.5.
        let huber = Huber::new(1.0).unwrap();
        let got = huber.compute_loss(&y, &p).unwrap() as f64;
        assert!((got - (0.045 + 2.0 + 0.005 + 1.5) / 4.0).abs() < 1e-6);
        let logcosh: f64 = [0.3f64, 2.5, -0.1, -2.0]
            .iter()
            .map(|e| e.cosh().ln())
            .sum::<f64>()
            / 4.0;
        assert!((LogCosh.compute_loss(&y, &p).unwrap() as f64 - logcosh).abs() < 1e-6);
        let mape = 100.0 * (0.3 / 1.0 + 2.5 / 2.0 + 0.1 / 0.5 + 2.0 / 3.0) / 4.0;
        let got = MeanAbsolutePercentageError.compute_loss(&y, &p).unwrap() as f64;
        assert!((got - mape).abs() < 1e-4);
        let msle: f64 = [(1.3f64, 1.0f64), (0.5, 1e-7), (0.4, 0.5), (1.0, 3.0)]
            .iter()
            .map(|(p, t)| ((p + 1.0).ln() - (t + 1.0).ln()).powi(2))
            .sum::<f64>()
            / 4.0;
        let got = MeanSquaredLogarithmicError.compute_loss(&y, &p).unwrap() as f64;
        assert!((got - msle).abs() < 1e-6);
        for loss in [
            &huber as &dyn Loss,
            &LogCosh,
            &MeanAbsolutePercentageError,
            &MeanSquaredLogarithmicError,
        ] {
            check_grad(loss, &y, &p, 2e-3);
        }
        // Far in the tails log-cosh stays finite: ln cosh(1000) = 1000 - ln 2.
        let far = LogCosh
            .compute_loss(&t(&[1], &[0.0]), &t(&[1], &[1000.0]))
            .unwrap();
        assert!((far as f64 - (1000.0 - std::f64::consts::LN_2)).abs() < 1e-3);
        assert!(Huber::new(-1.0).is_err());
    }
}
