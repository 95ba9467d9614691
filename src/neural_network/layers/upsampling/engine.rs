//! The one resize engine behind `UpSampling1D/2D/3D`: a separable resize, one 1-D pass per
//! spatial axis whose factor exceeds 1, each pass a table of filter taps.
//!
//! Output position `o` of an axis enlarged by `f` samples the input at the half-pixel centre
//! `s = (o + 0.5) / f - 0.5` (TensorFlow's and JAX's `resize` convention). Its taps are the
//! in-range positions `i` with `|s - i| <` the kernel's radius, weighted by the kernel at
//! `|s - i|` and renormalised to sum to 1 (taps past an edge are dropped, as `jax.image.resize`
//! does). `Nearest` is one tap of weight 1 at `floor(o / f)`: a plain repeat. The backward pass
//! applies the transposed table, each input position summing its `(o, w)` pairs in ascending
//! `o`, so every element has a fixed accumulation order and serial and parallel runs agree bit
//! for bit.

use super::Interpolation;
use crate::declare_gate;
use crate::error::{Error, Result};
use crate::neural_network::layers::layer_util::{forward_cache, require_shape, seen_shape};
use crate::neural_network::Tensor;
use ndarray::IxDyn;
use rayon::prelude::*;

declare_gate! {
    /// The upsampling resize passes (forward and backward). Work = destination elements x
    /// taps per destination element.
    pub UPSAMPLING_PARALLEL_MIN_OPS: upsampling::parallel_min_ops = 2_000_000, "destination taps"
}

/// Elements a rayon task writes at least, so short rows (few channels) are batched together.
const TASK_ELEMS: usize = 4096;

impl Interpolation {
    /// Half-width of the kernel's support (0 for the repeat).
    fn radius(self) -> f64 {
        match self {
            Interpolation::Nearest => 0.0,
            Interpolation::Bilinear => 1.0,
            Interpolation::Bicubic => 2.0,
            Interpolation::Lanczos3 => 3.0,
            Interpolation::Lanczos5 => 5.0,
        }
    }

    /// Kernel value at distance `x >= 0`.
    fn kernel(self, x: f64) -> f64 {
        use std::f64::consts::PI;
        match self {
            Interpolation::Nearest => f64::from(u8::from(x < 0.5)),
            Interpolation::Bilinear => (1.0 - x).max(0.0),
            // Keys' cubic convolution with a = -0.5 (Catmull-Rom), as JAX's "cubic".
            Interpolation::Bicubic => {
                if x < 1.0 {
                    (1.5 * x - 2.5) * x * x + 1.0
                } else if x < 2.0 {
                    ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0
                } else {
                    0.0
                }
            }
            Interpolation::Lanczos3 | Interpolation::Lanczos5 => {
                let a = self.radius();
                if x >= a {
                    0.0
                } else if x < 1e-12 {
                    1.0
                } else {
                    a * (PI * x).sin() * (PI * x / a).sin() / (PI * PI * x * x)
                }
            }
        }
    }
}

/// The taps of one axis pass `n_in -> n_in * factor`, forward and transposed.
#[derive(Debug, Clone)]
pub(crate) struct AxisTaps {
    n_in: usize,
    n_out: usize,
    /// Output `o` reads inputs `start[o]..start[o] + len` with weights `w[off[o]..off[o + 1]]`.
    start: Vec<usize>,
    off: Vec<usize>,
    w: Vec<f32>,
    /// Input `i` receives `(t_out[k], t_w[k])` for `k` in `t_off[i]..t_off[i + 1]`, ascending `o`.
    t_off: Vec<usize>,
    t_out: Vec<usize>,
    t_w: Vec<f32>,
}

impl AxisTaps {
    pub(crate) fn new(n_in: usize, factor: usize, mode: Interpolation) -> Self {
        let n_out = n_in * factor;
        let (mut start, mut off, mut w) = (Vec::with_capacity(n_out), vec![0], Vec::new());
        let f = factor as f64;
        let last = (n_in - 1) as f64;
        for o in 0..n_out {
            if mode == Interpolation::Nearest {
                start.push(o / factor);
                w.push(1.0);
                off.push(w.len());
                continue;
            }
            let s = (o as f64 + 0.5) / f - 0.5;
            let r = mode.radius();
            let lo = (s - r).ceil().max(0.0) as usize;
            let hi = (s + r).floor().min(last) as usize;
            let taps: Vec<f64> = (lo..=hi)
                .map(|i| mode.kernel((s - i as f64).abs()))
                .collect();
            // Zero weights at the ends of the support (integer distances) add no information;
            // the tap nearest `s` (distance <= 0.5) is never zero.
            let lead = taps.iter().position(|&v| v != 0.0).unwrap_or(0);
            let end = taps
                .iter()
                .rposition(|&v| v != 0.0)
                .map_or(taps.len(), |k| k + 1);
            let taps = &taps[lead..end];
            let total: f64 = taps.iter().sum();
            start.push(lo + lead);
            w.extend(taps.iter().map(|&v| (v / total) as f32));
            off.push(w.len());
        }
        // Transpose: bucket every (o, w) by its input, o ascending within each bucket.
        let mut counts = vec![0usize; n_in + 1];
        for o in 0..n_out {
            for t in 0..off[o + 1] - off[o] {
                counts[start[o] + t + 1] += 1;
            }
        }
        for i in 0..n_in {
            counts[i + 1] += counts[i];
        }
        let t_off = counts.clone();
        let mut cursor = counts;
        let (mut t_out, mut t_w) = (vec![0; w.len()], vec![0.0; w.len()]);
        for o in 0..n_out {
            for (t, &weight) in w[off[o]..off[o + 1]].iter().enumerate() {
                let slot = &mut cursor[start[o] + t];
                t_out[*slot] = o;
                t_w[*slot] = weight;
                *slot += 1;
            }
        }
        Self {
            n_in,
            n_out,
            start,
            off,
            w,
            t_off,
            t_out,
            t_w,
        }
    }

    /// The forward weights of output `o` and the first input they read.
    pub(crate) fn taps(&self, o: usize) -> (usize, &[f32]) {
        (self.start[o], &self.w[self.off[o]..self.off[o + 1]])
    }
}

/// `dst = sum_k w_k * src_k` over rows of length `dst.len()`, summed in the given order.
#[inline]
fn weighted_rows<'a>(dst: &mut [f32], mut rows: impl Iterator<Item = (f32, &'a [f32])>) {
    match rows.next() {
        None => dst.fill(0.0),
        Some((w0, r0)) => {
            for (d, &x) in dst.iter_mut().zip(r0) {
                *d = w0 * x;
            }
            for (w, r) in rows {
                for (d, &x) in dst.iter_mut().zip(r) {
                    *d += w * x;
                }
            }
        }
    }
}

/// One 1-D pass over a C-order buffer viewed as `[outer, n_src, inner]`, writing
/// `[outer, n_dst, inner]`: forward reads the table, `transpose` its transpose.
fn axis_pass(
    src: &[f32],
    outer: usize,
    inner: usize,
    taps: &AxisTaps,
    transpose: bool,
) -> Vec<f32> {
    let (n_src, n_dst) = if transpose {
        (taps.n_out, taps.n_in)
    } else {
        (taps.n_in, taps.n_out)
    };
    let mut dst = vec![0.0f32; outer * n_dst * inner];
    if dst.is_empty() {
        return dst;
    }
    let fill_row = |row: usize, out: &mut [f32]| {
        let (b, d) = (row / n_dst, row % n_dst);
        let base = b * n_src;
        let read = |s: usize| &src[(base + s) * inner..(base + s + 1) * inner];
        if transpose {
            let range = taps.t_off[d]..taps.t_off[d + 1];
            weighted_rows(
                out,
                taps.t_out[range.clone()]
                    .iter()
                    .zip(&taps.t_w[range])
                    .map(|(&o, &w)| (w, read(o))),
            );
        } else {
            let (first, weights) = taps.taps(d);
            if let [1.0] = weights {
                // The repeat: a copy, the same bits as `1.0 * x`.
                out.copy_from_slice(read(first));
            } else {
                weighted_rows(
                    out,
                    weights
                        .iter()
                        .enumerate()
                        .map(|(t, &w)| (w, read(first + t))),
                );
            }
        }
    };
    let work = taps.w.len().saturating_mul(outer).saturating_mul(inner);
    if UPSAMPLING_PARALLEL_MIN_OPS.allows_parallel(work) {
        // Rows are independent, so any split gives the same bits; batch 1 splits too.
        let rows_per_task = TASK_ELEMS.div_ceil(inner).max(1);
        dst.par_chunks_mut(rows_per_task * inner)
            .enumerate()
            .for_each(|(task, chunk)| {
                for (k, out) in chunk.chunks_mut(inner).enumerate() {
                    fill_row(task * rows_per_task + k, out);
                }
            });
    } else {
        for (row, out) in dst.chunks_mut(inner).enumerate() {
            fill_row(row, out);
        }
    }
    dst
}

/// A separable resize of the spatial axes `1..=factors.len()` of a channels-last tensor.
#[derive(Debug, Clone)]
pub(crate) struct Resize {
    pub(crate) factors: Vec<usize>,
    pub(crate) mode: Interpolation,
}

impl Resize {
    /// The output shape of `shape`, or `None` if an extent or the element count overflows.
    pub(crate) fn output_shape(&self, shape: &[usize]) -> Option<Vec<usize>> {
        let mut out = shape.to_vec();
        for (k, &f) in self.factors.iter().enumerate() {
            out[k + 1] = out[k + 1].checked_mul(f)?;
        }
        out.iter().try_fold(1usize, |a, &d| a.checked_mul(d))?;
        Some(out)
    }

    /// Runs the passes of every enlarged axis, in axis order (forward) or reverse order on
    /// the transposed tables (backward, `src_shape` = the forward output's shape).
    fn run(&self, src: &Tensor, src_shape: &[usize], transpose: bool) -> Tensor {
        let mut shape = src_shape.to_vec();
        let mut data = src
            .as_standard_layout()
            .into_owned()
            .into_raw_vec_and_offset()
            .0;
        let mut axes: Vec<usize> = (0..self.factors.len())
            .filter(|&k| self.factors[k] > 1)
            .collect();
        if transpose {
            axes.reverse();
        }
        for k in axes {
            let axis = k + 1;
            let f = self.factors[k];
            let n_in = if transpose {
                shape[axis] / f
            } else {
                shape[axis]
            };
            let taps = AxisTaps::new(n_in, f, self.mode);
            let outer: usize = shape[..axis].iter().product();
            let inner: usize = shape[axis + 1..].iter().product();
            data = axis_pass(&data, outer, inner, &taps, transpose);
            shape[axis] = if transpose { n_in } else { n_in * f };
        }
        Tensor::from_shape_vec(IxDyn(&shape), data).expect("the passes keep the element count")
    }

    pub(crate) fn forward(&self, x: &Tensor) -> Tensor {
        self.run(x, x.shape(), false)
    }

    pub(crate) fn backward(&self, grad: &Tensor) -> Tensor {
        self.run(grad, grad.shape(), true)
    }
}

/// Validation, caching and reporting shared by the three upsampling layers.
#[derive(Debug)]
pub(crate) struct UpSamplingCore {
    name: &'static str,
    layout: &'static str,
    resize: Resize,
    /// Output shape of the last `forward`.
    output: Option<Vec<usize>>,
}

impl UpSamplingCore {
    /// Zero factors are rejected as `InvalidParameter("size")`.
    pub(crate) fn new(
        name: &'static str,
        layout: &'static str,
        factors: Vec<usize>,
        mode: Interpolation,
    ) -> Result<Self> {
        if factors.contains(&0) {
            return Err(Error::invalid_parameter(
                "size",
                format!("{name}: every factor must be >= 1, got {factors:?}"),
            ));
        }
        Ok(Self {
            name,
            layout,
            resize: Resize { factors, mode },
            output: None,
        })
    }

    pub(crate) fn predict(&self, input: &Tensor) -> Result<Tensor> {
        let rank = self.resize.factors.len() + 2;
        if input.ndim() != rank {
            return Err(Error::invalid_input(format!(
                "{} expects a {rank}D input {}, got shape {:?}",
                self.name,
                self.layout,
                input.shape()
            )));
        }
        if input.is_empty() {
            return Err(Error::empty_input(format!(
                "{}: input of shape {:?} has no element",
                self.name,
                input.shape()
            )));
        }
        let Some(out_shape) = self.resize.output_shape(input.shape()) else {
            return Err(Error::invalid_input(format!(
                "{}: input {:?} enlarged by {:?} does not fit in usize",
                self.name,
                input.shape(),
                self.resize.factors
            )));
        };
        crate::neural_network::layers::size_guard::check_f32_alloc(
            self.name, "output", &out_shape,
        )?;
        Ok(self.resize.forward(input))
    }

    pub(crate) fn forward(&mut self, input: &Tensor) -> Result<Tensor> {
        let out = self.predict(input)?;
        self.output = Some(out.shape().to_vec());
        Ok(out)
    }

    pub(crate) fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor> {
        let expected = forward_cache(&self.output, self.name)?;
        require_shape(expected, grad_output.shape())?;
        Ok(self.resize.backward(grad_output))
    }

    pub(crate) fn output_shape(&self) -> String {
        seen_shape(self.output.as_deref())
    }
}
