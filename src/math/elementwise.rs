//! Elementwise f64 maps behind their gates.
//!
//! Every output element of a map depends only on its own input element (or, for the row
//! softmax, only on its own row), so the serial and the parallel path compute the same
//! values in the same order per element and agree bit for bit.

// ---------------------------------------------------------------------------------------
// exp-heavy f64 maps (gate `tuning::elementwise::exp_map_f64`): logistic sigmoid, softmax,
// RBF and sigmoid kernel maps.
// ---------------------------------------------------------------------------------------

use crate::declare_gate;
use ndarray::{ArrayBase, ArrayViewMut1, ArrayViewMut2, Axis, DataMut, Dimension, Zip};
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
    use ndarray::Array2;

    fn scores(n: usize, k: usize) -> Array2<f64> {
        Array2::from_shape_fn((n, k), |(i, j)| {
            ((i * 31 + j * 17) as f64 * 0.137).sin() * 40.0
        })
    }

    fn bits(a: &Array2<f64>) -> Vec<u64> {
        a.iter().map(|v| v.to_bits()).collect()
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
        for t in [-800.0, -30.0, -1.5, 0.0, 0.25, 3.0, 40.0, 800.0] {
            let want = 1.0 / (1.0 + (-t as f64).exp());
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
