//! Keras's loss configs: `{"name": ..., "from_logits": ...}` as the Python losses serialise.

use crate::error::{Error, RustymlResult};
use crate::neural_network::losses::{
    BinaryCrossEntropy, CategoricalCrossEntropy, MeanAbsoluteError, MeanSquaredError,
    ProbabilityClamp, SparseCategoricalCrossEntropy,
};
use crate::neural_network::traits::Loss;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct LossSpec {
    pub name: String,
    #[serde(default)]
    pub from_logits: bool,
}

impl LossSpec {
    pub fn build(&self) -> RustymlResult<Box<dyn Loss>> {
        Ok(match self.name.as_str() {
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
            other => {
                return Err(Error::invalid_parameter(
                    "loss",
                    format!("unknown loss {other:?}"),
                ))
            }
        })
    }
}
