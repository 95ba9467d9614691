//! Keras's GRU cell: gate blocks `[z | r | h]`, `h_t = z ⊙ h_{t-1} + (1 - z) ⊙ ĥ`. The reset
//! gate applies before the candidate's recurrent product (`ĥ = act(x W_h + (r ⊙ h) U_h)`, one
//! bias row; the step keeps `r ⊙ h` as its operand) or after it (Keras's default:
//! `ĥ = act(x W_h + r ⊙ (h U_h + b_rh))`, a second bias row for the recurrent products; the
//! step keeps `h U_h + b_rh`).

use super::cell::{
    cell_weight_variant, column_sums, recurrent_kernel_gradient, recurrent_product, state_gradient,
    BackwardStep, CellStep, ForwardStep, GradientInputs, StepWeights, STEP,
};
use crate::error::Result;
use crate::math::matmul::dot_par;
use crate::neural_network::layers::layer_weight::{GRULayerWeight, LayerWeight};
use gemmkit_ndarray::{gemm, Parallelism};
use ndarray::{s, Array2, Axis};

/// The GRU cell's step, either reset placement.
pub(crate) struct GruCell {
    pub(crate) reset_after: bool,
}

impl CellStep for GruCell {
    fn name(&self) -> &'static str {
        "GRU"
    }

    fn gates(&self) -> usize {
        3
    }

    fn bias_init(&self) -> &'static [f32] {
        &[0.0, 0.0, 0.0]
    }

    /// With the reset after, a second row biases the recurrent products.
    fn bias_rows(&self) -> usize {
        if self.reset_after {
            2
        } else {
            1
        }
    }

    fn has_recurrent_gradient(&self) -> bool {
        self.reset_after
    }

    cell_weight_variant!(GRU, GRULayerWeight);

    /// With the reset after: the step's recurrent products plus their bias row.
    fn forward_scratch(&self, rows: usize, units: usize) -> Array2<f32> {
        if self.reset_after {
            Array2::zeros((rows, 3 * units))
        } else {
            Array2::zeros((0, 0))
        }
    }

    /// With the reset before: the gradient reaching `r ⊙ h_{t-1}`.
    fn backward_scratch(&self, rows: usize, units: usize) -> Array2<f32> {
        if self.reset_after {
            Array2::zeros((0, 0))
        } else {
            Array2::zeros((rows, units))
        }
    }

    fn forward_step(&self, w: &StepWeights<'_>, step: &mut ForwardStep<'_>, par: Parallelism) {
        if self.reset_after {
            forward_reset_after(w, step, par)
        } else {
            forward_reset_before(w, step, par)
        }
    }

    fn backward_step(&self, w: &StepWeights<'_>, step: &mut BackwardStep<'_>, par: Parallelism) {
        if self.reset_after {
            backward_reset_after(w, step, par)
        } else {
            backward_reset_before(w, step, par)
        }
    }

    fn weight_gradients(
        &self,
        g: &GradientInputs<'_>,
        par: Parallelism,
    ) -> Result<(Array2<f32>, Array2<f32>)> {
        let (u, gu) = (g.units, g.dpre.ncols());
        if !self.reset_after {
            // z and r read h_{t-1}; the candidate reads the kept r ⊙ h_{t-1}.
            let mut r = Array2::<f32>::zeros((u, gu));
            let d = g.dpre.view();
            recurrent_kernel_gradient(g.h_prev, d, g.rmask, 0..2, u, g.batch, &mut r, par);
            gemm(
                1.0,
                &g.operand.t(),
                &g.dpre.slice(s![.., 2 * u..]),
                0.0,
                &mut r.slice_mut(s![.., 2 * u..]),
                par,
            );
            return Ok((r, column_sums(g.dpre)));
        }
        let mut b = Array2::<f32>::zeros((2, gu));
        b.row_mut(0).assign(&g.dpre.sum_axis(Axis(0)));
        b.row_mut(1).assign(&g.drec.sum_axis(Axis(0)));
        let r = match g.rmask {
            None => dot_par(g.h_prev.t(), g.drec.view(), par)?,
            Some(_) => {
                let mut r = Array2::<f32>::zeros((u, gu));
                let d = g.drec.view();
                recurrent_kernel_gradient(g.h_prev, d, g.rmask, 0..3, u, g.batch, &mut r, par);
                r
            }
        };
        Ok((r, b))
    }
}

fn forward_reset_before(w: &StepWeights<'_>, step: &mut ForwardStep<'_>, par: Parallelism) {
    let u = w.units;
    let (act, ract) = (w.activation, w.recurrent_activation);
    let rk = w.recurrent_kernel;
    let (rows, gu) = step.acts.dim();
    let h_prev_view = step.h_prev.view();
    recurrent_product(
        h_prev_view,
        rk.view(),
        step.rmask,
        0..2,
        u,
        1.0,
        &mut step.acts,
        par,
    );
    let h_prev = step.h_prev.as_slice().expect(STEP);
    let rh_t = step.operand.as_mut().expect("a GRU keeps r ⊙ h");
    let rh = rh_t.as_slice_mut().expect(STEP);
    let a = step.acts.as_slice_mut().expect(STEP);
    for b in 0..rows {
        let row = &mut a[b * gu..(b + 1) * gu];
        ract.apply_slice(&mut row[..2 * u]); // z, r
        for j in 0..u {
            let k = b * u + j;
            rh[k] = row[u + j] * h_prev[k];
        }
    }
    if let Some(m) = step.rmask {
        // the candidate's recurrent dropout mask
        let m = m.index_axis(Axis(0), 2);
        for (v, &f) in rh.iter_mut().zip(m.iter()) {
            *v *= f;
        }
    }
    // The candidate's recurrent product reads the reset state just formed.
    gemm(
        1.0,
        &rh_t.view(),
        &rk.slice(s![.., 2 * u..]),
        1.0,
        &mut step.acts.slice_mut(s![.., 2 * u..]),
        par,
    );
    let h_next = step.h_next.as_slice_mut().expect(STEP);
    let a = step.acts.as_slice_mut().expect(STEP);
    for b in 0..rows {
        let row = &mut a[b * gu..(b + 1) * gu];
        act.apply_slice(&mut row[2 * u..]); // candidate
        for j in 0..u {
            let k = b * u + j;
            let (z, hh) = (row[j], row[2 * u + j]);
            h_next[k] = z * h_prev[k] + (1.0 - z) * hh;
        }
    }
}

fn forward_reset_after(w: &StepWeights<'_>, step: &mut ForwardStep<'_>, par: Parallelism) {
    let u = w.units;
    let (act, ract) = (w.activation, w.recurrent_activation);
    let rk = w.recurrent_kernel;
    let (rows, gu) = step.acts.dim();
    let scratch = &mut *step.scratch;
    let beta = if w.use_bias {
        scratch.assign(&w.bias.row(1));
        1.0
    } else {
        0.0
    };
    match step.rmask {
        None => gemm(1.0, &step.h_prev, rk, beta, scratch, par),
        Some(_) => recurrent_product(
            step.h_prev.view(),
            rk.view(),
            step.rmask,
            0..3,
            u,
            beta,
            &mut scratch.view_mut(),
            par,
        ),
    }
    let h_prev = step.h_prev.as_slice().expect(STEP);
    let h_next = step.h_next.as_slice_mut().expect(STEP);
    let rec = scratch.as_slice().expect("standard layout");
    let rec_h = step.operand.as_mut().expect("a GRU keeps h U_h + b_rh");
    let rec_h = rec_h.as_slice_mut().expect(STEP);
    let a = step.acts.as_slice_mut().expect(STEP);
    // Gate by gate over whole slices, so each activation loop vectorises.
    for b in 0..rows {
        let row = &mut a[b * gu..(b + 1) * gu];
        let rrow = &rec[b * gu..(b + 1) * gu];
        for (v, &r) in row[..2 * u].iter_mut().zip(&rrow[..2 * u]) {
            *v += r;
        }
        ract.apply_slice(&mut row[..2 * u]); // z, r
        for j in 0..u {
            row[2 * u + j] += row[u + j] * rrow[2 * u + j];
            rec_h[b * u + j] = rrow[2 * u + j];
        }
        act.apply_slice(&mut row[2 * u..]); // candidate
        for j in 0..u {
            let k = b * u + j;
            let (z, hh) = (row[j], row[2 * u + j]);
            h_next[k] = z * h_prev[k] + (1.0 - z) * hh;
        }
    }
}

fn backward_reset_before(w: &StepWeights<'_>, step: &mut BackwardStep<'_>, par: Parallelism) {
    let u = w.units;
    let (act, ract) = (w.activation, w.recurrent_activation);
    let (rows, gu) = step.dpre.dim();
    let (a, h_prev) = (step.acts, step.h_prev);
    let dp = step.dpre.as_slice_mut().expect(STEP);
    let dhs = step.dh.as_slice_mut().expect("standard layout");
    for b in 0..rows {
        let row = &a[b * gu..(b + 1) * gu];
        let drow = &mut dp[b * gu..(b + 1) * gu];
        for j in 0..u {
            let k = b * u + j;
            let (z, hh) = (row[j], row[2 * u + j]);
            drow[j] = dhs[k] * (h_prev[k] - hh) * ract.derivative_from_output(z);
            drow[2 * u + j] = dhs[k] * (1.0 - z) * act.derivative_from_output(hh);
            dhs[k] *= z;
        }
    }
    // d(r * h_prev) from the candidate's recurrent product.
    let drh = &mut *step.scratch;
    gemm(
        1.0,
        &step.dpre.slice(s![.., 2 * u..]),
        &step.rk_t.slice(s![2 * u.., ..]),
        0.0,
        drh,
        par,
    );
    let drh = drh.as_slice().expect("standard layout");
    let dp = step.dpre.as_slice_mut().expect(STEP);
    let dhs = step.dh.as_slice_mut().expect("standard layout");
    // the candidate's recurrent dropout mask scales what reaches h_{t-1}
    let m_h = step.rmask.map(|m| m.index_axis(Axis(0), 2));
    let m_h = m_h.as_ref().map(|m| m.as_slice().expect("standard layout"));
    for b in 0..rows {
        let row = &a[b * gu..(b + 1) * gu];
        let drow = &mut dp[b * gu..(b + 1) * gu];
        for j in 0..u {
            let k = b * u + j;
            let rg = row[u + j];
            let (h, back) = match m_h {
                Some(m) => (h_prev[k] * m[k], drh[k] * rg * m[k]),
                None => (h_prev[k], drh[k] * rg),
            };
            drow[u + j] = drh[k] * h * ract.derivative_from_output(rg);
            dhs[k] += back;
        }
    }
    state_gradient(
        step.dpre.view(),
        step.rk_t,
        step.rmask,
        0..2,
        u,
        1.0,
        step.dh,
        par,
    );
}

fn backward_reset_after(w: &StepWeights<'_>, step: &mut BackwardStep<'_>, par: Parallelism) {
    let u = w.units;
    let (act, ract) = (w.activation, w.recurrent_activation);
    let (rows, gu) = step.dpre.dim();
    let (a, h_prev, rec_h) = (step.acts, step.h_prev, step.operand);
    let dr_t = step
        .drec
        .as_mut()
        .expect("a GRU with the reset after has drec");
    let dr = dr_t.as_slice_mut().expect(STEP);
    let dp = step.dpre.as_slice_mut().expect(STEP);
    let dhs = step.dh.as_slice_mut().expect("standard layout");
    for b in 0..rows {
        let row = &a[b * gu..(b + 1) * gu];
        let drow = &mut dp[b * gu..(b + 1) * gu];
        let rrow = &mut dr[b * gu..(b + 1) * gu];
        for j in 0..u {
            let k = b * u + j;
            let (z, rg, hh) = (row[j], row[u + j], row[2 * u + j]);
            let dz = dhs[k] * (h_prev[k] - hh) * ract.derivative_from_output(z);
            let dhh = dhs[k] * (1.0 - z) * act.derivative_from_output(hh);
            let dr_pre = dhh * rec_h[k] * ract.derivative_from_output(rg);
            drow[j] = dz;
            drow[u + j] = dr_pre;
            drow[2 * u + j] = dhh;
            rrow[j] = dz;
            rrow[u + j] = dr_pre;
            rrow[2 * u + j] = dhh * rg;
            dhs[k] *= z;
        }
    }
    state_gradient(
        dr_t.view(),
        step.rk_t,
        step.rmask,
        0..3,
        u,
        1.0,
        step.dh,
        par,
    );
}
