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
use ndarray::{ArrayView1, ArrayView2};
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
    fold_blocks(
        len,
        block,
        gate.allows_parallel(work),
        identity,
        partial,
        combine,
    )
}

/// [`blocked_fold`] whose blocks also fill their own chunk of `out` (item `i` belongs to the
/// block holding index `i`): `partial(range, chunk)` folds one block and writes its chunk.
/// The partials combine in block order on either path, as in [`blocked_fold`].
pub fn blocked_fold_into<T, P, F, C>(
    out: &mut [T],
    block: usize,
    gate: &Gate,
    work: usize,
    identity: P,
    partial: F,
    combine: C,
) -> P
where
    T: Send,
    P: Send,
    F: Fn(std::ops::Range<usize>, &mut [T]) -> P + Sync,
    C: Fn(P, P) -> P,
{
    fold_chunks(
        out,
        block,
        gate.allows_parallel(work),
        identity,
        partial,
        combine,
    )
}

/// [`blocked_fold`] with the serial/parallel choice made by the caller: the index range
/// stands in as a slice of `()` (no allocation), so both folds run through [`fold_chunks`].
fn fold_blocks<P, F, C>(
    len: usize,
    block: usize,
    parallel: bool,
    identity: P,
    partial: F,
    combine: C,
) -> P
where
    P: Send,
    F: Fn(std::ops::Range<usize>) -> P + Sync,
    C: Fn(P, P) -> P,
{
    let mut indices = vec![(); len];
    fold_chunks(
        &mut indices,
        block,
        parallel,
        identity,
        |range, _| partial(range),
        combine,
    )
}

/// The engine under every blocked fold: `out` cut into chunks of `block`, each folded by
/// `partial` (on rayon when `parallel`), the partials combined in chunk order.
fn fold_chunks<T, P, F, C>(
    out: &mut [T],
    block: usize,
    parallel: bool,
    identity: P,
    partial: F,
    combine: C,
) -> P
where
    T: Send,
    P: Send,
    F: Fn(std::ops::Range<usize>, &mut [T]) -> P + Sync,
    C: Fn(P, P) -> P,
{
    assert!(block > 0, "blocked_fold: block must be positive");
    let len = out.len();
    let range_of = |b: usize| b * block..((b + 1) * block).min(len);
    if len > block && parallel {
        let partials: Vec<P> = out
            .par_chunks_mut(block)
            .with_min_len(4)
            .enumerate()
            .map(|(b, chunk)| partial(range_of(b), chunk))
            .collect();
        partials.into_iter().fold(identity, &combine)
    } else {
        out.chunks_mut(block)
            .enumerate()
            .fold(identity, |acc, (b, chunk)| {
                combine(acc, partial(range_of(b), chunk))
            })
    }
}

/// Block length of [`det_reduce`] and [`det_reduce_range`] (the original crate's public
/// constant): block boundaries never depend on the thread count.
pub const DET_REDUCE_BLOCK: usize = 16_384;

/// Deterministic reduction of a slice: `fold_block` folds each block of
/// [`DET_REDUCE_BLOCK`] elements, `merge` combines the block results left to right from
/// `identity`. `parallel` only chooses whether the blocks fold on rayon; the result is the
/// same bits either way.
pub fn det_reduce<T, A, F, M>(
    slice: &[T],
    parallel: bool,
    fold_block: F,
    merge: M,
    identity: A,
) -> A
where
    T: Sync,
    A: Send,
    F: Fn(&[T]) -> A + Sync + Send,
    M: Fn(A, A) -> A,
{
    det_reduce_range(
        slice.len(),
        parallel,
        |r| fold_block(&slice[r]),
        merge,
        identity,
    )
}

/// [`det_reduce`] over the index range `0..n`: `fold_block` receives each block's range.
pub fn det_reduce_range<A, F, M>(
    n: usize,
    parallel: bool,
    fold_block: F,
    merge: M,
    identity: A,
) -> A
where
    A: Send,
    F: Fn(std::ops::Range<usize>) -> A + Sync + Send,
    M: Fn(A, A) -> A,
{
    fold_blocks(n, DET_REDUCE_BLOCK, parallel, identity, fold_block, merge)
}

const LANES: usize = 8;

/// The lanes' partial sums merged in a fixed pairwise order.
#[inline]
fn merge_lanes(acc: &[f64; LANES]) -> f64 {
    ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
}

/// Sum of `f(v)` over a slice with eight independent lanes (vectorisable), then a fixed
/// pairwise lane merge. Deterministic for a given slice.
#[inline]
fn lane_fold<T: Copy>(s: &[T], f: impl Fn(T) -> f64) -> f64 {
    let mut acc = [0.0f64; LANES];
    let chunks = s.chunks_exact(LANES);
    let rem = chunks.remainder();
    for c in chunks {
        for i in 0..LANES {
            acc[i] += f(c[i]);
        }
    }
    let mut total = merge_lanes(&acc);
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
    sum_map(x, |v| v)
}

/// Deterministic sum of squares.
pub fn sq_sum(x: ArrayView1<f64>) -> f64 {
    sum_map(x, |v| v * v)
}

/// Sum of `f(a, b)` over two equally long slices with eight independent lanes, like
/// [`lane_fold`].
#[inline]
fn lane_fold2<T: Copy>(a: &[T], b: &[T], f: impl Fn(T, T) -> f64) -> f64 {
    let mut acc = [0.0f64; LANES];
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..LANES {
            acc[i] += f(x[i], y[i]);
        }
    }
    let mut total = merge_lanes(&acc);
    for (&x, &y) in ra.iter().zip(rb) {
        total += f(x, y);
    }
    total
}

/// Deterministic sum of `f(a[i], b[i])` over two equally long views (residuals of a metric,
/// weighted sums). Strided views are read in place.
///
/// # Panics
/// If the lengths differ (callers validate user input first).
pub fn sum_zip(a: ArrayView1<f64>, b: ArrayView1<f64>, f: impl Fn(f64, f64) -> f64 + Sync) -> f64 {
    assert_eq!(a.len(), b.len(), "sum_zip: lengths differ");
    sum_pair_blocks(a.len(), |r| {
        with_block(&a, r.clone(), |sa| {
            with_block(&b, r, |sb| lane_fold2(sa, sb, &f))
        })
    })
}

/// The f64 sum over `0..len` index pairs of two inputs: `block_sum` folds one [`BLOCK`],
/// partials merged in block order (gate work: both inputs' elements).
fn sum_pair_blocks(len: usize, block_sum: impl Fn(std::ops::Range<usize>) -> f64 + Sync) -> f64 {
    blocked_fold(
        len,
        BLOCK,
        &SUM_F64,
        len.saturating_mul(2),
        0.0,
        block_sum,
        |x, y| x + y,
    )
}

/// Deterministic f64 sum of `f(a[i], b[i])` over two equally long f32 slices (a network
/// loss: every element pair mapped into f64), in the same blocks and lanes as [`sum_zip`].
///
/// # Panics
/// If the lengths differ (callers validate shapes first).
pub fn sum_zip_f32(a: &[f32], b: &[f32], f: impl Fn(f32, f32) -> f64 + Sync) -> f64 {
    assert_eq!(a.len(), b.len(), "sum_zip_f32: lengths differ");
    sum_pair_blocks(a.len(), |r| lane_fold2(&a[r.clone()], &b[r], &f))
}

/// Deterministic sum of `f(v)` over a view.
pub fn sum_map(x: ArrayView1<f64>, f: impl Fn(f64) -> f64 + Sync) -> f64 {
    blocked_fold(
        x.len(),
        BLOCK,
        &SUM_F64,
        x.len(),
        0.0,
        |r| with_block(&x, r, |s| lane_fold(s, &f)),
        |a, b| a + b,
    )
}

/// Deterministic sum of a slice in eight lanes, without forking: for callers that are already
/// inside a parallel region and sum short rows (per-sample partial sums).
pub fn lane_sum(s: &[f64]) -> f64 {
    lane_fold(s, |v| v)
}

/// Neumaier's compensated running sum: [`CompensatedSum::value`] carries the rounding error
/// of every addition, so it is as accurate as summing in twice the precision.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CompensatedSum {
    sum: f64,
    compensation: f64,
}

impl CompensatedSum {
    pub(crate) fn add(&mut self, v: f64) {
        let t = self.sum + v;
        self.compensation += if self.sum.abs() >= v.abs() {
            (self.sum - t) + v
        } else {
            (v - t) + self.sum
        };
        self.sum = t;
    }

    pub(crate) fn value(&self) -> f64 {
        self.sum + self.compensation
    }
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
        // Row-order accumulation, column by column: the same additions whatever the memory
        // layout. Contiguous rows run as plain slice loops (vectorised across columns).
        let mut mean = vec![0.0f64; d];
        for row in rows.outer_iter() {
            match row.to_slice() {
                Some(s) => mean.iter_mut().zip(s).for_each(|(acc, &v)| *acc += v),
                None => mean
                    .iter_mut()
                    .zip(row.iter())
                    .for_each(|(acc, &v)| *acc += v),
            }
        }
        let count_f = count as f64;
        mean.iter_mut().for_each(|m| *m /= count_f);
        let mut m2 = vec![0.0f64; d];
        let add_sq = |acc: &mut f64, (&v, &mu): (&f64, &f64)| {
            let dv = v - mu;
            *acc += dv * dv;
        };
        for row in rows.outer_iter() {
            match row.to_slice() {
                Some(s) => m2
                    .iter_mut()
                    .zip(s.iter().zip(&mean))
                    .for_each(|(acc, p)| add_sq(acc, p)),
                None => m2
                    .iter_mut()
                    .zip(row.iter().zip(&mean))
                    .for_each(|(acc, p)| add_sq(acc, p)),
            }
        }
        // A column whose values in this block are all equal has exactly that mean and no
        // spread. The sums above can miss both by rounding (ten copies of 1e-10 summed and
        // divided by ten are not 1e-10), which left a constant feature a variance of ~1e-52
        // where scikit-learn's corrected two-pass algorithm gives 0.
        let first = rows.row(0);
        let mut constant = vec![true; d];
        for row in rows.outer_iter().skip(1) {
            constant
                .iter_mut()
                .zip(row.iter().zip(first.iter()))
                .for_each(|(c, (v, f))| *c &= v == f);
        }
        mean.into_iter()
            .zip(m2)
            .zip(constant.into_iter().zip(first.iter()))
            .map(|((mean, m2), (constant, &f))| {
                if constant && f.is_finite() {
                    Moments {
                        count,
                        mean: f,
                        m2: 0.0,
                    }
                } else {
                    Moments { count, mean, m2 }
                }
            })
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

/// Fold every column of an `n x d` matrix with `step(acc, v)` over row blocks (rows in
/// order within a block, blocks merged left to right by `merge`), the shared engine of the
/// column statistics below. Row blocks hold about [`BLOCK`] elements, a function of the shape
/// only, so the grouping and the bits do not depend on threads or the gate.
fn column_fold<S, M>(x: ArrayView2<f64>, identity: f64, step: S, merge: M) -> Vec<f64>
where
    S: Fn(f64, f64) -> f64 + Sync,
    M: Fn(f64, f64) -> f64,
{
    let (n, d) = x.dim();
    if d == 0 {
        return Vec::new();
    }
    let rows_per_block = (BLOCK / d).max(1);
    let block = |r: std::ops::Range<usize>| -> Vec<f64> {
        let mut acc = vec![identity; d];
        for row in x.slice(ndarray::s![r, ..]).outer_iter() {
            match row.to_slice() {
                Some(s) => acc.iter_mut().zip(s).for_each(|(a, &v)| *a = step(*a, v)),
                None => acc
                    .iter_mut()
                    .zip(row.iter())
                    .for_each(|(a, &v)| *a = step(*a, v)),
            }
        }
        acc
    };
    blocked_fold(
        n,
        rows_per_block,
        &SUM_F64,
        n.saturating_mul(d),
        vec![identity; d],
        block,
        |acc, part| {
            acc.into_iter()
                .zip(part)
                .map(|(a, b)| merge(a, b))
                .collect()
        },
    )
}

/// Per-column `sum(f(v))` (deterministic, see [`column_fold`]).
pub fn column_sums_map(x: ArrayView2<f64>, f: impl Fn(f64) -> f64 + Sync) -> Vec<f64> {
    column_fold(x, 0.0, |a, v| a + f(v), |a, b| a + b)
}

/// Per-column minimum and maximum (exact; NaN is ignored by `f64::min`/`max`, so callers check
/// finiteness first). Empty columns give `(+inf, -inf)`.
pub fn column_min_max(x: ArrayView2<f64>) -> (Vec<f64>, Vec<f64>) {
    let mins = column_fold(x, f64::INFINITY, f64::min, f64::min);
    let maxs = column_fold(x, f64::NEG_INFINITY, f64::max, f64::max);
    (mins, maxs)
}

/// Per-column maximum of `|v|`.
pub fn column_max_abs(x: ArrayView2<f64>) -> Vec<f64> {
    column_fold(x, 0.0, |a, v| a.max(v.abs()), f64::max)
}

/// Median of a non-empty slice of finite values, reordering it: the middle value, or the mean
/// of the two middle values for an even count (NumPy's `median`).
pub fn median_in_place(v: &mut [f64]) -> f64 {
    let n = v.len();
    let mid = n / 2;
    let (below, upper, _) = v.select_nth_unstable_by(mid, f64::total_cmp);
    let upper = *upper;
    if n % 2 == 1 {
        upper
    } else {
        let lower = below.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lower + upper) / 2.0
    }
}

/// `q`-th percentile (`0 <= q <= 100`) of a non-empty slice of finite values with linear
/// interpolation, reordering it: NumPy's default `percentile` method, operation for operation
/// (virtual index `(n - 1) * q / 100`, and its lerp that works from the upper neighbour when the
/// fraction is at least one half).
pub fn percentile_in_place(v: &mut [f64], q: f64) -> f64 {
    let n = v.len();
    let virtual_index = (n - 1) as f64 * (q / 100.0);
    let lo = (virtual_index.floor() as usize).min(n - 1);
    let hi = (lo + 1).min(n - 1);
    let gamma = virtual_index - lo as f64;
    let (_, a, rest) = v.select_nth_unstable_by(lo, f64::total_cmp);
    let a = *a;
    let b = if hi == lo {
        a
    } else {
        rest.iter().copied().fold(f64::INFINITY, f64::min)
    };
    let diff = b - a;
    if gamma >= 0.5 {
        b - diff * (1.0 - gamma)
    } else {
        a + diff * gamma
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::serial_and_parallel;
    use crate::math::bits;
    use ndarray::Array1;

    fn data(n: usize) -> Array1<f64> {
        // Values of very different magnitudes make the rounding order visible.
        Array1::from_shape_fn(n, |i| {
            ((i as f64) * 0.7312).sin() * 10f64.powi((i % 7) as i32 - 3)
        })
    }

    #[test]
    fn det_reduce_is_the_same_bits_serial_and_parallel() {
        for n in [
            0,
            1,
            DET_REDUCE_BLOCK - 1,
            DET_REDUCE_BLOCK + 1,
            5 * DET_REDUCE_BLOCK + 3,
        ] {
            let x = data(n);
            let s = x.as_slice().unwrap();
            let fold = |b: &[f64]| b.iter().sum::<f64>();
            let serial = det_reduce(s, false, fold, |a, b| a + b, 0.0);
            let parallel = det_reduce(s, true, fold, |a, b| a + b, 0.0);
            assert_eq!(serial.to_bits(), parallel.to_bits(), "n={n}");
            // Blocks cut at DET_REDUCE_BLOCK and merge in order, whatever the thread count.
            let by_hand = s.chunks(DET_REDUCE_BLOCK).map(fold).fold(0.0, |a, b| a + b);
            assert_eq!(serial.to_bits(), by_hand.to_bits(), "n={n}");
            let ranges = det_reduce_range(
                n,
                true,
                |r| vec![r],
                |mut a, b| {
                    a.extend(b);
                    a
                },
                Vec::new(),
            );
            let covered: usize = ranges.iter().map(|r| r.len()).sum();
            assert_eq!(covered, n);
            assert!(ranges.windows(2).all(|w| w[0].end == w[1].start));
        }
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
            let (a, b): (Vec<f32>, Vec<f32>) =
                x.iter().map(|&v| (v as f32, 0.5 * v as f32)).unzip();
            let sq_diff = |t: f32, p: f32| (t as f64 - p as f64).powi(2);
            let (s, p) = serial_and_parallel(&SUM_F64, || sum_zip_f32(&a, &b, sq_diff));
            assert_eq!(s.to_bits(), p.to_bits(), "sum_zip_f32 n={n}");
            // oracle: the plain f64 sum, within n u of the total (all terms non-negative)
            let plain: f64 = a.iter().zip(&b).map(|(&t, &p)| sq_diff(t, p)).sum();
            assert!(
                (s - plain).abs() <= n as f64 * f64::EPSILON * plain,
                "n={n}"
            );
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
        let mut compensated = CompensatedSum::default();
        x.iter().for_each(|&v| compensated.add(v));
        let reference = compensated.value();
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

    #[test]
    fn column_folds_agree_bitwise_and_match_plain_loops() {
        let (n, d) = (9_001, 6);
        let x = ndarray::Array2::from_shape_fn((n, d), |(i, j)| {
            ((i * d + j) as f64 * 0.71).sin() * (j as f64 - 2.5)
        });
        let (s, p) = serial_and_parallel(&SUM_F64, || column_sums_map(x.view(), |v| v * v));
        assert_eq!(bits(&s), bits(&p));
        let (s, p) = serial_and_parallel(&SUM_F64, || column_min_max(x.view()));
        assert_eq!(s, p);
        for j in 0..d {
            let col = x.column(j);
            let want_sq: f64 = col.iter().map(|v| v * v).sum();
            assert!((s.0[j] - col.iter().copied().fold(f64::INFINITY, f64::min)).abs() == 0.0);
            assert!((s.1[j] - col.iter().copied().fold(f64::NEG_INFINITY, f64::max)).abs() == 0.0);
            assert!((column_sums_map(x.view(), |v| v * v)[j] - want_sq).abs() < 1e-10 * want_sq);
            assert_eq!(
                column_max_abs(x.view())[j],
                col.iter().fold(0.0f64, |m, v| m.max(v.abs()))
            );
        }
    }

    #[test]
    fn order_statistics_by_hand() {
        assert_eq!(median_in_place(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median_in_place(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        // sorted [1,2,3,4,10]: 25th -> index 1 -> 2; 90th -> index 3.6 -> 4 + 0.6 * 6 = 7.6
        let mut v = [10.0, 2.0, 4.0, 1.0, 3.0];
        assert_eq!(percentile_in_place(&mut v, 25.0), 2.0);
        assert!((percentile_in_place(&mut v, 90.0) - 7.6).abs() < 1e-15);
        assert_eq!(percentile_in_place(&mut v, 100.0), 10.0);
        assert_eq!(percentile_in_place(&mut v, 0.0), 1.0);
        assert_eq!(percentile_in_place(&mut [5.0], 75.0), 5.0);
    }
}

// ---------------------------------------------------------------------------------------
// f32 sum of squares (gate `tuning::reduction::sq_sum_f32`): the global gradient norm of
// clip-by-global-norm. Accumulates in f64 so a norm over millions of parameters keeps f32's
// full precision, and goes through the same blocked fold as every other reduction.
// ---------------------------------------------------------------------------------------

#[cfg(feature = "neural_network")]
declare_gate! {
    /// f32 sum of squares (the global gradient norm of clip-by-global-norm). Work = elements.
    pub SQ_SUM_F32: reduction::sq_sum_f32 = 65_536, "elements"
}

/// Deterministic sum of squares of an f32 slice, accumulated in f64.
#[cfg(feature = "neural_network")]
pub fn sq_sum_f32(s: &[f32]) -> f64 {
    blocked_fold(
        s.len(),
        BLOCK,
        &SQ_SUM_F32,
        s.len(),
        0.0,
        |r| {
            lane_fold(&s[r], |v| {
                let v = v as f64;
                v * v
            })
        },
        |a, b| a + b,
    )
}

#[cfg(all(test, feature = "neural_network"))]
mod sq_sum_f32_tests {
    use super::*;
    use crate::gate::serial_and_parallel;

    #[test]
    fn sq_sum_f32_serial_and_parallel_agree_bitwise() {
        for n in [0usize, 1, 7, 4096, 4097, 70_001] {
            let v: Vec<f32> = (0..n)
                .map(|i| ((i as f32) * 0.37).sin() * 10f32.powi((i % 5) as i32 - 2))
                .collect();
            let (s, p) = serial_and_parallel(&SQ_SUM_F32, || sq_sum_f32(&v));
            assert_eq!(s.to_bits(), p.to_bits(), "n = {n}");
            let naive: f64 = v.iter().map(|&x| (x as f64) * (x as f64)).sum();
            assert!((s - naive).abs() <= 1e-12 * naive.max(1.0), "n = {n}");
        }
    }
}
