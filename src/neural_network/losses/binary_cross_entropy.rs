//! Binary cross-entropy on probabilities ([`BinaryCrossEntropy`], RustyML 0.15's), and with
//! explicit options: on logits, or with float32 clamp bounds ([`ConfiguredBinaryCrossEntropy`]).

use super::{clamp_prob, elementwise_grad, elementwise_mean};
use crate::error::Result;
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
    fn compute_loss(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<f32> {
        elementwise_mean(y_true, y_pred, |t, p| {
            let (p, _) = clamp_prob(p);
            -(t * p.ln() + (1.0 - t) * (1.0 - p).ln())
        })
    }

    fn compute_grad(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<Tensor> {
        elementwise_grad(y_true, y_pred, |t, p| match clamp_prob(p) {
            (p, true) => -t / p + (1.0 - t) / (1.0 - p),
            (_, false) => 0.0,
        })
    }
}

impl BinaryCrossEntropy {
    /// The same loss as a [`ConfiguredBinaryCrossEntropy`], whose options can then change.
    pub fn configured() -> ConfiguredBinaryCrossEntropy {
        ConfiguredBinaryCrossEntropy::default()
    }
}

/// How probabilities are kept away from 0 and 1 before their logarithms are taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProbabilityClamp {
    /// `[1e-7, 1 - 1e-7]` exactly (in f64), as [`BinaryCrossEntropy`] does: a saturated
    /// prediction costs `-ln(1e-7) = 16.118`.
    #[default]
    Exact,
    /// The bounds rounded to f32 and `1 - p` taken in f32, as a float32 framework (Keras)
    /// computes: the upper bound is `0.99999988`, so a prediction saturated at 1 against a
    /// label 0 costs `-ln(2^-23) = 15.942`, one saturated at 0 against a label 1 `16.118`.
    Float32,
}

/// Binary cross-entropy with explicit options.
///
/// On probabilities (the default) it is [`BinaryCrossEntropy`]'s loss with the chosen
/// [`ProbabilityClamp`]. On logits (`with_from_logits(true)`) the loss is the numerically
/// stable `max(x, 0) - x y + ln(1 + exp(-|x|))` of `-(y ln σ(x) + (1 - y) ln(1 - σ(x)))`, with
/// gradient `(σ(x) - y) / n`; nothing is clamped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ConfiguredBinaryCrossEntropy {
    from_logits: bool,
    clamp: ProbabilityClamp,
}

impl ConfiguredBinaryCrossEntropy {
    /// Whether predictions are logits (`true`) or probabilities (`false`, the default).
    pub fn with_from_logits(mut self, from_logits: bool) -> Self {
        self.from_logits = from_logits;
        self
    }

    /// The clamp applied to probabilities (ignored on logits).
    pub fn with_probability_clamp(mut self, clamp: ProbabilityClamp) -> Self {
        self.clamp = clamp;
        self
    }

    pub fn from_logits(&self) -> bool {
        self.from_logits
    }
}

/// `f32` clamp bounds: `1e-7` and `1 - 1e-7`, each rounded to f32.
const LOW_F32: f32 = 1e-7;
const HIGH_F32: f32 = 1.0 - 1e-7;

/// `(p, 1 - p)` after the f32 clamp, and whether the clamp left `p` alone.
fn clamp_f32(p: f64) -> (f64, f64, bool) {
    let p = p as f32;
    let c = p.clamp(LOW_F32, HIGH_F32);
    (c as f64, (1.0 - c) as f64, c > LOW_F32 && c < HIGH_F32)
}

/// `ln(1 + exp(-|x|))`, the stable tail of the logistic loss.
fn softplus_neg_abs(x: f64) -> f64 {
    (-x.abs()).exp().ln_1p()
}

impl Loss for ConfiguredBinaryCrossEntropy {
    fn compute_loss(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<f32> {
        match (self.from_logits, self.clamp) {
            (true, _) => elementwise_mean(y_true, y_pred, |t, x| {
                x.max(0.0) - x * t + softplus_neg_abs(x)
            }),
            (false, ProbabilityClamp::Exact) => BinaryCrossEntropy.compute_loss(y_true, y_pred),
            (false, ProbabilityClamp::Float32) => elementwise_mean(y_true, y_pred, |t, p| {
                let (p, q, _) = clamp_f32(p);
                -(t * p.ln() + (1.0 - t) * q.ln())
            }),
        }
    }

    fn compute_grad(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<Tensor> {
        match (self.from_logits, self.clamp) {
            (true, _) => elementwise_grad(y_true, y_pred, |t, x| {
                let sigmoid = if x >= 0.0 {
                    1.0 / (1.0 + (-x).exp())
                } else {
                    let e = x.exp();
                    e / (1.0 + e)
                };
                sigmoid - t
            }),
            (false, ProbabilityClamp::Exact) => BinaryCrossEntropy.compute_grad(y_true, y_pred),
            (false, ProbabilityClamp::Float32) => {
                elementwise_grad(y_true, y_pred, |t, p| match clamp_f32(p) {
                    (p, q, true) => -t / p + (1.0 - t) / q,
                    (_, _, false) => 0.0,
                })
            }
        }
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

    /// Logit 2 against label 0 costs 2 + ln(1 + e^-2) = 2.126928; label 1 costs ln(1 + e^-2);
    /// huge logits stay finite and exact.
    #[test]
    fn logit_form_by_hand_and_finite_differences() {
        let bce = BinaryCrossEntropy::configured().with_from_logits(true);
        let l0 = bce
            .compute_loss(&t(&[1, 1], &[0.0]), &t(&[1, 1], &[2.0]))
            .unwrap() as f64;
        assert!((l0 - (2.0 + (-2.0f64).exp().ln_1p())).abs() < 1e-6);
        assert!((l0 - 2.126928).abs() < 1e-6);
        let l1 = bce
            .compute_loss(&t(&[1, 1], &[1.0]), &t(&[1, 1], &[2.0]))
            .unwrap() as f64;
        assert!((l1 - (-2.0f64).exp().ln_1p()).abs() < 1e-6);
        let huge = bce
            .compute_loss(&t(&[2], &[0.0, 1.0]), &t(&[2], &[500.0, -500.0]))
            .unwrap();
        assert!((huge - 500.0).abs() < 1e-3);
        // Gradient (σ(x) - y) / n.
        let y = t(&[2, 2], &[0.0, 1.0, 0.3, 1.0]);
        let x = t(&[2, 2], &[2.0, -1.0, 0.5, 30.0]);
        let g = bce.compute_grad(&y, &x).unwrap();
        let sig = |x: f64| 1.0 / (1.0 + (-x).exp());
        for (k, (&yk, &xk)) in y.iter().zip(x.iter()).enumerate() {
            let want = (sig(xk as f64) - yk as f64) / 4.0;
            assert!((g.as_slice().unwrap()[k] as f64 - want).abs() < 1e-7);
        }
        check_grad(&bce, &y, &t(&[2, 2], &[2.0, -1.0, 0.5, 3.0]), 2e-3);
    }

    /// The float32 clamp's upper bound is 1 - 2^-23 (the f32 nearest 1 - 1e-7), so a
    /// prediction saturated at 1 against label 0 costs -ln(2^-23) = 23 ln 2 = 15.942385; the
    /// exact clamp gives -ln(1e-7) = 16.118096. Away from the bounds the two agree.
    #[test]
    fn float32_clamp_by_hand() {
        let f32_bce =
            BinaryCrossEntropy::configured().with_probability_clamp(ProbabilityClamp::Float32);
        let exact = BinaryCrossEntropy::configured();
        let (y, p) = (t(&[1], &[0.0]), t(&[1], &[1.0]));
        let l = f32_bce.compute_loss(&y, &p).unwrap() as f64;
        assert!((l - 23.0 * 2f64.ln()).abs() < 1e-5, "{l}");
        let l = exact.compute_loss(&y, &p).unwrap() as f64;
        assert!((l + 1e-7f64.ln()).abs() < 1e-4, "{l}");
        let (y, p) = (t(&[1], &[1.0]), t(&[1], &[0.0]));
        let l = f32_bce.compute_loss(&y, &p).unwrap() as f64;
        assert!((l + (1e-7f32 as f64).ln()).abs() < 1e-5, "{l}");
        let y = t(&[2, 2], &[0.0, 1.0, 0.3, 1.0]);
        let p = t(&[2, 2], &[0.2, 0.6, 0.5, 0.9]);
        let (a, b) = (
            f32_bce.compute_loss(&y, &p).unwrap(),
            exact.compute_loss(&y, &p).unwrap(),
        );
        assert!((a - b).abs() < 1e-6);
        check_grad(&f32_bce, &y, &p, 2e-3);
        assert!(f32_bce
            .compute_grad(&t(&[1], &[0.0]), &t(&[1], &[1.0]))
            .unwrap()
            .iter()
            .all(|&g| g == 0.0));
    }
}
