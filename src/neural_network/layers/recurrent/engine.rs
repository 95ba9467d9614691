//! The recurrence engine shared by SimpleRNN, LSTM and GRU (and both halves of
//! `Bidirectional`).
//!
//! Layout: everything runs time-major. The input is laid out `[steps * batch, input_dim]`
//! (reversed in time under `go_backwards`) and projected for every step at once by one
//! product with the fused kernel, bias included; that buffer then holds each step's gate
//! pre-activations, to which each step adds its one fused recurrent product `h_{t-1} · U`
//! (gemm with `beta = 1`, in place) before the gate nonlinearities overwrite it with the
//! activated gates the backward pass needs. Backpropagation through time runs one fused
//! product per step for `dh_{t-1}`; the weight gradients and the input gradient are then
//! three products over all steps at once. Every product runs on gemmkit, whose results do
//! not depend on its worker count, and every elementwise step runs in a fixed order, so the
//! layer is bitwise reproducible at any thread count.

use super::fused_gates::{
    check_weight_shape, layer_rng, project_rows, take_cache, validate_dimensions, FusedGates,
};
use crate::declare_gate;
use crate::error::{Error, IoError, RustymlResult};
use crate::math::matmul::{dot_bias_act, dot_par, nested_parallelism};
use crate::neural_network::layers::activation::Activation;
use crate::neural_network::layers::layer_weight::{
    GRULayerWeight, LSTMLayerWeight, LayerWeight, SimpleRNNLayerWeight,
};
use crate::neural_network::layers::TrainingParameters;
use crate::neural_network::traits::{Mask, ParamGrad, RandomStream};
use crate::neural_network::Tensor;
use gemmkit_ndarray::{gemm, Parallelism};
use ndarray::{
    s, Array2, Array3, ArrayView2, ArrayView3, ArrayViewMut2, ArrayViewMut3, Axis, Ix2, Ix3,
};
use rand::RngCore;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
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

impl Cell {
    fn gates(self) -> usize {
        match self {
            Cell::Simple => 1,
            Cell::Lstm => 4,
            Cell::Gru { .. } => 3,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Cell::Simple => "SimpleRNN",
            Cell::Lstm => "LSTM",
            Cell::Gru { .. } => "GRU",
        }
    }

    /// Initial bias value of each gate block (Keras: LSTM's unit_forget_bias).
    fn bias_init(self) -> &'static [f32] {
        match self {
            Cell::Simple => &[0.0],
            Cell::Lstm => &[0.0, 1.0, 0.0, 0.0],
            Cell::Gru { .. } => &[0.0, 0.0, 0.0],
        }
    }

    fn bias_rows(self) -> usize {
        match self {
            Cell::Gru { reset_after: true } => 2,
            _ => 1,
        }
    }
}

/// What `forward` keeps for `backward`, all time-major (`[steps * batch, ...]`).
#[derive(Debug)]
struct Cache {
    batch: usize,
    steps: usize,
    /// The input, reversed in time under `go_backwards`.
    x: Array2<f32>,
    /// Activated gates per step `[steps * batch, gates * units]`.
    acts: Array2<f32>,
    /// Hidden states `h_0 = 0, h_1, ..., h_T`.
    hs: Array2<f32>,
    /// LSTM cell states `c_0 = 0, ..., c_T` (empty for the other cells).
    cs: Array2<f32>,
    /// LSTM: `act(c_t)`; GRU with the reset before: `r_t * h_{t-1}` (times the candidate's
    /// recurrent dropout mask); GRU with the reset after: `h_{t-1} U_h + b_rh` (empty for
    /// SimpleRNN).
    extra: Array2<f32>,
    /// The dropout masks of the pass (training with `dropout` or `recurrent_dropout`).
    drop: Option<DropoutMasks>,
    /// Keras's mask, time-major in processing order `[steps, batch]` (`false`: the step is
    /// skipped, the state carried).
    keep: Option<Array2<bool>>,
}

/// The dropout factors of one training pass (`0` or `1 / (1 - rate)`), drawn once per batch
/// and applied at every step, as Keras 3's recurrent cells do.
#[derive(Debug, Clone)]
pub(crate) struct DropoutMasks {
    /// Input factors `[count, batch, input_dim]`: one mask for every gate (`count = 1`), or,
    /// with recurrent dropout (Keras's `implementation=1`), one per gate.
    pub(crate) input: Option<Array3<f32>>,
    /// Recurrent-state factors `[gates, batch, units]`, one per gate.
    pub(crate) recurrent: Option<Array3<f32>>,
}

/// One recurrent layer: configuration, fused weights and the backward cache.
#[derive(Debug)]
pub struct Recurrent {
    pub(crate) cell: Cell,
    pub(crate) input_dim: usize,
    pub(crate) units: usize,
    pub(crate) activation: Activation,
    pub(crate) recurrent_activation: Activation,
    pub(crate) return_sequences: bool,
    pub(crate) go_backwards: bool,
    /// Keras's `use_bias`: without it the bias stays zero, is never added, trained or
    /// counted, and Keras-facing weight lists leave it out.
    pub(crate) use_bias: bool,
    /// LSTM's `unit_forget_bias` (the forget block's initial bias is one); unused otherwise.
    pub(crate) unit_forget_bias: bool,
    /// Keras's `dropout`: the rate of the inputs' dropout mask (training only).
    pub(crate) dropout: f32,
    /// Keras's `recurrent_dropout`: the rate of the recurrent state's dropout masks.
    pub(crate) recurrent_dropout: f32,
    /// Keras's `zero_output_for_mask`: a masked step outputs zeros instead of the carried
    /// state (the state is carried either way).
    pub(crate) zero_output_for_mask: bool,
    /// Training mode draws dropout masks in `forward`; inference mode does not.
    training: bool,
    /// The dropout masks' random stream.
    rng: ChaCha8Rng,
    pub(crate) gates: FusedGates,
    cache: Option<Cache>,
}

/// The dropout stream of a layer seeded with `random_state`: the seed's generator on a stream
/// of its own, apart from the weights' draws.
fn dropout_rng(random_state: Option<u64>) -> ChaCha8Rng {
    let mut rng = crate::random::rng_from(random_state);
    rng.set_stream(DROPOUT_STREAM);
    rng
}

/// The ChaCha stream the dropout masks are drawn from.
const DROPOUT_STREAM: u64 = 0x5245_4355_5252;

/// `rate` must lie in [0, 1), else `InvalidParameter` naming `what`.
fn check_dropout_rate(rate: f32, what: &str, layer: &str) -> RustymlResult<()> {
    if (0.0..1.0).contains(&rate) {
        Ok(())
    } else {
        Err(Error::invalid_parameter(
            what,
            format!("{layer}: {what} must lie in [0, 1), got {rate}"),
        ))
    }
}

/// Every row `r` of `x` (`[n * batch, width]`, time-major) times row `r % batch` of `m`.
fn masked_rows(x: ArrayView2<'_, f32>, m: ArrayView2<'_, f32>, batch: usize) -> Array2<f32> {
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
fn recurrent_product(
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
fn state_gradient(
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
fn recurrent_kernel_gradient(
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

/// Softmax has no elementwise form; everything else does.
fn check_elementwise(activation: Activation, what: &str, layer: &str) -> RustymlResult<()> {
    activation.validate()?;
    if matches!(activation, Activation::Softmax) {
        return Err(Error::invalid_parameter(
            what,
            format!(
                "{layer}: softmax cannot be a recurrent layer's {what} (it is not elementwise)"
            ),
        ));
    }
    Ok(())
}

/// One gate's `(name, kernel, recurrent_kernel, bias)`.
pub(crate) type GateBlock<'a> = (&'a str, Array2<f32>, Array2<f32>, Array2<f32>);

/// Batch rows per recurrence task. Fixed rather than derived from the thread count, so every
/// per-step product has the same shape, and gives the same bits, on the serial and the
/// parallel path. At 16 rows gemmkit's per-step product runs within about 15% of its
/// full-batch speed, and Keras's default batch of 32 still splits in two.
const BLOCK_ROWS: usize = 16;

declare_gate! {
    /// The time loops of a recurrent layer (forward and backpropagation through time) run one
    /// rayon task per block of 16 batch rows at or above this many FLOPs of per-step recurrent
    /// products (`2 * timesteps * batch * units * gates * units`). Below it the blocks run in
    /// turn and gemmkit may spread each step's product instead. The ladder on a 2-core host
    /// saw the blocks win from about 94M FLOPs (LSTM(192), batch 32, 10 steps); the default is
    /// twice that, the calibration rule's margin toward serial.
    pub RECURRENT_PARALLEL_MIN_FLOPS: recurrent::parallel_min_flops = 190_000_000, "FLOPs"
}

/// Splits a `[blocks, batch, width]` view along the batch into `BLOCK_ROWS`-row views (the
/// last one may be shorter).
fn split_batch<V>(whole: V, batch: usize, split: impl Fn(V, usize) -> (V, V)) -> Vec<V> {
    let mut blocks = Vec::with_capacity(batch.div_ceil(BLOCK_ROWS));
    let (mut rest, mut left) = (whole, batch);
    while left > BLOCK_ROWS {
        let (head, tail) = split(rest, BLOCK_ROWS);
        blocks.push(head);
        (rest, left) = (tail, left - BLOCK_ROWS);
    }
    blocks.push(rest);
    blocks
}

/// A time-major `[n * batch, width]` array as `[n, block rows, width]` views, one per block
/// of the batch.
fn row_blocks(a: &Array2<f32>, batch: usize) -> Vec<ArrayView3<'_, f32>> {
    let (rows, width) = a.dim();
    let whole = a
        .view()
        .into_shape_with_order((rows / batch, batch, width))
        .expect("time-major rows");
    split_batch(whole, batch, |v, at| v.split_at(Axis(1), at))
}

/// [`row_blocks`], writable.
fn row_blocks_mut(a: &mut Array2<f32>, batch: usize) -> Vec<ArrayViewMut3<'_, f32>> {
    let (rows, width) = a.dim();
    let whole = a
        .view_mut()
        .into_shape_with_order((rows / batch, batch, width))
        .expect("time-major rows");
    split_batch(whole, batch, |v, at| v.split_at(Axis(1), at))
}

/// Runs `body` on every block: as rayon tasks (serial products inside) when `parallel`, else
/// in order with `par` for the products. Blocks never share rows, so the order is free.
fn for_each_block<B: Send>(
    parallel: bool,
    par: Parallelism,
    blocks: Vec<B>,
    body: impl Fn(B, Parallelism) + Sync,
) {
    if parallel && blocks.len() > 1 {
        blocks
            .into_par_iter()
            .for_each(|block| body(block, Parallelism::Serial));
    } else {
        blocks.into_iter().for_each(|block| body(block, par));
    }
}

/// One block of batch rows of the forward recurrence, every step (`[steps, rows, ..]`).
struct ForwardBlock<'a> {
    /// Gate pre-activations in, activated gates out.
    acts: ArrayViewMut3<'a, f32>,
    /// `h_0 .. h_T` (`steps + 1` entries).
    hs: ArrayViewMut3<'a, f32>,
    /// LSTM's `c_0 .. c_T` (empty otherwise).
    cs: ArrayViewMut3<'a, f32>,
    /// The cache's `extra` per step (empty for SimpleRNN).
    extra: ArrayViewMut3<'a, f32>,
    /// Recurrent dropout masks of these rows `[gates, rows, units]`.
    rmask: Option<ArrayView3<'a, f32>>,
    /// Keras's mask of these rows `[steps, rows]`.
    keep: Option<ArrayView2<'a, bool>>,
}

/// One block of batch rows of backpropagation through time: the forward cache read, the
/// gate gradients written.
struct BackwardBlock<'a> {
    acts: ArrayView3<'a, f32>,
    hs: ArrayView3<'a, f32>,
    cs: ArrayView3<'a, f32>,
    extra: ArrayView3<'a, f32>,
    /// The upstream gradient: every step, or only the last (one entry).
    dout: ArrayView3<'a, f32>,
    /// Gate pre-activation gradients.
    dpre: ArrayViewMut3<'a, f32>,
    /// GRU with the reset after: gradients of the recurrent product plus its bias.
    drec: ArrayViewMut3<'a, f32>,
    rmask: Option<ArrayView3<'a, f32>>,
    keep: Option<ArrayView2<'a, bool>>,
}

/// `a`'s rows split into the batch blocks of [`row_blocks`] along `axis`, or as many `None`s.
fn optional_blocks<'a, A, D: ndarray::RemoveAxis>(
    a: Option<ndarray::ArrayView<'a, A, D>>,
    batch: usize,
    axis: usize,
) -> Vec<Option<ndarray::ArrayView<'a, A, D>>> {
    match a {
        Some(v) => split_batch(v, batch, |v, at| v.split_at(Axis(axis), at))
            .into_iter()
            .map(Some)
            .collect(),
        None => (0..batch.div_ceil(BLOCK_ROWS)).map(|_| None).collect(),
    }
}

impl Recurrent {
    pub(crate) fn new(
        cell: Cell,
        input_dim: usize,
        units: usize,
        activation: Activation,
        random_state: Option<u64>,
    ) -> RustymlResult<Self> {
        validate_dimensions(input_dim, units)?;
        check_elementwise(activation, "activation", cell.name())?;
        {
            use crate::neural_network::layers::size_guard::{check_alloc_bytes, mul_size};
            let width = mul_size(cell.name(), "gates * units", cell.gates(), units)?;
            check_alloc_bytes(cell.name(), "kernel", &[input_dim, width], 4)?;
            // the orthogonal draw of the recurrent kernel works in f64
            check_alloc_bytes(cell.name(), "recurrent kernel", &[units, width], 8)?;
        }
        let gates = Self::init_gates(cell, input_dim, units, random_state)?;
        Ok(Self {
            cell,
            input_dim,
            units,
            activation,
            recurrent_activation: Activation::Sigmoid,
            return_sequences: false,
            go_backwards: false,
            use_bias: true,
            unit_forget_bias: true,
            dropout: 0.0,
            recurrent_dropout: 0.0,
            zero_output_for_mask: false,
            training: true,
            rng: dropout_rng(random_state),
            gates,
            cache: None,
        })
    }

    /// Keras's `dropout` and `recurrent_dropout` (each in [0, 1)).
    pub(crate) fn set_dropout(
        &mut self,
        dropout: f32,
        recurrent_dropout: f32,
    ) -> RustymlResult<()> {
        let name = self.cell.name();
        check_dropout_rate(dropout, "dropout", name)?;
        check_dropout_rate(recurrent_dropout, "recurrent_dropout", name)?;
        self.dropout = dropout;
        self.recurrent_dropout = recurrent_dropout;
        Ok(())
    }

    pub(crate) fn set_training(&mut self, training: bool) {
        self.training = training;
    }

    /// The dropout stream's position (`None` without dropout: nothing is drawn).
    pub(crate) fn random_stream(&self) -> Option<RandomStream> {
        (self.dropout > 0.0 || self.recurrent_dropout > 0.0).then(|| RandomStream::of(&self.rng))
    }

    pub(crate) fn set_random_stream(&mut self, stream: &RandomStream) {
        self.rng = stream.generator();
    }

    /// The dropout masks of one training pass over `batch` samples (`None` in inference mode
    /// or without dropout). Each mask takes one seed from the layer's stream and is filled
    /// from it in a fixed order, so the bits never depend on the thread count.
    fn draw_dropout(&mut self, batch: usize) -> Option<DropoutMasks> {
        if !self.training || (self.dropout == 0.0 && self.recurrent_dropout == 0.0) {
            return None;
        }
        let gates = self.cell.gates();
        // Keras's cells switch to one mask per gate (implementation 1) with recurrent dropout.
        let per_gate = self.recurrent_dropout > 0.0;
        let (d, u) = (self.input_dim, self.units);
        let rng = &mut self.rng;
        let mut draw = |rate: f32, count: usize, width: usize| {
            let seed = rng.next_u64();
            let factors =
                crate::neural_network::layers::regularization::stochastic::dropout_factors(
                    seed,
                    count * batch * width,
                    rate,
                );
            Array3::from_shape_vec((count, batch, width), factors).expect("sized to fit")
        };
        let input =
            (self.dropout > 0.0).then(|| draw(self.dropout, if per_gate { gates } else { 1 }, d));
        let recurrent = per_gate.then(|| draw(self.recurrent_dropout, gates, u));
        Some(DropoutMasks { input, recurrent })
    }

    fn init_gates(
        cell: Cell,
        input_dim: usize,
        units: usize,
        random_state: Option<u64>,
    ) -> RustymlResult<FusedGates> {
        let mut rng = layer_rng(random_state);
        let mut gates = FusedGates::new(input_dim, units, cell.bias_init(), &mut rng)?;
        if cell.bias_rows() == 2 {
            gates.bias = Array2::zeros((2, gates.bias.ncols()));
        }
        Ok(gates)
    }

    /// Re-draws the kernels from `random_state`; the bias (not random: zero, or LSTM's
    /// forget block one) keeps its value, so `with_unit_forget_bias` survives a reseed.
    pub(crate) fn reseed(&mut self, random_state: u64) {
        self.rng = dropout_rng(Some(random_state));
        let bias = std::mem::take(&mut self.gates.bias);
        self.gates = Self::init_gates(self.cell, self.input_dim, self.units, Some(random_state))
            .expect("dimensions were validated at construction");
        self.gates.bias = bias;
        self.cache = None;
    }

    /// The bias a fresh layer of this configuration starts from: zero, except LSTM's forget
    /// block (one under `unit_forget_bias`); all zero without `use_bias`.
    fn initial_bias(&self) -> Array2<f32> {
        let (u, gu) = (self.units, self.cell.gates() * self.units);
        let mut bias = Array2::zeros((self.cell.bias_rows(), gu));
        if self.use_bias && self.unit_forget_bias && matches!(self.cell, Cell::Lstm) {
            bias.slice_mut(s![.., u..2 * u]).fill(1.0);
        }
        bias
    }

    /// Keras's `unit_forget_bias` (LSTM): the forget block of the bias set to one or zero
    /// (left at zero without `use_bias`).
    pub(crate) fn set_unit_forget_bias(&mut self, unit_forget_bias: bool) {
        self.unit_forget_bias = unit_forget_bias;
        if self.use_bias && matches!(self.cell, Cell::Lstm) {
            let u = self.units;
            let value = if unit_forget_bias { 1.0 } else { 0.0 };
            self.gates.bias.slice_mut(s![.., u..2 * u]).fill(value);
        }
    }

    /// Keras's `use_bias`; the bias restarts at its initial value (all zero without it).
    pub(crate) fn set_use_bias(&mut self, use_bias: bool) {
        self.use_bias = use_bias;
        self.gates.bias = self.initial_bias();
        self.gates.grad_bias = None;
        self.cache = None;
    }

    /// The bias row added to the input projection (`None` without `use_bias`).
    fn input_bias(&self) -> Option<ndarray::ArrayView1<'_, f32>> {
        self.use_bias.then(|| self.gates.bias.row(0))
    }

    /// Switches the GRU bias layout; the bias restarts at zero in its new shape.
    pub(crate) fn set_reset_after(&mut self, reset_after: bool) {
        if let Cell::Gru { .. } = self.cell {
            self.cell = Cell::Gru { reset_after };
            self.gates.bias = Array2::zeros((self.cell.bias_rows(), 3 * self.units));
            self.gates.grad_bias = None;
            self.cache = None;
        }
    }

    pub(crate) fn set_recurrent_activation(&mut self, act: Activation) -> RustymlResult<()> {
        check_elementwise(act, "recurrent_activation", self.cell.name())?;
        self.recurrent_activation = act;
        Ok(())
    }

    /// A fresh layer of the same configuration (new weights from `random_state`), reading
    /// the sequence in the other direction: `Bidirectional`'s backward half.
    pub(crate) fn reversed_twin(&self, random_state: Option<u64>) -> RustymlResult<Self> {
        let mut twin = Self::new(
            self.cell,
            self.input_dim,
            self.units,
            self.activation,
            random_state,
        )?;
        twin.recurrent_activation = self.recurrent_activation;
        twin.return_sequences = self.return_sequences;
        twin.go_backwards = !self.go_backwards;
        twin.use_bias = self.use_bias;
        twin.unit_forget_bias = self.unit_forget_bias;
        twin.dropout = self.dropout;
        twin.recurrent_dropout = self.recurrent_dropout;
        twin.zero_output_for_mask = self.zero_output_for_mask;
        twin.gates.bias = self.gates.bias.clone();
        Ok(twin)
    }

    /// Replaces the fused weights (shapes checked against the layer's). Without `use_bias`
    /// the bias is still shape-checked but kept at zero.
    pub(crate) fn set_weights(
        &mut self,
        kernel: Array2<f32>,
        recurrent_kernel: Array2<f32>,
        bias: Array2<f32>,
    ) -> RustymlResult<()> {
        self.gates.replace(kernel, recurrent_kernel, bias)?;
        if !self.use_bias {
            self.gates.bias.fill(0.0);
        }
        Ok(())
    }

    /// Packs per-gate `(kernel, recurrent_kernel, bias)` triples, given in fused-block
    /// order, into the fused layout.
    pub(crate) fn set_gate_blocks(
        &mut self,
        blocks: [GateBlock<'_>; 4],
        count: usize,
    ) -> RustymlResult<()> {
        let (d, u) = (self.input_dim, self.units);
        let brows = self.cell.bias_rows();
        for (name, k, rk, b) in blocks.iter().take(count) {
            check_weight_shape(&format!("{name}_kernel"), &[d, u], k.shape())?;
            check_weight_shape(&format!("{name}_recurrent_kernel"), &[u, u], rk.shape())?;
            check_weight_shape(&format!("{name}_bias"), &[brows, u], b.shape())?;
        }
        let mut kernel = Array2::zeros((d, count * u));
        let mut recurrent = Array2::zeros((u, count * u));
        let mut bias = Array2::zeros((brows, count * u));
        for (g, (_, k, rk, b)) in blocks.iter().take(count).enumerate() {
            let cols = g * u..(g + 1) * u;
            kernel.slice_mut(s![.., cols.clone()]).assign(k);
            recurrent.slice_mut(s![.., cols.clone()]).assign(rk);
            bias.slice_mut(s![.., cols]).assign(b);
        }
        self.set_weights(kernel, recurrent, bias)
    }

    /// The input as `[batch, steps, input_dim]`, or `InvalidInput` naming the layer.
    fn check_input<'a>(&self, input: &'a Tensor) -> RustymlResult<ndarray::ArrayView3<'a, f32>> {
        let name = self.cell.name();
        let x = input.view().into_dimensionality::<Ix3>().map_err(|_| {
            Error::invalid_input(format!(
                "{name} expects a 3D input [batch, timesteps, {}], got shape {:?}",
                self.input_dim,
                input.shape()
            ))
        })?;
        if x.shape()[2] != self.input_dim {
            return Err(Error::invalid_input(format!(
                "{name} expects {} features per timestep, got input of shape {:?}",
                self.input_dim,
                input.shape()
            )));
        }
        if x.shape()[1] == 0 {
            return Err(Error::invalid_input(format!(
                "{name} needs at least one timestep, got input of shape {:?}",
                input.shape()
            )));
        }
        Ok(x)
    }

    pub(crate) fn forward(&mut self, input: &Tensor) -> RustymlResult<Tensor> {
        self.forward_masked(input, None)
    }

    pub(crate) fn predict(&self, input: &Tensor) -> RustymlResult<Tensor> {
        self.predict_masked(input, None)
    }

    /// The training pass under Keras's mask `[batch, timesteps]` (`None`: every step read).
    pub(crate) fn forward_masked(
        &mut self,
        input: &Tensor,
        mask: Option<&Mask>,
    ) -> RustymlResult<Tensor> {
        let batch = self.check_input(input)?.dim().0;
        self.step_mask(mask, input.shape())?;
        let drop = self.draw_dropout(batch);
        let (out, cache) = self.run(input, mask, drop)?;
        self.cache = Some(cache);
        Ok(out)
    }

    pub(crate) fn predict_masked(
        &self,
        input: &Tensor,
        mask: Option<&Mask>,
    ) -> RustymlResult<Tensor> {
        Ok(self.run(input, mask, None)?.0)
    }

    /// Keras's `compute_mask` for a recurrent layer: the input's mask goes on with the
    /// sequences (unchanged, also under `go_backwards`), and stops with the last state.
    pub(crate) fn output_mask(&self, mask: Option<&Mask>) -> Option<Mask> {
        mask.filter(|_| self.return_sequences).cloned()
    }

    /// Keras's mask as `[steps, batch]` in processing order (reversed under `go_backwards`),
    /// after checking it is `[batch, timesteps]` for an input of shape `input`.
    fn step_mask(
        &self,
        mask: Option<&Mask>,
        input: &[usize],
    ) -> RustymlResult<Option<Array2<bool>>> {
        let Some(mask) = mask else {
            return Ok(None);
        };
        let (batch, steps) = (input[0], input[1]);
        let m = mask
            .view()
            .into_dimensionality::<Ix2>()
            .ok()
            .filter(|m| m.dim() == (batch, steps))
            .ok_or_else(|| {
                Error::invalid_input(format!(
                    "{}: the mask has shape {:?}, expected [batch, timesteps] = [{batch}, {steps}] for input of shape {input:?}",
                    self.cell.name(),
                    mask.shape()
                ))
            })?;
        let tm = if self.go_backwards {
            m.slice(s![.., ..;-1]).reversed_axes()
        } else {
            m.reversed_axes()
        };
        Ok(Some(tm.as_standard_layout().into_owned()))
    }

    /// The forward recurrence; returns the output and everything `backward` needs.
    fn run(
        &self,
        input: &Tensor,
        mask: Option<&Mask>,
        drop: Option<DropoutMasks>,
    ) -> RustymlResult<(Tensor, Cache)> {
        let x3 = self.check_input(input)?;
        let keep = self.step_mask(mask, input.shape())?;
        let (batch, steps, d) = x3.dim();
        let u = self.units;
        let gates = self.cell.gates();
        // Time-major (and time-reversed under go_backwards) copy of the input.
        let x_tm = if self.go_backwards {
            x3.slice(s![.., ..;-1, ..]).permuted_axes([1, 0, 2])
        } else {
            x3.permuted_axes([1, 0, 2])
        };
        let x = x_tm
            .as_standard_layout()
            .into_owned()
            .into_shape_with_order((steps * batch, d))
            .expect("standard layout reshapes freely");
        let par = nested_parallelism();
        let mut acts = match drop.as_ref().and_then(|m| m.input.as_ref()) {
            None => project_rows(
                self.gates.kernel.view(),
                &x.view().insert_axis(Axis(0)),
                self.input_bias(),
            ),
            Some(m) if m.dim().0 == 1 => project_rows(
                self.gates.kernel.view(),
                &masked_rows(x.view(), m.index_axis(Axis(0), 0), batch)
                    .view()
                    .insert_axis(Axis(0)),
                self.input_bias(),
            ),
            Some(m) => {
                // one input mask per gate: each gate block projects its own masked input
                let mut acts = Array2::<f32>::zeros((steps * batch, gates * u));
                for g in 0..gates {
                    let cols = g * u..(g + 1) * u;
                    let xg = masked_rows(x.view(), m.index_axis(Axis(0), g), batch);
                    let block = dot_bias_act(
                        xg.view(),
                        self.gates.kernel.slice(s![.., cols.clone()]),
                        self.input_bias().map(|b| b.slice_move(s![cols.clone()])),
                        None,
                        par,
                    )?;
                    acts.slice_mut(s![.., cols]).assign(&block);
                }
                acts
            }
        };
        let mut hs = Array2::<f32>::zeros(((steps + 1) * batch, u));
        let lstm = matches!(self.cell, Cell::Lstm);
        let mut cs = Array2::<f32>::zeros((if lstm { (steps + 1) * batch } else { 0 }, u));
        let extra_rows = if matches!(self.cell, Cell::Simple) {
            0
        } else {
            steps * batch
        };
        let mut extra = Array2::<f32>::zeros((extra_rows, u));
        let rmasks = optional_blocks(
            drop.as_ref()
                .and_then(|m| m.recurrent.as_ref())
                .map(|m| m.view()),
            batch,
            1,
        );
        let keeps = optional_blocks(keep.as_ref().map(|k| k.view()), batch, 1);
        let blocks: Vec<ForwardBlock<'_>> = row_blocks_mut(&mut acts, batch)
            .into_iter()
            .zip(row_blocks_mut(&mut hs, batch))
            .zip(row_blocks_mut(&mut cs, batch))
            .zip(row_blocks_mut(&mut extra, batch))
            .zip(rmasks)
            .zip(keeps)
            .map(|(((((acts, hs), cs), extra), rmask), keep)| ForwardBlock {
                acts,
                hs,
                cs,
                extra,
                rmask,
                keep,
            })
            .collect();
        let parallel = self.parallel_blocks(steps, batch);
        for_each_block(parallel, par, blocks, |block, par| {
            self.forward_block(block, par)
        });
        // Keras's zero_output_for_mask: a masked step outputs zeros (its state is carried).
        let zero_rows = keep.as_ref().filter(|_| self.zero_output_for_mask);
        let out = if self.return_sequences {
            let mut seq = hs
                .slice(s![batch.., ..])
                .into_shape_with_order((steps, batch, u))
                .expect("contiguous rows")
                .to_owned();
            if let Some(keep) = zero_rows {
                ndarray::Zip::from(seq.lanes_mut(Axis(2)))
                    .and(keep)
                    .for_each(|mut row, &k| {
                        if !k {
                            row.fill(0.0)
                        }
                    });
            }
            seq.permuted_axes([1, 0, 2])
                .as_standard_layout()
                .into_owned()
                .into_dyn()
        } else {
            let mut last = hs.slice(s![steps * batch.., ..]).to_owned();
            if let Some(keep) = zero_rows {
                for (mut row, &k) in last.rows_mut().into_iter().zip(keep.row(steps - 1)) {
                    if !k {
                        row.fill(0.0)
                    }
                }
            }
            last.into_dyn()
        };
        Ok((
            out,
            Cache {
                batch,
                steps,
                x,
                acts,
                hs,
                cs,
                extra,
                drop,
                keep,
            },
        ))
    }

    /// Backpropagation through time; stores the weight gradients, returns `dL/dx`.
    pub(crate) fn backward(&mut self, grad_output: &Tensor) -> RustymlResult<Tensor> {
        Ok(self
            .backward_with(grad_output, true)?
            .expect("input gradient requested"))
    }

    /// [`Self::backward`] for a network's first layer: the weight gradients only.
    pub(crate) fn backward_params_only(&mut self, grad_output: &Tensor) -> RustymlResult<()> {
        self.backward_with(grad_output, false).map(drop)
    }

    /// The weight gradients, and `dL/dx` when `input_gradient` (one product over every step,
    /// as large as the kernel's gradient, wasted on a network's first layer).
    fn backward_with(
        &mut self,
        grad_output: &Tensor,
        input_gradient: bool,
    ) -> RustymlResult<Option<Tensor>> {
        let name = self.cell.name();
        let Cache {
            batch,
            steps,
            x,
            acts,
            hs,
            cs,
            extra,
            drop,
            keep,
        } = take_cache(&mut self.cache, name)?;
        let u = self.units;
        let gates = self.cell.gates();
        let gu = gates * u;
        let want: Vec<usize> = if self.return_sequences {
            vec![batch, steps, u]
        } else {
            vec![batch, u]
        };
        if grad_output.shape() != want.as_slice() {
            return Err(Error::invalid_input(format!(
                "{name} backward expects a gradient of shape {want:?}, got {:?}",
                grad_output.shape()
            )));
        }
        // Upstream gradient, time-major when it covers every step.
        let mut dout: Array2<f32> = if self.return_sequences {
            grad_output
                .view()
                .into_dimensionality::<Ix3>()
                .expect("shape checked")
                .permuted_axes([1, 0, 2])
                .as_standard_layout()
                .into_owned()
                .into_shape_with_order((steps * batch, u))
                .expect("standard layout reshapes freely")
        } else {
            grad_output
                .view()
                .into_dimensionality::<Ix2>()
                .expect("shape checked")
                .as_standard_layout()
                .into_owned()
        };
        // A zero output (zero_output_for_mask at a masked step) passes no gradient back.
        if let Some(keep) = keep.as_ref().filter(|_| self.zero_output_for_mask) {
            let first_step = if self.return_sequences { 0 } else { steps - 1 };
            let kept = keep.slice(s![first_step.., ..]);
            for (mut row, &k) in dout.rows_mut().into_iter().zip(kept.iter()) {
                if !k {
                    row.fill(0.0);
                }
            }
        }
        let par = nested_parallelism();
        let rmask_full = drop.as_ref().and_then(|m| m.recurrent.as_ref());
        // dh_{t-1} = dpre_t · Uᵀ reads a contiguous Uᵀ: a strided one is packed anew each step.
        let rk_t = self
            .gates
            .recurrent_kernel
            .t()
            .as_standard_layout()
            .into_owned();
        let mut dpre = Array2::<f32>::zeros((steps * batch, gu));
        let reset_after = matches!(self.cell, Cell::Gru { reset_after: true });
        let mut drec = Array2::<f32>::zeros((if reset_after { steps * batch } else { 0 }, gu));
        let rmasks = optional_blocks(rmask_full.map(|m| m.view()), batch, 1);
        let keeps = optional_blocks(keep.as_ref().map(|k| k.view()), batch, 1);
        let blocks: Vec<BackwardBlock<'_>> = row_blocks(&acts, batch)
            .into_iter()
            .zip(row_blocks(&hs, batch))
            .zip(row_blocks(&cs, batch))
            .zip(row_blocks(&extra, batch))
            .zip(row_blocks(&dout, batch))
            .zip(row_blocks_mut(&mut dpre, batch))
            .zip(row_blocks_mut(&mut drec, batch))
            .zip(rmasks)
            .zip(keeps)
            .map(
                |((((((((acts, hs), cs), extra), dout), dpre), drec), rmask), keep)| {
                    BackwardBlock {
                        acts,
                        hs,
                        cs,
                        extra,
                        dout,
                        dpre,
                        drec,
                        rmask,
                        keep,
                    }
                },
            )
            .collect();
        let parallel = self.parallel_blocks(steps, batch);
        for_each_block(parallel, par, blocks, |block, par| {
            self.backward_block(block, rk_t.view(), par)
        });
        // Weight gradients over all steps at once.
        let h_prev_all = hs.slice(s![..steps * batch, ..]);
        let input_masks = drop.as_ref().and_then(|m| m.input.as_ref());
        let grad_kernel = match input_masks {
            None => dot_par(x.t(), dpre.view(), par)?,
            Some(m) if m.dim().0 == 1 => {
                let xm = masked_rows(x.view(), m.index_axis(Axis(0), 0), batch);
                dot_par(xm.t(), dpre.view(), par)?
            }
            Some(m) => {
                let mut g = Array2::<f32>::zeros((self.input_dim, gu));
                for k in 0..gates {
                    let xm = masked_rows(x.view(), m.index_axis(Axis(0), k), batch);
                    let cols = k * u..(k + 1) * u;
                    gemm(
                        1.0,
                        &xm.t(),
                        &dpre.slice(s![.., cols.clone()]),
                        0.0,
                        &mut g.slice_mut(s![.., cols]),
                        par,
                    );
                }
                g
            }
        };
        let col_sums = |a: &Array2<f32>| a.sum_axis(Axis(0)).insert_axis(Axis(0));
        let (grad_recurrent, grad_bias) = match self.cell {
            Cell::Simple | Cell::Lstm if rmask_full.is_none() => {
                (dot_par(h_prev_all.t(), dpre.view(), par)?, col_sums(&dpre))
            }
            Cell::Simple | Cell::Lstm => {
                let mut g = Array2::<f32>::zeros((u, gu));
                let d = dpre.view();
                recurrent_kernel_gradient(
                    h_prev_all,
                    d,
                    rmask_full,
                    0..gates,
                    u,
                    batch,
                    &mut g,
                    par,
                );
                (g, col_sums(&dpre))
            }
            Cell::Gru { reset_after: false } => {
                let mut g = Array2::<f32>::zeros((u, gu));
                let d = dpre.view();
                recurrent_kernel_gradient(h_prev_all, d, rmask_full, 0..2, u, batch, &mut g, par);
                gemm(
                    1.0,
                    &extra.t(),
                    &dpre.slice(s![.., 2 * u..]),
                    0.0,
                    &mut g.slice_mut(s![.., 2 * u..]),
                    par,
                );
                (g, col_sums(&dpre))
            }
            Cell::Gru { reset_after: true } => {
                let mut b = Array2::<f32>::zeros((2, gu));
                b.row_mut(0).assign(&dpre.sum_axis(Axis(0)));
                b.row_mut(1).assign(&drec.sum_axis(Axis(0)));
                let g = match rmask_full {
                    None => dot_par(h_prev_all.t(), drec.view(), par)?,
                    Some(_) => {
                        let mut g = Array2::<f32>::zeros((u, gu));
                        let d = drec.view();
                        recurrent_kernel_gradient(
                            h_prev_all,
                            d,
                            rmask_full,
                            0..3,
                            u,
                            batch,
                            &mut g,
                            par,
                        );
                        g
                    }
                };
                (g, b)
            }
        };
        self.gates
            .store_gradients(grad_kernel, grad_recurrent, grad_bias);

        if !input_gradient {
            return Ok(None);
        }
        // dL/dx, back to batch-major (and to input order under go_backwards).
        let dx = match input_masks {
            None => dot_par(dpre.view(), self.gates.kernel.t(), par)?,
            Some(m) => {
                let count = m.dim().0;
                let width = gu / count;
                let mut dx = Array2::<f32>::zeros((steps * batch, self.input_dim));
                for k in 0..count {
                    let cols = k * width..(k + 1) * width;
                    let part = dot_par(
                        dpre.slice(s![.., cols.clone()]),
                        self.gates.kernel.slice(s![.., cols]).t(),
                        par,
                    )?;
                    dx += &masked_rows(part.view(), m.index_axis(Axis(0), k), batch);
                }
                dx
            }
        };
        let dx = dx
            .as_standard_layout()
            .into_owned()
            .into_shape_with_order((steps, batch, self.input_dim))
            .expect("standard layout reshapes freely");
        let dx = dx.permuted_axes([1, 0, 2]);
        let dx = if self.go_backwards {
            dx.slice(s![.., ..;-1, ..])
                .as_standard_layout()
                .into_owned()
        } else {
            dx.as_standard_layout().into_owned()
        };
        Ok(Some(dx.into_dyn()))
    }

    pub(crate) fn output_shape(&self) -> String {
        if self.return_sequences {
            format!("(None, None, {})", self.units)
        } else {
            format!("(None, {})", self.units)
        }
    }

    pub(crate) fn param_count(&self) -> TrainingParameters {
        let bias = if self.use_bias {
            self.gates.bias.len()
        } else {
            0
        };
        TrainingParameters::Trainable(
            self.gates.kernel.len() + self.gates.recurrent_kernel.len() + bias,
        )
    }

    /// Kernel, recurrent kernel and (with `use_bias`) bias, with their latest gradients.
    pub(crate) fn parameters(&mut self) -> Vec<ParamGrad<'_>> {
        let use_bias = self.use_bias;
        let mut params = self.gates.parameters();
        if !use_bias {
            params.truncate(2);
        }
        params
    }

    /// The fused weights as the original's enum spells them for this cell.
    pub(crate) fn get_weights(&self) -> LayerWeight<'_> {
        let g = &self.gates;
        cell_weight(
            self.cell,
            Cow::Borrowed(&g.kernel),
            Cow::Borrowed(&g.recurrent_kernel),
            Cow::Borrowed(&g.bias),
        )
    }

    /// The three fused arrays of `weights` when it is this cell's variant.
    pub(crate) fn weight_arrays<'w>(
        &self,
        weights: &'w LayerWeight<'_>,
    ) -> Option<[&'w Array2<f32>; 3]> {
        match (self.cell, weights) {
            (Cell::Simple, LayerWeight::SimpleRNN(w)) => {
                Some([&*w.kernel, &*w.recurrent_kernel, &*w.bias])
            }
            (Cell::Lstm, LayerWeight::LSTM(w)) => {
                Some([&*w.kernel, &*w.recurrent_kernel, &*w.bias])
            }
            (Cell::Gru { .. }, LayerWeight::GRU(w)) => {
                Some([&*w.kernel, &*w.recurrent_kernel, &*w.bias])
            }
            _ => None,
        }
    }

    pub(crate) fn apply_weights(&mut self, weights: &LayerWeight<'_>) -> RustymlResult<()> {
        let name = self.cell.name();
        let Some([k, rk, b]) = self.weight_arrays(weights) else {
            return Err(IoError::ModelStructureMismatch(format!(
                "expected {name} weights for a {name} layer"
            ))
            .into());
        };
        let (k, rk, b) = (k.clone(), rk.clone(), b.clone());
        self.set_weights(k, rk, b)
            .map_err(|e| IoError::ModelStructureMismatch(format!("{name}: {e}")).into())
    }
}

impl Recurrent {
    /// Whether the blocks of a `steps x batch` call run as parallel tasks.
    fn parallel_blocks(&self, steps: usize, batch: usize) -> bool {
        let gu = self.cell.gates() * self.units;
        let flops = 2usize
            .saturating_mul(steps)
            .saturating_mul(batch)
            .saturating_mul(self.units)
            .saturating_mul(gu);
        batch > BLOCK_ROWS && RECURRENT_PARALLEL_MIN_FLOPS.allows_parallel(flops)
    }

    /// The forward recurrence over one block of batch rows: one fused recurrent product per
    /// step, then the gate nonlinearities in place.
    fn forward_block(&self, block: ForwardBlock<'_>, par: Parallelism) {
        let ForwardBlock {
            mut acts,
            mut hs,
            mut cs,
            mut extra,
            rmask,
            keep,
        } = block;
        let rmask = rmask.as_ref();
        let (steps, rows, gu) = acts.dim();
        let u = self.units;
        let (act, ract) = (self.activation, self.recurrent_activation);
        let rk = &self.gates.recurrent_kernel;
        // GRU (reset after): the step's recurrent product plus its bias row.
        let mut scratch = match self.cell {
            Cell::Gru { reset_after: true } => Array2::<f32>::zeros((rows, gu)),
            _ => Array2::<f32>::zeros((0, 0)),
        };
        const STEP: &str = "a step's rows are contiguous";
        for t in 0..steps {
            let (h_done, mut h_todo) = hs.view_mut().split_at(Axis(0), t + 1);
            let h_prev = h_done.index_axis(Axis(0), t);
            let mut h_next = h_todo.index_axis_mut(Axis(0), 0);
            let mut a_t = acts.index_axis_mut(Axis(0), t);
            let gates = self.cell.gates();
            match self.cell {
                Cell::Simple | Cell::Lstm => match rmask {
                    None => gemm(1.0, &h_prev, rk, 1.0, &mut a_t, par),
                    Some(_) => {
                        let rk = rk.view();
                        recurrent_product(h_prev, rk, rmask, 0..gates, u, 1.0, &mut a_t, par)
                    }
                },
                Cell::Gru { reset_after: false } => {
                    recurrent_product(h_prev, rk.view(), rmask, 0..2, u, 1.0, &mut a_t, par)
                }
                Cell::Gru { reset_after: true } => {
                    let beta = if self.use_bias {
                        scratch.assign(&self.gates.bias.row(1));
                        1.0
                    } else {
                        0.0
                    };
                    match rmask {
                        None => gemm(1.0, &h_prev, rk, beta, &mut scratch, par),
                        Some(_) => recurrent_product(
                            h_prev,
                            rk.view(),
                            rmask,
                            0..3,
                            u,
                            beta,
                            &mut scratch.view_mut(),
                            par,
                        ),
                    }
                }
            }
            let h_prev = h_prev.as_slice().expect(STEP);
            let h_next = h_next.as_slice_mut().expect(STEP);
            match self.cell {
                Cell::Simple => {
                    let a = a_t.as_slice_mut().expect(STEP);
                    act.apply_slice(a);
                    h_next.copy_from_slice(a);
                }
                Cell::Lstm => {
                    let (c_done, mut c_todo) = cs.view_mut().split_at(Axis(0), t + 1);
                    let c_prev = c_done.index_axis(Axis(0), t);
                    let mut c_next = c_todo.index_axis_mut(Axis(0), 0);
                    let mut ac = extra.index_axis_mut(Axis(0), t);
                    let (c_prev, c_next) = (
                        c_prev.as_slice().expect(STEP),
                        c_next.as_slice_mut().expect(STEP),
                    );
                    let ac = ac.as_slice_mut().expect(STEP);
                    let a = a_t.as_slice_mut().expect(STEP);
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
                Cell::Gru { reset_after: false } => {
                    let mut rh_t = extra.index_axis_mut(Axis(0), t);
                    let rh = rh_t.as_slice_mut().expect(STEP);
                    let a = a_t.as_slice_mut().expect(STEP);
                    for b in 0..rows {
                        let row = &mut a[b * gu..(b + 1) * gu];
                        ract.apply_slice(&mut row[..2 * u]); // z, r
                        for j in 0..u {
                            let k = b * u + j;
                            rh[k] = row[u + j] * h_prev[k];
                        }
                    }
                    if let Some(m) = rmask {
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
                        &mut a_t.slice_mut(s![.., 2 * u..]),
                        par,
                    );
                    let a = a_t.as_slice_mut().expect(STEP);
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
                Cell::Gru { reset_after: true } => {
                    let rec = scratch.as_slice().expect("standard layout");
                    let mut rec_h = extra.index_axis_mut(Axis(0), t);
                    let rec_h = rec_h.as_slice_mut().expect(STEP);
                    let a = a_t.as_slice_mut().expect(STEP);
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
            }
            // Keras's mask: a skipped step carries the previous state (h, and LSTM's c).
            if let Some(keep) = keep.as_ref() {
                for (b, _) in keep.row(t).iter().enumerate().filter(|(_, &k)| !k) {
                    let at = b * u..(b + 1) * u;
                    h_next[at.clone()].copy_from_slice(&h_prev[at.clone()]);
                    if matches!(self.cell, Cell::Lstm) {
                        let (c_done, mut c_todo) = cs.view_mut().split_at(Axis(0), t + 1);
                        let c_prev = c_done.index_axis(Axis(0), t);
                        let mut c_next = c_todo.index_axis_mut(Axis(0), 0);
                        let c_prev = c_prev.as_slice().expect(STEP);
                        c_next.as_slice_mut().expect(STEP)[at.clone()].copy_from_slice(&c_prev[at]);
                    }
                }
            }
        }
    }

    /// Backpropagation through time over one block of batch rows: the gate gradients of every
    /// step and one fused product per step for `dh_{t-1}` (`rk_t` is `Uᵀ`, contiguous).
    fn backward_block(
        &self,
        block: BackwardBlock<'_>,
        rk_t: ArrayView2<'_, f32>,
        par: Parallelism,
    ) {
        let BackwardBlock {
            acts,
            hs,
            cs,
            extra,
            dout,
            mut dpre,
            mut drec,
            rmask,
            keep,
        } = block;
        let rmask = rmask.as_ref();
        let (steps, rows, gu) = acts.dim();
        let u = self.units;
        let gates = self.cell.gates();
        let (act, ract) = (self.activation, self.recurrent_activation);
        const STEP: &str = "a step's rows are contiguous";
        let mut dh = Array2::<f32>::zeros((rows, u));
        let lstm = matches!(self.cell, Cell::Lstm);
        let mut dc = vec![0.0f32; if lstm { rows * u } else { 0 }];
        let mut drh = Array2::<f32>::zeros((rows, u));
        // The gradients a masked step carries past itself (its rows of dh, and dc).
        let mut carried: Vec<(usize, Vec<f32>, Vec<f32>)> = Vec::new();
        for t in (0..steps).rev() {
            let upstream = if self.return_sequences {
                Some(t)
            } else {
                (t + 1 == steps).then_some(0)
            };
            if let Some(at) = upstream {
                dh += &dout.index_axis(Axis(0), at);
            }
            // Keras's mask: a skipped step's state is the previous one, so its gradient
            // passes to step t - 1 untouched; zeroed here, the step's own terms vanish.
            carried.clear();
            if let Some(keep) = keep.as_ref() {
                let dhs = dh.as_slice_mut().expect("standard layout");
                for (b, _) in keep.row(t).iter().enumerate().filter(|(_, &k)| !k) {
                    let at = b * u..(b + 1) * u;
                    let h_row = dhs[at.clone()].to_vec();
                    dhs[at.clone()].fill(0.0);
                    let c_row = if lstm {
                        let row = dc[at.clone()].to_vec();
                        dc[at].fill(0.0);
                        row
                    } else {
                        Vec::new()
                    };
                    carried.push((b, h_row, c_row));
                }
            }
            let a = acts.index_axis(Axis(0), t);
            let a = a.as_slice().expect(STEP);
            let h_prev = hs.index_axis(Axis(0), t);
            let h_prev = h_prev.as_slice().expect(STEP);
            let mut dp_t = dpre.index_axis_mut(Axis(0), t);
            let dp = dp_t.as_slice_mut().expect(STEP);
            let dhs = dh.as_slice_mut().expect("standard layout");
            match self.cell {
                Cell::Simple => {
                    let h_t = hs.index_axis(Axis(0), t + 1);
                    let h_t = h_t.as_slice().expect(STEP);
                    for ((d, &g), &h) in dp.iter_mut().zip(dhs.iter()).zip(h_t) {
                        *d = g * act.derivative_from_output(h);
                    }
                    state_gradient(dp_t.view(), rk_t, rmask, 0..1, u, 0.0, &mut dh, par);
                }
                Cell::Lstm => {
                    let c_prev = cs.index_axis(Axis(0), t);
                    let ac = extra.index_axis(Axis(0), t);
                    let step = LstmStep {
                        u,
                        acts: a,
                        c_prev: c_prev.as_slice().expect(STEP),
                        act_c: ac.as_slice().expect(STEP),
                        dh: dhs,
                    };
                    if (act, ract) == (Activation::Tanh, Activation::Sigmoid) {
                        lstm_step_grads_keras_default(&step, dp, &mut dc);
                    } else {
                        lstm_step_grads(
                            &step,
                            dp,
                            &mut dc,
                            |v| act.derivative_from_output(v),
                            |v| ract.derivative_from_output(v),
                        );
                    }
                    state_gradient(dp_t.view(), rk_t, rmask, 0..gates, u, 0.0, &mut dh, par);
                }
                Cell::Gru { reset_after: false } => {
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
                    gemm(
                        1.0,
                        &dp_t.slice(s![.., 2 * u..]),
                        &rk_t.slice(s![2 * u.., ..]),
                        0.0,
                        &mut drh,
                        par,
                    );
                    let drh = drh.as_slice().expect("standard layout");
                    let dp = dp_t.as_slice_mut().expect(STEP);
                    let dhs = dh.as_slice_mut().expect("standard layout");
                    // the candidate's recurrent dropout mask scales what reaches h_{t-1}
                    let m_h = rmask.map(|m| m.index_axis(Axis(0), 2));
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
                    state_gradient(dp_t.view(), rk_t, rmask, 0..2, u, 1.0, &mut dh, par);
                }
                Cell::Gru { reset_after: true } => {
                    let rec_h = extra.index_axis(Axis(0), t);
                    let rec_h = rec_h.as_slice().expect(STEP);
                    let mut dr_t = drec.index_axis_mut(Axis(0), t);
                    let dr = dr_t.as_slice_mut().expect(STEP);
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
                    state_gradient(dr_t.view(), rk_t, rmask, 0..3, u, 1.0, &mut dh, par);
                }
            }
            let dhs = dh.as_slice_mut().expect("standard layout");
            for (b, h_row, c_row) in &carried {
                let at = b * u..(b + 1) * u;
                dhs[at.clone()].copy_from_slice(h_row);
                if lstm {
                    dc[at].copy_from_slice(c_row);
                }
            }
        }
    }
}

/// `cell`'s variant of the original's weight enum around the three fused arrays.
pub(crate) fn cell_weight<'a>(
    cell: Cell,
    kernel: Cow<'a, Array2<f32>>,
    recurrent_kernel: Cow<'a, Array2<f32>>,
    bias: Cow<'a, Array2<f32>>,
) -> LayerWeight<'a> {
    match cell {
        Cell::Simple => LayerWeight::SimpleRNN(SimpleRNNLayerWeight {
            kernel,
            recurrent_kernel,
            bias,
        }),
        Cell::Lstm => LayerWeight::LSTM(LSTMLayerWeight {
            kernel,
            recurrent_kernel,
            bias,
        }),
        Cell::Gru { .. } => LayerWeight::GRU(GRULayerWeight {
            kernel,
            recurrent_kernel,
            bias,
        }),
    }
}

/// The fused weights `[kernel, recurrent_kernel, bias]` of a cell as views (for wrappers
/// that combine two layers' weights).
pub(crate) fn fused_views(r: &Recurrent) -> [ArrayView2<'_, f32>; 3] {
    [
        r.gates.kernel.view(),
        r.gates.recurrent_kernel.view(),
        r.gates.bias.view(),
    ]
}

/// `impl Layer` for a recurrent layer struct whose engine lives in its `core` field, plus
/// the builders every recurrent layer shares.
macro_rules! recurrent_layer {
    ($ty:ident) => {
        impl $ty {
            /// Re-draws the kernels from `random_state`: equal seeds give equal layers.
            pub fn with_random_state(mut self, random_state: u64) -> Self {
                self.core.reseed(random_state);
                self
            }

            /// Keras's `return_sequences`: output every step's state `[batch, timesteps,
            /// units]` instead of the last one `[batch, units]` (the default).
            pub fn with_return_sequences(mut self, return_sequences: bool) -> Self {
                self.core.return_sequences = return_sequences;
                self
            }

            /// Keras's `go_backwards`: read the sequence from its last step to its first
            /// (with `return_sequences`, the outputs stay in processing order, as in Keras).
            pub fn with_go_backwards(mut self, go_backwards: bool) -> Self {
                self.core.go_backwards = go_backwards;
                self
            }

            /// The gate nonlinearity (Keras's `recurrent_activation`, sigmoid by default).
            pub fn with_recurrent_activation(
                mut self,
                activation: impl Into<$crate::neural_network::layers::activation::Activation>,
            ) -> $crate::error::RustymlResult<Self> {
                self.core.set_recurrent_activation(activation.into())?;
                Ok(self)
            }

            /// Keras's `use_bias` (default true): without it the layer has no bias term (kept
            /// as a zero array in `get_weights`, never trained, not counted); the bias restarts
            /// at its initial value either way, so call it before `set_weights`.
            pub fn with_use_bias(mut self, use_bias: bool) -> Self {
                self.core.set_use_bias(use_bias);
                self
            }

            /// Whether the layer has a bias term (see `with_use_bias`).
            pub fn use_bias(&self) -> bool {
                self.core.use_bias
            }

            /// Whether the layer outputs every step (see `with_return_sequences`).
            pub fn return_sequences(&self) -> bool {
                self.core.return_sequences
            }

            /// Keras's `dropout` and `recurrent_dropout` (each in [0, 1), else
            /// `InvalidParameter` naming it): while training, one mask per batch for the
            /// inputs and one for the recurrent state, applied at every step and scaled by
            /// `1 / (1 - rate)`; with recurrent dropout, one mask per gate for each (Keras 3's
            /// cells). The masks come from the layer's own stream (`with_random_state`).
            pub fn with_dropout(
                mut self,
                dropout: f32,
                recurrent_dropout: f32,
            ) -> $crate::error::RustymlResult<Self> {
                self.core.set_dropout(dropout, recurrent_dropout)?;
                Ok(self)
            }

            /// Keras's `zero_output_for_mask`: a masked step outputs zeros instead of the
            /// state it carries over.
            pub fn with_zero_output_for_mask(mut self, zero_output_for_mask: bool) -> Self {
                self.core.zero_output_for_mask = zero_output_for_mask;
                self
            }
        }

        impl $crate::neural_network::traits::Layer for $ty {
            $crate::neural_network::layers::layer_util::core_passes!();

            fn backward_params_only(
                &mut self,
                grad_output: &$crate::neural_network::Tensor,
            ) -> $crate::error::RustymlResult<()> {
                self.core.backward_params_only(grad_output)
            }

            fn forward_masked(
                &mut self,
                input: &$crate::neural_network::Tensor,
                mask: Option<&$crate::neural_network::traits::Mask>,
            ) -> $crate::error::RustymlResult<$crate::neural_network::Tensor> {
                self.core.forward_masked(input, mask)
            }

            fn predict_masked(
                &self,
                input: &$crate::neural_network::Tensor,
                mask: Option<&$crate::neural_network::traits::Mask>,
            ) -> $crate::error::RustymlResult<$crate::neural_network::Tensor> {
                self.core.predict_masked(input, mask)
            }

            fn compute_mask(
                &self,
                _input: $crate::neural_network::TensorView<'_>,
                mask: Option<&$crate::neural_network::traits::Mask>,
            ) -> $crate::error::RustymlResult<Option<$crate::neural_network::traits::Mask>> {
                Ok(self.core.output_mask(mask))
            }

            fn set_training_if_mode_dependent(&mut self, is_training: bool) {
                self.core.set_training(is_training);
            }

            fn random_stream(&self) -> Option<$crate::neural_network::traits::RandomStream> {
                self.core.random_stream()
            }

            fn set_random_stream(&mut self, stream: &$crate::neural_network::traits::RandomStream) {
                self.core.set_random_stream(stream)
            }

            fn layer_type(&self) -> &str {
                stringify!($ty)
            }
            fn output_shape(&self) -> String {
                self.core.output_shape()
            }
            fn param_count(&self) -> $crate::neural_network::layers::TrainingParameters {
                self.core.param_count()
            }
            fn uses_bias(&self) -> bool {
                self.core.use_bias
            }
            fn parameters(&mut self) -> Vec<$crate::neural_network::traits::ParamGrad<'_>> {
                self.core.parameters()
            }
            fn get_weights(&self) -> $crate::neural_network::layers::layer_weight::LayerWeight<'_> {
                self.core.get_weights()
            }
            fn apply_weights(
                &mut self,
                weights: &$crate::neural_network::layers::layer_weight::LayerWeight<'_>,
            ) -> $crate::error::RustymlResult<()> {
                self.core.apply_weights(weights)
            }
        }

        impl $crate::neural_network::layers::recurrent::bidirectional::RecurrentLayer for $ty {
            fn into_engine(self) -> $crate::neural_network::layers::recurrent::engine::Recurrent {
                self.core
            }
        }
    };
}
pub(crate) use recurrent_layer;

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

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array3, ArrayD};

    fn sig(v: f64) -> f64 {
        1.0 / (1.0 + (-v).exp())
    }

    /// The recurrence written from Keras's equations, one scalar at a time, in f64 (tanh
    /// activation, sigmoid gates).
    fn reference(layer: &Recurrent, x: &Array3<f32>) -> ArrayD<f64> {
        reference_with(layer, x, None, None)
    }

    /// [`reference`] under Keras's mask `keep` (`[batch, steps]`, input order: a masked step
    /// keeps the state and outputs it, or zeros under `zero_output_for_mask`) and dropout
    /// masks (`x ⊙ m` into each gate's input product, `h ⊙ m_g` into its recurrent one).
    fn reference_with(
        layer: &Recurrent,
        x: &Array3<f32>,
        keep: Option<&ndarray::Array2<bool>>,
        drop: Option<&DropoutMasks>,
    ) -> ArrayD<f64> {
        let (bsz, steps, d) = x.dim();
        let in_mask = drop.and_then(|m| m.input.as_ref());
        let rec_mask = drop.and_then(|m| m.recurrent.as_ref());
        let u = layer.units;
        let k = layer.gates.kernel.mapv(f64::from);
        let rk = layer.gates.recurrent_kernel.mapv(f64::from);
        let b = layer.gates.bias.mapv(f64::from);
        let mut out = Vec::new();
        for n in 0..bsz {
            let mut h = vec![0.0f64; u];
            let mut c = vec![0.0f64; u];
            let mut seq = Vec::new();
            for s in 0..steps {
                let t = if layer.go_backwards { steps - 1 - s } else { s };
                let c_before = c.clone();
                // xw[col] = Σ_i x_i K[i, col] + b[0, col]; hu[col] = Σ_i h_i U[i, col]
                let xw = |col: usize| {
                    let fx = |i: usize| match in_mask {
                        Some(m) => m[[if m.dim().0 == 1 { 0 } else { col / u }, n, i]] as f64,
                        None => 1.0,
                    };
                    (0..d)
                        .map(|i| x[[n, t, i]] as f64 * fx(i) * k[[i, col]])
                        .sum::<f64>()
                        + b[[0, col]]
                };
                let hu = |h: &[f64], col: usize| {
                    let fh = |i: usize| rec_mask.map_or(1.0, |m| m[[col / u, n, i]] as f64);
                    (0..u).map(|i| h[i] * fh(i) * rk[[i, col]]).sum::<f64>()
                };
                let new_h: Vec<f64> = match layer.cell {
                    Cell::Simple => (0..u).map(|j| (xw(j) + hu(&h, j)).tanh()).collect(),
                    Cell::Lstm => {
                        let mut nh = vec![0.0; u];
                        for j in 0..u {
                            let i = sig(xw(j) + hu(&h, j));
                            let f = sig(xw(u + j) + hu(&h, u + j));
                            let g = (xw(2 * u + j) + hu(&h, 2 * u + j)).tanh();
                            let o = sig(xw(3 * u + j) + hu(&h, 3 * u + j));
                            c[j] = f * c[j] + i * g;
                            nh[j] = o * c[j].tanh();
                        }
                        nh
                    }
                    Cell::Gru { reset_after } => {
                        let z: Vec<f64> = (0..u)
                            .map(|j| {
                                let rb = if reset_after { b[[1, j]] } else { 0.0 };
                                sig(xw(j) + hu(&h, j) + rb)
                            })
                            .collect();
                        let r: Vec<f64> = (0..u)
                            .map(|j| {
                                let rb = if reset_after { b[[1, u + j]] } else { 0.0 };
                                sig(xw(u + j) + hu(&h, u + j) + rb)
                            })
                            .collect();
                        let rh: Vec<f64> = (0..u).map(|j| r[j] * h[j]).collect();
                        (0..u)
                            .map(|j| {
                                let hh = if reset_after {
                                    (xw(2 * u + j) + r[j] * (hu(&h, 2 * u + j) + b[[1, 2 * u + j]]))
                                        .tanh()
                                } else {
                                    (xw(2 * u + j) + hu(&rh, 2 * u + j)).tanh()
                                };
                                z[j] * h[j] + (1.0 - z[j]) * hh
                            })
                            .collect()
                    }
                };
                let skipped = keep.is_some_and(|k| !k[[n, t]]);
                if skipped {
                    c = c_before;
                } else {
                    h = new_h;
                }
                if skipped && layer.zero_output_for_mask {
                    seq.push(vec![0.0; u]);
                } else {
                    seq.push(h.clone());
                }
            }
            out.push(seq);
        }
        if layer.return_sequences {
            ArrayD::from_shape_fn(vec![bsz, steps, u], |i| out[i[0]][i[1]][i[2]])
        } else {
            ArrayD::from_shape_fn(vec![bsz, u], |i| out[i[0]][steps - 1][i[1]])
        }
    }

    const CELLS: [Cell; 4] = [
        Cell::Simple,
        Cell::Lstm,
        Cell::Gru { reset_after: false },
        Cell::Gru { reset_after: true },
    ];

    /// A layer with every weight (biases included) drawn non-trivially.
    fn layer(cell: Cell, d: usize, u: usize, seq: bool, back: bool, seed: u64) -> Recurrent {
        let mut l = Recurrent::new(cell, d, u, Activation::Tanh, Some(seed)).unwrap();
        if let Cell::Gru { reset_after } = cell {
            l.set_reset_after(reset_after);
        }
        l.return_sequences = seq;
        l.go_backwards = back;
        let mut rng = layer_rng(Some(seed + 1));
        use rand::Rng;
        let b =
            Array2::from_shape_simple_fn(l.gates.bias.raw_dim(), || rng.random_range(-0.5..0.5));
        let k = l.gates.kernel.mapv(|v| v * 1.5);
        let rk = l.gates.recurrent_kernel.clone();
        l.set_weights(k, rk, b).unwrap();
        l
    }

    fn input(b: usize, t: usize, d: usize) -> Array3<f32> {
        Array3::from_shape_fn((b, t, d), |(i, j, k)| {
            ((i * 7 + j * 3 + k) as f32 * 0.37).sin()
        })
    }

    #[test]
    fn forward_matches_the_unrolled_equations() {
        for cell in CELLS {
            for (seq, back) in [(false, false), (true, false), (false, true), (true, true)] {
                let l = layer(cell, 3, 4, seq, back, 11);
                let x = input(2, 5, 3);
                let out = l.predict(&x.clone().into_dyn()).unwrap();
                let want = reference(&l, &x);
                assert_eq!(out.shape(), want.shape());
                for (o, w) in out.iter().zip(want.iter()) {
                    assert!(
                        (*o as f64 - w).abs() < 1e-5,
                        "{cell:?} seq={seq} back={back}: {o} vs {w}"
                    );
                }
            }
        }
    }

    /// L = Σ c ⊙ out with fixed weights c; gradients against central differences of the
    /// layer's own forward pass, accumulated in f64.
    fn check_gradients(l: &mut Recurrent, x: &Array3<f32>) {
        check_gradients_with(l, x, None, None)
    }

    /// [`check_gradients`] under Keras's mask and fixed dropout masks (the same masks for
    /// every evaluation of the loss).
    fn check_gradients_with(
        l: &mut Recurrent,
        x: &Array3<f32>,
        mask: Option<&Mask>,
        drop: Option<DropoutMasks>,
    ) {
        let x = x.clone().into_dyn();
        let (out, cache) = l.run(&x, mask, drop.clone()).unwrap();
        l.cache = Some(cache);
        let c = ArrayD::from_shape_fn(out.raw_dim(), |i| {
            0.3 + 0.2 * (ndarray::Dimension::slice(&i).iter().sum::<usize>() % 5) as f32
        });
        let dx = l.backward(&c).unwrap();
        let loss = |l: &Recurrent, x: &Tensor| -> f64 {
            let o = l.run(x, mask, drop.clone()).unwrap().0;
            o.iter()
                .zip(c.iter())
                .map(|(&o, &c)| o as f64 * c as f64)
                .sum()
        };
        let h = 1e-2f32;
        let tol = |num: f64| 2e-3 + 1e-2 * num.abs();
        let name = format!(
            "{:?} seq={} back={}",
            l.cell, l.return_sequences, l.go_backwards
        );
        for i in 0..x.len() {
            let (mut p, mut m) = (x.clone(), x.clone());
            p.as_slice_mut().unwrap()[i] += h;
            m.as_slice_mut().unwrap()[i] -= h;
            let num = (loss(l, &p) - loss(l, &m)) / (2.0 * h as f64);
            let got = dx.as_slice().unwrap()[i] as f64;
            assert!(
                (got - num).abs() < tol(num),
                "{name} dx[{i}]: {got} vs {num}"
            );
        }
        let grads: Vec<Vec<f32>> = l.parameters().iter().map(|p| p.grad.to_vec()).collect();
        assert_eq!(grads.len(), if l.use_bias { 3 } else { 2 });
        for (k, g) in grads.iter().enumerate() {
            for (i, &gi) in g.iter().enumerate() {
                let orig = l.parameters()[k].value[i];
                l.parameters()[k].value[i] = orig + h;
                let lp = loss(l, &x);
                l.parameters()[k].value[i] = orig - h;
                let lm = loss(l, &x);
                l.parameters()[k].value[i] = orig;
                let num = (lp - lm) / (2.0 * h as f64);
                assert!(
                    (gi as f64 - num).abs() < tol(num),
                    "{name} param {k}[{i}]: {gi} vs {num}"
                );
            }
        }
    }

    #[test]
    fn gradients_match_central_differences() {
        for cell in CELLS {
            for (seq, back) in [(false, false), (true, false), (true, true)] {
                let mut l = layer(cell, 2, 3, seq, back, 5);
                check_gradients(&mut l, &input(2, 4, 2));
            }
        }
    }

    #[test]
    fn gradients_with_other_activations() {
        let mut l = layer(Cell::Lstm, 2, 3, true, false, 8);
        l.activation = Activation::Softsign;
        l.set_recurrent_activation(Activation::Tanh).unwrap();
        check_gradients(&mut l, &input(2, 3, 2));
        let mut g = layer(Cell::Gru { reset_after: false }, 2, 3, false, false, 9);
        g.activation = Activation::Sigmoid;
        check_gradients(&mut g, &input(3, 3, 2));
    }

    /// Bits of one forward and backward pass (output, input gradient, parameter gradients)
    /// of the layer `make` builds, on a pool of `threads` workers.
    #[allow(clippy::type_complexity)]
    fn bits_on_threads(
        threads: usize,
        make: impl Fn() -> Recurrent + Send + Sync,
    ) -> (Vec<u32>, Vec<u32>, Vec<Vec<u32>>) {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| pass_bits(&mut make(), &input(64, 4, 32).into_dyn()))
    }

    /// An upstream gradient for `out` that varies along every axis.
    fn upstream(out: &Tensor) -> Tensor {
        ArrayD::from_shape_fn(out.raw_dim(), |i| {
            0.5 - 0.1 * (ndarray::Dimension::slice(&i).iter().sum::<usize>() % 7) as f32
        })
    }

    /// Bits of one forward and backward pass of `l` on `x`: output, input gradient and
    /// parameter gradients (the upstream gradient from [`upstream`]).
    #[allow(clippy::type_complexity)]
    fn pass_bits(l: &mut Recurrent, x: &Tensor) -> (Vec<u32>, Vec<u32>, Vec<Vec<u32>>) {
        let out = l.forward(x).unwrap();
        let dx = l.backward(&upstream(&out)).unwrap();
        let grads: Vec<Vec<u32>> = l
            .parameters()
            .iter()
            .map(|p| p.grad.iter().map(|v| v.to_bits()).collect())
            .collect();
        let bits = |t: &Tensor| t.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        (bits(&out), bits(&dx), grads)
    }

    /// A first layer skips the input gradient and stores the same weight gradients, bit for
    /// bit.
    #[test]
    fn params_only_backward_stores_the_same_gradients() {
        for cell in CELLS {
            let x = input(19, 4, 3).into_dyn();
            let mut full = layer(cell, 3, 5, true, true, 8);
            let (_, _, want) = pass_bits(&mut full, &x);
            let mut first = layer(cell, 3, 5, true, true, 8);
            let out = first.forward(&x).unwrap();
            first.backward_params_only(&upstream(&out)).unwrap();
            let got: Vec<Vec<u32>> = first
                .parameters()
                .iter()
                .map(|p| p.grad.iter().map(|v| v.to_bits()).collect())
                .collect();
            assert!(got == want, "{cell:?}");
        }
    }

    /// Batches of one block, of several and of a short last block, every cell and direction:
    /// the time loops forced serial and forced parallel give the same bits.
    #[test]
    fn blocks_serial_and_parallel_agree_bitwise() {
        use crate::gate::serial_and_parallel;
        for cell in CELLS {
            for (batch, seq, back) in [(5, true, false), (37, false, true), (48, true, true)] {
                let x = input(batch, 6, 7).into_dyn();
                let (serial, parallel) = serial_and_parallel(&RECURRENT_PARALLEL_MIN_FLOPS, || {
                    pass_bits(&mut layer(cell, 7, 9, seq, back, 4), &x)
                });
                assert!(serial == parallel, "{cell:?} batch={batch} seq={seq}");
            }
        }
    }

    /// Rows of different blocks never mix: a batch spanning three blocks, run in parallel,
    /// matches the equations row for row.
    #[test]
    fn blocks_match_the_equations() {
        use crate::gate::{with_gate, GATE_TEST_LOCK};
        let _lock = GATE_TEST_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        for cell in CELLS {
            let l = layer(cell, 3, 4, true, false, 17);
            let x = input(2 * BLOCK_ROWS + 3, 5, 3);
            let out = with_gate(&RECURRENT_PARALLEL_MIN_FLOPS, 0, || {
                l.predict(&x.clone().into_dyn()).unwrap()
            });
            let want = reference(&l, &x);
            for (o, w) in out.iter().zip(want.iter()) {
                assert!((*o as f64 - w).abs() < 1e-5, "{cell:?}: {o} vs {w}");
            }
        }
    }

    #[test]
    fn gradients_match_central_differences_across_blocks() {
        use crate::gate::{with_gate, GATE_TEST_LOCK};
        let _lock = GATE_TEST_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        for cell in CELLS {
            let mut l = layer(cell, 2, 3, true, true, 12);
            with_gate(&RECURRENT_PARALLEL_MIN_FLOPS, 0, || {
                check_gradients(&mut l, &input(BLOCK_ROWS + 2, 3, 2))
            });
        }
    }

    #[test]
    fn bitwise_equal_at_one_and_four_threads() {
        for cell in CELLS {
            let run = |threads| bits_on_threads(threads, || layer(cell, 32, 64, true, false, 3));
            assert!(run(1) == run(4), "{cell:?}");
        }
    }

    /// `layer(..)` rebuilt without a bias; `set_weights` is handed a non-zero bias, which
    /// must be dropped.
    fn layer_without_bias(
        cell: Cell,
        d: usize,
        u: usize,
        seq: bool,
        back: bool,
        seed: u64,
    ) -> Recurrent {
        let mut l = layer(cell, d, u, seq, back, seed);
        let (k, rk) = (l.gates.kernel.clone(), l.gates.recurrent_kernel.clone());
        let b = l.gates.bias.mapv(|v| v + 0.25);
        l.set_use_bias(false);
        assert!(l.gates.bias.iter().all(|&v| v == 0.0), "{cell:?}");
        l.set_weights(k, rk, b).unwrap();
        assert!(l.gates.bias.iter().all(|&v| v == 0.0), "{cell:?}");
        l
    }

    #[test]
    fn without_bias_matches_the_equations_with_a_zero_bias() {
        for cell in CELLS {
            for (seq, back) in [(false, false), (true, true)] {
                let l = layer_without_bias(cell, 3, 4, seq, back, 13);
                let x = input(2, 5, 3);
                let out = l.predict(&x.clone().into_dyn()).unwrap();
                let want = reference(&l, &x);
                for (o, w) in out.iter().zip(want.iter()) {
                    assert!((*o as f64 - w).abs() < 1e-5, "{cell:?}: {o} vs {w}");
                }
                // The same weights with a bias: the outputs differ, so the bias is really gone.
                let mut with = layer(cell, 3, 4, seq, back, 13);
                with.set_weights(
                    l.gates.kernel.clone(),
                    l.gates.recurrent_kernel.clone(),
                    l.gates.bias.mapv(|v| v + 0.25),
                )
                .unwrap();
                assert_ne!(with.predict(&x.clone().into_dyn()).unwrap(), out);
                let bias_len = with.gates.bias.len();
                let weights = l.gates.kernel.len() + l.gates.recurrent_kernel.len();
                assert_eq!(l.param_count(), TrainingParameters::Trainable(weights));
                assert_eq!(
                    with.param_count(),
                    TrainingParameters::Trainable(weights + bias_len)
                );
            }
        }
    }

    #[test]
    fn without_bias_gradients_match_central_differences() {
        for cell in CELLS {
            for (seq, back) in [(false, false), (true, true)] {
                let mut l = layer_without_bias(cell, 2, 3, seq, back, 6);
                check_gradients(&mut l, &input(2, 4, 2));
                // Training never moves the unused bias.
                assert!(l.gates.bias.iter().all(|&v| v == 0.0));
            }
        }
    }

    #[test]
    fn without_bias_bitwise_equal_at_one_and_four_threads() {
        for cell in CELLS {
            let run = |threads| {
                bits_on_threads(threads, || layer_without_bias(cell, 32, 64, true, false, 3))
            };
            assert!(run(1) == run(4), "{cell:?}");
        }
    }

    #[test]
    fn use_bias_and_unit_forget_bias_in_either_order() {
        let mut l = Recurrent::new(Cell::Lstm, 3, 2, Activation::Tanh, Some(1)).unwrap();
        l.set_use_bias(false);
        l.set_unit_forget_bias(true);
        assert!(l.gates.bias.iter().all(|&v| v == 0.0));
        l.set_use_bias(true);
        assert_eq!(
            l.gates.bias.row(0).to_vec(),
            [0., 0., 1., 1., 0., 0., 0., 0.]
        );
        l.set_unit_forget_bias(false);
        l.set_use_bias(false);
        l.set_use_bias(true);
        assert!(l.gates.bias.iter().all(|&v| v == 0.0));
        let twin = l.reversed_twin(Some(2)).unwrap();
        assert!(twin.use_bias && !twin.unit_forget_bias);
    }

    #[test]
    fn bad_inputs_are_refused_with_the_layer_and_shapes() {
        let mut l = Recurrent::new(Cell::Lstm, 3, 2, Activation::Tanh, Some(1)).unwrap();
        for bad in [vec![2, 4], vec![2, 4, 5], vec![2, 0, 3], vec![1, 2, 3, 3]] {
            let err = l.forward(&Tensor::zeros(bad.clone())).unwrap_err();
            let msg = err.to_string();
            assert!(matches!(err, Error::InvalidInput(_)), "{bad:?}: {err:?}");
            assert!(
                msg.contains("LSTM") && msg.contains(&format!("{bad:?}")),
                "{msg}"
            );
        }
        l.forward(&Tensor::zeros(vec![2, 4, 3])).unwrap();
        let err = l.backward(&Tensor::zeros(vec![2, 4, 2])).unwrap_err();
        assert!(err.to_string().contains("[2, 2]"), "{err}");
        assert!(Recurrent::new(Cell::Simple, 3, 2, Activation::Softmax, None).is_err());
        assert!(l.set_recurrent_activation(Activation::Softmax).is_err());
    }

    /// A right-padded mask with a hole, different per sample (sample 2 fully masked).
    fn padded_mask(b: usize, t: usize) -> ndarray::Array2<bool> {
        ndarray::Array2::from_shape_fn((b, t), |(i, j)| match i % 3 {
            0 => j < t - 1,
            1 => j != 1 && j < t - 2 + (i % 2),
            _ => false,
        })
    }

    #[test]
    fn masked_steps_carry_the_state_as_the_equations_say() {
        for cell in CELLS {
            for (seq, back, zero) in [
                (false, false, false),
                (true, false, false),
                (true, true, false),
                (false, true, false),
                (true, false, true),
                (false, false, true),
                (true, true, true),
            ] {
                let mut l = layer(cell, 3, 4, seq, back, 11);
                l.zero_output_for_mask = zero;
                let x = input(5, 6, 3);
                let keep = padded_mask(5, 6);
                let mask = keep.clone().into_dyn();
                let out = l
                    .predict_masked(&x.clone().into_dyn(), Some(&mask))
                    .unwrap();
                let want = reference_with(&l, &x, Some(&keep), None);
                assert_eq!(out.shape(), want.shape());
                for (o, w) in out.iter().zip(want.iter()) {
                    assert!(
                        (*o as f64 - w).abs() < 1e-5,
                        "{cell:?} seq={seq} back={back} zero={zero}: {o} vs {w}"
                    );
                }
                // an all-true mask is no mask, bit for bit
                let all = ndarray::ArrayD::from_elem(vec![5, 6], true);
                let plain = l.predict(&x.clone().into_dyn()).unwrap();
                assert_eq!(
                    l.predict_masked(&x.clone().into_dyn(), Some(&all)).unwrap(),
                    plain
                );
            }
        }
    }

    #[test]
    fn masked_gradients_match_central_differences() {
        for cell in CELLS {
            for (seq, back, zero) in [
                (false, false, false),
                (true, false, false),
                (true, true, true),
                (false, true, true),
            ] {
                let mut l = layer(cell, 2, 3, seq, back, 5);
                l.zero_output_for_mask = zero;
                let mask = padded_mask(3, 4).into_dyn();
                check_gradients_with(&mut l, &input(3, 4, 2), Some(&mask), None);
            }
        }
    }

    #[test]
    fn a_mask_of_the_wrong_shape_is_refused() {
        let mut l = layer(Cell::Lstm, 3, 2, false, false, 1);
        let x = input(2, 4, 3).into_dyn();
        for bad in [vec![2, 3], vec![4, 2], vec![2, 4, 1]] {
            let m = ndarray::ArrayD::from_elem(bad, true);
            let err = l.forward_masked(&x, Some(&m)).unwrap_err().to_string();
            assert!(err.contains("LSTM") && err.contains("mask"), "{err}");
        }
        assert!(l.cache.is_none(), "a refused pass keeps nothing");
    }

    /// `layer(..)` with dropout rates, training.
    fn dropout_layer(cell: Cell, rates: (f32, f32), seq: bool, back: bool) -> Recurrent {
        let mut l = layer(cell, 3, 4, seq, back, 7);
        l.set_dropout(rates.0, rates.1).unwrap();
        l.rng = dropout_rng(Some(99));
        l
    }

    const RATES: [(f32, f32); 3] = [(0.3, 0.0), (0.0, 0.4), (0.3, 0.4)];

    #[test]
    fn dropout_masks_enter_the_gates_as_keras_cells_apply_them() {
        for cell in CELLS {
            for rates in RATES {
                for (seq, back) in [(true, false), (false, true)] {
                    let mut l = dropout_layer(cell, rates, seq, back);
                    let x = input(5, 4, 3);
                    let drop = l.draw_dropout(5).unwrap();
                    let per_gate = rates.1 > 0.0;
                    if let Some(m) = &drop.input {
                        assert_eq!(m.dim().0, if per_gate { cell.gates() } else { 1 });
                    }
                    assert_eq!(drop.input.is_some(), rates.0 > 0.0);
                    assert_eq!(drop.recurrent.is_some(), per_gate);
                    let keep = padded_mask(5, 4);
                    let mask = keep.clone().into_dyn();
                    let out = l
                        .run(&x.clone().into_dyn(), Some(&mask), Some(drop.clone()))
                        .unwrap()
                        .0;
                    let want = reference_with(&l, &x, Some(&keep), Some(&drop));
                    for (o, w) in out.iter().zip(want.iter()) {
                        assert!(
                            (*o as f64 - w).abs() < 1e-5,
                            "{cell:?} {rates:?}: {o} vs {w}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn dropout_gradients_match_central_differences_with_fixed_masks() {
        for cell in CELLS {
            for rates in RATES {
                let mut l = dropout_layer(cell, rates, true, false);
                let drop = l.draw_dropout(3).unwrap();
                let mask = padded_mask(3, 3).into_dyn();
                let x = input(3, 3, 3);
                check_gradients_with(&mut l, &x, None, Some(drop.clone()));
                check_gradients_with(&mut l, &x, Some(&mask), Some(drop));
            }
        }
    }

    #[test]
    fn rate_zero_and_inference_are_the_plain_layer_bit_for_bit() {
        for cell in CELLS {
            let x = input(4, 5, 3).into_dyn();
            let mut plain = layer(cell, 3, 4, true, false, 7);
            let (want, want_dx, want_grads) = pass_bits(&mut plain, &x);
            let mut zero = dropout_layer(cell, (0.0, 0.0), true, false);
            assert!(pass_bits(&mut zero, &x) == (want.clone(), want_dx, want_grads));
            let mut dropping = dropout_layer(cell, (0.5, 0.5), true, false);
            let bits = |t: &Tensor| t.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&dropping.predict(&x).unwrap()),
                want,
                "{cell:?} predict"
            );
            dropping.set_training(false);
            assert_eq!(
                bits(&dropping.forward(&x).unwrap()),
                want,
                "{cell:?} inference"
            );
            dropping.set_training(true);
            assert_ne!(
                bits(&dropping.forward(&x).unwrap()),
                want,
                "{cell:?} training"
            );
        }
    }

    #[test]
    fn dropout_masks_keep_one_minus_rate_scaled_by_its_inverse() {
        let mut l = Recurrent::new(Cell::Lstm, 50, 40, Activation::Tanh, Some(3)).unwrap();
        l.set_dropout(0.25, 0.4).unwrap();
        let batch = 200;
        let drop = l.draw_dropout(batch).unwrap();
        for (m, rate) in [
            (drop.input.unwrap(), 0.25f64),
            (drop.recurrent.unwrap(), 0.4),
        ] {
            let n = m.len() as f64;
            let kept = m.iter().filter(|&&v| v != 0.0).count() as f64;
            // binomial: within 5 standard deviations
            let sd = (n * rate * (1.0 - rate)).sqrt();
            assert!((kept - n * (1.0 - rate)).abs() < 5.0 * sd, "{kept} of {n}");
            let scale = (1.0 / (1.0 - rate)) as f32;
            assert!(m.iter().all(|&v| v == 0.0 || v == scale));
            // one mask per gate, each its own draw
            assert_ne!(m.index_axis(Axis(0), 0), m.index_axis(Axis(0), 1));
            // the mean factor is one (the expectation dropout preserves)
            let mean = m.iter().map(|&v| v as f64).sum::<f64>() / n;
            assert!(
                (mean - 1.0).abs() < 5.0 * sd / n * f64::from(scale),
                "{mean}"
            );
        }
        assert!(l.set_dropout(1.0, 0.0).is_err());
        let err = l.set_dropout(0.1, -0.5).unwrap_err().to_string();
        assert!(err.contains("recurrent_dropout"), "{err}");
    }

    /// Masked, dropping passes: the time loops forced serial and forced parallel give the same
    /// bits, and so do one and four threads.
    #[test]
    fn masked_dropout_blocks_serial_and_parallel_agree_bitwise() {
        use crate::gate::serial_and_parallel;
        for cell in CELLS {
            for (batch, seq, back) in [(37, false, true), (48, true, true)] {
                let x = input(batch, 6, 7).into_dyn();
                let mask = padded_mask(batch, 6).into_dyn();
                let make = || {
                    let mut l = layer(cell, 7, 9, seq, back, 4);
                    l.set_dropout(0.2, 0.3).unwrap();
                    l.rng = dropout_rng(Some(5));
                    l.zero_output_for_mask = seq;
                    l
                };
                let run = |l: &mut Recurrent| {
                    let out = l.forward_masked(&x, Some(&mask)).unwrap();
                    let dx = l.backward(&upstream(&out)).unwrap();
                    let grads: Vec<Vec<u32>> = l
                        .parameters()
                        .iter()
                        .map(|p| p.grad.iter().map(|v| v.to_bits()).collect())
                        .collect();
                    let bits = |t: &Tensor| t.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                    (bits(&out), bits(&dx), grads)
                };
                let (serial, parallel) =
                    serial_and_parallel(&RECURRENT_PARALLEL_MIN_FLOPS, || run(&mut make()));
                assert!(serial == parallel, "{cell:?} batch={batch} seq={seq}");
                let on = |threads| {
                    rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .unwrap()
                        .install(|| run(&mut make()))
                };
                assert!(on(1) == on(4), "{cell:?} batch={batch} threads");
            }
        }
    }

    #[test]
    fn the_mask_goes_on_with_sequences_only() {
        let mask = padded_mask(2, 3).into_dyn();
        let seq = layer(Cell::Simple, 3, 2, true, true, 1);
        assert_eq!(seq.output_mask(Some(&mask)), Some(mask.clone()));
        let last = layer(Cell::Simple, 3, 2, false, false, 1);
        assert_eq!(last.output_mask(Some(&mask)), None);
        assert_eq!(seq.output_mask(None), None);
    }

    #[test]
    fn weights_round_trip_through_the_enum() {
        for cell in CELLS {
            let a = layer(cell, 3, 2, false, false, 21);
            let mut b = layer(cell, 3, 2, false, false, 22);
            b.apply_weights(&a.get_weights()).unwrap();
            let x = input(2, 3, 3).into_dyn();
            assert_eq!(a.predict(&x).unwrap(), b.predict(&x).unwrap());
        }
        let gru = layer(Cell::Gru { reset_after: true }, 3, 2, false, false, 1);
        let mut lstm = layer(Cell::Lstm, 3, 2, false, false, 1);
        assert!(lstm.apply_weights(&gru.get_weights()).is_err());
        let mut before = layer(Cell::Gru { reset_after: false }, 3, 2, false, false, 1);
        assert!(
            before.apply_weights(&gru.get_weights()).is_err(),
            "bias rows differ"
        );
    }
}
