//! Sparse categorical cross-entropy: categorical cross-entropy with class-index targets.

use super::categorical_cross_entropy::{row_grad, row_loss};
use crate::error::{Error, Result};
use crate::neural_network::traits::Loss;
use crate::neural_network::Tensor;

/// Categorical cross-entropy against integer class labels: `y_true` is `[batch, 1]` holding
/// indices in `0..classes`, `y_pred` is `[batch, classes]` (probabilities, or logits with
/// `from_logits`). Same loss and gradient as [`super::CategoricalCrossEntropy`] on the one-hot
/// targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SparseCategoricalCrossEntropy {
    from_logits: bool,
}

impl SparseCategoricalCrossEntropy {
    pub fn new(from_logits: bool) -> Self {
        Self { from_logits }
    }

    /// Checks the inputs and returns the labels, the row-major predictions and the class count.
    fn rows(y_true: &Tensor, y_pred: &Tensor) -> Result<(Vec<usize>, Vec<f32>, usize)> {
        if y_pred.ndim() != 2 {
            return Err(Error::invalid_input(format!(
                "sparse categorical cross-entropy needs [batch, classes] predictions, got shape {:?}",
                y_pred.shape()
            )));
        }
        if y_true.ndim() != 2 || y_true.shape()[1] != 1 {
            return Err(Error::invalid_input(format!(
                "sparse categorical cross-entropy needs [batch, 1] labels, got shape {:?}",
                y_true.shape()
            )));
        }
        let (batch, classes) = (y_pred.shape()[0], y_pred.shape()[1]);
        if y_true.shape()[0] != batch {
            return Err(Error::dimension_mismatch(batch, y_true.shape()[0]));
        }
        if y_pred.is_empty() {
            return Err(Error::empty_input("loss inputs"));
        }
        let labels = y_true
            .iter()
            .map(|&l| {
                if l.is_finite() && l >= 0.0 && l.fract() == 0.0 && (l as usize) < classes {
                    Ok(l as usize)
                } else {
                    Err(Error::invalid_input(format!(
                        "label {l} is not a class index in 0..{classes}"
                    )))
                }
            })
            .collect::<Result<Vec<_>>>()?;
        Ok((
            labels,
            y_pred.as_standard_layout().iter().copied().collect(),
            classes,
        ))
    }
}

/// The one-hot target of `label`.
fn one_hot(label: usize) -> impl Fn(usize) -> f64 {
    move |k| if k == label { 1.0 } else { 0.0 }
}

impl Loss for SparseCategoricalCrossEntropy {
    fn compute_loss(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<f32> {
        let (labels, z, c) = Self::rows(y_true, y_pred)?;
        let total: f64 = z
            .chunks_exact(c)
            .zip(&labels)
            .map(|(zr, &l)| row_loss(zr, one_hot(l), self.from_logits))
            .sum();
        Ok((total / labels.len() as f64) as f32)
    }

    fn compute_grad(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<Tensor> {
        let (labels, z, c) = Self::rows(y_true, y_pred)?;
        let scale = 1.0 / labels.len() as f64;
        let mut grad = vec![0.0f32; z.len()];
        for ((zr, &l), out) in z.chunks_exact(c).zip(&labels).zip(grad.chunks_exact_mut(c)) {
            row_grad(zr, one_hot(l), self.from_logits, scale, out);
        }
        Ok(Tensor::from_shape_vec(y_pred.raw_dim(), grad).expect("gradient has the input's size"))
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{check_grad, t};
    use super::*;

    #[test]
    fn both_paths_match_finite_differences() {
        let labels = t(&[2, 1], &[2.0, 0.0]);
        let p = t(&[2, 3], &[0.2, 0.3, 0.5, 0.7, 0.2, 0.3]);
        let sparse = SparseCategoricalCrossEntropy::new(false);
        let want = -(0.5f64.ln() + (0.7f64 / 1.2).ln()) / 2.0;
        assert!((sparse.compute_loss(&labels, &p).unwrap() as f64 - want).abs() < 1e-6);
        check_grad(&sparse, &labels, &p, 2e-3);
        let z = t(&[2, 3], &[0.5, -1.0, 2.0, 3.0, 0.0, -2.0]);
        check_grad(&SparseCategoricalCrossEntropy::new(true), &labels, &z, 2e-3);
    }

    #[test]
    fn rejects_bad_labels() {
        let p = t(&[1, 3], &[0.2, 0.3, 0.5]);
        let sparse = SparseCategoricalCrossEntropy::new(false);
        for bad in [-1.0, 3.0, 0.5, f32::NAN] {
            assert!(matches!(
                sparse.compute_loss(&t(&[1, 1], &[bad]), &p),
                Err(Error::InvalidInput(_))
            ));
        }
    }
}
