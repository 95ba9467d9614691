//! The pooling engine shared by every pooling layer: max and average windows over 1 to 3
//! channels-last spatial axes, strides, Keras's valid/same padding; global pooling is the
//! window that covers the whole input.
//!
//! Fewer than 3 spatial axes are handled as unit leading axes, so one 3-axis loop serves all.
//! Every output element is computed on its own, its taps visited in one fixed (row-major)
//! order, so any split of the work gives the same bits. Backward gathers: each input cell
//! sums, in output order, what the output cells covering it send back, so no two tasks write
//! the same element and no atomics are needed.

use crate::declare_gate;
use crate::neural_network::layers::convolution::PaddingType;
use rayon::prelude::*;

declare_gate! {
    /// Pooling forward and backward. Work = window taps: output cells x channels x taps per
    /// window (the backward pass touches about as many).
    pub POOL_PARALLEL_MIN_OPS: pool::parallel_min_ops = 12_000, "window taps"
}

/// One spatial axis: the clipped input range of each output cell's window and the range of
/// output cells whose windows cover each input cell (both half-open).
#[derive(Debug, Clone, PartialEq, Eq)]
struct AxisPlan {
    input: usize,
    output: usize,
    windows: Vec<(usize, usize)>,
    covers: Vec<(usize, usize)>,
}

impl AxisPlan {
    fn new(input: usize, pool: usize, stride: usize, padding: PaddingType) -> Option<Self> {
        if input == 0 || pool == 0 || stride == 0 {
            return None;
        }
        let output = padding.output_len(input, pool, stride, 1)?;
        let pad = padding.pad_before(input, pool, stride, 1);
        let windows = (0..output)
            .map(|o| {
                // window [o*s - pad, o*s - pad + k) clipped to the input: padding is virtual
                let start = o * stride;
                let lo = start.saturating_sub(pad).min(input);
                let hi = start.saturating_add(pool).saturating_sub(pad).min(input);
                (lo, hi)
            })
            .collect();
        let covers = (0..input)
            .map(|i| {
                // o covers i  <=>  o*s <= i + pad < o*s + k
                // saturating: a window or padding past usize::MAX covers every input
                let p = i.saturating_add(pad);
                let lo = if p.saturating_add(1) > pool {
                    (p - pool + 1).div_ceil(stride)
                } else {
                    0
                };
                let hi = (p / stride + 1).min(output);
                (lo.min(hi), hi)
            })
            .collect();
        Some(Self {
            input,
            output,
            windows,
            covers,
        })
    }

    /// A unit axis (pads the spatial rank up to 3).
    fn unit() -> Self {
        Self {
            input: 1,
            output: 1,
            windows: vec![(0, 1)],
            covers: vec![(0, 1)],
        }
    }
}

/// Everything the kernels need about one input shape and one pooling configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolGeometry {
    batch: usize,
    channels: usize,
    /// The real spatial rank (1 to 3); `axes` holds `3 - rank` unit axes first.
    rank: usize,
    axes: [AxisPlan; 3],
    /// Taps of a full window (the work estimate's unit).
    window_taps: usize,
}

impl PoolGeometry {
    /// `input_shape` is `[batch, spatial.., channels]` with 1 to 3 spatial axes; `pool` and
    /// `strides` have one entry per spatial axis. `None` when a size is zero, the ranks
    /// disagree, or valid padding leaves no full window on some axis.
    pub fn new(
        input_shape: &[usize],
        pool: &[usize],
        strides: &[usize],
        padding: PaddingType,
    ) -> Option<Self> {
        let rank = input_shape.len().checked_sub(2)?;
        if !(1..=3).contains(&rank) || pool.len() != rank || strides.len() != rank {
            return None;
        }
        let (batch, channels) = (input_shape[0], input_shape[rank + 1]);
        if batch == 0 || channels == 0 {
            return None;
        }
        let mut axes = [AxisPlan::unit(), AxisPlan::unit(), AxisPlan::unit()];
        for d in 0..rank {
            axes[3 - rank + d] = AxisPlan::new(input_shape[1 + d], pool[d], strides[d], padding)?;
        }
        let in_cells = axes
            .iter()
            .try_fold(1usize, |n, a| n.checked_mul(a.input))?;
        if in_cells > ArgMax::MAX as usize {
            return None; // more spatial cells per sample than an arg-max can index
        }
        Some(Self {
            batch,
            channels,
            rank,
            axes,
            // a window never holds more taps than the input has cells (a pool wider than
            // its axis under same padding is clipped), so this cannot overflow
            window_taps: pool
                .iter()
                .zip(&input_shape[1..=rank])
                .map(|(&p, &n)| p.min(n))
                .product(),
        })
    }

    /// One window over the whole spatial extent (global pooling).
    pub fn global(input_shape: &[usize]) -> Option<Self> {
        let spatial = input_shape.get(1..input_shape.len().checked_sub(1)?)?;
        Self::new(input_shape, spatial, spatial, PaddingType::Valid)
    }

    fn spatial_axes(&self) -> &[AxisPlan] {
        &self.axes[3 - self.rank..]
    }

    /// `[batch, spatial.., channels]` of the input.
    pub fn input_shape(&self) -> Vec<usize> {
        let mut s = vec![self.batch];
        s.extend(self.spatial_axes().iter().map(|a| a.input));
        s.push(self.channels);
        s
    }

    /// `[batch, pooled spatial.., channels]`.
    pub fn output_shape(&self) -> Vec<usize> {
        let mut s = vec![self.batch];
        s.extend(self.spatial_axes().iter().map(|a| a.output));
        s.push(self.channels);
        s
    }

    fn in_cells(&self) -> usize {
        self.axes.iter().map(|a| a.input).product()
    }

    fn out_cells(&self) -> usize {
        self.axes.iter().map(|a| a.output).product()
    }

    /// Window taps of one pass (what the gate compares).
    pub fn work(&self) -> usize {
        self.batch
            .saturating_mul(self.out_cells())
            .saturating_mul(self.channels)
            .saturating_mul(self.window_taps)
    }

    /// Spatial cell `s` (flat, within one sample) as its three axis indices.
    #[inline]
    fn split(&self, s: usize, pick: impl Fn(&AxisPlan) -> usize) -> [usize; 3] {
        let (n1, n2) = (pick(&self.axes[1]), pick(&self.axes[2]));
        [s / (n1 * n2), (s / n2) % n1, s % n2]
    }

    /// Input cells the window of output cell `o` (axis indices) really covers.
    #[inline]
    fn window(&self, o: [usize; 3]) -> [(usize, usize); 3] {
        [
            self.axes[0].windows[o[0]],
            self.axes[1].windows[o[1]],
            self.axes[2].windows[o[2]],
        ]
    }
}

/// A max-pooling arg-max: the flat spatial index of a tap within its sample. 32 bits, the
/// width of the f32 values it travels beside, so the select loops vectorise lane for lane
/// ([`PoolGeometry::new`] refuses inputs with more spatial cells than it can index).
pub type ArgMax = u32;

/// Max pooling: the output and, per output element, the flat spatial index (within its
/// sample) of the tap that won — the first maximum in row-major window order. With
/// `track_argmax` false (inference) the arg-max comes back empty and is never computed.
pub fn max_forward(x: &[f32], g: &PoolGeometry, track_argmax: bool) -> (Vec<f32>, Vec<ArgMax>) {
    let mut out = vec![0.0f32; g.batch * g.out_cells() * g.channels];
    let mut arg = vec![0; if track_argmax { out.len() } else { 0 }];
    let window_max = |p: usize, c0: usize, out: &mut [f32], mut arg: Option<&mut [ArgMax]>| {
        let (b, o) = (p / g.out_cells(), p % g.out_cells());
        let w = g.window(g.split(o, |a| a.output));
        let mut first = true;
        for_each_cell(g, w, |s| {
            let base = (b * g.in_cells() + s) * g.channels + c0;
            let row = &x[base..base + out.len()];
            let s = s as ArgMax;
            if first {
                out.copy_from_slice(row);
                if let Some(arg) = arg.as_deref_mut() {
                    arg.fill(s);
                }
                first = false;
                return;
            }
            // Selects rather than branches, so the loops vectorise; `>` keeps the first
            // maximum (and a NaN already held is never replaced, as in the branchy form).
            match arg.as_deref_mut() {
                Some(arg) => {
                    // Blends by bit masks: baseline x86-64 (SSE2) has no blend instruction,
                    // and written as `if` selects this loop compiled to a branch per lane.
                    for ((v, a), &r) in out.iter_mut().zip(arg.iter_mut()).zip(row) {
                        let take = u32::from(r > *v).wrapping_neg();
                        *v = f32::from_bits((r.to_bits() & take) | (v.to_bits() & !take));
                        *a = (s & take) | (*a & !take);
                    }
                }
                None => {
                    for (v, &r) in out.iter_mut().zip(row) {
                        *v = if r > *v { r } else { *v };
                    }
                }
            }
        });
    };
    if track_argmax {
        drive(
            g,
            g.batch * g.out_cells(),
            &mut out,
            &mut arg,
            |p, c0, out, arg| window_max(p, c0, out, Some(arg)),
        );
    } else {
        drive_without_aux(g, g.batch * g.out_cells(), &mut out, |p, c0, out| {
            window_max(p, c0, out, None)
        });
    }
    (out, arg)
}

/// Average pooling; each window divides by the cells it really covers (Keras: under same
/// padding the padded cells count for nothing).
pub fn avg_forward(x: &[f32], g: &PoolGeometry) -> Vec<f32> {
    let mut out = vec![0.0f32; g.batch * g.out_cells() * g.channels];
    drive_without_aux(g, g.batch * g.out_cells(), &mut out, |p, c0, out| {
        let (b, o) = (p / g.out_cells(), p % g.out_cells());
        let w = g.window(g.split(o, |a| a.output));
        for_each_cell(g, w, |s| {
            let base = (b * g.in_cells() + s) * g.channels + c0;
            let n = out.len();
            for (v, &r) in out.iter_mut().zip(&x[base..base + n]) {
                *v += r;
            }
        });
        let count = covered(w) as f32;
        out.iter_mut().for_each(|v| *v /= count);
    });
    out
}

/// Max pooling's input gradient: each output element's gradient goes to its arg-max cell.
pub fn max_backward(grad_out: &[f32], g: &PoolGeometry, argmax: &[ArgMax]) -> Vec<f32> {
    let mut grad = vec![0.0f32; g.batch * g.in_cells() * g.channels];
    drive_without_aux(g, g.batch * g.in_cells(), &mut grad, |q, c0, gin| {
        let (b, s) = (q / g.in_cells(), q % g.in_cells());
        let cell = s as ArgMax;
        for_each_cover(g, g.split(s, |a| a.input), |o| {
            let base = (b * g.out_cells() + o) * g.channels + c0;
            let span = base..base + gin.len();
            // a select, so the loop vectorises (adding 0.0 to a cell leaves its value)
            for ((v, &d), &a) in gin
                .iter_mut()
                .zip(&grad_out[span.clone()])
                .zip(&argmax[span])
            {
                *v += if a == cell { d } else { 0.0 };
            }
        });
    });
    grad
}

/// Average pooling's input gradient: each covered cell receives `grad / count` of every
/// window it lies in.
pub fn avg_backward(grad_out: &[f32], g: &PoolGeometry) -> Vec<f32> {
    let mut grad = vec![0.0f32; g.batch * g.in_cells() * g.channels];
    drive_without_aux(g, g.batch * g.in_cells(), &mut grad, |q, c0, gin| {
        let (b, s) = (q / g.in_cells(), q % g.in_cells());
        for_each_cover(g, g.split(s, |a| a.input), |o| {
            let count = covered(g.window(g.split(o, |a| a.output))) as f32;
            let base = (b * g.out_cells() + o) * g.channels + c0;
            let n = gin.len();
            for (v, &d) in gin.iter_mut().zip(&grad_out[base..base + n]) {
                *v += d / count;
            }
        });
    });
    grad
}

fn covered(w: [(usize, usize); 3]) -> usize {
    w.iter().map(|&(lo, hi)| hi - lo).product()
}

/// Visits the flat spatial index of every cell of window `w`, row-major.
#[inline]
fn for_each_cell(g: &PoolGeometry, w: [(usize, usize); 3], mut f: impl FnMut(usize)) {
    let (n1, n2) = (g.axes[1].input, g.axes[2].input);
    for i0 in w[0].0..w[0].1 {
        for i1 in w[1].0..w[1].1 {
            for i2 in w[2].0..w[2].1 {
                f((i0 * n1 + i1) * n2 + i2);
            }
        }
    }
}

/// Visits the flat spatial index of every output cell whose window covers input cell `i`,
/// row-major (the fixed summation order of the backward passes).
#[inline]
fn for_each_cover(g: &PoolGeometry, i: [usize; 3], mut f: impl FnMut(usize)) {
    let c = [
        g.axes[0].covers[i[0]],
        g.axes[1].covers[i[1]],
        g.axes[2].covers[i[2]],
    ];
    let (n1, n2) = (g.axes[1].output, g.axes[2].output);
    for o0 in c[0].0..c[0].1 {
        for o1 in c[1].0..c[1].1 {
            for o2 in c[2].0..c[2].1 {
                f((o0 * n1 + o1) * n2 + o2);
            }
        }
    }
}

/// [`drive`] for kernels that fill `out` alone (no arg-max beside it).
fn drive_without_aux(
    g: &PoolGeometry,
    cells: usize,
    out: &mut [f32],
    kernel: impl Fn(usize, usize, &mut [f32]) + Sync,
) {
    let mut none = vec![(); out.len()];
    drive(g, cells, out, &mut none, |p, c0, o, _| kernel(p, c0, o));
}

/// Runs `kernel(cell, first_channel, out_block, aux_block)` over `cells` blocks of
/// `channels` elements of `out` (and of `aux`, the arg-max or a zero-sized stand-in).
/// Serial: whole cells in order. Parallel: cells spread over rayon's pool and, when there are
/// too few cells to go round (global pooling, batch 1), channel slices of a cell too. Each
/// element is computed wholly by one call, the same way on either path.
fn drive<A: Send>(
    g: &PoolGeometry,
    cells: usize,
    out: &mut [f32],
    aux: &mut [A],
    kernel: impl Fn(usize, usize, &mut [f32], &mut [A]) + Sync,
) {
    let c = g.channels;
    debug_assert_eq!(out.len(), cells * c);
    if !POOL_PARALLEL_MIN_OPS.allows_parallel(g.work()) {
        for (p, (o, a)) in out.chunks_mut(c).zip(aux.chunks_mut(c)).enumerate() {
            kernel(p, 0, o, a);
        }
        return;
    }
    // Task sizing: at least ~4 tasks per worker, each task at least ~2048 taps.
    let tasks = 4 * rayon::current_num_threads();
    let taps_per_cell = (c * g.window_taps).max(1);
    let min_cells = 2048usize.div_ceil(taps_per_cell).max(1);
    let block = if cells >= tasks {
        c
    } else {
        c.div_ceil(tasks.div_ceil(cells)).max(64).min(c)
    };
    out.par_chunks_mut(c)
        .zip(aux.par_chunks_mut(c))
        .enumerate()
        .with_min_len(if block < c { 1 } else { min_cells })
        .for_each(|(p, (o, a))| {
            if block < c {
                o.par_chunks_mut(block)
                    .zip(a.par_chunks_mut(block))
                    .enumerate()
                    .for_each(|(j, (o, a))| kernel(p, j * block, o, a));
            } else {
                kernel(p, 0, o, a);
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::serial_and_parallel;
    use PaddingType::{Same, Valid};

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    /// Deterministic pseudo-random values in [-50, 50).
    fn data(n: usize, seed: u32) -> Vec<f32> {
        (0..n)
            .map(|i| {
                let h = (i as u32 ^ seed).wrapping_mul(2_654_435_761) >> 8;
                (h % 100_000) as f32 * 1e-3 - 50.0
            })
            .collect()
    }

    #[test]
    fn axis_plan_windows_and_covers_agree() {
        for padding in [Valid, Same] {
            for n in 1..9 {
                for k in 1..5 {
                    for s in 1..4 {
                        let Some(a) = AxisPlan::new(n, k, s, padding) else {
                            assert!(padding == Valid && k > n);
                            continue;
                        };
                        // i in window(o) <=> o in covers(i)
                        for i in 0..n {
                            for o in 0..a.output {
                                let (lo, hi) = a.windows[o];
                                let (clo, chi) = a.covers[i];
                                assert_eq!(
                                    (lo..hi).contains(&i),
                                    (clo..chi).contains(&o),
                                    "{padding:?} n={n} k={k} s={s} i={i} o={o}"
                                );
                            }
                        }
                        assert!(a.windows.iter().all(|&(lo, hi)| lo < hi));
                    }
                }
            }
        }
    }

    /// A pool far wider than its axis under same padding is one clipped window per axis: the
    /// geometry is built without overflow and its work counts the taps that exist.
    #[test]
    fn a_pool_wider_than_the_input_is_clipped_without_overflow() {
        let huge = 1usize << 40;
        let g = PoolGeometry::new(&[1, 8, 8, 2], &[huge, huge], &[huge, huge], Same).unwrap();
        assert_eq!(g.output_shape(), vec![1, 1, 1, 2]);
        assert_eq!(g.work(), 2 * 64);
    }

    #[test]
    fn same_padding_trailing_window_is_clipped() {
        // n=3, k=2, s=2, same: total pad 1, all after -> windows [0,2), [2,3)
        let a = AxisPlan::new(3, 2, 2, Same).unwrap();
        assert_eq!(a.windows, vec![(0, 2), (2, 3)]);
        // n=5, k=4, s=1, same: pad 1 before, 2 after
        let a = AxisPlan::new(5, 4, 1, Same).unwrap();
        assert_eq!(a.windows, vec![(0, 3), (0, 4), (1, 5), (2, 5), (3, 5)]);
    }

    /// Forward and backward, serial vs parallel, bit for bit, on shapes that take both the
    /// cell split and the channel split, with overlapping and clipped windows.
    #[test]
    fn gate_serial_and_parallel_agree_bitwise() {
        type Case<'a> = (&'a [usize], &'a [usize], &'a [usize], PaddingType);
        let cases: [Case; 6] = [
            (&[2, 17, 5], &[3], &[2], Same),
            (&[1, 9, 11, 70], &[3, 2], &[2, 1], Same),
            (&[3, 8, 8, 4], &[2, 2], &[2, 2], Valid),
            (&[1, 5, 6, 7, 3], &[2, 3, 2], &[1, 2, 2], Same),
            (&[2, 4, 4, 4, 2], &[2, 2, 2], &[2, 2, 2], Valid),
            (&[1, 6, 6, 300], &[6, 6], &[6, 6], Valid), // global at batch 1: channel split
        ];
        for (shape, pool, strides, padding) in cases {
            let g = PoolGeometry::new(shape, pool, strides, padding).unwrap();
            let x = data(shape.iter().product(), 7);
            let gout = data(g.output_shape().iter().product(), 11);
            let run = || {
                let (m, arg) = max_forward(&x, &g, true);
                let (inference, none) = max_forward(&x, &g, false);
                assert!(none.is_empty() && bits(&inference) == bits(&m));
                let mg = max_backward(&gout, &g, &arg);
                let a = avg_forward(&x, &g);
                let ag = avg_backward(&gout, &g);
                (bits(&m), arg, bits(&mg), bits(&a), bits(&ag))
            };
            let (serial, parallel) = serial_and_parallel(&POOL_PARALLEL_MIN_OPS, run);
            assert!(
                serial == parallel,
                "{shape:?} {pool:?} {strides:?} {padding:?}"
            );
        }
    }

    /// Inference (no arg-max) and training give the same values, NaN included: a NaN in the
    /// first tap is kept, a later one never wins a comparison.
    #[test]
    fn max_with_and_without_argmax_agree_on_nan() {
        let g = PoolGeometry::new(&[1, 4, 2], &[2], &[2], Valid).unwrap();
        let x = [f32::NAN, 1.0, 2.0, f32::NAN, 0.5, 3.0, -1.0, -2.0];
        let (trained, arg) = max_forward(&x, &g, true);
        let (inferred, _) = max_forward(&x, &g, false);
        assert_eq!(bits(&trained), bits(&inferred));
        assert!(trained[0].is_nan());
        assert_eq!(&trained[1..], &[1.0, 0.5, 3.0]);
        assert_eq!(arg, [0, 0, 2, 2]);
    }

    /// Direct reference: enumerate the padded window, skip the virtual cells.
    fn reference(
        x: &[f32],
        shape: [usize; 3],
        k: [usize; 2],
        s: [usize; 2],
        padding: PaddingType,
    ) -> (Vec<f32>, Vec<f32>) {
        let [h, w, c] = shape;
        let oh = padding.output_len(h, k[0], s[0], 1).unwrap();
        let ow = padding.output_len(w, k[1], s[1], 1).unwrap();
        let ph = padding.pad_before(h, k[0], s[0], 1) as isize;
        let pw = padding.pad_before(w, k[1], s[1], 1) as isize;
        let (mut mx, mut av) = (vec![], vec![]);
        for i in 0..oh {
            for j in 0..ow {
                for ch in 0..c {
                    let (mut m, mut sum, mut n) = (f32::NEG_INFINITY, 0.0f32, 0);
                    for di in 0..k[0] {
                        for dj in 0..k[1] {
                            let r = (i * s[0] + di) as isize - ph;
                            let q = (j * s[1] + dj) as isize - pw;
                            if r < 0 || q < 0 || r >= h as isize || q >= w as isize {
                                continue;
                            }
                            let v = x[(r as usize * w + q as usize) * c + ch];
                            m = m.max(v);
                            sum += v;
                            n += 1;
                        }
                    }
                    mx.push(m);
                    av.push(sum / n as f32);
                }
            }
        }
        (mx, av)
    }

    #[test]
    fn forward_matches_direct_reference() {
        for padding in [Valid, Same] {
            for (k, s) in [
                ([2, 2], [2, 2]),
                ([3, 2], [1, 2]),
                ([3, 3], [2, 1]),
                ([1, 4], [3, 3]),
            ] {
                let shape = [7, 6, 3];
                let x = data(7 * 6 * 3, 3);
                let g = PoolGeometry::new(&[1, 7, 6, 3], &k, &s, padding).unwrap();
                let (m, _) = max_forward(&x, &g, true);
                let a = avg_forward(&x, &g);
                let (rm, ra) = reference(&x, shape, k, s, padding);
                assert_eq!(m, rm, "{padding:?} {k:?} {s:?}");
                // same taps summed in the same order
                assert_eq!(a, ra, "{padding:?} {k:?} {s:?}");
            }
        }
    }

    #[test]
    fn max_ties_go_to_the_first_tap() {
        let g = PoolGeometry::new(&[1, 4, 1], &[2], &[1], Valid).unwrap();
        let (out, arg) = max_forward(&[1.0, 1.0, 0.5, 2.0], &g, true);
        assert_eq!(out, vec![1.0, 1.0, 2.0]);
        assert_eq!(arg, vec![0, 1, 3]);
        let grad = max_backward(&[1.0, 10.0, 100.0], &g, &arg);
        assert_eq!(grad, vec![1.0, 10.0, 0.0, 100.0]);
    }

    #[test]
    fn gradients_match_finite_differences() {
        // loss = sum(w * pool(x)); x holds distinct multiples of 0.1 (37 is invertible mod
        // 101 and every case has fewer than 101 cells), so a step of 0.01 never moves an
        // arg-max
        for (shape, pool, strides, padding) in [
            (vec![2, 7, 3], vec![3], vec![2], Same),
            (vec![1, 5, 4, 2], vec![2, 3], vec![2, 1], Same),
            (vec![1, 3, 4, 3, 2], vec![2, 2, 2], vec![1, 2, 1], Valid),
        ] {
            let g = PoolGeometry::new(&shape, &pool, &strides, padding).unwrap();
            let x: Vec<f32> = (0..shape.iter().product::<usize>())
                .map(|i| ((i * 37) % 101) as f32 * 0.1)
                .collect();
            let wts = data(g.output_shape().iter().product(), 5);
            let forward = |x: &[f32], max: bool| {
                if max {
                    max_forward(x, &g, true).0
                } else {
                    avg_forward(x, &g)
                }
            };
            let loss = |x: &[f32], max: bool| -> f64 {
                let out = forward(x, max);
                out.iter()
                    .zip(&wts)
                    .map(|(&o, &w)| o as f64 * w as f64)
                    .sum()
            };
            let (_, arg) = max_forward(&x, &g, true);
            for max in [true, false] {
                let grad = if max {
                    max_backward(&wts, &g, &arg)
                } else {
                    avg_backward(&wts, &g)
                };
                let eps = 0.01f32;
                // f32 outputs (and the f32 perturbed inputs) carry ~2 ulp each, amplified by
                // the central difference's 1 / (2 eps)
                let mass: f64 = forward(&x, max)
                    .iter()
                    .zip(&wts)
                    .map(|(&o, &w)| (o as f64 * w as f64).abs())
                    .sum();
                let tol = 4.0 * mass * f32::EPSILON as f64 / (2.0 * eps as f64);
                for (i, &gi) in grad.iter().enumerate() {
                    let mut xp = x.clone();
                    xp[i] += eps;
                    let mut xm = x.clone();
                    xm[i] -= eps;
                    let fd = (loss(&xp, max) - loss(&xm, max)) / (2.0 * eps as f64);
                    assert!(
                        (fd - gi as f64).abs() <= tol,
                        "{shape:?} max={max} i={i}: fd {fd} vs {gi}"
                    );
                }
            }
        }
    }
}
