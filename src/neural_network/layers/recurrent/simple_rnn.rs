//! The fully connected recurrent layer, `h_t = act(x_t W + h_{t-1} U + b)`.

use super::cell::Cell;
use super::layer_api::recurrent_layer;

recurrent_layer! {
    /// Keras's `SimpleRNN` over `[batch, timesteps, input_dim]`: kernel `[input_dim, units]`
    /// (Glorot-uniform), recurrent kernel `[units, units]` (orthogonal), bias `[1, units]` (zero).
    /// Outputs the last state `[batch, units]`, or every state with `with_return_sequences(true)`.
    SimpleRNN: Cell::Simple,
    /// `units == 0` or `input_dim == 0` is an `InvalidParameter`, as is softmax (not
    /// elementwise) or an invalid activation parameter.
    new,
    /// Replaces the kernel `[input_dim, units]`, recurrent kernel `[units, units]` and bias
    /// `[1, units]`; a wrong shape is `NnError::WeightShape`.
    set_weights,
}
