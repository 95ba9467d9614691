//! Gated recurrent unit with Keras's gates (update `z`, reset `r`, candidate `h`).

use super::cell::Cell;
use super::layer_api::recurrent_layer;
use crate::error::Result;
use ndarray::Array2;

recurrent_layer! {
    /// Keras's `GRU` over `[batch, timesteps, input_dim]`:
    ///
    /// `z, r = σ(x W + h_{t-1} U + b)`, `h̃ = act(x W_h + b_h + (r h_{t-1}) U_h)`,
    /// `h_t = z h_{t-1} + (1 - z) h̃`.
    ///
    /// The gates are fused in Keras's column-block order `[z | r | h]`: kernel
    /// `[input_dim, 3 units]`, recurrent kernel `[units, 3 units]`, bias `[1, 3 units]`. That is
    /// Keras's `reset_after=False` layout, the default here; `with_reset_after(true)` gives Keras's
    /// own default, `h̃ = act(x W_h + b_h + r (h_{t-1} U_h + b_rh))`, with a `[2, 3 units]` bias
    /// (input row, recurrent row).
    GRU: Cell::Gru { reset_after: false },
    /// `units == 0` or `input_dim == 0` is an `InvalidParameter`.
    new,
    /// Replaces the fused weights (column blocks `[z | r | h]`): kernel `[input_dim, 3 units]`,
    /// recurrent kernel `[units, 3 units]`, bias `[1, 3 units]` (`[2, 3 units]` with
    /// `reset_after`).
    set_weights,
}

impl GRU {
    /// Keras's `reset_after`: the bias becomes `[2, 3 units]` (reset to zero), so call it
    /// before `set_weights`.
    pub fn with_reset_after(mut self, reset_after: bool) -> Self {
        self.core.set_reset_after(reset_after);
        self
    }

    /// Sets the weights gate by gate, in the order reset, update, candidate (kernels
    /// `[input_dim, units]`, recurrent kernels `[units, units]`, biases `[1, units]`, or
    /// `[2, units]` with `reset_after`), packed into the fused `[z | r | h]` layout.
    #[allow(clippy::too_many_arguments)]
    pub fn set_gate_weights(
        &mut self,
        reset_kernel: Array2<f32>,
        reset_recurrent_kernel: Array2<f32>,
        reset_bias: Array2<f32>,
        update_kernel: Array2<f32>,
        update_recurrent_kernel: Array2<f32>,
        update_bias: Array2<f32>,
        candidate_kernel: Array2<f32>,
        candidate_recurrent_kernel: Array2<f32>,
        candidate_bias: Array2<f32>,
    ) -> Result<()> {
        let unused = || Array2::zeros((0, 0));
        self.core.set_gate_blocks(
            [
                (
                    "update",
                    update_kernel,
                    update_recurrent_kernel,
                    update_bias,
                ),
                ("reset", reset_kernel, reset_recurrent_kernel, reset_bias),
                (
                    "candidate",
                    candidate_kernel,
                    candidate_recurrent_kernel,
                    candidate_bias,
                ),
                ("", unused(), unused(), unused()),
            ],
            3,
        )
    }
}
