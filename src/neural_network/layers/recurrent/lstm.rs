//! Long short-term memory with Keras's gates and initialisation.

use super::cell::Cell;
use super::layer_api::recurrent_layer;
use crate::error::Result;
use ndarray::Array2;

recurrent_layer! {
    /// Keras's `LSTM` over `[batch, timesteps, input_dim]`:
    ///
    /// `i, f, o = σ(x W + h U + b)` per gate, `c̃ = act(...)`, `c_t = f c_{t-1} + i c̃`,
    /// `h_t = o act(c_t)` (`σ` is the recurrent activation, sigmoid by default).
    ///
    /// The gates are fused in Keras's column-block order `[i | f | c | o]`: kernel
    /// `[input_dim, 4 units]` (Glorot-uniform), recurrent kernel `[units, 4 units]` (orthogonal),
    /// bias `[1, 4 units]` (zero, forget block one: Keras's `unit_forget_bias`).
    LSTM: Cell::Lstm,
    /// `units == 0` or `input_dim == 0` is an `InvalidParameter`.
    new,
    /// Replaces the fused weights (column blocks `[i | f | c | o]`): kernel
    /// `[input_dim, 4 units]`, recurrent kernel `[units, 4 units]`, bias `[1, 4 units]`.
    set_weights,
}

impl LSTM {
    /// Keras's `unit_forget_bias`: the forget block of the bias set to one (the default) or
    /// to zero like the others.
    /// Without `use_bias` the bias stays zero.
    pub fn with_unit_forget_bias(mut self, unit_forget_bias: bool) -> Self {
        self.core.set_unit_forget_bias(unit_forget_bias);
        self
    }

    /// Sets the weights gate by gate (kernels `[input_dim, units]`, recurrent kernels
    /// `[units, units]`, biases `[1, units]`) and packs them into the fused layout.
    #[allow(clippy::too_many_arguments)]
    pub fn set_gate_weights(
        &mut self,
        input_kernel: Array2<f32>,
        input_recurrent_kernel: Array2<f32>,
        input_bias: Array2<f32>,
        forget_kernel: Array2<f32>,
        forget_recurrent_kernel: Array2<f32>,
        forget_bias: Array2<f32>,
        cell_kernel: Array2<f32>,
        cell_recurrent_kernel: Array2<f32>,
        cell_bias: Array2<f32>,
        output_kernel: Array2<f32>,
        output_recurrent_kernel: Array2<f32>,
        output_bias: Array2<f32>,
    ) -> Result<()> {
        self.core.set_gate_blocks(
            [
                ("input", input_kernel, input_recurrent_kernel, input_bias),
                (
                    "forget",
                    forget_kernel,
                    forget_recurrent_kernel,
                    forget_bias,
                ),
                ("cell", cell_kernel, cell_recurrent_kernel, cell_bias),
                (
                    "output",
                    output_kernel,
                    output_recurrent_kernel,
                    output_bias,
                ),
            ],
            4,
        )
    }
}
