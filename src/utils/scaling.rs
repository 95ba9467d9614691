//! Rules shared by the scalers: scikit-learn's constant-feature test and zero-scale guard,
//! and the checks every fit / transform runs first.

use crate::error::{Result, RustymlError};
use crate::math::reduction::{self, Moments};
use crate::validation;
use ndarray::ArrayView2;

/// scikit-learn's `_is_constant_feature`: a variance within the error bound of its own
/// computation (`n eps var + (n mean eps)^2`) is treated as zero.
pub(crate) fn is_constant_feature(var: f64, mean: f64, n: f64) -> bool {
    let eps = f64::EPSILON;
    var <= n * eps * var + (n * mean * eps).powi(2)
}

/// scikit-learn's `_handle_zeros_in_scale`: scales below `10 eps` become 1 (leave unscaled).
pub(crate) fn handle_zero_scale(scale: f64) -> f64 {
    if scale < 10.0 * f64::EPSILON {
        1.0
    } else {
        scale
    }
}

/// The standard deviation to divide by, 1 for a constant feature.
pub(crate) fn std_scale(m: &Moments) -> f64 {
    let var = m.variance();
    if is_constant_feature(var, m.mean, m.count as f64) {
        1.0
    } else {
        var.sqrt()
    }
}

/// Column moments of `x` with the input checks folded in: NaN or infinity in a column makes its
/// moments non-finite, so the full scan that names the position runs only on failure.
pub(crate) fn checked_column_moments(x: &ArrayView2<f64>) -> Result<Vec<Moments>> {
    validation::check_shape(x, "X")?;
    let moments = reduction::column_moments(*x);
    if moments
        .iter()
        .any(|m| !(m.mean.is_finite() && m.m2.is_finite()))
    {
        validation::check_finite_2d(x, "X")?;
        return Err(RustymlError::invalid(
            "X has values too large for float64: a column's variance overflows",
        ));
    }
    Ok(moments)
}

/// Fitted feature count, or the not-fitted error for `model`.
pub(crate) fn fitted(n_features: Option<usize>, model: &'static str) -> Result<usize> {
    n_features.ok_or_else(|| RustymlError::not_fitted(model))
}

/// A later batch (transform, partial fit, inverse) must match the fitted features.
pub(crate) fn check_batch(x: &ArrayView2<f64>, n_features: usize, model: &str) -> Result<()> {
    validation::check_n_features(x, n_features, model)
}
