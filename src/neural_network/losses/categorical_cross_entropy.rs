//! Categorical cross-entropy over the last axis, on probabilities or logits.

use super::{check_pair, clamp_prob};
use crate::error::{Error, Result};
use crate::neural_network::traits::Loss;
use crate::neural_network::Tensor;

/// `-Σ_k y_k ln p_k` per site (every position along the leading axes), averaged over sites.
///
/// On probabilities (Keras's path) each site's row is first renormalised to sum to 1, then
/// clamped to `[1e-7, 1 - 1e-7]`; the gradient is the exact derivative of that, which is why
/// every class receives the row-constant term `Σy / row_sum`. On logits (`from_logits`) the
/// loss is `Σy · logsumexp(z) - Σ y z` and the gradient `softmax(z) Σy - y`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CategoricalCrossEntropy {
    from_logits: bool,
}

impl CategoricalCrossEntropy {
    pub fn new(from_logits: bool) -> Self {
        Self { from_logits }
    }
}

/// The loss of one site's row `z` against the target weights `y(k)`.
pub(crate) fn row_loss(z: &[f32], y: impl Fn(usize) -> f64, from_logits: bool) -> f64 {
    if from_logits {
        let lse = log_sum_exp(z);
        z.iter()
            .enumerate()
            .map(|(k, &zk)| y(k) * (lse - zk as f64))
            .sum()
    } else {
        let sum: f64 = z.iter().map(|&v| v as f64).sum();
        z.iter()
            .enumerate()
            .filter(|&(k, _)| y(k) != 0.0)
            .map(|(k, &zk)| -y(k) * clamp_prob(zk as f64 / sum).0.ln())
            .sum()
    }
}

/// The gradient of [`row_loss`] with respect to `z`, times `scale`, written into `out`.
pub(crate) fn row_grad(
    z: &[f32],
    y: impl Fn(usize) -> f64,
    from_logits: bool,
    scale: f64,
    out: &mut [f32],
) {
    if from_logits {
        let lse = log_sum_exp(z);
        let y_sum: f64 = (0..z.len()).map(&y).sum();
        for (k, (o, &zk)) in out.iter_mut().zip(z).enumerate() {
            let softmax = (zk as f64 - lse).exp();
            *o = ((softmax * y_sum - y(k)) * scale) as f32;
        }
    } else {
        // d/dz_j of -Σ_k y_k ln clamp(z_k / S): only unclamped classes contribute, each
        // giving -y_j / z_j to its own class and y_k / S to every class.
        let sum: f64 = z.iter().map(|&v| v as f64).sum();
        let unclamped = |k: usize| clamp_prob(z[k] as f64 / sum).1;
        let spread: f64 = (0..z.len()).filter(|&k| unclamped(k)).map(&y).sum::<f64>() / sum;
        for (k, (o, &zk)) in out.iter_mut().zip(z).enumerate() {
            let own = if unclamped(k) { y(k) / zk as f64 } else { 0.0 };
            *o = ((spread - own) * scale) as f32;
        }
    }
}

/// `ln Σ exp(z)`, shifted by the maximum so no exponential overflows.
fn log_sum_exp(z: &[f32]) -> f64 {
    let max = z.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v as f64));
    if !max.is_finite() {
        return max;
    }
    max + z.iter().map(|&v| (v as f64 - max).exp()).sum::<f64>().ln()
}

impl CategoricalCrossEntropy {
    /// Checks the pair and returns the row-major predictions, targets and class count.
    fn rows(y_true: &Tensor, y_pred: &Tensor) -> Result<(Vec<f32>, Vec<f32>, usize)> {
        check_pair(y_true, y_pred)?;
        if y_pred.ndim() < 2 {
            return Err(Error::invalid_input(format!(
                "categorical cross-entropy needs (batch, ..., classes) inputs, got shape {:?}",
                y_pred.shape()
            )));
        }
        let classes = y_pred.shape()[y_pred.ndim() - 1];
        let z = y_pred.as_standard_layout().iter().copied().collect();
        let y = y_true.as_standard_layout().iter().copied().collect();
        Ok((z, y, classes))
    }
}

impl Loss for CategoricalCrossEntropy {
    fn compute_loss(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<f32> {
        let (z, y, c) = Self::rows(y_true, y_pred)?;
        let sites = z.len() / c;
        let total: f64 = z
            .chunks_exact(c)
            .zip(y.chunks_exact(c))
            .map(|(zr, yr)| row_loss(zr, |k| yr[k] as f64, self.from_logits))
            .sum();
        Ok((total / sites as f64) as f32)
    }

    fn compute_grad(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<Tensor> {
        let (z, y, c) = Self::rows(y_true, y_pred)?;
        let scale = 1.0 / (z.len() / c) as f64;
        let mut grad = vec![0.0f32; z.len()];
        for ((zr, yr), out) in z
            .chunks_exact(c)
            .zip(y.chunks_exact(c))
            .zip(grad.chunks_exact_mut(c))
        {
            row_grad(zr, |k| yr[k] as f64, self.from_logits, scale, out);
        }
        Ok(Tensor::from_shape_vec(y_pred.raw_dim(), grad).expect("gradient has the input's size"))
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{check_grad, t};
    use super::*;

    #[test]
    fn probability_path_matches_finite_differences_and_the_definition() {
        let cce = CategoricalCrossEntropy::new(false);
        let y = t(&[2, 3], &[1.0, 0.0, 0.0, 0.2, 0.8, 0.0]);
        let p = t(&[2, 3], &[0.6, 0.3, 0.3, 0.2, 0.5, 0.1]);
        // Rows renormalise to [0.5, 0.25, 0.25] and [0.25, 0.625, 0.125].
        let want = (-(0.5f64).ln() - 0.2 * 0.25f64.ln() - 0.8 * 0.625f64.ln()) / 2.0;
        assert!((cce.compute_loss(&y, &p).unwrap() as f64 - want).abs() < 1e-6);
        check_grad(&cce, &y, &p, 2e-3);
    }

    #[test]
    fn logit_path_is_stable_and_matches_finite_differences() {
        let cce = CategoricalCrossEntropy::new(true);
        let y = t(&[2, 3], &[0.0, 1.0, 0.0, 0.5, 0.0, 0.5]);
        let z = t(&[2, 3], &[1.0, -0.5, 2.0, 0.3, 0.1, -1.2]);
        check_grad(&cce, &y, &z, 2e-3);
        // Huge logits: log-sum-exp keeps the loss finite and exact.
        let big = t(&[1, 2], &[1000.0, 0.0]);
        let y1 = t(&[1, 2], &[0.0, 1.0]);
        assert!((cce.compute_loss(&y1, &big).unwrap() - 1000.0).abs() < 1e-3);
    }

    #[test]
    fn rank_three_averages_over_sites() {
        let cce = CategoricalCrossEntropy::new(false);
        let y = t(&[1, 2, 2], &[1.0, 0.0, 0.0, 1.0]);
        let p = t(&[1, 2, 2], &[0.5, 0.5, 0.25, 0.75]);
        let want = -(0.5f64.ln() + 0.75f64.ln()) / 2.0;
        assert!((cce.compute_loss(&y, &p).unwrap() as f64 - want).abs() < 1e-6);
        check_grad(&cce, &y, &p, 2e-3);
    }
}
