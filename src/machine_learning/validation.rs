//! Input checks shared by every estimator: they run before any work starts and name the
//! problem in the error.

use crate::error::{Result, RustymlError};
use ndarray::{ArrayView1, ArrayView2};

/// `x` must be non-empty with at least one feature and hold only finite values.
pub fn check_features(x: &ArrayView2<f64>, name: &str) -> Result<()> {
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
    if let Some(pos) = x.iter().position(|v| !v.is_finite()) {
        let (i, j) = (pos / x.ncols(), pos % x.ncols());
        return Err(RustymlError::invalid(format!(
            "{name} contains NaN or infinity (first at row {i}, column {j})"
        )));
    }
    Ok(())
}

/// `y` must be finite.
pub fn check_target(y: &ArrayView1<f64>, name: &str) -> Result<()> {
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
