//! The direct depthwise convolution engine (1 to 3 spatial axes, channels-last).
//!
//! Every input channel `c` is convolved with its own `depth_multiplier` filters; output lane
//! `c * dm + m` reads input lane `c` through kernel lane `c * dm + m`, so the kernel
//! (`[k.., channels, dm]`), the bias and the output share one contiguous lane layout and the
//! inner loops run over it. Spatial shapes are held left-padded to rank 3 (a 1-D layer is
//! `[1, 1, length]`), so one loop nest serves every rank.
//!
//! Results never depend on the gate or the worker count: the forward pass and the input
//! gradient compute each output element by a gather in a fixed tap order (no scatter, no
//! atomics); the kernel gradient sums fixed, geometry-sized blocks of positions and then adds
//! the block partials in block order, on both paths.

use super::PaddingType;
use crate::declare_gate;
use rayon::prelude::*;

declare_gate! {
    /// Direct depthwise convolution (forward, input gradient, kernel gradient).
    /// Work = estimated FLOPs (`2 * batch * output positions * lanes * taps`).
    pub CONV_NAIVE_PARALLEL_MIN_FLOPS: conv::naive_parallel_min_flops = 1_000_000, "FLOPs"
}

/// The most spatial axes the engine handles.
pub const MAX_SPATIAL: usize = 3;

/// Upper bound on kernel-gradient blocks, so the block partials stay small.
const MAX_GRAD_BLOCKS: usize = 256;
/// Fewest output positions per kernel-gradient block.
const MIN_GRAD_BLOCK: usize = 64;

/// The shape of one depthwise pass: spatial sizes left-padded with unit axes to rank 3.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DepthwiseGeometry {
    pub batch: usize,
    pub channels: usize,
    pub multiplier: usize,
    /// Real spatial axes (1..=3).
    pub rank: usize,
    pub input: [usize; MAX_SPATIAL],
    pub output: [usize; MAX_SPATIAL],
    pub kernel: [usize; MAX_SPATIAL],
    pub stride: [usize; MAX_SPATIAL],
    pub dilation: [usize; MAX_SPATIAL],
    pub pad: [usize; MAX_SPATIAL],
}

/// `values` left-padded with `fill` to rank 3.
fn padded(values: &[usize], fill: usize) -> [usize; MAX_SPATIAL] {
    let mut out = [fill; MAX_SPATIAL];
    out[MAX_SPATIAL - values.len()..].copy_from_slice(values);
    out
}

impl DepthwiseGeometry {
    /// The geometry of `input` spatial sizes under the given window; `None` when `Valid`
    /// padding leaves no full window along some axis. Slices must share one length in 1..=3,
    /// every entry of `kernel`, `stride` and `dilation` positive.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        batch: usize,
        input: &[usize],
        channels: usize,
        multiplier: usize,
        kernel: &[usize],
        stride: &[usize],
        dilation: &[usize],
        padding: PaddingType,
    ) -> Option<Self> {
        let rank = input.len();
        assert!(
            (1..=MAX_SPATIAL).contains(&rank)
                && kernel.len() == rank
                && stride.len() == rank
                && dilation.len() == rank,
            "depthwise geometry: inconsistent ranks"
        );
        let mut output = [1; MAX_SPATIAL];
        let mut pad = [0; MAX_SPATIAL];
        for d in 0..rank {
            let at = MAX_SPATIAL - rank + d;
            output[at] = padding.output_len(input[d], kernel[d], stride[d], dilation[d])?;
            pad[at] = padding.pad_before(input[d], kernel[d], stride[d], dilation[d]);
        }
        Some(Self {
            batch,
            channels,
            multiplier,
            rank,
            input: padded(input, 1),
            output,
            kernel: padded(kernel, 1),
            stride: padded(stride, 1),
            dilation: padded(dilation, 1),
            pad,
        })
    }

    /// Output lanes per position: `channels * multiplier`.
    pub fn lanes(&self) -> usize {
        self.channels * self.multiplier
    }

    pub fn taps(&self) -> usize {
        self.kernel.iter().product()
    }

    pub fn input_positions(&self) -> usize {
        self.input.iter().product()
    }

    pub fn output_positions(&self) -> usize {
        self.output.iter().product()
    }

    /// The real output spatial sizes.
    pub fn output_spatial(&self) -> &[usize] {
        &self.output[MAX_SPATIAL - self.rank..]
    }

    /// Estimated FLOPs of one pass (a multiply and an add per tap and output lane).
    pub fn flops(&self) -> usize {
        2usize
            .saturating_mul(self.batch)
            .saturating_mul(self.output_positions())
            .saturating_mul(self.lanes())
            .saturating_mul(self.taps())
    }

    fn parallel(&self) -> bool {
        CONV_NAIVE_PARALLEL_MIN_FLOPS.allows_parallel(self.flops())
    }

    /// Per tap, in row-major tap order: its spatial offset (taps x dilation) per axis.
    fn tap_offsets(&self) -> Vec<[usize; MAX_SPATIAL]> {
        let k = self.kernel;
        let dl = self.dilation;
        let mut taps = Vec::with_capacity(self.taps());
        for t0 in 0..k[0] {
            for t1 in 0..k[1] {
                for t2 in 0..k[2] {
                    taps.push([t0 * dl[0], t1 * dl[1], t2 * dl[2]]);
                }
            }
        }
        taps
    }

    /// Sample and spatial index of flat position `q` over `[batch, dims..]`.
    fn split(q: usize, dims: &[usize; MAX_SPATIAL]) -> (usize, [usize; MAX_SPATIAL]) {
        let i2 = q % dims[2];
        let r = q / dims[2];
        let i1 = r % dims[1];
        let r = r / dims[1];
        let i0 = r % dims[0];
        (r / dims[0], [i0, i1, i2])
    }

    fn flat(b: usize, idx: [usize; MAX_SPATIAL], dims: &[usize; MAX_SPATIAL]) -> usize {
        ((b * dims[0] + idx[0]) * dims[1] + idx[1]) * dims[2] + idx[2]
    }

    /// Input position read by output `o` through the tap at `offset`, if inside the input.
    #[inline]
    fn input_at(
        &self,
        o: [usize; MAX_SPATIAL],
        offset: [usize; MAX_SPATIAL],
    ) -> Option<[usize; MAX_SPATIAL]> {
        let mut i = [0; MAX_SPATIAL];
        for d in 0..MAX_SPATIAL {
            // o * s + offset - pad, in range [0, input)
            let v = (o[d] * self.stride[d] + offset[d]).checked_sub(self.pad[d])?;
            if v >= self.input[d] {
                return None;
            }
            i[d] = v;
        }
        Some(i)
    }

    /// Output position that reads input `i` through the tap at `offset`, if any.
    #[inline]
    fn output_at(
        &self,
        i: [usize; MAX_SPATIAL],
        offset: [usize; MAX_SPATIAL],
    ) -> Option<[usize; MAX_SPATIAL]> {
        let mut o = [0; MAX_SPATIAL];
        for d in 0..MAX_SPATIAL {
            let num = (i[d] + self.pad[d]).checked_sub(offset[d])?;
            if num % self.stride[d] != 0 {
                return None;
            }
            let v = num / self.stride[d];
            if v >= self.output[d] {
                return None;
            }
            o[d] = v;
        }
        Some(o)
    }

    /// Positions per kernel-gradient block: a function of the geometry only, so the summation
    /// grouping (and the bits) never depend on the gate or the worker count.
    fn grad_block(&self) -> usize {
        let total = self.batch * self.output_positions();
        total.div_ceil(MAX_GRAD_BLOCKS).max(MIN_GRAD_BLOCK)
    }
}

/// Runs `fill(first_position, chunk)` over `out` cut into whole positions of `width` lanes,
/// in parallel when `parallel`; every chunk is independent, so the cut never changes a bit.
fn for_position_chunks(
    out: &mut [f32],
    width: usize,
    parallel: bool,
    fill: impl Fn(usize, &mut [f32]) + Sync + Send,
) {
    if out.is_empty() {
        return;
    }
    let positions = out.len() / width;
    if parallel {
        let per = positions.div_ceil(4 * rayon::current_num_threads()).max(1);
        out.par_chunks_mut(per * width)
            .enumerate()
            .for_each(|(k, chunk)| fill(k * per, chunk));
    } else {
        fill(0, out);
    }
}

/// `y[b, o.., c*dm+m] = Σ_taps x[b, o*s + t*d - pad, c] · w[t, c, m] (+ bias[c*dm+m])`, taps
/// summed in row-major order from zero, the bias added last. `x` is `[batch, in.., C]`, `w`
/// `[taps, C*dm]`, both C order.
pub fn forward(g: &DepthwiseGeometry, x: &[f32], w: &[f32], bias: Option<&[f32]>) -> Vec<f32> {
    let (c, dm, lanes) = (g.channels, g.multiplier, g.lanes());
    debug_assert_eq!(x.len(), g.batch * g.input_positions() * c);
    debug_assert_eq!(w.len(), g.taps() * lanes);
    let taps = g.tap_offsets();
    let mut out = vec![0.0f32; g.batch * g.output_positions() * lanes];
    for_position_chunks(&mut out, lanes, g.parallel(), |first, chunk| {
        for (k, acc) in chunk.chunks_exact_mut(lanes).enumerate() {
            let (b, o) = DepthwiseGeometry::split(first + k, &g.output);
            for (t, &offset) in taps.iter().enumerate() {
                let Some(i) = g.input_at(o, offset) else {
                    continue;
                };
                let xo = DepthwiseGeometry::flat(b, i, &g.input) * c;
                let xs = &x[xo..xo + c];
                let ws = &w[t * lanes..(t + 1) * lanes];
                if dm == 1 {
                    for ((a, &xv), &wv) in acc.iter_mut().zip(xs).zip(ws) {
                        *a += xv * wv;
                    }
                } else {
                    for ((a, &xv), wc) in acc.chunks_exact_mut(dm).zip(xs).zip(ws.chunks_exact(dm))
                    {
                        for (a, &wv) in a.iter_mut().zip(wc) {
                            *a += xv * wv;
                        }
                    }
                }
            }
            if let Some(bias) = bias {
                for (a, &bv) in acc.iter_mut().zip(bias) {
                    *a += bv;
                }
            }
        }
    });
    out
}

/// The input gradient `dx[b, i.., c] = Σ_taps Σ_m dy[b, o, c*dm+m] · w[t, c, m]` over the
/// outputs `o` that read `i` through tap `t`: a gather per input position, taps in row-major
/// order, the multiplier sum inside each tap. `dy` is `[batch, out.., C*dm]`.
pub fn backward_input(g: &DepthwiseGeometry, dy: &[f32], w: &[f32]) -> Vec<f32> {
    let (c, dm, lanes) = (g.channels, g.multiplier, g.lanes());
    debug_assert_eq!(dy.len(), g.batch * g.output_positions() * lanes);
    let taps = g.tap_offsets();
    let mut dx = vec![0.0f32; g.batch * g.input_positions() * c];
    for_position_chunks(&mut dx, c, g.parallel(), |first, chunk| {
        for (k, acc) in chunk.chunks_exact_mut(c).enumerate() {
            let (b, i) = DepthwiseGeometry::split(first + k, &g.input);
            for (t, &offset) in taps.iter().enumerate() {
                let Some(o) = g.output_at(i, offset) else {
                    continue;
                };
                let go = DepthwiseGeometry::flat(b, o, &g.output) * lanes;
                let gs = &dy[go..go + lanes];
                let ws = &w[t * lanes..(t + 1) * lanes];
                if dm == 1 {
                    for ((a, &gv), &wv) in acc.iter_mut().zip(gs).zip(ws) {
                        *a += gv * wv;
                    }
                } else {
                    for ((a, gc), wc) in acc
                        .iter_mut()
                        .zip(gs.chunks_exact(dm))
                        .zip(ws.chunks_exact(dm))
                    {
                        let mut s = 0.0f32;
                        for (&gv, &wv) in gc.iter().zip(wc) {
                            s += gv * wv;
                        }
                        *a += s;
                    }
                }
            }
        }
    });
    dx
}

/// One block's kernel and bias partials (`[taps * lanes]` then `[lanes]`) over output
/// positions `range`, in position order.
fn grad_block(
    g: &DepthwiseGeometry,
    taps: &[[usize; MAX_SPATIAL]],
    x: &[f32],
    dy: &[f32],
    range: std::ops::Range<usize>,
    part: &mut [f32],
) {
    let (c, dm, lanes) = (g.channels, g.multiplier, g.lanes());
    part.fill(0.0);
    let (dw, db) = part.split_at_mut(taps.len() * lanes);
    for q in range {
        let (b, o) = DepthwiseGeometry::split(q, &g.output);
        let gs = &dy[q * lanes..(q + 1) * lanes];
        for (t, &offset) in taps.iter().enumerate() {
            let Some(i) = g.input_at(o, offset) else {
                continue;
            };
            let xo = DepthwiseGeometry::flat(b, i, &g.input) * c;
            let xs = &x[xo..xo + c];
            let dwt = &mut dw[t * lanes..(t + 1) * lanes];
            if dm == 1 {
                for ((a, &gv), &xv) in dwt.iter_mut().zip(gs).zip(xs) {
                    *a += gv * xv;
                }
            } else {
                for ((a, gc), &xv) in dwt.chunks_exact_mut(dm).zip(gs.chunks_exact(dm)).zip(xs) {
                    for (a, &gv) in a.iter_mut().zip(gc) {
                        *a += gv * xv;
                    }
                }
            }
        }
        for (a, &gv) in db.iter_mut().zip(gs) {
            *a += gv;
        }
    }
}

/// The kernel gradient (`[taps, C*dm]`) and the bias gradient (`[C*dm]`):
/// `Σ_{b,o} dy[b, o, c*dm+m] · x[b, o*s + t*d - pad, c]` and `Σ_{b,o} dy[b, o, ·]`, summed per
/// fixed block of output positions, the block partials then added in block order.
pub fn backward_kernel(g: &DepthwiseGeometry, x: &[f32], dy: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let lanes = g.lanes();
    let taps = g.tap_offsets();
    let width = (taps.len() + 1) * lanes;
    let total = g.batch * g.output_positions();
    let block = g.grad_block();
    let blocks = total.div_ceil(block);
    let range = |k: usize| k * block..((k + 1) * block).min(total);
    let mut sum = vec![0.0f32; width];
    let add = |sum: &mut [f32], part: &[f32]| {
        for (s, &p) in sum.iter_mut().zip(part) {
            *s += p;
        }
    };
    if g.parallel() && blocks > 1 {
        let mut parts = vec![0.0f32; blocks * width];
        parts
            .par_chunks_mut(width)
            .enumerate()
            .for_each(|(k, part)| grad_block(g, &taps, x, dy, range(k), part));
        for part in parts.chunks_exact(width) {
            add(&mut sum, part);
        }
    } else {
        let mut part = vec![0.0f32; width];
        for k in 0..blocks {
            grad_block(g, &taps, x, dy, range(k), &mut part);
            add(&mut sum, &part);
        }
    }
    let db = sum.split_off(taps.len() * lanes);
    (sum, db)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::serial_and_parallel;
    use PaddingType::{Same, Valid};

    fn ramp(n: usize, scale: f32, shift: usize) -> Vec<f32> {
        (0..n)
            .map(|k| (((k * 7 + shift) % 23) as f32 - 11.0) * scale)
            .collect()
    }

    /// The definition, term by term, in f64: direct loops over every output, tap and channel.
    /// Also returns Σ|terms| per output, the scale of the f32 rounding error.
    fn reference(g: &DepthwiseGeometry, x: &[f32], w: &[f32]) -> (Vec<f64>, Vec<f64>) {
        let (c, dm, lanes) = (g.channels, g.multiplier, g.lanes());
        let mut out = vec![0.0f64; g.batch * g.output_positions() * lanes];
        let mut abs = out.clone();
        let taps = g.tap_offsets();
        for q in 0..g.batch * g.output_positions() {
            let (b, o) = DepthwiseGeometry::split(q, &g.output);
            for (t, off) in taps.iter().enumerate() {
                // signed arithmetic, independent of the engine's unsigned bounds checks
                let mut inside = true;
                let mut i = [0usize; 3];
                for d in 0..3 {
                    let v = (o[d] * g.stride[d] + off[d]) as i64 - g.pad[d] as i64;
                    inside &= v >= 0 && v < g.input[d] as i64;
                    i[d] = v.max(0) as usize;
                }
                if !inside {
                    continue;
                }
                for ch in 0..c {
                    for m in 0..dm {
                        let xv = x[DepthwiseGeometry::flat(b, i, &g.input) * c + ch] as f64;
                        let term = xv * w[t * lanes + ch * dm + m] as f64;
                        out[q * lanes + ch * dm + m] += term;
                        abs[q * lanes + ch * dm + m] += term.abs();
                    }
                }
            }
        }
        (out, abs)
    }

    fn geometries() -> Vec<DepthwiseGeometry> {
        let mut v = Vec::new();
        for (pad, s, d, dm) in [
            (Valid, 1, 1, 1),
            (Same, 1, 1, 2),
            (Valid, 2, 1, 3),
            (Same, 2, 1, 1),
            (Same, 1, 2, 2),
            (Valid, 3, 2, 1),
        ] {
            v.push(DepthwiseGeometry::new(2, &[11], 3, dm, &[3], &[s], &[d], pad).unwrap());
            v.push(
                DepthwiseGeometry::new(2, &[7, 6], 2, dm, &[3, 2], &[s, 1], &[d, 1], pad).unwrap(),
            );
            v.push(
                DepthwiseGeometry::new(
                    1,
                    &[4, 5, 5],
                    2,
                    dm,
                    &[2, 3, 2],
                    &[1, s, s],
                    &[1, d, 1],
                    pad,
                )
                .unwrap(),
            );
        }
        v
    }

    /// An f32 sum of `k` rounded products: error below (k + 1)·eps·Σ|terms|.
    fn close(a: f32, b: f64, abs: f64, terms: usize) -> bool {
        (a as f64 - b).abs() <= (terms + 1) as f64 * f32::EPSILON as f64 * abs
    }

    #[test]
    fn forward_matches_the_definition() {
        for g in geometries() {
            let x = ramp(g.batch * g.input_positions() * g.channels, 0.1, 1);
            let w = ramp(g.taps() * g.lanes(), 0.1, 5);
            let y = forward(&g, &x, &w, None);
            let (want, abs) = reference(&g, &x, &w);
            for (k, (&a, &b)) in y.iter().zip(&want).enumerate() {
                assert!(close(a, b, abs[k], g.taps()), "{g:?} [{k}] {a} vs {b}");
            }
        }
    }

    /// `<dy, f(x)>` is bilinear: the input gradient must satisfy `<dy, f(x)> = <dx, x>` and the
    /// kernel gradient `<dy, f(x; w)> = <dw, w>` (the adjoint identities of a linear map).
    #[test]
    fn gradients_are_the_adjoints_of_the_forward_map() {
        for g in geometries() {
            let x = ramp(g.batch * g.input_positions() * g.channels, 0.1, 1);
            let w = ramp(g.taps() * g.lanes(), 0.1, 5);
            let dy = ramp(g.batch * g.output_positions() * g.lanes(), 0.1, 3);
            let (y, abs) = reference(&g, &x, &w);
            let lhs: f64 = y.iter().zip(&dy).map(|(a, &b)| a * b as f64).sum();
            let dx = backward_input(&g, &dy, &w);
            let (dw, db) = backward_kernel(&g, &x, &dy);
            let via_x: f64 = dx.iter().zip(&x).map(|(&a, &b)| a as f64 * b as f64).sum();
            let via_w: f64 = dw.iter().zip(&w).map(|(&a, &b)| a as f64 * b as f64).sum();
            // Σ|x·w·dy| over every term of the trilinear form
            let scale: f64 = abs
                .iter()
                .zip(&dy)
                .map(|(a, &b)| a * (b as f64).abs())
                .sum();
            // f32 partial sums of at most `terms` products each, then exact-enough f64 dots
            let terms = g.batch * g.output_positions() + g.taps() * g.multiplier + 1;
            let tol = terms as f64 * f32::EPSILON as f64 * scale;
            assert!((lhs - via_x).abs() <= tol, "{g:?}: {lhs} vs {via_x}");
            assert!((lhs - via_w).abs() <= tol, "{g:?}: {lhs} vs {via_w}");
            // the bias gradient is the plain sum of dy per lane
            for (l, &got) in db.iter().enumerate() {
                let want: f64 = dy
                    .iter()
                    .skip(l)
                    .step_by(g.lanes())
                    .map(|&v| v as f64)
                    .sum();
                // at most 2·121 terms of size <= 1.1: well inside 1e-4
                assert!((got as f64 - want).abs() < 1e-4, "{g:?} db[{l}]");
            }
        }
    }

    #[test]
    fn valid_without_a_full_window_has_no_geometry() {
        assert!(DepthwiseGeometry::new(1, &[4], 1, 1, &[5], &[1], &[1], Valid).is_none());
        assert!(DepthwiseGeometry::new(1, &[4], 1, 1, &[3], &[1], &[2], Valid).is_none());
        let g = DepthwiseGeometry::new(1, &[4], 1, 1, &[5], &[1], &[1], Same).unwrap();
        assert_eq!(g.output_spatial(), &[4]);
    }

    /// The gate picks serial or parallel, never the bits: all three passes, every geometry,
    /// plus a large one whose kernel gradient spans many blocks.
    #[test]
    fn serial_and_parallel_paths_agree_bit_for_bit() {
        let mut all = geometries();
        all.push(
            DepthwiseGeometry::new(3, &[40, 33], 5, 2, &[3, 3], &[1, 2], &[1, 1], Same).unwrap(),
        );
        all.push(DepthwiseGeometry::new(1, &[5000], 4, 1, &[7], &[1], &[2], Valid).unwrap());
        for g in all {
            let x = ramp(g.batch * g.input_positions() * g.channels, 0.1, 1);
            let w = ramp(g.taps() * g.lanes(), 0.1, 5);
            let dy = ramp(g.batch * g.output_positions() * g.lanes(), 0.1, 3);
            let bias = ramp(g.lanes(), 0.5, 2);
            let (s, p) = serial_and_parallel(&CONV_NAIVE_PARALLEL_MIN_FLOPS, || {
                (
                    forward(&g, &x, &w, Some(&bias)),
                    backward_input(&g, &dy, &w),
                    backward_kernel(&g, &x, &dy),
                )
            });
            let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&s.0), bits(&p.0), "{g:?} forward");
            assert_eq!(bits(&s.1), bits(&p.1), "{g:?} input gradient");
            assert_eq!(bits(&s.2 .0), bits(&p.2 .0), "{g:?} kernel gradient");
            assert_eq!(bits(&s.2 .1), bits(&p.2 .1), "{g:?} bias gradient");
        }
    }
}
