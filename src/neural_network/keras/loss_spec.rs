//! Keras's loss configs: `{"name": ..., "from_logits": ..., "delta": ..., "reduction": ...}`
//! as the Python losses serialise.

use crate::error::{Error, RustymlResult};
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
    fn compute_loss(&self, y_true: &Tensor, y_pred: &Tensor) -> RustymlResult<f32> {
        Ok(self.0.compute_loss(y_true, y_pred)? * samples(y_pred))
    }

    fn compute_grad(&self, y_true: &Tensor, y_pred: &Tensor) -> RustymlResult<Tensor> {
        let n = samples(y_pred);
        Ok(self.0.compute_grad(y_true, y_pred)?.mapv(|g| g * n))
    }
}

impl LossSpec {
    pub fn build(&self) -> RustymlResult<Box<dyn Loss>> {
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
            None | Some("sum_over_batch_size") | Some("mean") | Some("mean_with_sample_weight") => {
                Ok(loss)
            }
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
