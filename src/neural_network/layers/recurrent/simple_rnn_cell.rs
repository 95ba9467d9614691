//! Keras's SimpleRNN cell: one gate block, `h_t = act(x_t W + h_{t-1} U + b)`.

use super::cell::{
    cell_weight_variant, recurrent_product, state_gradient, BackwardStep, CellStep, ForwardStep,
    StepWeights, STEP,
};
use crate::neural_network::layers::layer_weight::{LayerWeight, SimpleRNNLayerWeight};
use gemmkit_ndarray::{gemm, Parallelism};

/// The SimpleRNN cell's step.
pub(crate) struct SimpleRnnCell;

impl CellStep for SimpleRnnCell {
    fn name(&self) -> &'static str {
        "SimpleRNN"
    }

    fn gates(&self) -> usize {
        1
    }

    fn bias_init(&self) -> &'static [f32] {
        &[0.0]
    }

    /// The output is the state, so the backward step needs nothing more.
    fn keeps_step_operand(&self) -> bool {
        false
    }

    cell_weight_variant!(SimpleRNN, SimpleRNNLayerWeight);

    fn forward_step(&self, w: &StepWeights<'_>, step: &mut ForwardStep<'_>, par: Parallelism) {
        let rk = w.recurrent_kernel;
        match step.rmask {
            None => gemm(1.0, &step.h_prev, rk, 1.0, &mut step.acts, par),
            Some(_) => recurrent_product(
                step.h_prev.view(),
                rk.view(),
                step.rmask,
                0..1,
                w.units,
                1.0,
                &mut step.acts,
                par,
            ),
        }
        let a = step.acts.as_slice_mut().expect(STEP);
        w.activation.apply_slice(a);
        step.h_next.as_slice_mut().expect(STEP).copy_from_slice(a);
    }

    fn backward_step(&self, w: &StepWeights<'_>, step: &mut BackwardStep<'_>, par: Parallelism) {
        let act = w.activation;
        let dp = step.dpre.as_slice_mut().expect(STEP);
        let dhs = step.dh.as_slice().expect("standard layout");
        for ((d, &g), &h) in dp.iter_mut().zip(dhs.iter()).zip(step.h_next) {
            *d = g * act.derivative_from_output(h);
        }
        state_gradient(
            step.dpre.view(),
            step.rk_t,
            step.rmask,
            0..1,
            w.units,
            0.0,
            step.dh,
            par,
        );
    }
}
