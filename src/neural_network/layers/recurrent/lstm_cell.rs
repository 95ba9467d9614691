//! Keras's LSTM cell: gate blocks `[i | f | c | o]`, a cell state `c` beside `h`;
//! `c_t = f ⊙ c_{t-1} + i ⊙ g`, `h_t = o ⊙ act(c_t)`. The forward step keeps `act(c_t)` as
//! its operand.

use super::cell::{
    cell_weight_variant, recurrent_product, state_gradient, BackwardStep, CellStep, ForwardStep,
    StepWeights, STEP,
};
use crate::neural_network::layers::activation::Activation;
use crate::neural_network::layers::layer_weight::{LSTMLayerWeight, LayerWeight};
use gemmkit_ndarray::{gemm, Parallelism};

/// The LSTM cell's step.
pub(crate) struct LstmCell;

impl CellStep for LstmCell {
    fn name(&self) -> &'static str {
        "LSTM"
    }

    fn gates(&self) -> usize {
        4
    }

    /// The forget block starts at one (Keras's `unit_forget_bias`).
    fn bias_init(&self) -> &'static [f32] {
        &[0.0, 1.0, 0.0, 0.0]
    }

    fn has_cell_state(&self) -> bool {
        true
    }

    cell_weight_variant!(LSTM, LSTMLayerWeight);

    fn forward_step(&self, w: &StepWeights<'_>, step: &mut ForwardStep<'_>, par: Parallelism) {
        let u = w.units;
        let (act, ract) = (w.activation, w.recurrent_activation);
        let rk = w.recurrent_kernel;
        match (step.rmask, w.packed) {
            (None, Some(packed)) => {
                packed.product(step.h_prev.view(), true, &mut step.acts, step.product, par)
            }
            (None, None) => gemm(1.0, &step.h_prev, rk, 1.0, &mut step.acts, par),
            (Some(_), _) => recurrent_product(
                step.h_prev.view(),
                rk.view(),
                step.rmask,
                0..4,
                u,
                1.0,
                &mut step.acts,
                par,
            ),
        }
        let (rows, gu) = step.acts.dim();
        let (c_prev, c_next) = step.cell_state.as_mut().expect("an LSTM has a cell state");
        let (c_prev, c_next) = (
            c_prev.as_slice().expect(STEP),
            c_next.as_slice_mut().expect(STEP),
        );
        let ac = step.operand.as_mut().expect("an LSTM keeps act(c)");
        let ac = ac.as_slice_mut().expect(STEP);
        let h_next = step.h_next.as_slice_mut().expect(STEP);
        let a = step.acts.as_slice_mut().expect(STEP);
        // Gate by gate over whole slices, so each activation loop vectorises.
        for b in 0..rows {
            let row = &mut a[b * gu..(b + 1) * gu];
            ract.apply_slice(&mut row[..2 * u]); // i, f
            act.apply_slice(&mut row[2 * u..3 * u]); // g
            ract.apply_slice(&mut row[3 * u..]); // o
            let cells = b * u..(b + 1) * u;
            let (c_prev, c_next) = (&c_prev[cells.clone()], &mut c_next[cells.clone()]);
            let (ac, h_next) = (&mut ac[cells.clone()], &mut h_next[cells]);
            for j in 0..u {
                let (i, f, g) = (row[j], row[u + j], row[2 * u + j]);
                let c = f * c_prev[j] + i * g;
                c_next[j] = c;
                ac[j] = c;
            }
            act.apply_slice(ac);
            for j in 0..u {
                h_next[j] = row[3 * u + j] * ac[j];
            }
        }
    }

    fn backward_step(&self, w: &StepWeights<'_>, step: &mut BackwardStep<'_>, par: Parallelism) {
        let (act, ract) = (w.activation, w.recurrent_activation);
        let operands = LstmStep {
            u: w.units,
            acts: step.acts,
            c_prev: step.c_prev,
            act_c: step.operand,
            dh: step.dh.as_slice().expect("standard layout"),
        };
        let dp = step.dpre.as_slice_mut().expect(STEP);
        if (act, ract) == (Activation::Tanh, Activation::Sigmoid) {
            lstm_step_grads_keras_default(&operands, dp, step.dc);
        } else {
            lstm_step_grads(
                &operands,
                dp,
                step.dc,
                |v| act.derivative_from_output(v),
                |v| ract.derivative_from_output(v),
            );
        }
        match (step.rmask, step.packed_t) {
            (None, Some(packed)) => packed.product(
                step.dpre.view(),
                false,
                &mut step.dh.view_mut(),
                step.product,
                par,
            ),
            _ => state_gradient(
                step.dpre.view(),
                step.rk_t,
                step.rmask,
                0..4,
                w.units,
                0.0,
                step.dh,
                par,
            ),
        }
    }
}

/// One LSTM step's backward operands, per sample row: the gate activations (`i f g o`, `4u`
/// wide), the previous cell state, the activated cell state and the gradient reaching `h_t`.
struct LstmStep<'a> {
    u: usize,
    acts: &'a [f32],
    c_prev: &'a [f32],
    act_c: &'a [f32],
    dh: &'a [f32],
}

/// Gate pre-activation gradients of one LSTM step into `dp` (`i f g o` per row) and the cell
/// gradient carried to the step before in `dc`; `da` and `dr` are the activation's and the
/// recurrent activation's derivatives from their outputs.
#[inline(always)]
fn lstm_step_grads(
    step: &LstmStep,
    dp: &mut [f32],
    dc: &mut [f32],
    da: impl Fn(f32) -> f32,
    dr: impl Fn(f32) -> f32,
) {
    let (u, gu) = (step.u, 4 * step.u);
    for (b, (row, drow)) in step
        .acts
        .chunks_exact(gu)
        .zip(dp.chunks_exact_mut(gu))
        .enumerate()
    {
        let at = b * u..(b + 1) * u;
        let (dc, dh) = (&mut dc[at.clone()], &step.dh[at.clone()]);
        let (c_prev, ac) = (&step.c_prev[at.clone()], &step.act_c[at]);
        let (gi, rest) = row.split_at(u);
        let (gf, rest) = rest.split_at(u);
        let (gg, go) = rest.split_at(u);
        let (di, rest) = drow.split_at_mut(u);
        let (df, rest) = rest.split_at_mut(u);
        let (dg, dout) = rest.split_at_mut(u);
        for j in 0..u {
            let (i, f, g, o) = (gi[j], gf[j], gg[j], go[j]);
            let dct = dc[j] + dh[j] * o * da(ac[j]);
            di[j] = dct * g * dr(i);
            df[j] = dct * c_prev[j] * dr(f);
            dg[j] = dct * i * da(g);
            dout[j] = dh[j] * ac[j] * dr(o);
            dc[j] = dct * f;
        }
    }
}

#[inline(always)]
fn lstm_step_grads_keras_default_inline(step: &LstmStep, dp: &mut [f32], dc: &mut [f32]) {
    let (tanh, sigmoid) = (Activation::Tanh, Activation::Sigmoid);
    lstm_step_grads(
        step,
        dp,
        dc,
        |v| tanh.derivative_from_output(v),
        |v| sigmoid.derivative_from_output(v),
    );
}

crate::isa::widest_isa! {
    /// [`lstm_step_grads`] for Keras's default activations (tanh, sigmoid), the match on the
    /// activation resolved once and the loop at the CPU's vector width.
    fn lstm_step_grads_keras_default(step: &LstmStep, dp: &mut [f32], dc: &mut [f32])
        => lstm_step_grads_keras_default_inline
}
