//! The one normalisation engine behind BatchNormalization, LayerNormalization,
//! GroupNormalization and InstanceNormalization, and the gates of its passes.
//!
//! Every layer views its (possibly permuted) input as `[n, s, c]`: `n` samples, `s` positions
//! per sample, `c` channels per position, the channels split into `g` equal contiguous groups.
//! One statistic is taken per (sample, group) over its `s * c / g` values, and the affine
//! parameters are per channel:
//!
//! | layer | n | s | c | g |
//! |---|---|---|---|---|
//! | BatchNormalization `[.., C]` | 1 | rows `M` | `C` | `C` |
//! | LayerNormalization rows `[R, L]` | `R` | 1 | `L` | 1 |
//! | GroupNormalization `[N, S.., C]` | `N` | `prod(S)` | `C` | groups |
//! | InstanceNormalization `[N, S.., C]` | `N` | `prod(S)` | `C` | `C` |
//!
//! Statistics go through the crate's one blocked fold ([`blocked_fold`]) with Chan's merge of
//! [`Moments`], in f64: each sample folds its positions in blocks whose size depends only on
//! `c`, and the partials merge left to right, so the bits depend on neither the thread count
//! nor a gate. Elementwise passes compute every element from its own inputs only.

use crate::declare_gate;
use crate::gate::Gate;
use crate::math::reduction::{blocked_fold, Moments, BLOCK};
use rayon::prelude::*;

declare_gate! {
    /// BatchNormalization's elementwise passes: normalise + affine (forward) and the input
    /// gradient (backward). Work = elements.
    pub BATCH_NORM: norm::batch_norm = 262_144, "elements"
}
declare_gate! {
    /// BatchNormalization's per-channel batch mean and variance (a column fold over rows).
    /// Work = elements.
    pub BN_COL_STATS: norm::bn_col_stats = 262_144, "elements"
}
declare_gate! {
    /// BatchNormalization's per-channel gradient sums (gamma and beta gradients: a column fold
    /// over every batch and spatial position, the channel "planes"). Work = elements.
    pub BN_PLANE_STATS: norm::bn_plane_stats = 262_144, "elements"
}
declare_gate! {
    /// LayerNormalization's row passes: per-row statistics, normalise + affine, the per-row
    /// gradient sums and the input gradient (rows fork). Work = elements.
    pub LN_ROW: norm::ln_row = 262_144, "elements"
}
declare_gate! {
    /// LayerNormalization's gamma and beta gradients (a column fold over rows). Work = elements.
    pub LN_COL_STATS: norm::ln_col_stats = 262_144, "elements"
}
declare_gate! {
    /// Group/InstanceNormalization's per-(sample, group) passes: statistics, normalise +
    /// affine, gradient sums, input gradient. Work = elements.
    pub GN_ROW: norm::gn_row = 262_144, "elements"
}
declare_gate! {
    /// Group/InstanceNormalization's gamma and beta gradients (a per-channel fold over every
    /// sample and position). Work = elements.
    pub GN_PARAM_GRAD: norm::gn_param_grad = 262_144, "elements"
}

/// Elements per task of the elementwise passes (whole positions, at least one).
const APPLY_CHUNK: usize = 16_384;

/// The `[n, s, c]` view with `g` channel groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Layout {
    pub n: usize,
    pub s: usize,
    pub c: usize,
    pub g: usize,
}

impl Layout {
    fn len(&self) -> usize {
        self.n * self.s * self.c
    }

    fn group_width(&self) -> usize {
        self.c / self.g
    }

    /// Values behind one statistic.
    fn group_count(&self) -> usize {
        self.s * self.group_width()
    }

    /// Positions per fold block: about [`BLOCK`] values, a function of the shape only.
    fn block_positions(&self) -> usize {
        (BLOCK / self.c.max(1)).max(1)
    }
}

/// Which gate each pass reads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Gates {
    /// Per-(sample, group) statistics and gradient sums.
    pub stats: &'static Gate,
    /// Elementwise passes.
    pub apply: &'static Gate,
    /// Per-channel gamma/beta gradient sums.
    pub param: &'static Gate,
}

pub(crate) const BN_GATES: Gates = Gates {
    stats: &BN_COL_STATS,
    apply: &BATCH_NORM,
    param: &BN_PLANE_STATS,
};
pub(crate) const LN_GATES: Gates = Gates {
    stats: &LN_ROW,
    apply: &LN_ROW,
    param: &LN_COL_STATS,
};
pub(crate) const GN_GATES: Gates = Gates {
    stats: &GN_ROW,
    apply: &GN_ROW,
    param: &GN_PARAM_GRAD,
};

/// `f(sample, inner_work)` for every sample, samples forked when the gate allows. A lone
/// sample hands the whole work to its inner fold instead (BatchNormalization's one "sample").
fn per_sample<T: Send>(
    n: usize,
    gate: &Gate,
    work: usize,
    f: impl Fn(usize, usize) -> T + Sync,
) -> Vec<T> {
    if n > 1 && gate.allows_parallel(work) {
        (0..n).into_par_iter().map(|i| f(i, 0)).collect()
    } else {
        let inner = if n == 1 { work } else { 0 };
        (0..n).map(|i| f(i, inner)).collect()
    }
}

/// Elementwise sums of two equally long vectors (merging fold partials in order).
fn add_vecs<T: Copy + std::ops::Add<Output = T>>(mut a: Vec<T>, b: Vec<T>) -> Vec<T> {
    a.iter_mut().zip(b).for_each(|(x, y)| *x = *x + y);
    a
}

/// Moments of each group over a block of whole positions (two passes over cached data).
fn block_moments(xs: &[f32], c: usize, g: usize) -> Vec<Moments> {
    let cg = c / g;
    let positions = xs.len() / c;
    let mut mean = vec![0.0f64; g];
    for row in xs.chunks_exact(c) {
        for (m, grp) in mean.iter_mut().zip(row.chunks_exact(cg)) {
            *m += grp.iter().map(|&v| v as f64).sum::<f64>();
        }
    }
    let count = positions * cg;
    mean.iter_mut().for_each(|m| *m /= count as f64);
    let mut m2 = vec![0.0f64; g];
    for row in xs.chunks_exact(c) {
        for ((acc, grp), &mu) in m2.iter_mut().zip(row.chunks_exact(cg)).zip(&mean) {
            *acc += grp
                .iter()
                .map(|&v| {
                    let d = v as f64 - mu;
                    d * d
                })
                .sum::<f64>();
        }
    }
    mean.into_iter()
        .zip(m2)
        .map(|(mean, m2)| Moments { count, mean, m2 })
        .collect()
}

/// Moments of one row (one group, one fold block): the same operations as
/// [`block_moments`] on it, so the same bits, without its buffers.
fn row_moments(row: &[f32]) -> Moments {
    let count = row.len();
    let mean = row.iter().map(|&v| v as f64).sum::<f64>() / count as f64;
    let m2 = row
        .iter()
        .map(|&v| {
            let d = v as f64 - mean;
            d * d
        })
        .sum::<f64>();
    Moments { count, mean, m2 }
}

/// Per-(sample, group) moments, `n * g` of them in sample-major order.
pub(crate) fn group_moments(x: &[f32], lay: Layout, gate: &Gate) -> Vec<Moments> {
    if lay.s == 1 && lay.g == 1 {
        // LayerNormalization's rows: one block per row, folded without per-row buffers.
        return per_sample(lay.n, gate, lay.len(), |i, _| {
            row_moments(&x[i * lay.c..(i + 1) * lay.c])
        });
    }
    let per = lay.s * lay.c;
    let block = lay.block_positions();
    per_sample(lay.n, gate, lay.len(), |i, work| {
        let xs = &x[i * per..(i + 1) * per];
        blocked_fold(
            lay.s,
            block,
            gate,
            work,
            vec![Moments::default(); lay.g],
            |r| block_moments(&xs[r.start * lay.c..r.end * lay.c], lay.c, lay.g),
            |acc, part| acc.into_iter().zip(part).map(|(a, b)| a.merge(b)).collect(),
        )
    })
    .into_iter()
    .flatten()
    .collect()
}

/// Per-group mean and `1 / sqrt(var + eps)` (population variance), as f32.
pub(crate) fn mean_inv_std(moments: &[Moments], epsilon: f32) -> (Vec<f32>, Vec<f32>) {
    moments
        .iter()
        .map(|m| (m.mean as f32, inv_std(m.variance(), epsilon)))
        .unzip()
}

/// `1 / sqrt(var + eps)`, computed in f64.
pub(crate) fn inv_std(var: f64, epsilon: f32) -> f32 {
    (1.0 / (var + epsilon as f64).sqrt()) as f32
}

/// Runs `f(first_position, chunk_of_out...)` over chunks of whole positions of one or two
/// equally shaped output buffers, forking when the gate allows. Each element is computed from
/// its own inputs only, so the chunking never shows in the result.
fn apply_chunks(
    out: &mut [f32],
    second: Option<&mut [f32]>,
    c: usize,
    gate: &Gate,
    f: impl Fn(usize, &mut [f32], Option<&mut [f32]>) + Sync,
) {
    let chunk = (APPLY_CHUNK / c.max(1)).max(1) * c.max(1);
    let positions_per_chunk = chunk / c.max(1);
    let parallel = gate.allows_parallel(out.len());
    match second {
        Some(second) if parallel => out
            .par_chunks_mut(chunk)
            .zip(second.par_chunks_mut(chunk))
            .enumerate()
            .for_each(|(k, (a, b))| f(k * positions_per_chunk, a, Some(b))),
        Some(second) => out
            .chunks_mut(chunk)
            .zip(second.chunks_mut(chunk))
            .enumerate()
            .for_each(|(k, (a, b))| f(k * positions_per_chunk, a, Some(b))),
        None if parallel => out
            .par_chunks_mut(chunk)
            .enumerate()
            .for_each(|(k, a)| f(k * positions_per_chunk, a, None)),
        None => out
            .chunks_mut(chunk)
            .enumerate()
            .for_each(|(k, a)| f(k * positions_per_chunk, a, None)),
    }
}

/// Per-group statistics a pass reads (`mean`, `1/std`), with the per-channel affine.
pub(crate) struct Affine<'a> {
    pub mean: &'a [f32],
    pub inv: &'a [f32],
    pub gamma: &'a [f32],
    pub beta: &'a [f32],
}

/// `y = (x - mean) * inv * gamma + beta`; also writes `x_hat = (x - mean) * inv` when asked.
pub(crate) fn normalize(
    x: &[f32],
    lay: Layout,
    p: &Affine<'_>,
    gate: &Gate,
    x_hat: Option<&mut [f32]>,
) -> Vec<f32> {
    let mut y = vec![0.0f32; x.len()];
    let (c, cg) = (lay.c, lay.group_width());
    apply_chunks(&mut y, x_hat, c, gate, |q0, ys, mut xh| {
        for (k, yrow) in ys.chunks_exact_mut(c).enumerate() {
            let q = q0 + k;
            let base = (q / lay.s) * lay.g;
            let xrow = &x[q * c..(q + 1) * c];
            for ch in 0..c {
                let gi = base + ch / cg;
                let h = (xrow[ch] - p.mean[gi]) * p.inv[gi];
                yrow[ch] = h * p.gamma[ch] + p.beta[ch];
                if let Some(xh) = xh.as_deref_mut() {
                    xh[k * c + ch] = h;
                }
            }
        }
    });
    y
}

/// Per-channel `(sum dy, sum dy * x_hat)` over every sample and position: the beta and gamma
/// gradients. A column fold over `rows = n * s` rows of `c`.
pub(crate) fn channel_sums(
    dy: &[f32],
    x_hat: &[f32],
    c: usize,
    gate: &Gate,
) -> (Vec<f64>, Vec<f64>) {
    let rows = dy.len() / c.max(1);
    let block = (BLOCK / c.max(1)).max(1);
    blocked_fold(
        rows,
        block,
        gate,
        dy.len(),
        (vec![0.0f64; c], vec![0.0f64; c]),
        |r| {
            let (mut sd, mut sdx) = (vec![0.0f64; c], vec![0.0f64; c]);
            let span = r.start * c..r.end * c;
            for (drow, hrow) in dy[span.clone()]
                .chunks_exact(c)
                .zip(x_hat[span].chunks_exact(c))
            {
                for ch in 0..c {
                    sd[ch] += drow[ch] as f64;
                    sdx[ch] += (drow[ch] * hrow[ch]) as f64;
                }
            }
            (sd, sdx)
        },
        |(a, b), (pa, pb)| (add_vecs(a, pa), add_vecs(b, pb)),
    )
}

/// Per-(sample, group) `(sum gamma*dy, sum gamma*dy*x_hat)`, the two projections of the
/// input gradient.
pub(crate) fn group_sums(
    dy: &[f32],
    x_hat: &[f32],
    gamma: &[f32],
    lay: Layout,
    gate: &Gate,
) -> Vec<(f64, f64)> {
    let per = lay.s * lay.c;
    let (c, g, cg) = (lay.c, lay.g, lay.group_width());
    if lay.s == 1 && g == 1 {
        // LayerNormalization's rows: the same sums in the same order, without buffers.
        return per_sample(lay.n, gate, lay.len(), |i, _| {
            let span = i * c..(i + 1) * c;
            dy[span.clone()].iter().zip(&x_hat[span]).zip(gamma).fold(
                (0.0f64, 0.0f64),
                |(a, b), ((&d, &h), &gm)| {
                    let gd = (gm * d) as f64;
                    (a + gd, b + gd * h as f64)
                },
            )
        });
    }
    per_sample(lay.n, gate, lay.len(), |i, work| {
        let (ds, hs) = (&dy[i * per..(i + 1) * per], &x_hat[i * per..(i + 1) * per]);
        blocked_fold(
            lay.s,
            lay.block_positions(),
            gate,
            work,
            vec![(0.0f64, 0.0f64); g],
            |r| {
                let mut acc = vec![(0.0f64, 0.0f64); g];
                let span = r.start * c..r.end * c;
                for (drow, hrow) in ds[span.clone()]
                    .chunks_exact(c)
                    .zip(hs[span].chunks_exact(c))
                {
                    for ch in 0..c {
                        let gd = (gamma[ch] * drow[ch]) as f64;
                        let a = &mut acc[ch / cg];
                        a.0 += gd;
                        a.1 += gd * hrow[ch] as f64;
                    }
                }
                acc
            },
            |acc, part| {
                acc.into_iter()
                    .zip(part)
                    .map(|(a, b)| (a.0 + b.0, a.1 + b.1))
                    .collect()
            },
        )
    })
    .into_iter()
    .flatten()
    .collect()
}

/// Input gradient of a normalisation: per group,
/// `dx = inv * (gamma*dy - mean(gamma*dy) - x_hat * mean(gamma*dy*x_hat))`.
pub(crate) fn input_grad(
    dy: &[f32],
    x_hat: &[f32],
    gamma: &[f32],
    inv: &[f32],
    sums: &[(f64, f64)],
    lay: Layout,
    gate: &Gate,
) -> Vec<f32> {
    let m = lay.group_count() as f64;
    let (mean_a, mean_b): (Vec<f32>, Vec<f32>) = sums
        .iter()
        .map(|&(a, b)| ((a / m) as f32, (b / m) as f32))
        .unzip();
    let mut dx = vec![0.0f32; dy.len()];
    let (c, cg) = (lay.c, lay.group_width());
    apply_chunks(&mut dx, None, c, gate, |q0, out, _| {
        for (k, orow) in out.chunks_exact_mut(c).enumerate() {
            let q = q0 + k;
            let base = (q / lay.s) * lay.g;
            let (drow, hrow) = (&dy[q * c..(q + 1) * c], &x_hat[q * c..(q + 1) * c]);
            for ch in 0..c {
                let gi = base + ch / cg;
                orow[ch] = inv[gi] * (gamma[ch] * drow[ch] - mean_a[gi] - hrow[ch] * mean_b[gi]);
            }
        }
    });
    dx
}

/// What a training forward keeps for the backward pass.
#[derive(Debug, Clone)]
pub(crate) struct Saved {
    pub lay: Layout,
    pub x_hat: Vec<f32>,
    pub inv: Vec<f32>,
}

/// Training-mode statistics-from-data forward: the output, what backward needs, and the
/// per-group moments (BatchNormalization's running statistics follow them).
pub(crate) fn forward_train(
    x: &[f32],
    lay: Layout,
    gamma: &[f32],
    beta: &[f32],
    epsilon: f32,
    gates: Gates,
) -> (Vec<f32>, Saved, Vec<Moments>) {
    let moments = group_moments(x, lay, gates.stats);
    let (mean, inv) = mean_inv_std(&moments, epsilon);
    let mut x_hat = vec![0.0f32; x.len()];
    let p = Affine {
        mean: &mean,
        inv: &inv,
        gamma,
        beta,
    };
    let y = normalize(x, lay, &p, gates.apply, Some(&mut x_hat));
    (y, Saved { lay, x_hat, inv }, moments)
}

/// Statistics-from-data forward that keeps nothing (inference).
pub(crate) fn forward_infer(
    x: &[f32],
    lay: Layout,
    gamma: &[f32],
    beta: &[f32],
    epsilon: f32,
    gates: Gates,
) -> Vec<f32> {
    let (mean, inv) = mean_inv_std(&group_moments(x, lay, gates.stats), epsilon);
    let p = Affine {
        mean: &mean,
        inv: &inv,
        gamma,
        beta,
    };
    normalize(x, lay, &p, gates.apply, None)
}

/// Backward through a training forward: returns `(dx, dgamma, dbeta)`.
pub(crate) fn backward(
    dy: &[f32],
    saved: &Saved,
    gamma: &[f32],
    gates: Gates,
) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let lay = saved.lay;
    let (sum_dy, sum_dyx) = channel_sums(dy, &saved.x_hat, lay.c, gates.param);
    // One sample with one channel per group (BatchNormalization): the group sums are the
    // parameter sums scaled by gamma, so a second pass over the data is not needed.
    let sums: Vec<(f64, f64)> = if lay.n == 1 && lay.g == lay.c {
        gamma
            .iter()
            .zip(sum_dy.iter().zip(&sum_dyx))
            .map(|(&gm, (&a, &b))| (gm as f64 * a, gm as f64 * b))
            .collect()
    } else {
        group_sums(dy, &saved.x_hat, gamma, lay, gates.stats)
    };
    let dx = input_grad(dy, &saved.x_hat, gamma, &saved.inv, &sums, lay, gates.apply);
    let to_f32 = |v: Vec<f64>| v.into_iter().map(|s| s as f32).collect::<Vec<f32>>();
    (dx, to_f32(sum_dyx), to_f32(sum_dy))
}
