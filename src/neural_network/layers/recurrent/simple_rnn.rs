//! The fully connected recurrent layer, `h_t = act(x_t W + h_{t-1} U + b)`.

use super::cell::Cell;
use super::layer_api::recurrent_layer;
use super::time_loop::Recurrent;
use crate::error::Result;
use crate::neural_network::layers::activation::Activation;
use ndarray::Array2;

/// Keras's `SimpleRNN` over `[batch, timesteps, input_dim]`: kernel `[input_dim, units]`
/// (Glorot-uniform), recurrent kernel `[units, units]` (orthogonal), bias `[1, units]` (zero).
/// Outputs the last state `[batch, units]`, or every state with `with_return_sequences(true)`.
#[derive(Debug)]
pub struct SimpleRNN {
    core: Recurrent,
}

impl SimpleRNN {
    /// `units == 0` or `input_dim == 0` is an `InvalidParameter`, as is softmax (not
    /// elementwise) or an invalid activation parameter.
    pub fn new(input_dim: usize, units: usize, activation: impl Into<Activation>) -> Result<Self> {
        Ok(Self {
            core: Recurrent::new(Cell::Simple, input_dim, units, activation.into(), None)?,
        })
    }

    /// Replaces the kernel `[input_dim, units]`, recurrent kernel `[units, units]` and bias
    /// `[1, units]`; a wrong shape is `NnError::WeightShape`.
    pub fn set_weights(
        &mut self,
        kernel: Array2<f32>,
        recurrent_kernel: Array2<f32>,
        bias: Array2<f32>,
    ) -> Result<()> {
        self.core.set_weights(kernel, recurrent_kernel, bias)
    }
}

recurrent_layer!(SimpleRNN);
