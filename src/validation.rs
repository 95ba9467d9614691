//! Input checks shared by every estimator: they run before any work starts and name the
//! problem in the error.

use crate::error::{Result, RustymlError};
use ndarray::{ArrayView1, ArrayView2};

/// `x` must be non-empty with at least one feature and hold only finite values.
pub fn check_features(x: &ArrayView2<f64>, name: &str) -> Result<()> {
    check_shape(x, name)?;
    check_finite_2d(x, name)
}

/// `x` must be non-empty with at least one feature.
pub fn check_shape(x: &ArrayView2<f64>, name: &str) -> Result<()> {
    if x.nrows() == 0 {
        return Err(RustymlError::invalid(format!(
            "{name} is empty: found 0 samples, at least 1 is required"
        )));
    }
    if x.ncols() == 0 {
        return Err(RustymlError::invalid(format!(
            "{name} has 0 features, at least 1 is required"
        )));
    }
    Ok(())
}

/// Whether every element of a slice is finite: `v * 0.0` is `0.0` for a finite `v` and NaN
/// otherwise, and a NaN survives any sum, so this is one branch-free, vectorisable pass.
pub fn all_finite(s: &[f64]) -> bool {
    let mut acc = [0.0f64; 8];
    let chunks = s.chunks_exact(8);
    let rem = chunks.remainder();
    for c in chunks {
        for (a, &v) in acc.iter_mut().zip(c) {
            *a += v * 0.0;
        }
    }
    acc.iter().all(|&a| a == 0.0) && rem.iter().all(|v| v.is_finite())
}

/// `x` must hold only finite values; the error names the first offending row and column.
pub fn check_finite_2d(x: &ArrayView2<f64>, name: &str) -> Result<()> {
    if x.as_slice_memory_order().is_some_and(all_finite) {
        return Ok(());
    }
    if let Some(((i, j), _)) = x.indexed_iter().find(|(_, v)| !v.is_finite()) {
        return Err(RustymlError::invalid(format!(
            "{name} contains NaN or infinity (first at row {i}, column {j})"
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
        return Err(RustymlError::invalid(format!(
            "{name} contains NaN or infinity (first at index {i})"
        )));
    }
    Ok(())
}

/// `x` and `y` must describe the same samples.
pub fn check_xy(x: &ArrayView2<f64>, y: &ArrayView1<f64>) -> Result<()> {
    check_features(x, "X")?;
    if x.nrows() != y.len() {
        return Err(RustymlError::invalid(format!(
            "X and y have inconsistent numbers of samples: {} and {}",
            x.nrows(),
            y.len()
        )));
    }
    check_target(y, "y")
}

/// A fitted model's feature count must match the input's.
pub fn check_n_features(x: &ArrayView2<f64>, expected: usize, model: &str) -> Result<()> {
    check_features(x, "X")?;
    if x.ncols() != expected {
        return Err(RustymlError::invalid(format!(
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
        return Err(RustymlError::empty_input(what));
    }
    if check_finite_2d(x, what).is_err() {
        return Err(RustymlError::non_finite(what));
    }
    Ok(())
}

/// [`require_data`] plus the fitted width: a different column count -> `DimensionMismatch`.
pub fn require_data_width(x: &ArrayView2<f64>, expected: usize, what: &str) -> Result<()> {
    require_data(x, what)?;
    if x.ncols() != expected {
        return Err(RustymlError::dimension_mismatch(expected, x.ncols()));
    }
    Ok(())
}

/// A hyper-parameter that must be finite and strictly positive (`InvalidParameter` otherwise).
pub fn require_positive(name: &str, value: f64) -> Result<()> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(RustymlError::invalid_parameter(
            name,
            format!("must be finite and > 0, got {value}"),
        ))
    }
}

/// A count hyper-parameter that must be at least 1 (`InvalidParameter` otherwise).
pub fn require_nonzero(name: &str, value: usize) -> Result<()> {
    if value == 0 {
        Err(RustymlError::invalid_parameter(
            name,
            "must be at least 1, got 0",
        ))
    } else {
        Ok(())
    }
}
