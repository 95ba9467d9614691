//! Deterministic blocked reductions.
//!
//! Floating-point addition is not associative, so a work-stealing `sum` rounds differently
//! from run to run. Every reduction here goes through one engine, [`blocked_fold`]: the index
//! range is cut into blocks whose size depends only on the caller (never on the thread count
//! or a gate), each block folds serially, and the block partials combine left to right. The
//! parallel path computes the same partials on rayon and combines them in the same order, so
//! serial and parallel agree bit for bit.

use crate::declare_gate;
use crate::gate::Gate;
use ndarray::{Array1, ArrayView1, ArrayView2};
use rayon::prelude::*;

/// Elements per block of the 1-D f64 reductions (32 KiB of f64: one L1d).
pub const BLOCK: usize = 4096;

declare_gate! {
    /// f64 sum-like reductions: sum, sum of squares, Welford/Chan mean-variance, column
    /// statistics. Work = elements read.
    pub SUM_F64: reduction::sum_f64 = 262_144, "elements"
}

/// The one reduction engine: fold `0..len` in blocks of `block` indices.
///
/// `partial(range)` folds one block serially; `combine(acc, partial)` merges partials in
/// block order starting from `identity`. Forks onto rayon when `gate` allows `work`.
pub fn blocked_fold<P, F, C>(
    len: usize,
    block: usize,
    gate: &Gate,
    work: usize,
    identity: P,
    partial: F,
    combine: C,
) -> P
where
    P: Send,
    F: Fn(std::ops::Range<usize>) -> P + Sync,
    C: Fn(P, P) -> P,
{
    assert!(block > 0, "blocked_fold: block must be positive");
    let n_blocks = len.div_ceil(block);
    let range_of = |b: usize| b * block..((b + 1) * block).min(len);
    if n_blocks > 1 && gate.allows_parallel(work) {
        let partials: Vec<P> = (0..n_blocks)
            .into_par_iter()
            .with_min_len(4)
            .map(|b| partial(range_of(b)))
            .collect();
        partials.into_iter().fold(identity, &combine)
    } else {
        (0..n_blocks).fold(identity, |acc, b| combine(acc, partial(range_of(b))))
    }
}

const LANES: usize = 8;

/// Sum of `f(v)` over a slice with eight independent lanes (vectorisable), then a fixed
/// pairwise lane merge. Deterministic for a given slice.
#[inline]
fn lane_fold(s: &[f64], f: impl Fn(f64) -> f64) -> f64 {
    let mut acc = [0.0f64; LANES];
    let chunks = s.chunks_exact(LANES);
    let rem = chunks.remainder();
    for c in chunks {
        for i in 0..LANES {
            acc[i] += f(c[i]);
        }
    }
    let mut total =
        ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for &v in rem {
        total += f(v);
    }
    total
}

/// Run `body` on the block `range` of `x` as a contiguous slice, gathering a strided view into
/// a stack buffer first, so strided and contiguous inputs fold identically.
#[inline]
fn with_block<R>(
    x: &ArrayView1<f64>,
    range: std::ops::Range<usize>,
    body: impl FnOnce(&[f64]) -> R,
) -> R {
    match x.as_slice() {
        Some(s) => body(&s[range]),
        None => {
            let mut buf = [0.0f64; BLOCK];
            let n = range.len();
            for (dst, src) in buf.iter_mut().zip(x.slice(ndarray::s![range]).iter()) {
                *dst = *src;
            }
            body(&buf[..n])
        }
    }
}

/// Deterministic sum of a 1-D f64 view (strided views read in place).
pub fn sum(x: ArrayView1<f64>) -> f64 {
    blocked_fold(
        x.len(),
        BLOCK,
        &SUM_F64,
        x.len(),
        0.0,
        |r| with_block(&x, r, |s| lane_fold(s, |v| v)),
        |a, b| a + b,
    )
}

/// Deterministic sum of squares.
pub fn sq_sum(x: ArrayView1<f64>) -> f64 {
    blocked_fold(
        x.len(),
        BLOCK,
        &SUM_F64,
        x.len(),
        0.0,
        |r| with_block(&x, r, |s| lane_fold(s, |v| v * v)),
        |a, b| a + b,
    )
}

/// Running moments of a sample: count, mean and sum of squared deviations (`m2`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Moments {
    pub count: usize,
    pub mean: f64,
    pub m2: f64,
}

impl Moments {
    /// Moments of one block: two passes over data already in cache.
    fn of_slice(s: &[f64]) -> Self {
        if s.is_empty() {
            return Self::default();
        }
        let mean = lane_fold(s, |v| v) / s.len() as f64;
        let m2 = lane_fold(s, |v| (v - mean) * (v - mean));
        Self {
            count: s.len(),
            mean,
            m2,
        }
    }

    /// Chan et al.'s pairwise merge of two samples' moments.
    pub fn merge(self, other: Self) -> Self {
        if self.count == 0 {
            return other;
        }
        if other.count == 0 {
            return self;
        }
        let count = self.count + other.count;
        let (na, nb, n) = (self.count as f64, other.count as f64, count as f64);
        let delta = other.mean - self.mean;
        Self {
            count,
            mean: self.mean + delta * (nb / n),
            m2: self.m2 + other.m2 + delta * delta * (na * nb / n),
        }
    }

    /// Population variance (`ddof = 0`); NaN for an empty sample.
    pub fn variance(&self) -> f64 {
        self.variance_ddof(0)
    }

    /// Variance with `ddof` delta degrees of freedom; NaN when `count <= ddof`.
    pub fn variance_ddof(&self, ddof: usize) -> f64 {
        if self.count <= ddof {
            f64::NAN
        } else {
            self.m2 / (self.count - ddof) as f64
        }
    }
}

/// Blocked Welford/Chan moments of a 1-D view.
pub fn moments(x: ArrayView1<f64>) -> Moments {
    blocked_fold(
        x.len(),
        BLOCK,
        &SUM_F64,
        x.len(),
        Moments::default(),
        |r| with_block(&x, r, Moments::of_slice),
        Moments::merge,
    )
}

/// Mean and population variance of a 1-D view; `None` when empty.
pub fn mean_var(x: ArrayView1<f64>) -> Option<(f64, f64)> {
    let m = moments(x);
    (m.count > 0).then(|| (m.mean, m.variance()))
}

/// Per-column moments of an `n x d` matrix, blocked over rows.
///
/// Row blocks hold about [`BLOCK`] elements (`BLOCK / d` rows, at least one): a function of
/// the shape only, so the grouping, and the bits, do not depend on threads or the gate.
pub fn column_moments(x: ArrayView2<f64>) -> Vec<Moments> {
    let (n, d) = x.dim();
    if d == 0 {
        return Vec::new();
    }
    let rows_per_block = (BLOCK / d).max(1);
    let block_moments = |r: std::ops::Range<usize>| -> Vec<Moments> {
        let rows = x.slice(ndarray::s![r, ..]);
        let count = rows.nrows();
        // Row-order accumulation: the same additions whatever the memory layout.
        let mut mean = Array1::<f64>::zeros(d);
        for row in rows.outer_iter() {
            mean += &row;
        }
        mean /= count as f64;
        let mut m2 = Array1::<f64>::zeros(d);
        for row in rows.outer_iter() {
            ndarray::Zip::from(&mut m2)
                .and(&row)
                .and(&mean)
                .for_each(|acc, &v, &mu| {
                    let dv = v - mu;
                    *acc += dv * dv;
                });
        }
        mean.iter()
            .zip(m2.iter())
            .map(|(&mean, &m2)| Moments { count, mean, m2 })
            .collect()
    };
    blocked_fold(
        n,
        rows_per_block,
        &SUM_F64,
        n.saturating_mul(d),
        vec![Moments::default(); d],
        block_moments,
        |acc, part| acc.into_iter().zip(part).map(|(a, b)| a.merge(b)).collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::serial_and_parallel;
    use ndarray::Array1;

    fn data(n: usize) -> Array1<f64> {
        // Values of very different magnitudes make the rounding order visible.
        Array1::from_shape_fn(n, |i| {
            ((i as f64) * 0.7312).sin() * 10f64.powi((i % 7) as i32 - 3)
        })
    }

    #[test]
    fn serial_and_parallel_agree_bitwise_at_every_length() {
        for n in [
            0,
            1,
            7,
            8,
            9,
            BLOCK - 1,
            BLOCK,
            BLOCK + 1,
            3 * BLOCK + 5,
            100_003,
            3_000_001,
        ] {
            let x = data(n);
            let (s, p) = serial_and_parallel(&SUM_F64, || sum(x.view()));
            assert_eq!(s.to_bits(), p.to_bits(), "sum n={n}");
            let (s, p) = serial_and_parallel(&SUM_F64, || sq_sum(x.view()));
            assert_eq!(s.to_bits(), p.to_bits(), "sq_sum n={n}");
            let (s, p) = serial_and_parallel(&SUM_F64, || moments(x.view()));
            assert_eq!(s.mean.to_bits(), p.mean.to_bits(), "mean n={n}");
            assert_eq!(s.m2.to_bits(), p.m2.to_bits(), "m2 n={n}");
        }
    }

    #[test]
    fn identical_bits_at_every_thread_count() {
        let x = data(1_000_003);
        let (reference, _) = serial_and_parallel(&SUM_F64, || sum(x.view()));
        for threads in [1, 2, 3, 4, 8, 16] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let (s, p) = pool.install(|| serial_and_parallel(&SUM_F64, || sum(x.view())));
            assert_eq!(s.to_bits(), reference.to_bits(), "threads={threads}");
            assert_eq!(p.to_bits(), reference.to_bits(), "threads={threads}");
        }
    }

    #[test]
    fn strided_views_fold_like_contiguous_copies() {
        let x = data(50_001);
        let strided = x.slice(ndarray::s![..;3]);
        let copy = strided.to_owned();
        assert_eq!(sum(strided).to_bits(), sum(copy.view()).to_bits());
        assert_eq!(moments(strided), moments(copy.view()));
    }

    #[test]
    fn values_match_a_compensated_reference() {
        // Independent oracle: Neumaier-compensated summation in plain order.
        let x = data(200_000);
        let (mut s, mut c) = (0.0f64, 0.0f64);
        for &v in x.iter() {
            let t = s + v;
            c += if s.abs() >= v.abs() {
                (s - t) + v
            } else {
                (v - t) + s
            };
            s = t;
        }
        let reference = s + c;
        assert!(
            (sum(x.view()) - reference).abs() <= 1e-12 * x.iter().map(|v| v.abs()).sum::<f64>()
        );
        let m = moments(x.view());
        let mean = reference / x.len() as f64;
        let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / x.len() as f64;
        assert!((m.mean - mean).abs() < 1e-12 * mean.abs().max(1.0));
        assert!((m.variance() - var).abs() < 1e-10 * var);
        assert_eq!(sum(Array1::<f64>::zeros(0).view()), 0.0);
        assert!(mean_var(Array1::<f64>::zeros(0).view()).is_none());
    }

    #[test]
    fn column_moments_match_per_column_and_agree_bitwise() {
        let (n, d) = (20_011, 13);
        let x = ndarray::Array2::from_shape_fn((n, d), |(i, j)| {
            ((i * d + j) as f64 * 0.37).cos() * (j as f64 + 1.0)
        });
        let (s, p) = serial_and_parallel(&SUM_F64, || column_moments(x.view()));
        for j in 0..d {
            assert_eq!(s[j].mean.to_bits(), p[j].mean.to_bits());
            assert_eq!(s[j].m2.to_bits(), p[j].m2.to_bits());
            let col = x.column(j);
            let mean = col.sum() / n as f64;
            let var = col.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n as f64;
            assert!((s[j].mean - mean).abs() < 1e-12);
            assert!((s[j].variance() - var).abs() < 1e-11 * var.max(1.0));
        }
        // Fortran-ordered input gives the same bits as C-ordered.
        let f = x.t().as_standard_layout().into_owned().reversed_axes();
        let fm = column_moments(f.view());
        assert_eq!(fm, s);
    }
}
