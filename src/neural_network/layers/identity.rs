//! The `Identity` layer: passes its input through unchanged (a placeholder in a model).

use super::layer_util::{batch_free_shape, require_batched, require_shape, to_c_order};
use super::layer_weight::LayerWeight;
use super::TrainingParameters;
use crate::error::{Error, Result};
use crate::neural_network::traits::Layer;
use crate::neural_network::Tensor;

/// `f(x) = x`, and the gradient passes back unchanged. Outputs are in C order.
#[derive(Debug, Default)]
pub struct Identity {
    /// The shape of the last training input: what `backward` checks the gradient against.
    input_shape: Option<Vec<usize>>,
}

impl Identity {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Layer for Identity {
    fn forward(&mut self, input: &Tensor) -> Result<Tensor> {
        let out = self.predict(input)?;
        self.input_shape = Some(input.shape().to_vec());
        Ok(out)
    }

    fn predict(&self, input: &Tensor) -> Result<Tensor> {
        require_batched(input)?;
        Ok(to_c_order(input))
    }

    fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor> {
        let shape = self
            .input_shape
            .as_ref()
            .ok_or_else(|| Error::forward_pass_not_run("Identity"))?;
        require_shape(shape, grad_output.shape())?;
        Ok(to_c_order(grad_output))
    }

    fn layer_type(&self) -> &str {
        "Identity"
    }

    fn output_shape(&self) -> String {
        self.input_shape
            .as_deref()
            .map_or_else(|| "Unknown".to_string(), batch_free_shape)
    }

    fn param_count(&self) -> TrainingParameters {
        TrainingParameters::NoTrainable
    }

    fn get_weights(&self) -> LayerWeight<'_> {
        LayerWeight::Empty
    }
}
