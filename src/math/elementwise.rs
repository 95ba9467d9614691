//! Elementwise f64 maps behind their gates.
//!
//! Every output element of a map depends only on its own input element (or, for the row
//! softmax and the row maps, only on its own row and on constants computed beforehand), so the
//! serial and the parallel path compute the same values in the same order per element and
//! agree bit for bit.

// ---------------------------------------------------------------------------------------
// exp-heavy f64 maps (gate `tuning::elementwise::exp_map_f64`): logistic sigmoid, softmax,
// RBF and sigmoid kernel maps.
// ---------------------------------------------------------------------------------------

use crate::declare_gate;
use ndarray::{
    Array2, ArrayBase, ArrayView2, ArrayViewMut1, ArrayViewMut2, Axis, DataMut, Dimension, Zip,
};
use rayon::prelude::*;

declare_gate! {
    /// f64 exp-heavy maps: logistic sigmoid, row softmax, RBF and sigmoid kernel maps.
    /// Work = elements mapped.
    pub EXP_MAP_F64: elementwise::exp_map_f64 = 65_536, "elements"
}

/// Elements per rayon task of the exp maps: enough exp calls (~20 us) to amortise a steal.
const EXP_MAP_TASK: usize = 4096;

/// The exp-map engine: `v = f(v)` for every element of `a`, in parallel behind
/// [`EXP_MAP_F64`] when `a.len()` reaches it.
pub fn exp_map_inplace<S, D, F>(a: &mut ArrayBase<S, D>, f: F)
where
    S: DataMut<Elem = f64>,
    D: Dimension,
    F: Fn(f64) -> f64 + Sync + Send,
{
    if EXP_MAP_F64.allows_parallel(a.len()) {
        if let Some(s) = a.as_slice_memory_order_mut() {
            s.par_chunks_mut(EXP_MAP_TASK)
                .for_each(|chunk| chunk.iter_mut().for_each(|v| *v = f(*v)));
        } else {
            Zip::from(a).par_for_each(|v| *v = f(*v));
        }
    } else {
        Zip::from(a).for_each(|v| *v = f(*v));
    }
}

/// The logistic sigmoid `1 / (1 + exp(-t))`, written so that neither branch overflows.
#[inline]
pub fn sigmoid(t: f64) -> f64 {
    if t >= 0.0 {
        1.0 / (1.0 + (-t).exp())
    } else {
        let e = t.exp();
        e / (1.0 + e)
    }
}

/// Logistic sigmoid of every element, in place.
pub fn sigmoid_inplace<S, D>(a: &mut ArrayBase<S, D>)
where
    S: DataMut<Elem = f64>,
    D: Dimension,
{
    exp_map_inplace(a, sigmoid);
}

/// Softmax of one row in place (max-shifted, so large scores do not overflow).
#[inline]
fn softmax_row(mut row: ArrayViewMut1<f64>) {
    let max = row.fold(f64::NEG_INFINITY, |m, &v| m.max(v));
    let mut total = 0.0;
    for v in row.iter_mut() {
        *v = (*v - max).exp();
        total += *v;
    }
    let inv = 1.0 / total;
    row.mapv_inplace(|v| v * inv);
}

/// Row-wise softmax of an `n x k` score matrix, in place. Rows run in parallel behind
/// [`EXP_MAP_F64`] (work = `n * k`); each row is computed serially, so the bits do not depend
/// on the path.
pub fn softmax_rows_inplace(mut a: ArrayViewMut2<f64>) {
    if a.ncols() == 0 {
        return;
    }
    if EXP_MAP_F64.allows_parallel(a.len()) {
        let rows_per_task = (EXP_MAP_TASK / a.ncols()).max(1);
        a.axis_iter_mut(Axis(0))
            .into_par_iter()
            .with_min_len(rows_per_task)
            .for_each(softmax_row);
    } else {
        a.axis_iter_mut(Axis(0)).for_each(softmax_row);
    }
}

#[cfg(test)]
mod exp_map_tests {
    use super::*;
    use crate::gate::serial_and_parallel;
    use crate::math::bits;
    use ndarray::Array2;

    fn scores(n: usize, k: usize) -> Array2<f64> {
        Array2::from_shape_fn((n, k), |(i, j)| {
            ((i * 31 + j * 17) as f64 * 0.137).sin() * 40.0
        })
    }

    #[test]
    fn exp_maps_agree_bitwise_serial_and_parallel() {
        for (n, k) in [(1, 1), (3, 7), (1000, 3), (20_000, 5)] {
            let x = scores(n, k);
            let (s, p) = serial_and_parallel(&EXP_MAP_F64, || {
                let mut y = x.clone();
                sigmoid_inplace(&mut y);
                y
            });
            assert_eq!(bits(&s), bits(&p), "sigmoid {n}x{k}");
            let (s, p) = serial_and_parallel(&EXP_MAP_F64, || {
                let mut y = x.clone();
                softmax_rows_inplace(y.view_mut());
                y
            });
            assert_eq!(bits(&s), bits(&p), "softmax {n}x{k}");
            // Strided (transposed) views take the Zip path.
            let (s, p) = serial_and_parallel(&EXP_MAP_F64, || {
                let mut y = x.clone();
                exp_map_inplace(
                    &mut y.slice_mut(ndarray::s![..;2, ..]).reversed_axes(),
                    |v| (-v * v).exp(),
                );
                y
            });
            assert_eq!(bits(&s), bits(&p), "strided {n}x{k}");
        }
    }

    #[test]
    fn sigmoid_and_softmax_match_their_definitions() {
        for t in [-800.0f64, -30.0, -1.5, 0.0, 0.25, 3.0, 40.0, 800.0] {
            let want = 1.0 / (1.0 + (-t).exp());
            assert!((sigmoid(t) - want).abs() <= 1e-16, "sigmoid({t})");
        }
        assert_eq!(sigmoid(-800.0), 0.0);
        assert_eq!(sigmoid(800.0), 1.0);
        // Hand-derived: softmax([0, ln 3]) = [1/4, 3/4]; a shift by 1000 changes nothing.
        let mut a = ndarray::array![[0.0, 3f64.ln()], [1000.0, 1000.0 + 3f64.ln()]];
        softmax_rows_inplace(a.view_mut());
        // Row 1 stores 1000 + ln 3, which rounds by up to half an ulp of 1000 (~6e-14):
        // that rounding, not the softmax, bounds its error.
        for (r, tol) in [(0, 1e-15), (1, 1e-12)] {
            assert!(
                (a[[r, 0]] - 0.25).abs() < tol && (a[[r, 1]] - 0.75).abs() < tol,
                "row {r}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// memory-bound f64 maps (gate `tuning::elementwise::cheap_map_f64`): centering, scaling,
// normalising. The row-map engine hands each row to the caller as a contiguous slice:
// contiguous rows are read in place, strided rows (Fortran order, sliced views) are gathered
// into a per-task buffer, never a copy of the whole input.
// ---------------------------------------------------------------------------------------

declare_gate! {
    /// f64 memory-bound maps: centering, scaling, normalising (the scalers, `standardize`,
    /// `normalize`). Work = elements written.
    pub CHEAP_MAP_F64: elementwise::cheap_map_f64 = 4_000_000, "elements"
}

/// Elements per task of the parallel row maps (about 256 KiB of f64 read and written).
const TASK_ELEMS: usize = 1 << 15;

/// Rows per task for rows of `d` elements.
fn rows_per_task(d: usize) -> usize {
    (TASK_ELEMS / d.max(1)).max(1)
}

/// Apply `f(first_row + i, row_in, row_out)` to every row of one task.
fn run_task<F>(first_row: usize, x: ArrayView2<f64>, mut out: ArrayViewMut2<f64>, f: &F)
where
    F: Fn(usize, &[f64], &mut [f64]),
{
    let mut gathered: Vec<f64> = Vec::new();
    let mut scattered: Vec<f64> = Vec::new();
    for (i, (row_in, mut row_out)) in x.outer_iter().zip(out.outer_iter_mut()).enumerate() {
        let input: &[f64] = match row_in.to_slice() {
            Some(s) => s,
            None => {
                gathered.clear();
                gathered.extend(row_in.iter().copied());
                &gathered
            }
        };
        match row_out.as_slice_mut() {
            Some(o) => f(first_row + i, input, o),
            None => {
                scattered.clear();
                scattered.resize(row_out.len(), 0.0);
                f(first_row + i, input, &mut scattered);
                row_out
                    .iter_mut()
                    .zip(&scattered)
                    .for_each(|(o, &v)| *o = v);
            }
        }
    }
}

/// Write `f(i, x.row(i), out.row(i))` for every row `i`: the caller fills `row_out` (same
/// length as `row_in`) from `row_in`. Forks over row blocks when [`CHEAP_MAP_F64`] allows the
/// element count. `f` must be a pure function of its arguments; then both paths agree bitwise.
///
/// # Panics
/// If `x` and `out` have different shapes (an internal contract, not user input).
pub fn map_rows_into<F>(x: ArrayView2<f64>, mut out: ArrayViewMut2<f64>, f: F)
where
    F: Fn(usize, &[f64], &mut [f64]) + Sync,
{
    assert_eq!(
        x.dim(),
        out.dim(),
        "map_rows_into: input and output shapes differ"
    );
    let (n, d) = x.dim();
    let step = rows_per_task(d);
    if n > step && CHEAP_MAP_F64.allows_parallel(n.saturating_mul(d)) {
        let tasks: Vec<(usize, ArrayViewMut2<f64>)> = out
            .axis_chunks_iter_mut(Axis(0), step)
            .enumerate()
            .map(|(t, chunk)| (t * step, chunk))
            .collect();
        tasks.into_par_iter().for_each(|(start, chunk)| {
            let rows = chunk.nrows();
            run_task(
                start,
                x.slice(ndarray::s![start..start + rows, ..]),
                chunk,
                &f,
            );
        });
    } else {
        run_task(0, x, out, &f);
    }
}

/// [`map_rows_into`] into a fresh row-major array of `x`'s shape.
pub fn map_rows<F>(x: ArrayView2<f64>, f: F) -> Array2<f64>
where
    F: Fn(usize, &[f64], &mut [f64]) + Sync,
{
    // `zeros` of a large array comes from fresh zero pages (no memset pass).
    let mut out = Array2::<f64>::zeros(x.dim());
    map_rows_into(x, out.view_mut(), f);
    out
}

/// `(x - center) / scale` column by column, the scalers' forward map. `None` skips that step
/// (no subtraction, no division), so the arithmetic matches scikit-learn's `X -= mean_;
/// X /= scale_` exactly.
pub fn center_scale_columns(
    x: ArrayView2<f64>,
    center: Option<&[f64]>,
    scale: Option<&[f64]>,
) -> Array2<f64> {
    two_step_columns(x, center, scale, |v, c| v - c, |v, s| v / s)
}

/// `x * scale + offset` column by column (`None` skips a step), the inverse of
/// [`center_scale_columns`] and the forward map of the min-max scaler.
pub fn scale_shift_columns(
    x: ArrayView2<f64>,
    scale: Option<&[f64]>,
    offset: Option<&[f64]>,
) -> Array2<f64> {
    two_step_columns(x, scale, offset, |v, s| v * s, |v, c| v + c)
}

/// `second(first(v, a[j]), b[j])` for every entry of column `j`. A step whose parameters are
/// `None` is left out entirely (not applied with a neutral value), so it adds no rounding.
fn two_step_columns(
    x: ArrayView2<f64>,
    a: Option<&[f64]>,
    b: Option<&[f64]>,
    first: impl Fn(f64, f64) -> f64 + Sync,
    second: impl Fn(f64, f64) -> f64 + Sync,
) -> Array2<f64> {
    match (a, b) {
        (Some(a), Some(b)) => map_rows(x, |_, row, out| {
            for (((o, &v), &a), &b) in out.iter_mut().zip(row).zip(a).zip(b) {
                *o = second(first(v, a), b);
            }
        }),
        (Some(a), None) => map_rows(x, |_, row, out| {
            for ((o, &v), &a) in out.iter_mut().zip(row).zip(a) {
                *o = first(v, a);
            }
        }),
        (None, Some(b)) => map_rows(x, |_, row, out| {
            for ((o, &v), &b) in out.iter_mut().zip(row).zip(b) {
                *o = second(v, b);
            }
        }),
        (None, None) => map_rows(x, |_, row, out| out.copy_from_slice(row)),
    }
}

#[cfg(test)]
mod cheap_map_tests {
    use super::*;
    use crate::gate::serial_and_parallel;
    use crate::math::bits;

    fn data(n: usize, d: usize) -> Array2<f64> {
        Array2::from_shape_fn((n, d), |(i, j)| {
            ((i * d + j) as f64 * 0.613).sin() * 10f64.powi((j % 5) as i32 - 2)
        })
    }

    #[test]
    fn cheap_map_serial_and_parallel_agree_bitwise() {
        let x = data(5_003, 7);
        let center: Vec<f64> = (0..7).map(|j| j as f64 * 0.3 - 1.0).collect();
        let scale: Vec<f64> = (0..7).map(|j| 0.7 + j as f64).collect();
        let (s, p) = serial_and_parallel(&CHEAP_MAP_F64, || {
            center_scale_columns(x.view(), Some(&center), Some(&scale))
        });
        assert_eq!(bits(&s), bits(&p));
        let (s, p) = serial_and_parallel(&CHEAP_MAP_F64, || {
            scale_shift_columns(x.view(), Some(&scale), Some(&center))
        });
        assert_eq!(bits(&s), bits(&p));
        // A row-dependent map (row index used), as normalisers do.
        let (s, p) = serial_and_parallel(&CHEAP_MAP_F64, || {
            map_rows(x.view(), |i, row, out| {
                let norm: f64 = row.iter().map(|v| v.abs()).sum::<f64>() + i as f64;
                out.iter_mut().zip(row).for_each(|(o, &v)| *o = v / norm);
            })
        });
        assert_eq!(bits(&s), bits(&p));
    }

    #[test]
    fn maps_match_plain_loops_for_every_layout() {
        let x = data(301, 5);
        let center = [1.0, -2.0, 0.5, 0.0, 3.0];
        let scale = [2.0, 0.25, 1.0, 3.0, 0.1];
        let mut want = x.clone();
        for ((i, j), v) in want.indexed_iter_mut() {
            *v = (x[[i, j]] - center[j]) / scale[j];
        }
        let fortran = x.t().as_standard_layout().into_owned().reversed_axes();
        let strided_source = Array2::from_shape_fn((602, 10), |(i, j)| {
            if i % 2 == 0 && j % 2 == 0 {
                x[[i / 2, j / 2]]
            } else {
                f64::NAN
            }
        });
        let strided = strided_source.slice(ndarray::s![..;2, ..;2]);
        for (name, view) in [("C", x.view()), ("F", fortran.view()), ("strided", strided)] {
            let got = center_scale_columns(view, Some(&center), Some(&scale));
            assert_eq!(bits(&got), bits(&want), "{name}");
        }
        // Inverse restores the input to rounding.
        let back = scale_shift_columns(want.view(), Some(&scale), Some(&center));
        for (a, b) in back.iter().zip(x.iter()) {
            // two roundings (divide, multiply-add): relative error within a few ulps
            assert!(
                (a - b).abs()
                    <= 4.0
                        * f64::EPSILON
                        * (b.abs() + center.iter().fold(0.0f64, |m, c| m.max(c.abs())))
            );
        }
        // Writing into a strided output.
        let mut out_t = Array2::<f64>::zeros((5, 301));
        map_rows_into(x.view(), out_t.view_mut().reversed_axes(), |_, row, out| {
            out.copy_from_slice(row)
        });
        assert_eq!(out_t.t(), x);
        assert_eq!(center_scale_columns(x.view(), None, None), x);
        assert_eq!(
            map_rows(Array2::<f64>::zeros((0, 3)).view(), |_, _, _| ()).dim(),
            (0, 3)
        );
    }
}
