//! The im2col/GEMM convolution engine behind Conv1D/2D/3D and Conv1D/2D/3DTranspose (and the
//! pointwise stage of the separable layers).
//!
//! Tensors are channels-last and C-order: an input is `[batch, in.., cin]`, an output
//! `[batch, out.., filters]`, a kernel `[k.., cin, filters]` read as the `[K, filters]` matrix
//! with `K = prod(k) * cin` (Keras's layout flattened, so no permutation is ever needed).
//! One to three spatial axes are handled by one code path: a geometry is normalised to three
//! axes, the missing leading ones of length 1.
//!
//! Determinism: the forward and input-gradient products run on fixed blocks of output rows (a
//! block never straddles two batch items, its size depends only on `K`), each block a serial
//! gemmkit product. A gate only decides whether the blocks run on rayon, so the bits never
//! depend on it, on the thread count, or on the batch an item arrives in. The input gradient
//! is gathered (each input cell sums its taps in ascending order, no scatter, no atomics). The
//! kernel gradient is a sum over all `batch * positions` rows: fixed spans of them (crossing
//! item boundaries) accumulate their blocks' products in order, and the span partials are
//! added left to right.

use super::PaddingType;
use crate::declare_gate;
use crate::error::{Error, Result};
use crate::math::matmul::{self, dot_acc_into, dot_bias_act_into, Parallelism};
use crate::neural_network::Tensor;
use ndarray::{Array2, ArrayView1, ArrayView2, ArrayViewMut2, IxDyn};
use rayon::prelude::*;

declare_gate! {
    /// The im2col/GEMM convolution passes (forward, input gradient, kernel gradient): blocks
    /// of output rows run on rayon at or above this many estimated FLOPs
    /// (`2 * batch * out_positions * K * filters` per product).
    pub CONV_PARALLEL_MIN_FLOPS: conv::parallel_min_flops = 4_000_000, "FLOPs"
}

/// The fused epilogue activation of [`forward`] (gemmkit's).
pub type FusedActivation = matmul::Activation<f32>;

/// Patch values per product of the gradient passes (256 KiB).
const DEEP_BLOCK_VALUES: usize = 65_536;

/// Output rows per kernel-gradient task, at least (rounded up to whole product blocks).
const WEIGHT_TASK_ROWS: usize = 2048;

/// Memory for the kernel-gradient partials awaiting their in-order sum.
const PENDING_PARTIAL_BYTES: usize = 16 << 20;

/// Input cells per task of the input-gradient gather.
const GATHER_CELLS: usize = 256;

/// Output rows per product block: a function of the patch length only, so the blocking (and
/// the bits) never depend on threads, gates or the batch. About 128 KiB of im2col per block.
fn block_rows(patch_len: usize) -> usize {
    (32_768 / patch_len.max(1)).clamp(32, 256)
}

/// The shape of one convolution, normalised to three spatial axes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvGeometry {
    /// Number of real spatial axes (1..=3).
    pub rank: usize,
    /// Input spatial extent (leading unit axes for rank < 3).
    pub input: [usize; 3],
    /// Output spatial extent.
    pub output: [usize; 3],
    pub kernel: [usize; 3],
    pub strides: [usize; 3],
    pub dilation: [usize; 3],
    /// Zero cells before the input on each axis.
    pub pad: [usize; 3],
    pub in_channels: usize,
    pub filters: usize,
}

fn pad3(values: &[usize], fill: usize) -> [usize; 3] {
    let mut out = [fill; 3];
    out[3 - values.len()..].copy_from_slice(values);
    out
}

fn tuple(values: &[usize]) -> String {
    if values.len() == 1 {
        format!("({},)", values[0])
    } else {
        format!(
            "({})",
            values
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

fn check_axes(
    layer: &str,
    input: &[usize],
    kernel: &[usize],
    strides: &[usize],
    dilation: &[usize],
) -> Result<()> {
    let rank = input.len();
    if !(1..=3).contains(&rank)
        || kernel.len() != rank
        || strides.len() != rank
        || dilation.len() != rank
    {
        return Err(Error::invalid_input(format!(
            "{layer}: input {input:?}, kernel {kernel:?}, strides {strides:?} and dilation \
             {dilation:?} must all have 1 to 3 spatial axes, the same number"
        )));
    }
    for (name, v) in [
        ("kernel_size", kernel),
        ("strides", strides),
        ("dilation_rate", dilation),
    ] {
        if v.contains(&0) {
            return Err(Error::invalid_parameter(
                name,
                format!("{layer}: every entry must be > 0, got {}", tuple(v)),
            ));
        }
    }
    if input.contains(&0) {
        return Err(Error::invalid_input(format!(
            "{layer}: spatial input {} has an empty axis",
            tuple(input)
        )));
    }
    // Every length derived below (the dilated span, a transposed or padded extent
    // `input * stride + span`) must fit usize: checked here once, so the formulas after it
    // cannot overflow.
    for a in 0..rank {
        let span = dilation[a]
            .checked_mul(kernel[a] - 1)
            .and_then(|v| v.checked_add(1));
        let extent = span.and_then(|s| input[a].checked_mul(strides[a])?.checked_add(s));
        if extent.is_none_or(|e| e > isize::MAX as usize) {
            return Err(Error::invalid_parameter(
                layer,
                format!(
                    "{layer}: kernel_size {}, strides {} and dilation_rate {} on input {} overflow the largest array size",
                    tuple(kernel),
                    tuple(strides),
                    tuple(dilation),
                    tuple(input)
                ),
            ));
        }
    }
    Ok(())
}

impl ConvGeometry {
    /// The convolution of a `[batch, input.., in_channels]` tensor: errors (`InvalidInput`)
    /// when an axis is empty or `Valid` leaves no full window, `InvalidParameter` for a zero
    /// kernel extent, stride or dilation.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        layer: &str,
        input: &[usize],
        kernel: &[usize],
        strides: &[usize],
        dilation: &[usize],
        padding: PaddingType,
        in_channels: usize,
        filters: usize,
    ) -> Result<Self> {
        check_axes(layer, input, kernel, strides, dilation)?;
        let mut output = Vec::with_capacity(input.len());
        let mut pad = Vec::with_capacity(input.len());
        for a in 0..input.len() {
            let Some(n) = padding.output_len(input[a], kernel[a], strides[a], dilation[a]) else {
                let spans: Vec<usize> = (0..input.len())
                    .map(|i| dilation[i] * (kernel[i] - 1) + 1)
                    .collect();
                return Err(Error::invalid_input(format!(
                    "{layer}: kernel {} (dilated span {}) larger than padded input {}",
                    tuple(kernel),
                    tuple(&spans),
                    tuple(input)
                )));
            };
            output.push(n);
            pad.push(padding.pad_before(input[a], kernel[a], strides[a], dilation[a]));
        }
        Self::build(
            layer,
            input,
            &output,
            kernel,
            strides,
            dilation,
            &pad,
            in_channels,
            filters,
        )
    }

    /// The convolution whose backward-data pass is the transposed convolution of a
    /// `[batch, input.., channels]` tensor into `filters` channels (Keras's output lengths:
    /// `Valid` `n * s + max(span - s, 0)`, `Same` `n * s`). Its `output` is `input`, its
    /// `input` the transposed layer's output, its `in_channels` the transposed `filters`.
    #[allow(clippy::too_many_arguments)]
    pub fn transposed(
        layer: &str,
        input: &[usize],
        kernel: &[usize],
        strides: &[usize],
        dilation: &[usize],
        padding: PaddingType,
        channels: usize,
        filters: usize,
    ) -> Result<Self> {
        check_axes(layer, input, kernel, strides, dilation)?;
        padding.refuse_causal(layer)?;
        let mut full = Vec::with_capacity(input.len());
        let mut pad = Vec::with_capacity(input.len());
        for a in 0..input.len() {
            let span = dilation[a] * (kernel[a] - 1) + 1;
            let n = match padding {
                PaddingType::Valid => input[a] * strides[a] + span.saturating_sub(strides[a]),
                PaddingType::Same | PaddingType::Causal => input[a] * strides[a],
            };
            full.push(n);
            pad.push(padding.pad_before(n, kernel[a], strides[a], dilation[a]));
        }
        Self::build(
            layer, &full, input, kernel, strides, dilation, &pad, filters, channels,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn build(
        layer: &str,
        input: &[usize],
        output: &[usize],
        kernel: &[usize],
        strides: &[usize],
        dilation: &[usize],
        pad: &[usize],
        in_channels: usize,
        filters: usize,
    ) -> Result<Self> {
        if in_channels == 0 || filters == 0 {
            return Err(Error::invalid_input(format!(
                "convolution with {in_channels} input channels and {filters} filters"
            )));
        }
        // One sample's input and output must be allocatable before any pass runs.
        for (what, spatial, ch) in [
            ("one sample's input", input, in_channels),
            ("one sample's output", output, filters),
        ] {
            let mut dims = spatial.to_vec();
            dims.push(ch);
            crate::neural_network::layers::size_guard::check_f32_alloc(layer, what, &dims)?;
        }
        // The patch matrix a pass may gather (the larger side's positions times the taps
        // times the wider channel count): a bound on the workspace, checked the same way.
        let positions = |v: &[usize]| v.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
        let taps = positions(kernel);
        let widest = match (positions(input), positions(output)) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        };
        let dims = [
            widest.unwrap_or(usize::MAX),
            taps.unwrap_or(usize::MAX),
            in_channels.max(filters),
        ];
        crate::neural_network::layers::size_guard::check_f32_alloc(
            layer,
            "one sample's patch workspace",
            &dims,
        )?;
        Ok(Self {
            rank: input.len(),
            input: pad3(input, 1),
            output: pad3(output, 1),
            kernel: pad3(kernel, 1),
            strides: pad3(strides, 1),
            dilation: pad3(dilation, 1),
            pad: pad3(pad, 0),
            in_channels,
            filters,
        })
    }

    /// Input spatial extent over the real axes.
    pub fn input_spatial(&self) -> &[usize] {
        &self.input[3 - self.rank..]
    }

    /// Output spatial extent over the real axes.
    pub fn output_spatial(&self) -> &[usize] {
        &self.output[3 - self.rank..]
    }

    /// `[batch, input.., in_channels]`.
    pub fn input_shape(&self, batch: usize) -> Vec<usize> {
        let mut s = vec![batch];
        s.extend_from_slice(self.input_spatial());
        s.push(self.in_channels);
        s
    }

    /// `[batch, output.., filters]`.
    pub fn output_shape(&self, batch: usize) -> Vec<usize> {
        let mut s = vec![batch];
        s.extend_from_slice(self.output_spatial());
        s.push(self.filters);
        s
    }

    /// Kernel taps (`prod(kernel)`).
    pub fn taps(&self) -> usize {
        self.kernel.iter().product()
    }

    /// Rows of the kernel matrix: `taps * in_channels`.
    pub fn patch_len(&self) -> usize {
        self.taps() * self.in_channels
    }

    fn in_positions(&self) -> usize {
        self.input.iter().product()
    }

    fn out_positions(&self) -> usize {
        self.output.iter().product()
    }

    /// Estimated FLOPs of one product over `batch` items: `2 * batch * out * K * filters`.
    pub fn flops(&self, batch: usize) -> usize {
        2usize
            .saturating_mul(batch)
            .saturating_mul(self.out_positions())
            .saturating_mul(self.patch_len())
            .saturating_mul(self.filters)
    }

    /// A 1x1 window at stride 1 without padding: the im2col matrix is the input itself.
    fn is_pointwise(&self) -> bool {
        self.taps() == 1 && self.strides == [1; 3] && self.pad == [0; 3]
    }

    /// Input coordinate along `axis` of output coordinate `o` and tap `t`, if inside.
    #[inline]
    fn source(&self, axis: usize, o: usize, t: usize) -> Option<usize> {
        let i = (o * self.strides[axis] + t * self.dilation[axis]).checked_sub(self.pad[axis])?;
        (i < self.input[axis]).then_some(i)
    }

    /// Appends the patch rows of output positions `first..first + rows` to `cols` (every
    /// value written once, so the buffer needs no zeroing first).
    ///
    /// Positions are taken an output row at a time: the source rows of the kernel's (z, y)
    /// taps depend on the output row only, so they are resolved once per row rather than per
    /// position (which dominated for few input channels, where each run is a few values).
    fn im2col(&self, x: &[f32], first: usize, rows: usize, cols: &mut Vec<f32>) {
        let c = self.in_channels;
        let [_, oh, ow] = self.output;
        let [_, ih, iw] = self.input;
        let kx = self.kernel[2];
        cols.reserve(rows * self.patch_len());
        // per (tz, ty) tap of the current output row: the first input cell of its source row
        // (`None` in the padding)
        let mut source_rows: Vec<Option<usize>> =
            Vec::with_capacity(self.kernel[0] * self.kernel[1]);
        let end = first + rows;
        let mut pos = first;
        while pos < end {
            let (oz, oy, ox_first) = (pos / (oh * ow), (pos / ow) % oh, pos % ow);
            let ox_end = ow.min(ox_first + (end - pos));
            source_rows.clear();
            for tz in 0..self.kernel[0] {
                let iz = self.source(0, oz, tz);
                for ty in 0..self.kernel[1] {
                    let iy = self.source(1, oy, ty);
                    source_rows.push(iz.zip(iy).map(|(z, y)| (z * ih + y) * iw));
                }
            }
            for ox in ox_first..ox_end {
                // An undilated kernel row wholly inside the input is one contiguous run of
                // `kx * c` values: copy it at once (same values, same order).
                let x0 = (ox * self.strides[2]).checked_sub(self.pad[2]);
                let whole_run = x0.filter(|&x0| self.dilation[2] == 1 && x0 + kx <= iw);
                for &row in &source_rows {
                    match (row, whole_run) {
                        (Some(row), Some(x0)) => {
                            let at = (row + x0) * c;
                            push_run(cols, &x[at..at + kx * c]);
                        }
                        (Some(row), None) => {
                            for tx in 0..kx {
                                match self.source(2, ox, tx) {
                                    Some(xx) => {
                                        let at = (row + xx) * c;
                                        push_run(cols, &x[at..at + c]);
                                    }
                                    None => cols.extend(std::iter::repeat_n(0.0, c)),
                                }
                            }
                        }
                        (None, _) => cols.extend(std::iter::repeat_n(0.0, kx * c)),
                    }
                }
            }
            pos += ox_end - ox_first;
        }
    }

    fn check_len(&self, what: &str, len: usize, expected: usize) -> Result<()> {
        if len != expected {
            return Err(Error::invalid_input(format!(
                "convolution engine: {what} holds {len} values, the geometry needs {expected}"
            )));
        }
        Ok(())
    }
}

/// Appends `values`; a short run as an element loop, which beats a memcpy call.
#[inline]
fn push_run(cols: &mut Vec<f32>, values: &[f32]) {
    if values.len() < 16 {
        cols.extend(values.iter().copied());
    } else {
        cols.extend_from_slice(values);
    }
}

/// Runs `body(index, chunk)` over `chunk`-sized pieces of `data`, on rayon when `parallel`.
fn for_each_chunk<F>(parallel: bool, data: &mut [f32], chunk: usize, body: F)
where
    F: Fn(usize, &mut [f32]) + Sync + Send,
{
    if data.is_empty() {
        return;
    }
    let chunk = chunk.max(1);
    if parallel {
        data.par_chunks_mut(chunk)
            .enumerate()
            .for_each(|(i, c)| body(i, c));
    } else {
        data.chunks_mut(chunk)
            .enumerate()
            .for_each(|(i, c)| body(i, c));
    }
}

/// The patch matrix of output rows `first..first + rows`, counted across the whole items in
/// `x` (item after item, so a range may run from one item into the next): borrowed from the
/// input for a pointwise geometry, else built into `buffer`.
fn patches<'a>(
    geom: &ConvGeometry,
    x: &'a [f32],
    first: usize,
    rows: usize,
    buffer: &'a mut Vec<f32>,
) -> ArrayView2<'a, f32> {
    let k = geom.patch_len();
    if geom.is_pointwise() {
        // one patch row per input cell, the items back to back
        return ArrayView2::from_shape((rows, k), &x[first * k..(first + rows) * k])
            .expect("pointwise rows are the input's");
    }
    let (p, in_len) = (geom.out_positions(), geom.in_positions() * geom.in_channels);
    buffer.clear();
    let end = first + rows;
    let mut row = first;
    while row < end {
        let (item, pos) = (row / p, row % p);
        let n = (p - pos).min(end - row);
        geom.im2col(&x[item * in_len..(item + 1) * in_len], pos, n, buffer);
        row += n;
    }
    ArrayView2::from_shape((rows, k), &buffer[..]).expect("one patch row per position")
}

/// Forward pass: `act(conv(x) + bias)` of `batch` items (`x` C-order `[batch, in.., cin]`,
/// `kernel` the `[K, filters]` matrix in Keras's flat order, `bias` per filter).
/// Returns the `[batch, out.., filters]` tensor.
pub fn forward(
    geom: &ConvGeometry,
    batch: usize,
    x: &[f32],
    kernel: &[f32],
    bias: Option<&[f32]>,
    act: Option<FusedActivation>,
) -> Result<Tensor> {
    let (k, f) = (geom.patch_len(), geom.filters);
    let (p, in_len) = (geom.out_positions(), geom.in_positions() * geom.in_channels);
    geom.check_len("the input", x.len(), batch * in_len)?;
    geom.check_len("the kernel", kernel.len(), k * f)?;
    if let Some(b) = bias {
        geom.check_len("the bias", b.len(), f)?;
    }
    let w = ArrayView2::from_shape((k, f), kernel).expect("checked above");
    let bias = bias.map(ArrayView1::from);
    let rows = block_rows(k);
    let parallel = CONV_PARALLEL_MIN_FLOPS.allows_parallel(geom.flops(batch));
    let mut out = vec![0.0f32; batch * p * f];
    for_each_chunk(parallel, &mut out, p * f, |item, out_item| {
        let x_item = &x[item * in_len..(item + 1) * in_len];
        for_each_chunk(parallel, out_item, rows * f, |block, out_block| {
            let n = out_block.len() / f;
            let mut buffer = Vec::new();
            let a = patches(geom, x_item, block * rows, n, &mut buffer);
            let out_block = ArrayViewMut2::from_shape((n, f), out_block).expect("n rows of f");
            dot_bias_act_into(a, w, bias, act, Parallelism::Serial, out_block)
                .expect("aligned by construction");
        });
    });
    Ok(Tensor::from_shape_vec(IxDyn(&geom.output_shape(batch)), out).expect("sized above"))
}

/// Backward-data pass (col2im): the gradient with respect to the input of `batch` items, from
/// `grad` (C-order `[batch, out.., filters]`). Each input cell starts at `init[channel]` (zero
/// when `None`; the transposed layers pass their bias) and adds its taps in ascending order.
/// Returns the `[batch, in.., cin]` tensor.
pub fn backward_data(
    geom: &ConvGeometry,
    batch: usize,
    grad: &[f32],
    kernel: &[f32],
    init: Option<&[f32]>,
) -> Result<Tensor> {
    let (k, f, c) = (geom.patch_len(), geom.filters, geom.in_channels);
    let (p, in_len) = (geom.out_positions(), geom.in_positions() * c);
    geom.check_len("the gradient", grad.len(), batch * p * f)?;
    geom.check_len("the kernel", kernel.len(), k * f)?;
    if let Some(b) = init {
        geom.check_len("the initial values", b.len(), c)?;
    }
    let w = ArrayView2::from_shape((k, f), kernel).expect("checked above");
    // Deep blocks: each product repacks Wᵀ, so a shallow one would spend as much on that.
    let rows = deep_block_rows(k);
    let parallel = CONV_PARALLEL_MIN_FLOPS.allows_parallel(geom.flops(batch));
    let mut dx = vec![0.0f32; batch * in_len];
    for_each_chunk(parallel, &mut dx, in_len, |item, dx_item| {
        let g_item = &grad[item * p * f..(item + 1) * p * f];
        // Patch gradients: dcols = g · Wᵀ, block by block.
        let mut dcols = vec![0.0f32; p * k];
        for_each_chunk(parallel, &mut dcols, rows * k, |block, dc| {
            let n = dc.len() / k;
            let first = block * rows;
            let g = ArrayView2::from_shape((n, f), &g_item[first * f..(first + n) * f])
                .expect("sized above");
            let dc = ArrayViewMut2::from_shape((n, k), dc).expect("n rows of K");
            dot_bias_act_into(g, w.t(), None, None, Parallelism::Serial, dc)
                .expect("aligned by construction");
        });
        let dcols = &dcols;
        for_each_chunk(parallel, dx_item, GATHER_CELLS * c, |chunk, cells| {
            gather(geom, dcols, init, chunk * GATHER_CELLS, cells);
        });
    });
    Ok(Tensor::from_shape_vec(IxDyn(&geom.input_shape(batch)), dx).expect("sized above"))
}

/// col2im as a gather: input cells `first..` of one item sum the patch-gradient entries of
/// every (output position, tap) that read them, taps in ascending order.
fn gather(
    geom: &ConvGeometry,
    dcols: &[f32],
    init: Option<&[f32]>,
    first: usize,
    cells: &mut [f32],
) {
    let c = geom.in_channels;
    let k = geom.patch_len();
    let [_, ih, iw] = geom.input;
    let [_, oh, ow] = geom.output;
    let [_, kh, kw] = geom.kernel;
    // Output coordinate along `axis` whose tap `t` reads input coordinate `i`, if any.
    let target = |axis: usize, i: usize, t: usize| -> Option<usize> {
        let shifted = (i + geom.pad[axis]).checked_sub(t * geom.dilation[axis])?;
        let s = geom.strides[axis];
        (shifted % s == 0 && shifted / s < geom.output[axis]).then_some(shifted / s)
    };
    for (n, cell) in cells.chunks_exact_mut(c).enumerate() {
        let pos = first + n;
        let (z, y, x) = (pos / (ih * iw), (pos / iw) % ih, pos % iw);
        match init {
            Some(b) => cell.copy_from_slice(b),
            None => cell.fill(0.0),
        }
        for tz in 0..geom.kernel[0] {
            let Some(oz) = target(0, z, tz) else { continue };
            for ty in 0..kh {
                let Some(oy) = target(1, y, ty) else { continue };
                for tx in 0..kw {
                    let Some(ox) = target(2, x, tx) else { continue };
                    let row = (oz * oh + oy) * ow + ox;
                    let col = ((tz * kh + ty) * kw + tx) * c;
                    let src = &dcols[row * k + col..row * k + col + c];
                    for (acc, &v) in cell.iter_mut().zip(src) {
                        *acc += v;
                    }
                }
            }
        }
    }
}

/// Output rows per product of the kernel and input gradients: deeper than the forward blocks
/// (a product accumulates into a `[K, filters]` partial, or repacks `Wᵀ`, which a shallow
/// product would redo for little work), about [`DEEP_BLOCK_VALUES`] of patch values. A
/// function of `K` only.
fn deep_block_rows(patch_len: usize) -> usize {
    (DEEP_BLOCK_VALUES / patch_len.max(1)).clamp(256, 4096)
}

/// Output rows per kernel-gradient task: whole product blocks, at least
/// [`WEIGHT_TASK_ROWS`]. A function of `K` only, so the bits never depend on threads or gates.
fn weight_span_rows(patch_len: usize) -> usize {
    let rows = deep_block_rows(patch_len);
    WEIGHT_TASK_ROWS.div_ceil(rows) * rows
}

/// Backward-weights pass: the kernel gradient `Σ patchesᵀ · grad` over `batch` items as the
/// `[K, filters]` matrix (Keras's flat order).
///
/// The `batch * positions` output rows, item after item, are cut into fixed spans; each span
/// accumulates its blocks' products into a partial of its own, and the partials are added in
/// span order. With many spans they run as rayon tasks (serial products); with fewer spans
/// than workers they run in turn, each product parallel inside gemmkit (whose bits do not
/// depend on its worker count). Either way the same products in the same order.
pub fn backward_weights(
    geom: &ConvGeometry,
    batch: usize,
    x: &[f32],
    grad: &[f32],
) -> Result<Array2<f32>> {
    let (k, f) = (geom.patch_len(), geom.filters);
    let (p, in_len) = (geom.out_positions(), geom.in_positions() * geom.in_channels);
    geom.check_len("the input", x.len(), batch * in_len)?;
    geom.check_len("the gradient", grad.len(), batch * p * f)?;
    let total = batch * p;
    let (rows, span) = (deep_block_rows(k), weight_span_rows(k));
    let spans = total.div_ceil(span);
    let partial = |index: usize, par: Parallelism| -> Array2<f32> {
        let (first_of_span, end) = (index * span, ((index + 1) * span).min(total));
        let mut acc = Array2::<f32>::zeros((k, f));
        let mut buffer = Vec::new();
        for first in (first_of_span..end).step_by(rows) {
            let n = rows.min(end - first);
            let a = patches(geom, x, first, n, &mut buffer);
            let g = ArrayView2::from_shape((n, f), &grad[first * f..(first + n) * f])
                .expect("sized above");
            dot_acc_into(a.t(), g, par, acc.view_mut()).expect("aligned by construction");
        }
        acc
    };
    let parallel = CONV_PARALLEL_MIN_FLOPS.allows_parallel(geom.flops(batch));
    let workers = rayon::current_num_threads().max(1);
    if spans <= 1 || !parallel || spans < workers {
        let par = if parallel {
            matmul::nested_parallelism()
        } else {
            Parallelism::Serial
        };
        let mut acc = partial(0, par);
        for index in 1..spans {
            acc += &partial(index, par);
        }
        return Ok(acc);
    }
    // Groups only bound the memory of pending partials: the sum stays left to right.
    let budget = PENDING_PARTIAL_BYTES / (k * f * std::mem::size_of::<f32>()).max(1);
    let group = budget.max(workers * 2);
    let mut acc: Option<Array2<f32>> = None;
    for start in (0..spans).step_by(group) {
        let parts: Vec<Array2<f32>> = (start..(start + group).min(spans))
            .into_par_iter()
            .map(|index| partial(index, Parallelism::Serial))
            .collect();
        for part in parts {
            match acc.as_mut() {
                Some(acc) => *acc += &part,
                None => acc = Some(part),
            }
        }
    }
    Ok(acc.expect("at least two spans"))
}

/// Per-channel sums of a C-order `[.., channels]` tensor, rows added in order (the bias
/// gradient).
pub fn channel_sums(data: &[f32], channels: usize) -> Vec<f32> {
    let mut acc = vec![0.0f32; channels];
    if channels == 0 {
        return acc;
    }
    for row in data.chunks_exact(channels) {
        for (a, &v) in acc.iter_mut().zip(row) {
            *a += v;
        }
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::serial_and_parallel;

    fn ramp(n: usize, seed: usize) -> Vec<f32> {
        (0..n)
            .map(|i| (((i * 37 + seed * 101) % 97) as f32 - 48.0) / 32.0)
            .collect()
    }

    /// Direct loops over (item, output cell, tap, channel, filter) in f64: the definition.
    fn naive(g: &ConvGeometry, batch: usize, x: &[f32], w: &[f32]) -> Vec<f64> {
        let (c, f) = (g.in_channels, g.filters);
        let mut out = vec![0.0f64; batch * g.out_positions() * f];
        for b in 0..batch {
            for oz in 0..g.output[0] {
                for oy in 0..g.output[1] {
                    for ox in 0..g.output[2] {
                        let o = ((b * g.output[0] + oz) * g.output[1] + oy) * g.output[2] + ox;
                        for tz in 0..g.kernel[0] {
                            for ty in 0..g.kernel[1] {
                                for tx in 0..g.kernel[2] {
                                    let iz = (oz * g.strides[0] + tz * g.dilation[0]) as isize
                                        - g.pad[0] as isize;
                                    let iy = (oy * g.strides[1] + ty * g.dilation[1]) as isize
                                        - g.pad[1] as isize;
                                    let ix = (ox * g.strides[2] + tx * g.dilation[2]) as isize
                                        - g.pad[2] as isize;
                                    if iz < 0
                                        || iy < 0
                                        || ix < 0
                                        || iz >= g.input[0] as isize
                                        || iy >= g.input[1] as isize
                                        || ix >= g.input[2] as isize
                                    {
                                        continue;
                                    }
                                    let (iz, iy, ix) = (iz as usize, iy as usize, ix as usize);
                                    let i =
                                        ((b * g.input[0] + iz) * g.input[1] + iy) * g.input[2] + ix;
                                    let t = (tz * g.kernel[1] + ty) * g.kernel[2] + tx;
                                    for ch in 0..c {
                                        for fl in 0..f {
                                            out[o * f + fl] += x[i * c + ch] as f64
                                                * w[(t * c + ch) * f + fl] as f64;
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        out
    }

    /// `Σ y · conv(x)` is bilinear: its gradients in x and w are the adjoint passes, so the
    /// naive forward applied to unit vectors gives the reference gradients.
    fn geometries() -> Vec<ConvGeometry> {
        use PaddingType::{Causal, Same, Valid};
        vec![
            ConvGeometry::new("t", &[9], &[3], &[2], &[1], Valid, 2, 3).unwrap(),
            ConvGeometry::new("t", &[7], &[3], &[1], &[2], Causal, 3, 2).unwrap(),
            ConvGeometry::new("t", &[8], &[4], &[3], &[1], Causal, 2, 3).unwrap(),
            ConvGeometry::new("t", &[2], &[3], &[1], &[3], Causal, 2, 2).unwrap(),
            ConvGeometry::new("t", &[7], &[3], &[1], &[2], Same, 3, 2).unwrap(),
            ConvGeometry::new("t", &[6, 5], &[3, 2], &[2, 1], &[1, 1], Same, 2, 3).unwrap(),
            ConvGeometry::new("t", &[7, 6], &[2, 3], &[1, 2], &[2, 1], Valid, 3, 4).unwrap(),
            ConvGeometry::new("t", &[5, 4], &[1, 1], &[1, 1], &[1, 1], Valid, 3, 2).unwrap(),
            ConvGeometry::new(
                "t",
                &[4, 5, 3],
                &[2, 3, 2],
                &[1, 2, 1],
                &[1, 1, 1],
                Same,
                2,
                2,
            )
            .unwrap(),
            ConvGeometry::new(
                "t",
                &[5, 4, 4],
                &[3, 2, 2],
                &[2, 1, 1],
                &[1, 2, 1],
                Valid,
                1,
                3,
            )
            .unwrap(),
        ]
    }

    fn close(got: &[f32], want: &[f64], label: &str) {
        assert_eq!(got.len(), want.len(), "{label}");
        for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
            // At most ~50 f32 terms of magnitude <= 2.25 each.
            assert!((g as f64 - w).abs() <= 1e-4, "{label}[{i}]: {g} vs {w}");
        }
    }

    #[test]
    fn forward_matches_direct_loops() {
        for (n, g) in geometries().iter().enumerate() {
            let batch = 2;
            let x = ramp(batch * g.in_positions() * g.in_channels, n);
            let w = ramp(g.patch_len() * g.filters, n + 7);
            let bias: Vec<f32> = (0..g.filters).map(|i| 0.5 - i as f32).collect();
            let got = forward(g, batch, &x, &w, Some(&bias), None).unwrap();
            assert_eq!(got.shape(), g.output_shape(batch).as_slice());
            let mut want = naive(g, batch, &x, &w);
            for (i, v) in want.iter_mut().enumerate() {
                *v += bias[i % g.filters] as f64;
            }
            close(got.as_slice().unwrap(), &want, &format!("geometry {n}"));
            let relu = forward(g, batch, &x, &w, Some(&bias), Some(FusedActivation::Relu)).unwrap();
            for (r, l) in relu.iter().zip(got.iter()) {
                assert_eq!(r.to_bits(), l.max(0.0).to_bits());
            }
        }
    }

    #[test]
    fn backward_passes_are_the_adjoints_of_the_direct_loops() {
        for (n, g) in geometries().iter().enumerate() {
            let batch = 2;
            let x = ramp(batch * g.in_positions() * g.in_channels, n + 3);
            let w = ramp(g.patch_len() * g.filters, n + 5);
            let gy = ramp(batch * g.out_positions() * g.filters, n + 11);
            // d/dx_i Σ gy · conv(x, w) = Σ gy · conv(e_i, w)
            let dx = backward_data(g, batch, &gy, &w, None).unwrap();
            let want_dx: Vec<f64> = (0..x.len())
                .map(|i| {
                    let mut e = vec![0.0f32; x.len()];
                    e[i] = 1.0;
                    naive(g, batch, &e, &w)
                        .iter()
                        .zip(&gy)
                        .map(|(a, &b)| a * b as f64)
                        .sum()
                })
                .collect();
            close(
                dx.as_slice().unwrap(),
                &want_dx,
                &format!("dx geometry {n}"),
            );
            let dw = backward_weights(g, batch, &x, &gy).unwrap();
            let want_dw: Vec<f64> = (0..w.len())
                .map(|i| {
                    let mut e = vec![0.0f32; w.len()];
                    e[i] = 1.0;
                    naive(g, batch, &x, &e)
                        .iter()
                        .zip(&gy)
                        .map(|(a, &b)| a * b as f64)
                        .sum()
                })
                .collect();
            close(
                dw.as_slice().unwrap(),
                &want_dw,
                &format!("dw geometry {n}"),
            );
            // The initial values are added first, then the taps.
            let init: Vec<f32> = (0..g.in_channels).map(|i| i as f32 + 0.25).collect();
            let shifted = backward_data(g, batch, &gy, &w, Some(&init)).unwrap();
            for (i, (s, d)) in shifted.iter().zip(dx.iter()).enumerate() {
                let want = init[i % g.in_channels] as f64 + *d as f64;
                assert!((*s as f64 - want).abs() <= 1e-5, "init geometry {n}");
            }
        }
    }

    #[test]
    fn transposed_lengths_follow_keras() {
        use PaddingType::{Same, Valid};
        let g =
            ConvGeometry::transposed("t", &[4, 3], &[3, 1], &[2, 3], &[1, 1], Valid, 2, 5).unwrap();
        assert_eq!(g.input_spatial(), &[9, 9]);
        assert_eq!(g.output_spatial(), &[4, 3]);
        assert_eq!((g.in_channels, g.filters), (5, 2));
        let g = ConvGeometry::transposed("t", &[4], &[5], &[2], &[1], Same, 1, 1).unwrap();
        assert_eq!(g.input_spatial(), &[8]);
        assert_eq!(g.pad[2], 1); // total (4 - 1) * 2 + 5 - 8 = 3, one before
                                 // dilation widens the window: span 5 at stride 1
        let g = ConvGeometry::transposed("t", &[3], &[3], &[1], &[2], Valid, 1, 1).unwrap();
        assert_eq!(g.input_spatial(), &[7]);
    }

    #[test]
    fn bad_geometries_are_errors_naming_the_layer() {
        let e = ConvGeometry::new(
            "Conv2D",
            &[3, 3],
            &[5, 5],
            &[1, 1],
            &[1, 1],
            PaddingType::Valid,
            1,
            1,
        )
        .unwrap_err();
        assert!(
            matches!(e, Error::InvalidInput(ref m) if m.contains("Conv2D") && m.contains("(5, 5)") && m.contains("(3, 3)")),
            "{e:?}"
        );
        let e = ConvGeometry::new("Conv1D", &[3], &[1], &[0], &[1], PaddingType::Valid, 1, 1)
            .unwrap_err();
        assert!(matches!(e, Error::InvalidParameter { .. }), "{e:?}");
        let g =
            ConvGeometry::new("Conv1D", &[3], &[1], &[1], &[1], PaddingType::Valid, 1, 1).unwrap();
        assert!(forward(&g, 1, &[1.0; 4], &[1.0], None, None).is_err());
    }

    /// One geometry above the gate at batch 1: the blocks (and gather chunks) run on rayon.
    fn big() -> ConvGeometry {
        ConvGeometry::new(
            "t",
            &[48, 40],
            &[3, 3],
            &[1, 1],
            &[1, 1],
            PaddingType::Same,
            8,
            16,
        )
        .unwrap()
    }

    /// A causal 1D geometry above the gate (Keras's Conv1D(padding="causal")).
    fn big_causal() -> ConvGeometry {
        ConvGeometry::new("t", &[6000], &[3], &[1], &[2], PaddingType::Causal, 8, 16).unwrap()
    }

    #[test]
    fn causal_geometry_pads_only_before() {
        let g = big_causal();
        assert_eq!((g.pad[2], g.output[2]), (4, 6000));
        let g = ConvGeometry::new("t", &[7], &[3], &[2], &[1], PaddingType::Causal, 1, 1).unwrap();
        assert_eq!((g.pad[2], g.output[2]), (2, 4));
        let e = ConvGeometry::transposed(
            "Conv1DTranspose",
            &[4],
            &[3],
            &[1],
            &[1],
            PaddingType::Causal,
            1,
            1,
        )
        .unwrap_err();
        assert!(e.to_string().contains("Conv1DTranspose"), "{e}");
    }

    #[test]
    fn gate_never_changes_a_bit_forward_and_backward() {
        for g in [big(), big_causal()] {
            gate_check(g);
        }
    }

    fn gate_check(g: ConvGeometry) {
        assert!(g.flops(1) >= CONV_PARALLEL_MIN_FLOPS.default);
        assert!(g.out_positions() > 4 * block_rows(g.patch_len()));
        let batch = 2;
        let x = ramp(batch * g.in_positions() * g.in_channels, 1);
        let w = ramp(g.patch_len() * g.filters, 2);
        let gy = ramp(batch * g.out_positions() * g.filters, 3);
        let bias = ramp(g.filters, 4);
        let run = || {
            let y = forward(&g, batch, &x, &w, Some(&bias), None).unwrap();
            let dx = backward_data(&g, batch, &gy, &w, Some(&bias[..8])).unwrap();
            let dw = backward_weights(&g, batch, &x, &gy).unwrap();
            let bits =
                |v: &mut dyn Iterator<Item = &f32>| v.map(|f| f.to_bits()).collect::<Vec<_>>();
            (
                bits(&mut y.iter()),
                bits(&mut dx.iter()),
                bits(&mut dw.iter()),
            )
        };
        let (serial, parallel) = serial_and_parallel(&CONV_PARALLEL_MIN_FLOPS, run);
        assert!(serial == parallel);
    }

    /// The kernel gradient by direct loops in f64, with `Σ |term|` per entry (for the
    /// rounding bound).
    fn naive_kernel_grad(
        g: &ConvGeometry,
        batch: usize,
        x: &[f32],
        gy: &[f32],
    ) -> (Vec<f64>, Vec<f64>) {
        let (c, f) = (g.in_channels, g.filters);
        let (mut dw, mut mass) = (
            vec![0.0f64; g.patch_len() * f],
            vec![0.0f64; g.patch_len() * f],
        );
        let [_, oh, ow] = g.output;
        let [_, kh, kw] = g.kernel;
        for b in 0..batch {
            for (oy, ox) in (0..oh).flat_map(|y| (0..ow).map(move |x| (y, x))) {
                let o = (b * oh + oy) * ow + ox;
                for (ty, tx) in (0..kh).flat_map(|y| (0..kw).map(move |x| (y, x))) {
                    let (Some(iy), Some(ix)) = (g.source(1, oy, ty), g.source(2, ox, tx)) else {
                        continue;
                    };
                    let i = (b * g.input[1] + iy) * g.input[2] + ix;
                    for ch in 0..c {
                        for fl in 0..f {
                            let term = x[i * c + ch] as f64 * gy[o * f + fl] as f64;
                            let at = ((ty * kw + tx) * c + ch) * f + fl;
                            dw[at] += term;
                            mass[at] += term.abs();
                        }
                    }
                }
            }
        }
        (dw, mass)
    }

    #[test]
    fn kernel_gradient_spans_cross_items_and_keep_their_bits_on_any_pool() {
        let g = big();
        let (p, k) = (g.out_positions(), g.patch_len());
        // spans and product blocks that start inside one item and end in the next
        assert!(!weight_span_rows(k).is_multiple_of(p) && deep_block_rows(k) < p);
        let batch = 6;
        assert!(batch * p > 4 * weight_span_rows(k), "several spans");
        let x = ramp(batch * g.in_positions() * g.in_channels, 8);
        let gy = ramp(batch * p * g.filters, 9);
        let bits = |threads: usize, gate: usize| -> Vec<u32> {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let _lock = crate::gate::GATE_TEST_LOCK
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            crate::gate::with_gate(&CONV_PARALLEL_MIN_FLOPS, gate, || {
                pool.install(|| backward_weights(&g, batch, &x, &gy).unwrap())
            })
            .iter()
            .map(|v| v.to_bits())
            .collect()
        };
        let serial = bits(1, usize::MAX);
        // 2 and 3 workers: spans as rayon tasks; 8: spans in turn, gemmkit parallel inside
        for threads in [1, 2, 3, 8] {
            assert!(bits(threads, 0) == serial, "{threads} workers");
        }
        let (want, mass) = naive_kernel_grad(&g, batch, &x, &gy);
        // f32 sums of n = batch * p terms: |error| <= n * u * Σ|term| (u = 2^-24), whatever
        // the grouping.
        let n = (batch * p) as f64;
        for (i, (&got, (&w, &m))) in serial.iter().zip(want.iter().zip(&mass)).enumerate() {
            let got = f32::from_bits(got) as f64;
            assert!(
                (got - w).abs() <= n * m / 16_777_216.0,
                "dw[{i}]: {got} vs {w}"
            );
        }
    }

    #[test]
    fn an_item_gets_the_same_bits_alone_or_in_a_batch() {
        let g = big();
        let (in_len, out_len) = (g.in_positions() * 8, g.out_positions() * 16);
        let x = ramp(3 * in_len, 5);
        let gy = ramp(3 * out_len, 6);
        let w = ramp(g.patch_len() * 16, 7);
        let y = forward(&g, 3, &x, &w, None, None).unwrap();
        let dx = backward_data(&g, 3, &gy, &w, None).unwrap();
        let y1 = forward(&g, 1, &x[in_len..2 * in_len], &w, None, None).unwrap();
        let dx1 = backward_data(&g, 1, &gy[out_len..2 * out_len], &w, None).unwrap();
        let ys = y.as_slice().unwrap();
        let dxs = dx.as_slice().unwrap();
        assert!(ys[out_len..2 * out_len]
            .iter()
            .zip(y1.iter())
            .all(|(a, b)| a.to_bits() == b.to_bits()));
        assert!(dxs[in_len..2 * in_len]
            .iter()
            .zip(dx1.iter())
            .all(|(a, b)| a.to_bits() == b.to_bits()));
    }
}
