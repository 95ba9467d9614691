//! The direct kernel of the nearest-center scan, for small `centers x features` (KMeans'
//! usual shape): no product, rows scored against the centers on the vector lanes.
//!
//! A block's rows are laid out feature-major, one lane per row, and every center's score
//! `|c|^2 + sum_f x_f (-2 c_f)` is summed in feature order with each product rounded before
//! its add (never fused), while a running minimum per lane keeps the nearest. A row's score
//! is therefore the same IEEE sum whichever lane, tile, block or instruction set computes it:
//! the AVX-512 and AVX2 instantiations only keep more sums in flight than the portable one,
//! and the host never changes a result.

use super::{settle_bound, settle_nearest};
use ndarray::{ArrayView1, ArrayView2, Axis};

/// One vector of f64 lanes and the handful of operations the scan needs. Implementations
/// are `#[inline(always)]` so they compile into the instruction-set wrapper that calls them.
trait Lanes: Copy {
    /// f64 lanes per vector.
    const N: usize;
    fn splat(v: f64) -> Self;
    /// Loads `N` values from the start of `src` (`src.len() >= N`).
    fn load(src: &[f64]) -> Self;
    /// Stores the lanes into the start of `dst` (`dst.len() >= N`).
    fn store(self, dst: &mut [f64]);
    fn add(self, other: Self) -> Self;
    fn mul(self, other: Self) -> Self;
    fn min(self, other: Self) -> Self;
    fn max(self, other: Self) -> Self;
    /// Per lane: `if self < than { new } else { old }`, for both tracked values at once.
    fn select_less(self, than: Self, new: [Self; 2], old: [Self; 2]) -> [Self; 2];
}

/// Portable lanes: plain arrays, which the compiler maps to the baseline vector registers.
#[derive(Clone, Copy)]
struct Portable([f64; 2]);

impl Lanes for Portable {
    const N: usize = 2;
    #[inline(always)]
    fn splat(v: f64) -> Self {
        Self([v; 2])
    }
    #[inline(always)]
    fn load(src: &[f64]) -> Self {
        Self([src[0], src[1]])
    }
    #[inline(always)]
    fn store(self, dst: &mut [f64]) {
        dst[..2].copy_from_slice(&self.0);
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Self([self.0[0] + o.0[0], self.0[1] + o.0[1]])
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        Self([self.0[0] * o.0[0], self.0[1] * o.0[1]])
    }
    #[inline(always)]
    fn min(self, o: Self) -> Self {
        Self([self.0[0].min(o.0[0]), self.0[1].min(o.0[1])])
    }
    #[inline(always)]
    fn max(self, o: Self) -> Self {
        Self([self.0[0].max(o.0[0]), self.0[1].max(o.0[1])])
    }
    #[inline(always)]
    fn select_less(self, than: Self, new: [Self; 2], old: [Self; 2]) -> [Self; 2] {
        std::array::from_fn(|t| {
            Self(std::array::from_fn(|l| {
                if self.0[l] < than.0[l] {
                    new[t].0[l]
                } else {
                    old[t].0[l]
                }
            }))
        })
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::Lanes;
    use std::arch::x86_64::*;

    /// One x86 register of `$n` f64 lanes as [`Lanes`]: every method one intrinsic, and
    /// `select_less` a less-than compare into a mask `$m`, then a blend of each `$old` and
    /// `$new` register under it. The intrinsics need the register's target feature: the type is
    /// only used inside functions that enable it (see `scan_avx512`, `scan_avx2`).
    macro_rules! x86_lanes {
        (
            $(#[$doc:meta])*
            $name:ident($reg:ty): $n:literal lanes;
            $set1:ident, $loadu:ident, $storeu:ident, $add:ident, $mul:ident, $min:ident, $max:ident;
            select_less: $m:ident = $cmp:expr, |$old:ident, $new:ident| $blend:expr
        ) => {
            $(#[$doc])*
            #[derive(Clone, Copy)]
            pub(super) struct $name($reg);

            impl Lanes for $name {
                const N: usize = $n;
                #[inline(always)]
                fn splat(v: f64) -> Self {
                    // SAFETY: only compiled into functions that enable the register's feature.
                    Self(unsafe { $set1(v) })
                }
                #[inline(always)]
                fn load(src: &[f64]) -> Self {
                    assert!(src.len() >= Self::N);
                    // SAFETY: in bounds (checked); the feature as above.
                    Self(unsafe { $loadu(src.as_ptr()) })
                }
                #[inline(always)]
                fn store(self, dst: &mut [f64]) {
                    assert!(dst.len() >= Self::N);
                    // SAFETY: in bounds (checked); the feature as above.
                    unsafe { $storeu(dst.as_mut_ptr(), self.0) }
                }
                #[inline(always)]
                fn add(self, o: Self) -> Self {
                    // SAFETY: the feature as above.
                    Self(unsafe { $add(self.0, o.0) })
                }
                #[inline(always)]
                fn mul(self, o: Self) -> Self {
                    // SAFETY: the feature as above.
                    Self(unsafe { $mul(self.0, o.0) })
                }
                #[inline(always)]
                fn min(self, o: Self) -> Self {
                    // SAFETY: the feature as above.
                    Self(unsafe { $min(self.0, o.0) })
                }
                #[inline(always)]
                fn max(self, o: Self) -> Self {
                    // SAFETY: the feature as above.
                    Self(unsafe { $max(self.0, o.0) })
                }
                #[inline(always)]
                fn select_less(self, than: Self, new: [Self; 2], old: [Self; 2]) -> [Self; 2] {
                    // SAFETY: the feature as above.
                    unsafe {
                        let $m = $cmp(self.0, than.0);
                        std::array::from_fn(|t| {
                            let ($old, $new) = (old[t].0, new[t].0);
                            Self($blend)
                        })
                    }
                }
            }
        };
    }

    x86_lanes! {
        /// Eight lanes in one AVX-512 register. Only used under `avx512f` (see `scan_avx512`).
        Avx512(__m512d): 8 lanes;
        _mm512_set1_pd, _mm512_loadu_pd, _mm512_storeu_pd, _mm512_add_pd, _mm512_mul_pd,
        _mm512_min_pd, _mm512_max_pd;
        select_less: m = _mm512_cmp_pd_mask::<_CMP_LT_OQ>,
            |old, new| _mm512_mask_blend_pd(m, old, new)
    }

    x86_lanes! {
        /// Four lanes in one AVX register. Only used under `avx2` (see `scan_avx2`).
        Avx2(__m256d): 4 lanes;
        _mm256_set1_pd, _mm256_loadu_pd, _mm256_storeu_pd, _mm256_add_pd, _mm256_mul_pd,
        _mm256_min_pd, _mm256_max_pd;
        select_less: m = _mm256_cmp_pd::<_CMP_LT_OQ>, |old, new| _mm256_blendv_pd(old, new, m)
    }
}

/// For every row of `x_block`, its nearest center (squared euclidean) and that squared
/// distance; see [`super::nearest_block`]. Picks the widest instruction set the CPU has.
pub(super) fn nearest_block_direct(
    x_block: ArrayView2<f64>,
    x_norms: ArrayView1<f64>,
    centers: ArrayView2<f64>,
    c_norms: ArrayView1<f64>,
    labels: &mut [usize],
    dist_sq: &mut [f64],
    margin: &mut [f64],
) {
    let (m, d) = x_block.dim();
    // The block feature-major: borrowed where its columns are contiguous (KMeans keeps its
    // working copy column-major for this), else transposed once.
    let borrowed: Option<Vec<&[f64]>> = (0..d)
        .map(|f| x_block.index_axis_move(Axis(1), f).to_slice())
        .collect();
    let transposed: Vec<f64>;
    let cols: Vec<&[f64]> = match borrowed {
        Some(cols) => cols,
        None => {
            transposed = x_block.t().iter().copied().collect();
            transposed.chunks_exact(m.max(1)).collect()
        }
    };
    let scan = DirectScan {
        x_block,
        cols,
        x_norms: &x_norms.to_vec(),
        centers,
        scaled: &centers.iter().map(|&v| -2.0 * v).collect::<Vec<_>>(),
        c_norms: &c_norms.to_vec(),
    };
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F, checked just above.
            return unsafe { scan_avx512(&scan, labels, dist_sq, margin) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            return unsafe { scan_avx2(&scan, labels, dist_sq, margin) };
        }
    }
    scan.run::<Portable, 4, 2>(labels, dist_sq, margin);
}

/// Tiles of 16 rows (two registers) x 4 centers: eight independent sums per feature.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn scan_avx512(
    scan: &DirectScan,
    labels: &mut [usize],
    dist_sq: &mut [f64],
    margin: &mut [f64],
) {
    scan.run::<x86::Avx512, 2, 4>(labels, dist_sq, margin);
}

/// Tiles of 8 rows (two registers) x 4 centers: eight independent sums per feature.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn scan_avx2(
    scan: &DirectScan,
    labels: &mut [usize],
    dist_sq: &mut [f64],
    margin: &mut [f64],
) {
    scan.run::<x86::Avx2, 2, 4>(labels, dist_sq, margin);
}

/// The operands of one scan: the block (its columns feature-major: `cols[f][i]` is feature f
/// of row i), the rows' squared norms, the centers, the centers scaled by -2 (exact) and
/// their squared norms.
struct DirectScan<'a> {
    x_block: ArrayView2<'a, f64>,
    cols: Vec<&'a [f64]>,
    x_norms: &'a [f64],
    centers: ArrayView2<'a, f64>,
    scaled: &'a [f64],
    c_norms: &'a [f64],
}

impl DirectScan<'_> {
    /// Tiles of `R` vectors of rows, scored `G` centers at a time (the leftover centers one
    /// at a time); the last, partial tile runs on a zero-padded copy.
    #[inline(always)]
    fn run<V: Lanes, const R: usize, const G: usize>(
        &self,
        labels: &mut [usize],
        dist_sq: &mut [f64],
        margin: &mut [f64],
    ) {
        let m = self.x_norms.len();
        let d = self.cols.len();
        let tile = R * V::N;
        // The tile's running minimum, read back per row: score and center (its norm is
        // looked up), and the runner-up score.
        let mut out: [Vec<f64>; 3] = std::array::from_fn(|_| vec![0.0f64; tile]);
        let whole = m - m % tile;
        for start in (0..whole).step_by(tile) {
            self.scan_tile::<V, R, G>(&self.cols, start, &mut out);
            self.settle(start, tile, &out, labels, dist_sq, margin);
        }
        if whole < m {
            let len = m - whole;
            let mut padded = vec![0.0f64; d * tile];
            for (dst, col) in padded.chunks_exact_mut(tile).zip(&self.cols) {
                dst[..len].copy_from_slice(&col[whole..]);
            }
            let cols: Vec<&[f64]> = padded.chunks_exact(tile).collect();
            self.scan_tile::<V, R, G>(&cols, 0, &mut out);
            self.settle(whole, len, &out, labels, dist_sq, margin);
        }
    }

    /// Scores every center on rows `start..start + R * V::N` of `cols` and leaves each row's
    /// best score, center and runner-up score in `out`.
    #[inline(always)]
    fn scan_tile<V: Lanes, const R: usize, const G: usize>(
        &self,
        cols: &[&[f64]],
        start: usize,
        out: &mut [Vec<f64>; 3],
    ) {
        let k = self.c_norms.len();
        let full = k - k % G;
        let mut nearest = [[V::splat(f64::INFINITY), V::splat(0.0)]; R];
        let mut runner_up = [V::splat(f64::INFINITY); R];
        let mut j = 0;
        while j < full {
            self.score_group::<V, R, G>(cols, start, j, &mut nearest, &mut runner_up);
            j += G;
        }
        while j < k {
            self.score_group::<V, R, 1>(cols, start, j, &mut nearest, &mut runner_up);
            j += 1;
        }
        for (r, (tracked, second)) in nearest.iter().zip(&runner_up).enumerate() {
            for (dst, v) in out.iter_mut().zip(tracked.iter().chain([second])) {
                v.store(&mut dst[r * V::N..]);
            }
        }
    }

    /// Writes the labels and distances of rows `start..start + len` from their tile's
    /// minimum (`out`), re-measuring exactly the rows the product form cannot resolve, and
    /// each row's margin: its runner-up score less its best.
    #[inline(always)]
    fn settle(
        &self,
        start: usize,
        len: usize,
        out: &[Vec<f64>; 3],
        labels: &mut [usize],
        dist_sq: &mut [f64],
        margin: &mut [f64],
    ) {
        let [best, arg, second] = out;
        let (d, scaled, cn) = (self.cols.len(), self.scaled, self.c_norms);
        let bound = settle_bound(d);
        for l in 0..len {
            let i = start + l;
            let xn = self.x_norms[i];
            margin[i] = second[l] - best[l];
            let dist = best[l] + xn;
            // settle_nearest's test: the product form resolves this distance.
            (labels[i], dist_sq[i]) = if dist > bound * (xn + cn[arg[l] as usize]) {
                (arg[l] as usize, dist)
            } else {
                let row = self.x_block.row(i).to_vec();
                settle_nearest(&row, xn, self.centers, cn, best[l], arg[l] as usize, |j| {
                    let c = &scaled[j * d..(j + 1) * d];
                    let mut acc = 0.0;
                    for (&xv, &cv) in row.iter().zip(c) {
                        acc += xv * cv;
                    }
                    cn[j] + acc
                })
            };
        }
    }

    /// Scores centers `j..j + G` on the tile at `start` and folds them into `nearest` (per
    /// vector: best score and its center as a float; ties keep the
    /// lower index) and `runner_up` (the second-lowest score).
    // The tile is a G x R grid of registers; indexing both ways reads clearer than zips.
    #[allow(clippy::needless_range_loop)]
    #[inline(always)]
    fn score_group<V: Lanes, const R: usize, const G: usize>(
        &self,
        cols: &[&[f64]],
        start: usize,
        j: usize,
        nearest: &mut [[V; 2]; R],
        runner_up: &mut [V; R],
    ) {
        let d = cols.len();
        let mut acc = [[V::splat(0.0); G]; R];
        for (f, col) in cols.iter().enumerate() {
            let x: [V; R] = std::array::from_fn(|r| V::load(&col[start + r * V::N..]));
            for g in 0..G {
                let c = V::splat(self.scaled[(j + g) * d + f]);
                for r in 0..R {
                    acc[r][g] = acc[r][g].add(x[r].mul(c));
                }
            }
        }
        for g in 0..G {
            let cj = self.c_norms[j + g];
            let (norm, index) = (V::splat(cj), V::splat((j + g) as f64));
            for r in 0..R {
                let score = norm.add(acc[r][g]);
                runner_up[r] = runner_up[r].min(score.max(nearest[r][0]));
                nearest[r] = score.select_less(nearest[r][0], [score, index], nearest[r]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array2, ShapeBuilder};
    use rand::{Rng, SeedableRng};

    fn random(rows: usize, cols: usize, seed: u64) -> Array2<f64> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        Array2::from_shape_simple_fn((rows, cols), || rng.random_range(-3.0..3.0))
    }

    /// One way of running a scan into labels, distances and margins.
    type Runner<'r> = &'r dyn Fn(&DirectScan, &mut [usize], &mut [f64], &mut [f64]);

    /// Labels, distances and margins of one run.
    type Scanned = (Vec<usize>, Vec<f64>, Vec<f64>);

    /// Labels, distances and margins of every instantiation this CPU can run, for one block.
    fn every_instantiation(x: ArrayView2<f64>, c: ArrayView2<f64>) -> Vec<Scanned> {
        let xn = super::super::row_sq_norms(x);
        let cn = super::super::row_sq_norms(c);
        let m = x.nrows();
        let mut runs = Vec::new();
        let mut run = |f: Runner| {
            let cols: Vec<Vec<f64>> = x.columns().into_iter().map(|c| c.to_vec()).collect();
            let scan = DirectScan {
                x_block: x,
                cols: cols.iter().map(|c| c.as_slice()).collect(),
                x_norms: xn.as_slice().unwrap(),
                centers: c,
                scaled: &c.iter().map(|&v| -2.0 * v).collect::<Vec<_>>(),
                c_norms: cn.as_slice().unwrap(),
            };
            let (mut labels, mut dist) = (vec![usize::MAX; m], vec![f64::NAN; m]);
            let mut margin = vec![f64::NAN; m];
            f(&scan, &mut labels, &mut dist, &mut margin);
            runs.push((labels, dist, margin));
        };
        run(&|s, l, d, g| s.run::<Portable, 4, 2>(l, d, g));
        run(&|s, l, d, g| s.run::<Portable, 1, 3>(l, d, g));
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: checked just above.
                run(&|s, l, d, g| unsafe { scan_avx512(s, l, d, g) });
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: checked just above.
                run(&|s, l, d, g| unsafe { scan_avx2(s, l, d, g) });
            }
        }
        // The dispatching entry point, on both layouts of the block.
        for layout in [x.to_owned(), {
            let mut f = Array2::zeros(x.raw_dim().f());
            f.assign(&x);
            f
        }] {
            let (mut labels, mut dist) = (vec![usize::MAX; m], vec![f64::NAN; m]);
            let mut margin = vec![f64::NAN; m];
            nearest_block_direct(
                layout.view(),
                xn.view(),
                c,
                cn.view(),
                &mut labels,
                &mut dist,
                &mut margin,
            );
            runs.push((labels, dist, margin));
        }
        runs
    }

    #[test]
    fn every_instruction_set_and_layout_gives_the_same_bits() {
        // Partial tiles (m not a multiple of any tile), leftover centers (k not a multiple
        // of G), and a row that sits on a center (the exact re-measure path).
        for (m, k, d, seed) in [
            (37, 7, 5, 1),
            (256, 16, 8, 2),
            (3, 1, 1, 3),
            (100, 33, 3, 4),
        ] {
            let mut x = random(m, d, seed);
            let c = random(k, d, seed + 100);
            x.row_mut(m / 2).assign(&c.row(k - 1));
            let runs = every_instantiation(x.view(), c.view());
            let (labels, dist, margin) = &runs[0];
            // Oracle: the exact arg-min (feature-order differences) where it is clear.
            for i in 0..m {
                let exact: Vec<f64> = c
                    .outer_iter()
                    .map(|cj| {
                        x.row(i)
                            .iter()
                            .zip(cj)
                            .map(|(a, b)| (a - b) * (a - b))
                            .sum()
                    })
                    .collect();
                let best = exact.iter().copied().fold(f64::INFINITY, f64::min);
                assert!(exact[labels[i]] <= best + 1e-12 * (1.0 + best), "row {i}");
                // the margin: the runner-up's distance less the nearest's (infinite with
                // one center)
                let mut sorted = exact.clone();
                sorted.sort_by(f64::total_cmp);
                let want = sorted.get(1).map_or(f64::INFINITY, |s| s - sorted[0]);
                assert!(
                    margin[i] == want || (margin[i] - want).abs() <= 1e-12 * (1.0 + sorted[0]),
                    "row {i}: margin {} against {want}",
                    margin[i]
                );
                assert!(
                    (dist[i] - exact[labels[i]]).abs() <= 1e-12 * (1.0 + best),
                    "row {i}"
                );
            }
            assert_eq!(labels[m / 2], k - 1);
            assert_eq!(dist[m / 2], 0.0, "a row on a center is re-measured exactly");
            for (r, (l, dd, g)) in runs.iter().enumerate() {
                assert_eq!(l, labels, "run {r}, shape {m}x{d}, k={k}");
                let same = dd.iter().zip(dist).all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(same, "run {r}, shape {m}x{d}, k={k}");
                let same = g
                    .iter()
                    .zip(margin)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(same, "margins of run {r}, shape {m}x{d}, k={k}");
            }
        }
    }
}
