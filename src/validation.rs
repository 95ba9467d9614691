//! Input checks shared by every estimator: they run before any work starts and name the
//! problem in the error.

use crate::error::{Error, Result};
use ndarray::{ArrayView1, ArrayView2};

/// `x` must be non-empty with at least one feature and hold only finite values.
pub fn check_features(x: &ArrayView2<f64>, name: &str) -> Result<()> {
    check_shape(x, name)?;
    check_finite_2d(x, name)
}

/// `x` must be non-empty with at least one feature.
pub fn check_shape(x: &ArrayView2<f64>, name: &str) -> Result<()> {
    if x.nrows() == 0 {
        return Err(Error::invalid_input(format!(
            "{name} is empty: found 0 samples, at least 1 is required"
        )));
    }
    if x.ncols() == 0 {
        return Err(Error::invalid_input(format!(
            "{name} has 0 features, at least 1 is required"
        )));
    }
    Ok(())
}

/// Whether every element of a slice is finite: `v * 0.0` is `0.0` for a finite `v` and NaN
/// otherwise, and a NaN survives any sum, so this is one branch-free, vectorisable pass
/// (f64 data, f32 network weights).
pub fn all_finite<T: ndarray::NdFloat>(s: &[T]) -> bool {
    let mut acc = [T::zero(); 16];
    let chunks = s.chunks_exact(16);
    let rem = chunks.remainder();
    for c in chunks {
        for (a, &v) in acc.iter_mut().zip(c) {
            *a += v * T::zero();
        }
    }
    acc.iter().all(|&a| a == T::zero()) && rem.iter().all(|v| v.is_finite())
}

/// `x` must hold only finite values; the error names the first offending row and column.
pub fn check_finite_2d(x: &ArrayView2<f64>, name: &str) -> Result<()> {
    if x.as_slice_memory_order().is_some_and(all_finite) {
        return Ok(());
    }
    if let Some(((i, j), _)) = x.indexed_iter().find(|(_, v)| !v.is_finite()) {
        return Err(Error::invalid_input(format!(
            "{name} contains NaN or infinity (first at row {i}, column {j})"
        )));
    }
    Ok(())
}

/// The largest magnitude `m` for which a sum of `n_terms` p-th powers of differences of such
/// values stays finite in f64: `n_terms * (2m)^p <= f64::MAX / 2` (the factor 2 absorbs the
/// rounding of the powers and of the sum). For `p = 2` this also bounds squared norms and dot
/// products (`n_terms * m^2`), the terms of every product-form distance and kernel.
pub fn power_sum_limit(n_terms: usize, p: f64) -> f64 {
    (f64::MAX / 2.0 / n_terms.max(1) as f64).powf(1.0 / p) / 2.0
}

/// The largest magnitude in `x` (0 when empty). NaN is another check's business: `f64::max`
/// skips it.
pub fn max_abs(x: &ArrayView2<f64>) -> f64 {
    match x.as_slice_memory_order() {
        Some(flat) => max_abs_slice(flat),
        None => x
            .rows()
            .into_iter()
            .map(|row| match row.as_slice() {
                Some(row) => max_abs_slice(row),
                None => row.iter().fold(0.0f64, |m, v| m.max(v.abs())),
            })
            .fold(0.0f64, f64::max),
    }
}

/// The largest magnitude in `values` (0 when empty, NaN skipped), over sixteen running
/// maxima side by side rather than one chain of comparisons. The maximum of a set does not
/// depend on the order it is taken in, so this is the sequential fold's value exactly.
pub fn max_abs_slice(values: &[f64]) -> f64 {
    const LANES: usize = 16;
    let mut lanes = [0.0f64; LANES];
    let blocks = values.chunks_exact(LANES);
    let rest = blocks.remainder();
    for block in blocks {
        for (lane, v) in lanes.iter_mut().zip(block) {
            *lane = lane.max(v.abs());
        }
    }
    let tail = rest.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    lanes.into_iter().fold(tail, f64::max)
}

/// `x`'s values must be small enough for `what` (sums of p-th powers over a row) to stay
/// finite in f64. Beyond, distances and kernels overflow to infinity and the differences of
/// infinities that follow are NaN, so the input is refused up front, naming the bound.
pub fn check_power_sum_range(x: &ArrayView2<f64>, p: f64, name: &str, what: &str) -> Result<()> {
    check_power_sum_largest(max_abs(x), x.ncols(), p, name, what)
}

/// [`check_power_sum_range`] for data whose largest magnitude `largest` is already known
/// (rows of `n_terms` values).
pub fn check_power_sum_largest(
    largest: f64,
    n_terms: usize,
    p: f64,
    name: &str,
    what: &str,
) -> Result<()> {
    let limit = power_sum_limit(n_terms, p);
    if largest.is_infinite() {
        // only reachable where NaN is let through (pairwise propagates it): infinity is not
        // propagated, since inf - inf would turn some of its distances into NaN
        return Err(Error::invalid_input(format!(
            "{name} contains infinity: {what} to an infinite point are not finite numbers"
        )));
    }
    if largest > limit {
        return Err(Error::invalid_input(format!(
            "{name} has values too large for {what} in float64: max |x| = {largest:e} is beyond \
             {limit:e}, where they overflow; rescale the data (e.g. with StandardScaler or \
             MaxAbsScaler)"
        )));
    }
    Ok(())
}

/// `y` must be finite.
pub fn check_target(y: &ArrayView1<f64>, name: &str) -> Result<()> {
    if y.as_slice_memory_order().is_some_and(all_finite) {
        return Ok(());
    }
    if let Some(i) = y.iter().position(|v| !v.is_finite()) {
        return Err(Error::invalid_input(format!(
            "{name} contains NaN or infinity (first at index {i})"
        )));
    }
    Ok(())
}

/// `x` and `y` must describe the same samples.
pub fn check_xy(x: &ArrayView2<f64>, y: &ArrayView1<f64>) -> Result<()> {
    check_features(x, "X")?;
    check_n_samples(x.nrows(), y.len())?;
    check_target(y, "y")
}

/// `X` (or the predictions made from it) and `y` must count the same samples.
pub fn check_n_samples(n_x: usize, n_y: usize) -> Result<()> {
    if n_x != n_y {
        return Err(Error::invalid_input(format!(
            "X and y have inconsistent numbers of samples: {n_x} and {n_y}"
        )));
    }
    Ok(())
}

/// A fitted model's feature count must match the input's.
pub fn check_n_features(x: &ArrayView2<f64>, expected: usize, model: &str) -> Result<()> {
    check_features(x, "X")?;
    if x.ncols() != expected {
        return Err(Error::invalid_input(format!(
            "X has {} features, but {model} is expecting {expected} features as input",
            x.ncols()
        )));
    }
    Ok(())
}

/// Class labels of a classification target: the sorted distinct labels (`classes_`) and each
/// sample's index into them. `y` must already be checked finite.
pub fn encode_classes(y: &ArrayView1<f64>) -> (ndarray::Array1<f64>, Vec<u32>) {
    let mut classes: Vec<f64> = y.to_vec();
    classes.sort_unstable_by(f64::total_cmp);
    // -0.0 and 0.0 are one label, as in NumPy's `unique`.
    classes.dedup_by(|a, b| a == b);
    let codes = y
        .iter()
        .map(|v| classes.partition_point(|c| c < v) as u32)
        .collect();
    (ndarray::Array1::from(classes), codes)
}

/// The original API's data guard: no rows or no columns -> `EmptyInput`, NaN or infinity ->
/// `NonFinite` (the sklearn-style checks above report both as `InvalidInput`).
pub fn require_data(x: &ArrayView2<f64>, what: &str) -> Result<()> {
    if x.is_empty() {
        return Err(Error::empty_input(what));
    }
    if check_finite_2d(x, what).is_err() {
        return Err(Error::non_finite(what));
    }
    Ok(())
}

/// [`require_data`] plus the fitted width: a different column count -> `DimensionMismatch`.
pub fn require_data_width(x: &ArrayView2<f64>, expected: usize, what: &str) -> Result<()> {
    require_data(x, what)?;
    if x.ncols() != expected {
        return Err(Error::dimension_mismatch(expected, x.ncols()));
    }
    Ok(())
}

// Hyper-parameter checks. Every door (the original constructors and setters, the engines'
// `fit`, the Python classes) reports a bad hyper-parameter the same way: one
// `InvalidParameter` naming it, its reason phrased to follow the name ("tol must be ...").

/// A hyper-parameter that must be finite and strictly positive.
pub fn require_positive(name: &str, value: f64) -> Result<()> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(Error::invalid_parameter(
            name,
            format!("must be a finite number > 0, got {value}"),
        ))
    }
}

/// A hyper-parameter that must be finite and at least 0.
pub fn require_non_negative(name: &str, value: f64) -> Result<()> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(Error::invalid_parameter(
            name,
            format!("must be a finite number >= 0, got {value}"),
        ))
    }
}

/// A count hyper-parameter that must be at least 1.
pub fn require_nonzero(name: &str, value: usize) -> Result<()> {
    require_at_least(name, value, 1)
}

/// A count hyper-parameter that must be at least `min`.
pub fn require_at_least(name: &str, value: usize, min: usize) -> Result<()> {
    if value < min {
        Err(Error::invalid_parameter(
            name,
            format!("must be at least {min}, got {value}"),
        ))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    /// The lane-wise maximum is the sequential fold's value bit for bit: every length around
    /// the lane blocks, NaN (skipped) anywhere, -0.0, infinities, and strided views.
    #[test]
    fn max_abs_is_the_sequential_fold() {
        let fold = |v: &mut dyn Iterator<Item = f64>| v.fold(0.0f64, |m, x| m.max(x.abs()));
        let mut state = 7u64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 11) as f64 / 2f64.powi(53) * 8.0 - 4.0
        };
        for len in 0..70 {
            for special in [f64::NAN, -0.0, f64::NEG_INFINITY, 3.0e300] {
                let mut v: Vec<f64> = (0..len).map(|_| next()).collect();
                if len > 0 {
                    v[len * 7 / 10] = special;
                }
                assert_eq!(
                    max_abs_slice(&v).to_bits(),
                    fold(&mut v.iter().copied()).to_bits(),
                    "len {len} with {special}"
                );
            }
        }
        let all_nan = [f64::NAN; 20];
        assert_eq!(max_abs_slice(&all_nan), 0.0);
        let x = Array2::from_shape_fn((9, 13), |(i, j)| (i as f64 - 4.5) * (j as f64 - 6.1));
        let want = fold(&mut x.iter().copied());
        assert_eq!(max_abs(&x.view()), want);
        assert_eq!(max_abs(&x.t()), want);
        let strided = x.slice(ndarray::s![..;2, 1..;3]);
        assert_eq!(max_abs(&strided), fold(&mut strided.iter().copied()));
        assert_eq!(max_abs(&x.slice(ndarray::s![..0, ..])), 0.0);
    }

    /// A NaN or an infinity anywhere, in a full block or in the ragged tail, is found in f64
    /// and f32 slices alike; finite extremes are not mistaken for it.
    #[test]
    fn all_finite_finds_a_non_finite_value_anywhere() {
        for n in [0usize, 1, 15, 16, 17, 40] {
            let mut x64: Vec<f64> = (0..n).map(|i| i as f64 - 3.0).collect();
            let mut x32: Vec<f32> = (0..n).map(|i| i as f32 - 3.0).collect();
            if n > 0 {
                x64[0] = f64::MAX;
                x32[0] = f32::MAX;
            }
            assert!(all_finite(&x64) && all_finite(&x32), "n={n}");
            for i in 0..n {
                for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                    let (mut y64, mut y32) = (x64.clone(), x32.clone());
                    y64[i] = bad;
                    y32[i] = bad as f32;
                    assert!(!all_finite(&y64) && !all_finite(&y32), "n={n} i={i} {bad}");
                }
            }
        }
    }

    #[test]
    fn the_power_sum_bound_is_the_largest_magnitude_whose_sums_stay_finite() {
        for (n, p) in [(1usize, 1.0), (3, 2.0), (784, 2.0), (10, 3.0)] {
            let m = power_sum_limit(n, p);
            // at the bound n terms of (2m)^p fit with room to spare for rounding; at 2^(1/p)
            // times the bound (a sum twice as large) and a little more they overflow
            assert!(
                (n as f64 * (2.0 * m).powf(p) * 1.9).is_finite(),
                "n={n} p={p}"
            );
            let beyond = m * 2f64.powf(1.0 / p) * 1.001;
            assert!(
                !(n as f64 * (2.0 * beyond).powf(p)).is_finite(),
                "n={n} p={p}"
            );
        }
    }

    #[test]
    fn data_beyond_the_bound_is_refused_and_within_it_accepted() {
        let limit = power_sum_limit(2, 2.0);
        let ok = Array2::from_shape_vec((2, 2), vec![limit, -limit, 0.0, 1.0]).unwrap();
        assert!(check_power_sum_range(&ok.view(), 2.0, "X", "distances").is_ok());
        let bad = Array2::from_shape_vec((1, 2), vec![limit * 1.01, f64::NAN]).unwrap();
        let err = check_power_sum_range(&bad.view(), 2.0, "X", "distances").unwrap_err();
        assert!(err.to_string().contains("too large for distances"), "{err}");
    }
}
