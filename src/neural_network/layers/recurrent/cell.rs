//! What a recurrent cell tells the time loop, in the cut Keras, burn and candle make between a
//! cell and the loop that runs it over a sequence. A cell ([`CellStep`]) knows its gate
//! layout (Keras's column blocks, bias rows, initial bias, the original's weight variant),
//! one step forward and one step back over a block of batch rows, and how its kernel and bias
//! gradients gather over every step. The time loop (`time_loop.rs`) owns everything else:
//! the input projection, batch blocks and threads, Keras's mask, dropout draws and the input
//! gradient. [`Cell`] is a layer's runtime choice; [`with_cell_step!`] hands the loop the
//! matching step type, so each loop is compiled once per cell with no per-step dispatch.

use crate::error::Result;
use crate::math::matmul::dot_par;
use crate::neural_network::layers::activation::Activation;
use crate::neural_network::layers::layer_weight::LayerWeight;
use gemmkit_ndarray::{gemm, gemm_packed_b, prepack_rhs, PackedRhs, Parallelism};
use ndarray::{s, Array2, Array3, ArrayView2, ArrayView3, ArrayViewMut2, Axis};
use std::borrow::Cow;
use std::ops::Range;

/// The recurrent cell and its gate layout (Keras's column-block order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell {
    /// One block: `h = act(x W + h U + b)`.
    Simple,
    /// Blocks `[i | f | c | o]`.
    Lstm,
    /// Blocks `[z | r | h]`; `reset_after` applies the reset gate after the recurrent product
    /// (Keras's default, two bias rows) rather than before it (one bias row).
    Gru { reset_after: bool },
}

/// Binds `$step` to `$cell`'s step type (a [`CellStep`]) and evaluates `$body` with it.
macro_rules! with_cell_step {
    ($cell:expr, $step:ident => $body:expr) => {
        match $cell {
            $crate::neural_network::layers::recurrent::cell::Cell::Simple => {
                let $step =
                    &$crate::neural_network::layers::recurrent::simple_rnn_cell::SimpleRnnCell;
                $body
            }
            $crate::neural_network::layers::recurrent::cell::Cell::Lstm => {
                let $step = &$crate::neural_network::layers::recurrent::lstm_cell::LstmCell;
                $body
            }
            $crate::neural_network::layers::recurrent::cell::Cell::Gru { reset_after } => {
                let $step =
                    &$crate::neural_network::layers::recurrent::gru_cell::GruCell { reset_after };
                $body
            }
        }
    };
}
pub(crate) use with_cell_step;

/// Inside a [`CellStep`] impl: `weight_enum` and `weight_arrays` for the cell whose weights
/// are the original's `LayerWeight::$variant($weights { kernel, recurrent_kernel, bias })`.
macro_rules! cell_weight_variant {
    ($variant:ident, $weights:ident) => {
        fn weight_enum<'a>(
            &self,
            kernel: std::borrow::Cow<'a, ndarray::Array2<f32>>,
            recurrent_kernel: std::borrow::Cow<'a, ndarray::Array2<f32>>,
            bias: std::borrow::Cow<'a, ndarray::Array2<f32>>,
        ) -> LayerWeight<'a> {
            LayerWeight::$variant($weights {
                kernel,
                recurrent_kernel,
                bias,
            })
        }

        fn weight_arrays<'w>(
            &self,
            weights: &'w LayerWeight<'_>,
        ) -> Option<[&'w ndarray::Array2<f32>; 3]> {
            match weights {
                LayerWeight::$variant(w) => Some([&*w.kernel, &*w.recurrent_kernel, &*w.bias]),
                _ => None,
            }
        }
    };
}
pub(crate) use cell_weight_variant;

impl Cell {
    pub(crate) fn gates(self) -> usize {
        with_cell_step!(self, step => step.gates())
    }

    pub(crate) fn name(self) -> &'static str {
        with_cell_step!(self, step => step.name())
    }

    /// Initial bias value of each gate block (Keras: LSTM's unit_forget_bias).
    pub(crate) fn bias_init(self) -> &'static [f32] {
        with_cell_step!(self, step => step.bias_init())
    }

    pub(crate) fn bias_rows(self) -> usize {
        with_cell_step!(self, step => step.bias_rows())
    }

    /// Whether the cell carries a second state beside `h` (LSTM's `c`).
    pub(crate) fn has_cell_state(self) -> bool {
        with_cell_step!(self, step => step.has_cell_state())
    }

    /// Whether the cell keeps a per-step operand for its backward step.
    pub(crate) fn keeps_step_operand(self) -> bool {
        with_cell_step!(self, step => step.keeps_step_operand())
    }

    /// Whether the cell's backward step writes the gradients of its recurrent product
    /// apart from its gate gradients (GRU with the reset after).
    pub(crate) fn has_recurrent_gradient(self) -> bool {
        with_cell_step!(self, step => step.has_recurrent_gradient())
    }

    /// `self`'s variant of the original's weight enum around the three fused arrays.
    pub(crate) fn weight_enum<'a>(
        self,
        kernel: Cow<'a, Array2<f32>>,
        recurrent_kernel: Cow<'a, Array2<f32>>,
        bias: Cow<'a, Array2<f32>>,
    ) -> LayerWeight<'a> {
        with_cell_step!(self, step => step.weight_enum(kernel, recurrent_kernel, bias))
    }

    /// The three fused arrays of `weights` when it is this cell's variant.
    pub(crate) fn weight_arrays<'w>(
        self,
        weights: &'w LayerWeight<'_>,
    ) -> Option<[&'w Array2<f32>; 3]> {
        with_cell_step!(self, step => step.weight_arrays(weights))
    }
}

/// What a cell's steps read from their layer.
pub(crate) struct StepWeights<'a> {
    pub(crate) units: usize,
    pub(crate) activation: Activation,
    pub(crate) recurrent_activation: Activation,
    /// The fused recurrent kernel `U` `[units, gates * units]`.
    pub(crate) recurrent_kernel: &'a Array2<f32>,
    /// `U` packed for this pass, on the packed route.
    pub(crate) packed: Option<&'a PackedSteps>,
    /// The fused bias (zero and never added without `use_bias`).
    pub(crate) bias: &'a Array2<f32>,
    pub(crate) use_bias: bool,
}

/// One forward step over a block of batch rows.
pub(crate) struct ForwardStep<'s> {
    /// The gate pre-activations of the input projection in `[rows, gates * units]`; the
    /// activated gates the backward step reads out.
    pub(crate) acts: ArrayViewMut2<'s, f32>,
    pub(crate) h_prev: ArrayView2<'s, f32>,
    pub(crate) h_next: ArrayViewMut2<'s, f32>,
    /// `c_{t-1}` and `c_t` for a cell with a cell state.
    pub(crate) cell_state: Option<(ArrayView2<'s, f32>, ArrayViewMut2<'s, f32>)>,
    /// The step's operand kept for the backward step, for a cell that keeps one.
    pub(crate) operand: Option<ArrayViewMut2<'s, f32>>,
    /// Recurrent dropout masks of these rows `[gates, rows, units]`.
    pub(crate) rmask: Option<&'s ArrayView3<'s, f32>>,
    /// The cell's working memory, from [`CellStep::forward_scratch`], kept across steps.
    pub(crate) scratch: &'s mut Array2<f32>,
    /// The packed product's output, from [`PackedSteps::scratch`] (empty off that route).
    pub(crate) product: &'s mut Array2<f32>,
}

/// One step of backpropagation through time over a block of batch rows (the cache's rows
/// as contiguous slices).
pub(crate) struct BackwardStep<'s> {
    /// The activated gates `[rows, gates * units]`.
    pub(crate) acts: &'s [f32],
    pub(crate) h_prev: &'s [f32],
    /// `h_t`, the step's own output state.
    pub(crate) h_next: &'s [f32],
    /// `c_{t-1}` (empty without a cell state).
    pub(crate) c_prev: &'s [f32],
    /// The operand the forward step kept (empty without one).
    pub(crate) operand: &'s [f32],
    /// The gate pre-activation gradients, written.
    pub(crate) dpre: ArrayViewMut2<'s, f32>,
    /// The recurrent product's gradients, written by a cell that has them.
    pub(crate) drec: Option<ArrayViewMut2<'s, f32>>,
    /// In: the gradient reaching `h_t`; out: the one reaching `h_{t-1}`.
    pub(crate) dh: &'s mut Array2<f32>,
    /// In: the gradient reaching `c_t`; out: the one reaching `c_{t-1}` (empty without a
    /// cell state).
    pub(crate) dc: &'s mut [f32],
    /// `Uᵀ`, contiguous.
    pub(crate) rk_t: ArrayView2<'s, f32>,
    /// `Uᵀ` packed for this pass, on the packed route.
    pub(crate) packed_t: Option<&'s PackedSteps>,
    pub(crate) rmask: Option<&'s ArrayView3<'s, f32>>,
    /// The cell's working memory, from [`CellStep::backward_scratch`], kept across steps.
    pub(crate) scratch: &'s mut Array2<f32>,
    /// The packed product's output, from [`PackedSteps::scratch`] (empty off that route).
    pub(crate) product: &'s mut Array2<f32>,
}

/// A per-step product's fixed operand (`U` forward, `Uᵀ` backward), packed once per pass
/// into gemmkit's panel layout, so each step streams only its block's rows. gemmkit keeps
/// a packed right operand for a column-major output: each step writes its product
/// transposed into a scratch and adds it into the row-major gates from there.
pub(crate) struct PackedSteps {
    packed: PackedRhs<f32>,
    width: usize,
}

impl PackedSteps {
    pub(crate) fn of(b: ArrayView2<'_, f32>) -> Self {
        Self {
            packed: prepack_rhs(&b),
            width: b.ncols(),
        }
    }

    /// The transposed product of a block of `rows` rows, `[width, rows]`.
    pub(crate) fn scratch(&self, rows: usize) -> Array2<f32> {
        Array2::zeros((self.width, rows))
    }

    /// The scratch off the packed route.
    pub(crate) fn no_scratch() -> Array2<f32> {
        Array2::zeros((0, 0))
    }

    /// `out = a · B` (`add`: `out += a · B`), with `B` the packed operand; `out` is
    /// `[rows, width]` in standard layout and `scratch` comes from [`Self::scratch`].
    pub(crate) fn product(
        &self,
        a: ArrayView2<'_, f32>,
        add: bool,
        out: &mut ArrayViewMut2<'_, f32>,
        scratch: &mut Array2<f32>,
        par: Parallelism,
    ) {
        let (rows, width) = out.dim();
        debug_assert_eq!((width, rows), scratch.dim());
        gemm_packed_b(
            1.0,
            &a,
            &self.packed,
            0.0,
            &mut scratch.view_mut().reversed_axes(),
            par,
        );
        let src = scratch.as_slice().expect("fresh scratch is contiguous");
        let dst = out.as_slice_mut().expect("a step's rows are contiguous");
        // In tiles of 16 columns: the 16 scratch rows a tile reads stay in L1 across the
        // block's rows, and each output row's 16 values are written together.
        const TILE: usize = 16;
        for j0 in (0..width).step_by(TILE) {
            let cols = j0..(j0 + TILE).min(width);
            for (b, row) in dst.chunks_exact_mut(width).enumerate() {
                for j in cols.clone() {
                    let v = src[j * rows + b];
                    row[j] = if add { row[j] + v } else { v };
                }
            }
        }
    }
}

/// What the kernel and bias gradients of a whole pass read, time-major over every step.
pub(crate) struct GradientInputs<'a> {
    /// `h_0 .. h_{T-1}` `[steps * batch, units]`.
    pub(crate) h_prev: ArrayView2<'a, f32>,
    /// Gate pre-activation gradients `[steps * batch, gates * units]`.
    pub(crate) dpre: &'a Array2<f32>,
    /// The recurrent product's gradients (empty for cells without them).
    pub(crate) drec: &'a Array2<f32>,
    /// The per-step operands the forward steps kept (empty for cells without them).
    pub(crate) operand: &'a Array2<f32>,
    /// Recurrent dropout masks `[gates, batch, units]`.
    pub(crate) rmask: Option<&'a Array3<f32>>,
    pub(crate) units: usize,
    pub(crate) batch: usize,
}

/// One recurrent cell: its gate layout and its step's maths.
pub(crate) trait CellStep: Sync {
    /// Keras's layer name, for messages.
    fn name(&self) -> &'static str;

    /// Gate blocks along the fused weights' columns.
    fn gates(&self) -> usize;

    /// Initial bias value of each gate block.
    fn bias_init(&self) -> &'static [f32];

    /// Rows of the fused bias.
    fn bias_rows(&self) -> usize {
        1
    }

    /// Whether the cell carries a second state beside `h` (kept, masked and carried by the
    /// time loop).
    fn has_cell_state(&self) -> bool {
        false
    }

    /// Whether the forward step keeps a `[rows, units]` operand for the backward step.
    fn keeps_step_operand(&self) -> bool {
        true
    }

    /// Whether the backward step writes [`BackwardStep::drec`].
    fn has_recurrent_gradient(&self) -> bool {
        false
    }

    /// The cell's variant of the original's weight enum.
    fn weight_enum<'a>(
        &self,
        kernel: Cow<'a, Array2<f32>>,
        recurrent_kernel: Cow<'a, Array2<f32>>,
        bias: Cow<'a, Array2<f32>>,
    ) -> LayerWeight<'a>;

    /// The three fused arrays of `weights` when it is the cell's variant.
    fn weight_arrays<'w>(&self, weights: &'w LayerWeight<'_>) -> Option<[&'w Array2<f32>; 3]>;

    /// Working memory of the forward steps over `rows` batch rows.
    fn forward_scratch(&self, _rows: usize, _units: usize) -> Array2<f32> {
        Array2::zeros((0, 0))
    }

    /// Working memory of the backward steps over `rows` batch rows.
    fn backward_scratch(&self, _rows: usize, _units: usize) -> Array2<f32> {
        Array2::zeros((0, 0))
    }

    /// Adds the step's recurrent products to the input projection, applies the gates and
    /// writes the new state (and the operand it keeps).
    fn forward_step(&self, w: &StepWeights<'_>, step: &mut ForwardStep<'_>, par: Parallelism);

    /// Writes the step's gate gradients and turns `dh` (and `dc`) into the gradients
    /// reaching the step before.
    fn backward_step(&self, w: &StepWeights<'_>, step: &mut BackwardStep<'_>, par: Parallelism);

    /// The recurrent kernel's and the bias's gradients over every step. By default every
    /// gate's recurrent product reads `h_{t-1}` and the bias is one row.
    fn weight_gradients(
        &self,
        g: &GradientInputs<'_>,
        par: Parallelism,
    ) -> Result<(Array2<f32>, Array2<f32>)> {
        let bias = column_sums(g.dpre);
        let gu = g.dpre.ncols();
        let recurrent = match g.rmask {
            None => dot_par(g.h_prev.t(), g.dpre.view(), par)?,
            Some(_) => {
                let mut r = Array2::<f32>::zeros((g.units, gu));
                recurrent_kernel_gradient(
                    g.h_prev,
                    g.dpre.view(),
                    g.rmask,
                    0..self.gates(),
                    g.units,
                    g.batch,
                    &mut r,
                    par,
                );
                r
            }
        };
        Ok((recurrent, bias))
    }
}

/// The sums over every row, as one row.
pub(crate) fn column_sums(a: &Array2<f32>) -> Array2<f32> {
    a.sum_axis(Axis(0)).insert_axis(Axis(0))
}

/// Every row `r` of `x` (`[n * batch, width]`, time-major) times row `r % batch` of `m`.
pub(crate) fn masked_rows(
    x: ArrayView2<'_, f32>,
    m: ArrayView2<'_, f32>,
    batch: usize,
) -> Array2<f32> {
    let mut out = x.to_owned();
    for (r, mut row) in out.rows_mut().into_iter().enumerate() {
        row *= &m.row(r % batch);
    }
    out
}

/// `out[:, blocks] = h · U[:, blocks] + beta * out[:, blocks]` over the gate blocks `gates`,
/// through `h ⊙ m_g` for gate `g` when recurrent dropout masks (`[gates, rows, units]`) are
/// given.
#[allow(clippy::too_many_arguments)]
pub(crate) fn recurrent_product(
    h: ArrayView2<'_, f32>,
    rk: ArrayView2<'_, f32>,
    masks: Option<&ArrayView3<'_, f32>>,
    gates: Range<usize>,
    u: usize,
    beta: f32,
    out: &mut ArrayViewMut2<'_, f32>,
    par: Parallelism,
) {
    match masks {
        None => {
            let cols = gates.start * u..gates.end * u;
            gemm(
                1.0,
                &h,
                &rk.slice(s![.., cols.clone()]),
                beta,
                &mut out.slice_mut(s![.., cols]),
                par,
            );
        }
        Some(m) => {
            for g in gates {
                let hm = &h * &m.index_axis(Axis(0), g);
                let cols = g * u..(g + 1) * u;
                gemm(
                    1.0,
                    &hm,
                    &rk.slice(s![.., cols.clone()]),
                    beta,
                    &mut out.slice_mut(s![.., cols]),
                    par,
                );
            }
        }
    }
}

/// `dh = Σ_g (dp_g · U_gᵀ) ⊙ m_g + beta * dh` over the gate blocks `gates` (`rk_t` is `Uᵀ`;
/// without masks, one fused product).
#[allow(clippy::too_many_arguments)]
pub(crate) fn state_gradient(
    dp: ArrayView2<'_, f32>,
    rk_t: ArrayView2<'_, f32>,
    masks: Option<&ArrayView3<'_, f32>>,
    gates: Range<usize>,
    u: usize,
    beta: f32,
    dh: &mut Array2<f32>,
    par: Parallelism,
) {
    match masks {
        None => {
            let cols = gates.start * u..gates.end * u;
            gemm(
                1.0,
                &dp.slice(s![.., cols.clone()]),
                &rk_t.slice(s![cols, ..]),
                beta,
                dh,
                par,
            );
        }
        Some(m) => {
            if beta == 0.0 {
                dh.fill(0.0);
            }
            let mut part = Array2::<f32>::zeros(dh.raw_dim());
            for g in gates {
                let cols = g * u..(g + 1) * u;
                gemm(
                    1.0,
                    &dp.slice(s![.., cols.clone()]),
                    &rk_t.slice(s![cols, ..]),
                    0.0,
                    &mut part,
                    par,
                );
                ndarray::Zip::from(&mut *dh)
                    .and(&part)
                    .and(&m.index_axis(Axis(0), g))
                    .for_each(|d, &p, &k| *d += p * k);
            }
        }
    }
}

/// The recurrent kernel's gradient over the gate blocks `gates`: `h_prevᵀ · d` over every
/// step, through `h ⊙ m_g` under recurrent dropout (`masks`: `[gates, batch, units]`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn recurrent_kernel_gradient(
    h_prev: ArrayView2<'_, f32>,
    d: ArrayView2<'_, f32>,
    masks: Option<&Array3<f32>>,
    gates: Range<usize>,
    u: usize,
    batch: usize,
    out: &mut Array2<f32>,
    par: Parallelism,
) {
    for g in gates {
        let cols = g * u..(g + 1) * u;
        let target = &mut out.slice_mut(s![.., cols.clone()]);
        match masks {
            None => gemm(1.0, &h_prev.t(), &d.slice(s![.., cols]), 0.0, target, par),
            Some(m) => {
                let hm = masked_rows(h_prev, m.index_axis(Axis(0), g), batch);
                gemm(1.0, &hm.t(), &d.slice(s![.., cols]), 0.0, target, par)
            }
        }
    }
}

/// A step's rows are contiguous in the time-major cache.
pub(crate) const STEP: &str = "a step's rows are contiguous";
