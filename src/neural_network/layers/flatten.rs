//! Flattens every axis after the batch axis into one.

use super::layer_util::{forward_cache, no_parameters};
use crate::error::{Error, Result};
use crate::neural_network::traits::Layer;
use crate::neural_network::Tensor;
use ndarray::IxDyn;

/// `[batch, d1, ..., dk] -> [batch, d1 * ... * dk]` (row-major order) for 3D to 5D inputs;
/// the backward pass restores the input's shape.
#[derive(Debug)]
pub struct Flatten {
    input_shape: Vec<usize>,
    input_dims: Option<Vec<usize>>,
}

impl Flatten {
    /// `input_shape` includes the batch axis: at least 2 axes, none of them 0.
    pub fn new(input_shape: Vec<usize>) -> Result<Self> {
        if input_shape.len() < 2 {
            return Err(Error::invalid_input(format!(
                "Flatten needs an input_shape with at least 2 axes, got {input_shape:?}"
            )));
        }
        if input_shape.contains(&0) {
            return Err(Error::invalid_input(format!(
                "Flatten input_shape has a zero dimension: {input_shape:?}"
            )));
        }
        Ok(Self {
            input_shape,
            input_dims: None,
        })
    }

    fn flatten(input: &Tensor) -> Result<Tensor> {
        if !(3..=5).contains(&input.ndim()) {
            return Err(Error::invalid_input(format!(
                "Flatten expects a 3D, 4D or 5D input, got shape {:?}",
                input.shape()
            )));
        }
        let batch = input.shape()[0];
        let features: usize = input.shape()[1..].iter().product();
        Ok(input
            .as_standard_layout()
            .into_owned()
            .into_shape_with_order(IxDyn(&[batch, features]))
            .expect("a standard-layout array reshapes to its own size"))
    }
}

impl Layer for Flatten {
    fn forward(&mut self, input: &Tensor) -> Result<Tensor> {
        let out = Self::flatten(input)?;
        self.input_dims = Some(input.shape().to_vec());
        Ok(out)
    }

    fn predict(&self, input: &Tensor) -> Result<Tensor> {
        Self::flatten(input)
    }

    fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor> {
        let dims = forward_cache(&self.input_dims, "Flatten")?;
        let expected = [dims[0], dims[1..].iter().product()];
        if grad_output.shape() != expected {
            return Err(Error::shape_mismatch(expected, grad_output.shape()));
        }
        Ok(grad_output
            .as_standard_layout()
            .into_owned()
            .into_shape_with_order(IxDyn(dims))
            .expect("sizes checked above"))
    }

    fn layer_type(&self) -> &str {
        "Flatten"
    }

    fn output_shape(&self) -> String {
        let features: usize = self.input_shape[1..].iter().product();
        format!("({}, {})", self.input_shape[0], features)
    }

    no_parameters!();
}
