//! Elementwise f64 maps: every output element depends only on its own input (and on row or
//! column constants computed beforehand), so the serial and the parallel path give the same
//! bits and a gate only picks the strategy.
//!
//! The row-map engine ([`map_rows`] / [`map_rows_into`]) serves the memory-bound maps of the
//! preprocessing code (centering, scaling, normalising). It hands each row to the caller as a
//! contiguous slice: contiguous rows are read in place, strided rows (Fortran order, sliced
//! views) are gathered into a per-task buffer, never a copy of the whole input.

use crate::declare_gate;
use ndarray::{Array2, ArrayView2, ArrayViewMut2, Axis};
use rayon::prelude::*;

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
    match (center, scale) {
        (Some(c), Some(s)) => map_rows(x, |_, row, out| {
            for (((o, &v), &c), &s) in out.iter_mut().zip(row).zip(c).zip(s) {
                *o = (v - c) / s;
            }
        }),
        (Some(c), None) => map_rows(x, |_, row, out| {
            for ((o, &v), &c) in out.iter_mut().zip(row).zip(c) {
                *o = v - c;
            }
        }),
        (None, Some(s)) => map_rows(x, |_, row, out| {
            for ((o, &v), &s) in out.iter_mut().zip(row).zip(s) {
                *o = v / s;
            }
        }),
        (None, None) => map_rows(x, |_, row, out| out.copy_from_slice(row)),
    }
}

/// `x * scale + offset` column by column (`None` skips a step), the inverse of
/// [`center_scale_columns`] and the forward map of the min-max scaler.
pub fn scale_shift_columns(
    x: ArrayView2<f64>,
    scale: Option<&[f64]>,
    offset: Option<&[f64]>,
) -> Array2<f64> {
    match (scale, offset) {
        (Some(s), Some(c)) => map_rows(x, |_, row, out| {
            for (((o, &v), &s), &c) in out.iter_mut().zip(row).zip(s).zip(c) {
                *o = v * s + c;
            }
        }),
        (Some(s), None) => map_rows(x, |_, row, out| {
            for ((o, &v), &s) in out.iter_mut().zip(row).zip(s) {
                *o = v * s;
            }
        }),
        (None, Some(c)) => map_rows(x, |_, row, out| {
            for ((o, &v), &c) in out.iter_mut().zip(row).zip(c) {
                *o = v + c;
            }
        }),
        (None, None) => map_rows(x, |_, row, out| out.copy_from_slice(row)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::serial_and_parallel;

    fn data(n: usize, d: usize) -> Array2<f64> {
        Array2::from_shape_fn((n, d), |(i, j)| {
            ((i * d + j) as f64 * 0.613).sin() * 10f64.powi((j % 5) as i32 - 2)
        })
    }

    fn bits(a: &Array2<f64>) -> Vec<u64> {
        a.iter().map(|v| v.to_bits()).collect()
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
