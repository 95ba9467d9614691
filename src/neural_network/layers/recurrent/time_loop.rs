//! The time loop shared by SimpleRNN, LSTM and GRU (and both halves of `Bidirectional`): a
//! layer's configuration and fused weights, and forward and backpropagation through time
//! around one cell's steps (`cell.rs`; the cells' maths in `simple_rnn_cell.rs`,
//! `lstm_cell.rs` and `gru_cell.rs`), with Keras's mask, dropout and `go_backwards`.
//!
//! Layout: everything runs time-major. The input is laid out `[steps * batch, input_dim]`
//! (reversed in time under `go_backwards`) and projected for every step at once by one
//! product with the fused kernel, bias included; that buffer then holds each step's gate
//! pre-activations, to which each step adds its recurrent products (gemm with `beta = 1`,
//! in place) before the gate nonlinearities overwrite it with the activated gates the
//! backward pass needs. Backpropagation through time runs the recurrent products' transposes
//! once per step for `dh_{t-1}`; the weight gradients and the input gradient are then
//! products over all steps at once. Every product runs on gemmkit, whose results do not
//! depend on its worker count, and every elementwise step runs in a fixed order, so the
//! layer is bitwise reproducible at any thread count.

use super::cell::{
    masked_rows, with_cell_step, BackwardStep, Cell, CellStep, ForwardStep, GradientInputs,
    PackedSteps, StepWeights, STEP,
};
use super::fused_gates::{layer_rng, project_rows, take_cache, validate_dimensions, FusedGates};
use crate::declare_gate;
use crate::error::{Error, IoError, Result};
use crate::math::matmul::{dot_bias_act, dot_par, nested_parallelism};
use crate::neural_network::layers::activation::Activation;
use crate::neural_network::layers::layer_weight::LayerWeight;
use crate::neural_network::layers::TrainingParameters;
use crate::neural_network::traits::{Mask, ParamGrad, RandomStream};
use crate::neural_network::NnError;
use crate::neural_network::Tensor;
use gemmkit_ndarray::{gemm, Parallelism};
use ndarray::{s, Array2, Array3, ArrayView2, ArrayView3, ArrayViewMut3, Axis, Ix2, Ix3};
use rand::RngCore;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::borrow::Cow;

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
fn check_dropout_rate(rate: f32, what: &str, layer: &str) -> Result<()> {
    if (0.0..1.0).contains(&rate) {
        Ok(())
    } else {
        Err(Error::invalid_parameter(
            what,
            format!("{layer}: {what} must lie in [0, 1), got {rate}"),
        ))
    }
}

/// Softmax has no elementwise form; everything else does. The recurrent cells differentiate
/// their gates from the gate outputs, so the activations that need the pre-activation (GELU,
/// SiLU, Mish) are refused too.
fn check_elementwise(activation: Activation, what: &str, layer: &str) -> Result<()> {
    activation.validate()?;
    if activation.needs_pre_activation() {
        return Err(Error::invalid_parameter(
            what,
            format!(
                "{layer}: {} is not supported as a recurrent layer's {what} in rustyml (its \
                 derivative needs the pre-activation, which the recurrent cells do not keep)",
                activation.name()
            ),
        ));
    }
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

/// An LSTM this wide (and without recurrent dropout) runs its per-step products against a
/// recurrent kernel packed once per pass ([`PackedSteps`]). Its kernel (4 MiB and up) no
/// longer fits a core's L2, and gemmkit otherwise re-reads it unpacked at every step for a
/// handful of rows: the packed step runs at 1.4x (16 rows) to 2-3x (32 rows) the unpacked
/// one's rate on AVX-512. At 256 units the unpacked 16-row step is as fast, so the route
/// starts at 512.
const PACKED_MIN_UNITS: usize = 512;
/// Batch rows per block on the packed route once the batch has two such blocks: gemmkit's
/// packed kernel fills its 32-row panels (smaller batches keep 16-row blocks, so two
/// workers still share the recurrence).
const PACKED_BLOCK_ROWS: usize = 32;

/// How a pass splits the batch and runs its per-step products: chosen from the layer's shape
/// and masks alone, so the serial and the parallel path take the same route (the same bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Blocking {
    rows: usize,
    packed: bool,
}

declare_gate! {
    /// The time loops of a recurrent layer (forward and backpropagation through time) run one
    /// rayon task per block of 16 batch rows at or above this many FLOPs of per-step recurrent
    /// products (`2 * timesteps * batch * units * gates * units`). Below it the blocks run in
    /// turn and gemmkit may spread each step's product instead. On 2-core Intel hosts
    /// (Sapphire and Emerald Rapids) the blocks win from 10-24M FLOPs (the first winning rung:
    /// LSTM(96), batch 32, 10 steps, 24M); a Zen 5 ladder was reported at about 10M. The default is
    /// twice 24M, the calibration rule's margin toward serial. (An older ladder on Zen 4 put
    /// the crossover at 94M.)
    pub RECURRENT_PARALLEL_MIN_FLOPS: recurrent::parallel_min_flops = 48_000_000, "FLOPs"
}

/// Splits a `[blocks, batch, width]` view along the batch into `per_block`-row views (the
/// last one may be shorter).
fn split_batch<V>(
    whole: V,
    batch: usize,
    per_block: usize,
    split: impl Fn(V, usize) -> (V, V),
) -> Vec<V> {
    let mut blocks = Vec::with_capacity(batch.div_ceil(per_block));
    let (mut rest, mut left) = (whole, batch);
    while left > per_block {
        let (head, tail) = split(rest, per_block);
        blocks.push(head);
        (rest, left) = (tail, left - per_block);
    }
    blocks.push(rest);
    blocks
}

/// A time-major `[n * batch, width]` array as `[n, block rows, width]` views, one per block
/// of the batch.
fn row_blocks(a: &Array2<f32>, batch: usize, per_block: usize) -> Vec<ArrayView3<'_, f32>> {
    let (rows, width) = a.dim();
    let whole = a
        .view()
        .into_shape_with_order((rows / batch, batch, width))
        .expect("time-major rows");
    split_batch(whole, batch, per_block, |v, at| v.split_at(Axis(1), at))
}

/// [`row_blocks`], writable.
fn row_blocks_mut(
    a: &mut Array2<f32>,
    batch: usize,
    per_block: usize,
) -> Vec<ArrayViewMut3<'_, f32>> {
    let (rows, width) = a.dim();
    let whole = a
        .view_mut()
        .into_shape_with_order((rows / batch, batch, width))
        .expect("time-major rows");
    split_batch(whole, batch, per_block, |v, at| v.split_at(Axis(1), at))
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
    per_block: usize,
    axis: usize,
) -> Vec<Option<ndarray::ArrayView<'a, A, D>>> {
    match a {
        Some(v) => split_batch(v, batch, per_block, |v, at| v.split_at(Axis(axis), at))
            .into_iter()
            .map(Some)
            .collect(),
        None => (0..batch.div_ceil(per_block)).map(|_| None).collect(),
    }
}

impl Recurrent {
    pub(crate) fn new(
        cell: Cell,
        input_dim: usize,
        units: usize,
        activation: Activation,
        random_state: Option<u64>,
    ) -> Result<Self> {
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
    pub(crate) fn set_dropout(&mut self, dropout: f32, recurrent_dropout: f32) -> Result<()> {
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
    ) -> Result<FusedGates> {
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

    pub(crate) fn set_recurrent_activation(&mut self, act: Activation) -> Result<()> {
        check_elementwise(act, "recurrent_activation", self.cell.name())?;
        self.recurrent_activation = act;
        Ok(())
    }

    /// A fresh layer of the same configuration (new weights from `random_state`), reading
    /// the sequence in the other direction: `Bidirectional`'s backward half.
    pub(crate) fn reversed_twin(&self, random_state: Option<u64>) -> Result<Self> {
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
    ) -> Result<()> {
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
    ) -> Result<()> {
        let (d, u) = (self.input_dim, self.units);
        let brows = self.cell.bias_rows();
        for (name, k, rk, b) in blocks.iter().take(count) {
            NnError::check_weight_shape(&format!("{name}_kernel"), &[d, u], k.shape())?;
            NnError::check_weight_shape(&format!("{name}_recurrent_kernel"), &[u, u], rk.shape())?;
            NnError::check_weight_shape(&format!("{name}_bias"), &[brows, u], b.shape())?;
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
    fn check_input<'a>(&self, input: &'a Tensor) -> Result<ndarray::ArrayView3<'a, f32>> {
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

    pub(crate) fn forward(&mut self, input: &Tensor) -> Result<Tensor> {
        self.forward_masked(input, None)
    }

    pub(crate) fn predict(&self, input: &Tensor) -> Result<Tensor> {
        self.predict_masked(input, None)
    }

    /// The training pass under Keras's mask `[batch, timesteps]` (`None`: every step read).
    pub(crate) fn forward_masked(&mut self, input: &Tensor, mask: Option<&Mask>) -> Result<Tensor> {
        let batch = self.check_input(input)?.dim().0;
        self.step_mask(mask, input.shape())?;
        let drop = self.draw_dropout(batch);
        let (out, cache) = self.run(input, mask, drop)?;
        self.cache = Some(cache);
        Ok(out)
    }

    pub(crate) fn predict_masked(&self, input: &Tensor, mask: Option<&Mask>) -> Result<Tensor> {
        Ok(self.run(input, mask, None)?.0)
    }

    /// Keras's `compute_mask` for a recurrent layer: the input's mask goes on with the
    /// sequences (unchanged, also under `go_backwards`), and stops with the last state.
    pub(crate) fn output_mask(&self, mask: Option<&Mask>) -> Option<Mask> {
        mask.filter(|_| self.return_sequences).cloned()
    }

    /// Keras's mask as `[steps, batch]` in processing order (reversed under `go_backwards`),
    /// after checking it is `[batch, timesteps]` for an input of shape `input`.
    fn step_mask(&self, mask: Option<&Mask>, input: &[usize]) -> Result<Option<Array2<bool>>> {
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
    ) -> Result<(Tensor, Cache)> {
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
        let cell_state = self.cell.has_cell_state();
        let mut cs = Array2::<f32>::zeros((if cell_state { (steps + 1) * batch } else { 0 }, u));
        let extra_rows = if self.cell.keeps_step_operand() {
            steps * batch
        } else {
            0
        };
        let mut extra = Array2::<f32>::zeros((extra_rows, u));
        let rmask_full = drop.as_ref().and_then(|m| m.recurrent.as_ref());
        let blocking = self.blocking(batch, rmask_full.is_some());
        let per_block = blocking.rows;
        let rmasks = optional_blocks(rmask_full.map(|m| m.view()), batch, per_block, 1);
        let keeps = optional_blocks(keep.as_ref().map(|k| k.view()), batch, per_block, 1);
        let blocks: Vec<ForwardBlock<'_>> = row_blocks_mut(&mut acts, batch, per_block)
            .into_iter()
            .zip(row_blocks_mut(&mut hs, batch, per_block))
            .zip(row_blocks_mut(&mut cs, batch, per_block))
            .zip(row_blocks_mut(&mut extra, batch, per_block))
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
        let parallel = self.parallel_blocks(steps, batch, per_block);
        let packed = blocking
            .packed
            .then(|| PackedSteps::of(self.gates.recurrent_kernel.view()));
        with_cell_step!(self.cell, cell => {
            for_each_block(parallel, par, blocks, |block, par| {
                self.forward_block(cell, block, packed.as_ref(), par)
            })
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
    pub(crate) fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor> {
        Ok(self
            .backward_with(grad_output, true)?
            .expect("input gradient requested"))
    }

    /// [`Self::backward`] for a network's first layer: the weight gradients only.
    pub(crate) fn backward_params_only(&mut self, grad_output: &Tensor) -> Result<()> {
        self.backward_with(grad_output, false).map(drop)
    }

    /// The weight gradients, and `dL/dx` when `input_gradient` (one product over every step,
    /// as large as the kernel's gradient, wasted on a network's first layer).
    fn backward_with(
        &mut self,
        grad_output: &Tensor,
        input_gradient: bool,
    ) -> Result<Option<Tensor>> {
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
        let drec_rows = if self.cell.has_recurrent_gradient() {
            steps * batch
        } else {
            0
        };
        let mut drec = Array2::<f32>::zeros((drec_rows, gu));
        let blocking = self.blocking(batch, rmask_full.is_some());
        let per_block = blocking.rows;
        let rmasks = optional_blocks(rmask_full.map(|m| m.view()), batch, per_block, 1);
        let keeps = optional_blocks(keep.as_ref().map(|k| k.view()), batch, per_block, 1);
        let blocks: Vec<BackwardBlock<'_>> = row_blocks(&acts, batch, per_block)
            .into_iter()
            .zip(row_blocks(&hs, batch, per_block))
            .zip(row_blocks(&cs, batch, per_block))
            .zip(row_blocks(&extra, batch, per_block))
            .zip(row_blocks(&dout, batch, per_block))
            .zip(row_blocks_mut(&mut dpre, batch, per_block))
            .zip(row_blocks_mut(&mut drec, batch, per_block))
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
        let parallel = self.parallel_blocks(steps, batch, per_block);
        let packed_t = blocking.packed.then(|| PackedSteps::of(rk_t.view()));
        with_cell_step!(self.cell, cell => {
            for_each_block(parallel, par, blocks, |block, par| {
                self.backward_block(cell, block, rk_t.view(), packed_t.as_ref(), par)
            })
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
        let grads = GradientInputs {
            h_prev: h_prev_all,
            dpre: &dpre,
            drec: &drec,
            operand: &extra,
            rmask: rmask_full,
            units: u,
            batch,
        };
        let (grad_recurrent, grad_bias) =
            with_cell_step!(self.cell, cell => cell.weight_gradients(&grads, par))?;
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
        self.cell.weight_enum(
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
        self.cell.weight_arrays(weights)
    }

    pub(crate) fn apply_weights(&mut self, weights: &LayerWeight<'_>) -> Result<()> {
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
    /// The blocking of a pass over `batch` rows: an LSTM of at least [`PACKED_MIN_UNITS`]
    /// without recurrent dropout takes the packed route, on [`PACKED_BLOCK_ROWS`]-row blocks
    /// when the batch fills two; everything else runs unpacked products on [`BLOCK_ROWS`]-row
    /// blocks.
    fn blocking(&self, batch: usize, recurrent_masked: bool) -> Blocking {
        let packed =
            matches!(self.cell, Cell::Lstm) && self.units >= PACKED_MIN_UNITS && !recurrent_masked;
        let wide = packed && batch >= 2 * PACKED_BLOCK_ROWS;
        Blocking {
            rows: if wide { PACKED_BLOCK_ROWS } else { BLOCK_ROWS },
            packed,
        }
    }

    /// Whether the blocks of a `steps x batch` call run as parallel tasks.
    fn parallel_blocks(&self, steps: usize, batch: usize, per_block: usize) -> bool {
        let gu = self.cell.gates() * self.units;
        let flops = 2usize
            .saturating_mul(steps)
            .saturating_mul(batch)
            .saturating_mul(self.units)
            .saturating_mul(gu);
        batch > per_block && RECURRENT_PARALLEL_MIN_FLOPS.allows_parallel(flops)
    }

    /// What the cell's steps read from this layer.
    fn step_weights<'a>(&'a self, packed: Option<&'a PackedSteps>) -> StepWeights<'a> {
        StepWeights {
            units: self.units,
            activation: self.activation,
            recurrent_activation: self.recurrent_activation,
            recurrent_kernel: &self.gates.recurrent_kernel,
            packed,
            bias: &self.gates.bias,
            use_bias: self.use_bias,
        }
    }

    /// The forward recurrence over one block of batch rows: `cell`'s step at every time
    /// step, then Keras's mask (a skipped step carries the previous state: `h`, and the cell
    /// state where the cell has one).
    fn forward_block<C: CellStep>(
        &self,
        cell: &C,
        block: ForwardBlock<'_>,
        packed: Option<&PackedSteps>,
        par: Parallelism,
    ) {
        let ForwardBlock {
            mut acts,
            mut hs,
            mut cs,
            mut extra,
            rmask,
            keep,
        } = block;
        let rmask = rmask.as_ref();
        let (steps, rows, _) = acts.dim();
        let u = self.units;
        let weights = self.step_weights(packed);
        let (cell_state, operand) = (cell.has_cell_state(), cell.keeps_step_operand());
        let mut scratch = cell.forward_scratch(rows, u);
        let mut product = packed.map_or_else(PackedSteps::no_scratch, |p| p.scratch(rows));
        for t in 0..steps {
            let (h_done, mut h_todo) = hs.view_mut().split_at(Axis(0), t + 1);
            let (c_done, mut c_todo) = cs
                .view_mut()
                .split_at(Axis(0), if cell_state { t + 1 } else { 0 });
            let mut step = ForwardStep {
                acts: acts.index_axis_mut(Axis(0), t),
                h_prev: h_done.index_axis(Axis(0), t),
                h_next: h_todo.index_axis_mut(Axis(0), 0),
                cell_state: if cell_state {
                    Some((
                        c_done.index_axis(Axis(0), t),
                        c_todo.index_axis_mut(Axis(0), 0),
                    ))
                } else {
                    None
                },
                operand: if operand {
                    Some(extra.index_axis_mut(Axis(0), t))
                } else {
                    None
                },
                rmask,
                scratch: &mut scratch,
                product: &mut product,
            };
            cell.forward_step(&weights, &mut step, par);
            // Keras's mask: a skipped step carries the previous state (h, and LSTM's c).
            if let Some(keep) = keep.as_ref() {
                let h_prev = step.h_prev.as_slice().expect(STEP);
                let h_next = step.h_next.as_slice_mut().expect(STEP);
                for (b, _) in keep.row(t).iter().enumerate().filter(|(_, &k)| !k) {
                    let at = b * u..(b + 1) * u;
                    h_next[at.clone()].copy_from_slice(&h_prev[at.clone()]);
                    if let Some((c_prev, c_next)) = step.cell_state.as_mut() {
                        let c_prev = c_prev.as_slice().expect(STEP);
                        c_next.as_slice_mut().expect(STEP)[at.clone()].copy_from_slice(&c_prev[at]);
                    }
                }
            }
        }
    }

    /// Backpropagation through time over one block of batch rows: `cell`'s backward step at
    /// every time step, from the last (`rk_t` is `Uᵀ`, contiguous), around Keras's mask.
    fn backward_block<C: CellStep>(
        &self,
        cell: &C,
        block: BackwardBlock<'_>,
        rk_t: ArrayView2<'_, f32>,
        packed_t: Option<&PackedSteps>,
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
        let (steps, rows, _) = acts.dim();
        let u = self.units;
        let weights = self.step_weights(None);
        let (cell_state, operand) = (cell.has_cell_state(), cell.keeps_step_operand());
        let recurrent_gradient = cell.has_recurrent_gradient();
        let mut product = packed_t.map_or_else(PackedSteps::no_scratch, |p| p.scratch(rows));
        let mut dh = Array2::<f32>::zeros((rows, u));
        let mut dc = vec![0.0f32; if cell_state { rows * u } else { 0 }];
        let mut scratch = cell.backward_scratch(rows, u);
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
                    let c_row = if cell_state {
                        let row = dc[at.clone()].to_vec();
                        dc[at].fill(0.0);
                        row
                    } else {
                        Vec::new()
                    };
                    carried.push((b, h_row, c_row));
                }
            }
            let (a, h_prev, h_next) = (
                acts.index_axis(Axis(0), t),
                hs.index_axis(Axis(0), t),
                hs.index_axis(Axis(0), t + 1),
            );
            let c_prev = cell_state.then(|| cs.index_axis(Axis(0), t));
            let kept = operand.then(|| extra.index_axis(Axis(0), t));
            let none: &[f32] = &[];
            let mut step = BackwardStep {
                acts: a.as_slice().expect(STEP),
                h_prev: h_prev.as_slice().expect(STEP),
                h_next: h_next.as_slice().expect(STEP),
                c_prev: c_prev.as_ref().map_or(none, |c| c.as_slice().expect(STEP)),
                operand: kept.as_ref().map_or(none, |k| k.as_slice().expect(STEP)),
                dpre: dpre.index_axis_mut(Axis(0), t),
                drec: if recurrent_gradient {
                    Some(drec.index_axis_mut(Axis(0), t))
                } else {
                    None
                },
                dh: &mut dh,
                dc: &mut dc,
                rk_t,
                packed_t,
                rmask,
                scratch: &mut scratch,
                product: &mut product,
            };
            cell.backward_step(&weights, &mut step, par);
            let dhs = dh.as_slice_mut().expect("standard layout");
            for (b, h_row, c_row) in &carried {
                let at = b * u..(b + 1) * u;
                dhs[at.clone()].copy_from_slice(h_row);
                if cell_state {
                    dc[at].copy_from_slice(c_row);
                }
            }
        }
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

#[cfg(test)]
#[path = "time_loop_tests.rs"]
mod tests;
