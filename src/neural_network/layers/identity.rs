//! The `Identity` layer: passes its input through unchanged (a placeholder in a model).

use super::layer_util::{no_parameters, require_batched, seen_shape, shape_kept_grad, to_c_order};
use crate::error::Result;
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
        shape_kept_grad(&self.input_shape, "Identity", grad_output)
    }

    fn layer_type(&self) -> &str {
        "Identity"
    }

    fn output_shape(&self) -> String {
        seen_shape(self.input_shape.as_deref())
    }

    no_parameters!();
}
