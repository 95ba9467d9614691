//! Keras's loss configs: `{"name": ..., "from_logits": ..., "delta": ..., "reduction": ...}`
//! as the Python losses serialise.

use crate::error::{Error, Result};
use crate::neural_network::losses::{
    BinaryCrossEntropy, CategoricalCrossEntropy, CategoricalHinge, CosineSimilarity, Hinge, Huber,
    KLDivergence, LogCosh, MeanAbsoluteError, MeanAbsolutePercentageError, MeanSquaredError,
    MeanSquaredLogarithmicError, ProbabilityClamp, SparseCategoricalCrossEntropy, SquaredHinge,
};
use crate::neural_network::traits::Loss;
use crate::neural_network::Tensor;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct LossSpec {
    pub name: String,
    #[serde(default)]
    pub from_logits: bool,
    /// Huber's threshold (Keras's default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta: Option<f32>,
    /// Keras's reduction of the per-sample losses: `sum_over_batch_size` (the default, also
    /// `mean` without sample weights) or `sum`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduction: Option<String>,
}

/// A loss whose per-sample values are summed rather than averaged (Keras's
/// `reduction="sum"`): the mean times the number of samples (positions before the last axis).
struct Summed(Box<dyn Loss>);

fn samples(y_pred: &Tensor) -> f32 {
    let last = y_pred.shape().last().copied().unwrap_or(1).max(1);
    (y_pred.len() / last).max(1) as f32
}

impl Loss for Summed {
    fn compute_loss(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<f32> {
        Ok(self.0.compute_loss(y_true, y_pred)? * samples(y_pred))
    }

    fn compute_grad(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<Tensor> {
        let n = samples(y_pred);
        Ok(self.0.compute_grad(y_true, y_pred)?.mapv(|g| g * n))
    }

    fn compute_weighted_loss(
        &self,
        y_true: &Tensor,
        y_pred: &Tensor,
        weights: &[f32],
    ) -> Result<f32> {
        Ok(self.0.compute_weighted_loss(y_true, y_pred, weights)? * samples(y_pred))
    }

    fn compute_weighted_grad(
        &self,
        y_true: &Tensor,
        y_pred: &Tensor,
        weights: &[f32],
    ) -> Result<Tensor> {
        let n = samples(y_pred);
        Ok(self
            .0
            .compute_weighted_grad(y_true, y_pred, weights)?
            .mapv(|g| g * n))
    }
}

/// Keras's `reduction="mean_with_sample_weight"`: without weights (or with unit weights) the
/// plain mean; with weights the weighted sum divided by the sum of the weights (0 when that
/// sum is 0, Keras's `divide_no_nan`) instead of by the batch size.
struct MeanWithSampleWeight(Box<dyn Loss>);

impl MeanWithSampleWeight {
    /// The factor turning the `sum_over_batch_size` weighted loss into this one.
    fn factor(weights: &[f32]) -> f64 {
        let sum: f64 = weights.iter().map(|&w| f64::from(w)).sum();
        if sum == 0.0 {
            0.0
        } else {
            weights.len() as f64 / sum
        }
    }
}

impl Loss for MeanWithSampleWeight {
    fn compute_loss(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<f32> {
        self.0.compute_loss(y_true, y_pred)
    }

    fn compute_grad(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<Tensor> {
        self.0.compute_grad(y_true, y_pred)
    }

    fn compute_weighted_loss(
        &self,
        y_true: &Tensor,
        y_pred: &Tensor,
        weights: &[f32],
    ) -> Result<f32> {
        let value = self.0.compute_weighted_loss(y_true, y_pred, weights)?;
        if crate::neural_network::losses::sample_weights::all_unit(weights) {
            return Ok(value);
        }
        Ok((f64::from(value) * Self::factor(weights)) as f32)
    }

    fn compute_weighted_grad(
        &self,
        y_true: &Tensor,
        y_pred: &Tensor,
        weights: &[f32],
    ) -> Result<Tensor> {
        let grad = self.0.compute_weighted_grad(y_true, y_pred, weights)?;
        if crate::neural_network::losses::sample_weights::all_unit(weights) {
            return Ok(grad);
        }
        let f = Self::factor(weights) as f32;
        Ok(grad.mapv(|g| g * f))
    }
}

impl LossSpec {
    pub fn build(&self) -> Result<Box<dyn Loss>> {
        let loss: Box<dyn Loss> = match self.name.as_str() {
            "mean_squared_error" => Box::new(MeanSquaredError::new()),
            "mean_absolute_error" => Box::new(MeanAbsoluteError::new()),
            // Keras clamps probabilities in float32 (upper bound 1 - 2^-23).
            "binary_crossentropy" => Box::new(
                BinaryCrossEntropy::configured()
                    .with_from_logits(self.from_logits)
                    .with_probability_clamp(ProbabilityClamp::Float32),
            ),
            "categorical_crossentropy" => Box::new(CategoricalCrossEntropy::new(self.from_logits)),
            "sparse_categorical_crossentropy" => {
                Box::new(SparseCategoricalCrossEntropy::new(self.from_logits))
            }
            "huber" => Box::new(Huber::new(self.delta.unwrap_or(1.0))?),
            "log_cosh" => Box::new(LogCosh),
            "mean_absolute_percentage_error" => Box::new(MeanAbsolutePercentageError),
            "mean_squared_logarithmic_error" => Box::new(MeanSquaredLogarithmicError),
            "kl_divergence" => Box::new(KLDivergence),
            "hinge" => Box::new(Hinge),
            "squared_hinge" => Box::new(SquaredHinge),
            "categorical_hinge" => Box::new(CategoricalHinge),
            "cosine_similarity" => Box::new(CosineSimilarity),
            other => {
                return Err(Error::invalid_parameter(
                    "loss",
                    format!("unknown loss {other:?}"),
                ))
            }
        };
        match self.reduction.as_deref() {
            None | Some("sum_over_batch_size") | Some("mean") => Ok(loss),
            Some("mean_with_sample_weight") => Ok(Box::new(MeanWithSampleWeight(loss))),
            Some("sum") => Ok(Box::new(Summed(loss))),
            Some(other) => Err(Error::invalid_parameter(
                "reduction",
                format!(
                    "{other:?} cannot train a model (a scalar loss is needed): use \
                     \"sum_over_batch_size\" or \"sum\""
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(reduction: &str) -> Box<dyn Loss> {
        LossSpec {
            name: "mean_squared_error".into(),
            from_logits: false,
            delta: None,
            reduction: Some(reduction.into()),
        }
        .build()
        .unwrap()
    }

    /// Per-sample squared errors 4 and 1 with weights 3 and 1: Keras's reductions give
    /// (12 + 1) / 2 (`sum_over_batch_size`), 12 + 1 (`sum`) and (12 + 1) / (3 + 1)
    /// (`mean_with_sample_weight`); all-zero weights give 0 there (`divide_no_nan`).
    #[test]
    fn weighted_reductions_by_hand() {
        let y = Tensor::from_shape_vec(vec![2, 1], vec![0.0, 0.0]).unwrap();
        let p = Tensor::from_shape_vec(vec![2, 1], vec![2.0, 1.0]).unwrap();
        let w = [3.0f32, 1.0];
        let value = |r: &str| spec(r).compute_weighted_loss(&y, &p, &w).unwrap();
        assert!((value("sum_over_batch_size") - 6.5).abs() < 1e-6);
        assert!((value("sum") - 13.0).abs() < 1e-6);
        assert!((value("mean_with_sample_weight") - 3.25).abs() < 1e-6);
        let zero = spec("mean_with_sample_weight")
            .compute_weighted_loss(&y, &p, &[0.0, 0.0])
            .unwrap();
        assert_eq!(zero, 0.0);
        // gradients: d/dp_i of each, 2 p_i w_i times 1/2, 1 and 1/4
        let grad = |r: &str| spec(r).compute_weighted_grad(&y, &p, &w).unwrap();
        for (r, f) in [
            ("sum_over_batch_size", 0.5f32),
            ("sum", 1.0),
            ("mean_with_sample_weight", 0.25),
        ] {
            let g = grad(r);
            assert!((g[[0, 0]] - 12.0 * f).abs() < 1e-5, "{r}");
            assert!((g[[1, 0]] - 2.0 * f).abs() < 1e-5, "{r}");
        }
        // unit weights: the unweighted value, bit for bit
        for r in ["sum_over_batch_size", "sum", "mean_with_sample_weight"] {
            let l = spec(r);
            assert_eq!(
                l.compute_weighted_loss(&y, &p, &[1.0, 1.0])
                    .unwrap()
                    .to_bits(),
                l.compute_loss(&y, &p).unwrap().to_bits()
            );
        }
    }
}
