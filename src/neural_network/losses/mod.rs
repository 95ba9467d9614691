//! Losses, Keras's definitions: MSE, MAE and the other elementwise losses ([`elementwise`])
//! average over every element; KL divergence, cosine similarity and categorical hinge reduce
//! each site's last axis, then average over sites ([`row_losses`]); the cross-entropies
//! over every site (batch entry, or position of a longer sequence), probabilities are clamped
//! to `[EPSILON, 1 - EPSILON]`, and the logit paths use log-sum-exp. Gradients are the exact
//! derivatives of those losses (zero through a clamp that is active, as autodiff gives).

pub mod binary_cross_entropy;
pub mod categorical_cross_entropy;
pub mod elementwise;
pub mod mean_absolute_error;
pub mod mean_squared_error;
pub mod row_losses;
pub mod sample_weights;
pub mod sparse_categorical_cross_entropy;

pub use binary_cross_entropy::{
    BinaryCrossEntropy, ConfiguredBinaryCrossEntropy, ProbabilityClamp,
};
pub use categorical_cross_entropy::CategoricalCrossEntropy;
pub use elementwise::{Huber, LogCosh, MeanAbsolutePercentageError, MeanSquaredLogarithmicError};
pub use mean_absolute_error::MeanAbsoluteError;
pub use mean_squared_error::MeanSquaredError;
pub use row_losses::{CategoricalHinge, CosineSimilarity, Hinge, KLDivergence, SquaredHinge};
pub use sparse_categorical_cross_entropy::SparseCategoricalCrossEntropy;

use crate::error::{Error, Result};
use crate::neural_network::Tensor;

/// Keras's fuzz factor for clamping probabilities.
pub const EPSILON: f64 = 1e-7;

/// `y_true` and `y_pred` must have one shape, with at least one element.
pub(crate) fn check_pair(y_true: &Tensor, y_pred: &Tensor) -> Result<()> {
    if y_true.shape() != y_pred.shape() {
        return Err(Error::shape_mismatch(y_true.shape(), y_pred.shape()));
    }
    if y_true.is_empty() {
        return Err(Error::empty_input("loss inputs"));
    }
    Ok(())
}

/// `y_true` and `y_pred` both have a batch axis of one non-zero length (their other axes
/// may differ: sparse labels against class scores).
pub(crate) fn check_pair_batch(y_true: &Tensor, y_pred: &Tensor) -> Result<()> {
    match (y_true.shape().first(), y_pred.shape().first()) {
        (Some(&a), Some(&b)) if a == b && a > 0 => Ok(()),
        (Some(&a), Some(&b)) if a != b => Err(Error::dimension_mismatch(b, a)),
        _ => Err(Error::empty_input("loss inputs")),
    }
}

/// The mean of `f(t, p)` over every element pair, accumulated in f64 by the deterministic
/// blocked fold (eight lanes per block, blocks merged in order: the same bits at any thread
/// count, and no serial chain of dependent additions).
pub(crate) fn elementwise_mean(
    y_true: &Tensor,
    y_pred: &Tensor,
    f: impl Fn(f64, f64) -> f64 + Sync,
) -> Result<f32> {
    check_pair(y_true, y_pred)?;
    let (t, p) = (y_true.as_standard_layout(), y_pred.as_standard_layout());
    let (t, p) = (
        t.as_slice().expect("standard layout"),
        p.as_slice().expect("standard layout"),
    );
    let total = crate::math::reduction::sum_zip_f32(t, p, |t, p| f(t as f64, p as f64));
    Ok((total / y_true.len() as f64) as f32)
}

/// The gradient `f(t, p) / n` of an elementwise mean.
pub(crate) fn elementwise_grad(
    y_true: &Tensor,
    y_pred: &Tensor,
    f: impl Fn(f64, f64) -> f64,
) -> Result<Tensor> {
    check_pair(y_true, y_pred)?;
    let n = y_true.len() as f64;
    let mut grad = Tensor::zeros(y_pred.raw_dim());
    ndarray::Zip::from(&mut grad)
        .and(y_true)
        .and(y_pred)
        .for_each(|g, &t, &p| *g = (f(t as f64, p as f64) / n) as f32);
    Ok(grad)
}

/// `p` clamped into `[EPSILON, 1 - EPSILON]`, and whether the clamp left it alone (the clamp's
/// derivative).
#[inline]
pub(crate) fn clamp_prob(p: f64) -> (f64, bool) {
    let c = p.clamp(EPSILON, 1.0 - EPSILON);
    (c, c == p)
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;
    use crate::neural_network::traits::Loss;

    /// Central finite differences of `loss` in f64 around `y_pred`, compared with the analytic
    /// gradient, element by element.
    pub(crate) fn check_grad(loss: &dyn Loss, y_true: &Tensor, y_pred: &Tensor, tol: f32) {
        let grad = loss.compute_grad(y_true, y_pred).unwrap();
        let h = 1e-3f32;
        for i in 0..y_pred.len() {
            let mut plus = y_pred.clone();
            let mut minus = y_pred.clone();
            plus.as_slice_mut().unwrap()[i] += h;
            minus.as_slice_mut().unwrap()[i] -= h;
            let lp = loss.compute_loss(y_true, &plus).unwrap() as f64;
            let lm = loss.compute_loss(y_true, &minus).unwrap() as f64;
            let numeric = ((lp - lm) / (2.0 * h as f64)) as f32;
            let analytic = grad.as_slice().unwrap()[i];
            assert!(
                (numeric - analytic).abs() <= tol,
                "element {i}: analytic {analytic}, numeric {numeric}"
            );
        }
    }

    pub(crate) fn t(shape: &[usize], v: &[f32]) -> Tensor {
        Tensor::from_shape_vec(shape.to_vec(), v.to_vec()).unwrap()
    }
}
