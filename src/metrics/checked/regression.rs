//! Regression metrics, scikit-learn's definitions and argument order `(y_true, y_pred)`.
//!
//! Every sum goes through the deterministic blocked reduction ([`reduction::sum_zip`]), so a
//! metric gives the same bits at any thread count and gate setting.

use crate::error::{Error, Result};
use crate::math::reduction;
use ndarray::ArrayView1;

/// Equal, non-zero lengths and finite values.
pub(crate) fn check_pair(y_true: &ArrayView1<f64>, y_pred: &ArrayView1<f64>) -> Result<()> {
    super::check_lengths(y_true.len(), y_pred.len(), "y_true", "y_pred")?;
    crate::validation::check_target(y_true, "y_true")?;
    crate::validation::check_target(y_pred, "y_pred")
}

/// `1 - numerator / denominator` with scikit-learn's `force_finite` rule: a zero denominator
/// gives 1.0 for a perfect prediction and 0.0 otherwise.
fn explained_fraction(numerator: f64, denominator: f64) -> f64 {
    if denominator != 0.0 {
        1.0 - numerator / denominator
    } else if numerator != 0.0 {
        0.0
    } else {
        1.0
    }
}

/// Mean squared error.
pub fn mean_squared_error(y_true: ArrayView1<f64>, y_pred: ArrayView1<f64>) -> Result<f64> {
    check_pair(&y_true, &y_pred)?;
    Ok(reduction::sum_zip(y_true, y_pred, |t, p| (t - p) * (t - p)) / y_true.len() as f64)
}

/// Root mean squared error.
pub fn root_mean_squared_error(y_true: ArrayView1<f64>, y_pred: ArrayView1<f64>) -> Result<f64> {
    mean_squared_error(y_true, y_pred).map(f64::sqrt)
}

/// Mean absolute error.
pub fn mean_absolute_error(y_true: ArrayView1<f64>, y_pred: ArrayView1<f64>) -> Result<f64> {
    check_pair(&y_true, &y_pred)?;
    Ok(reduction::sum_zip(y_true, y_pred, |t, p| (t - p).abs()) / y_true.len() as f64)
}

/// Coefficient of determination, scikit-learn's conventions: 1.0 for a perfect fit of a
/// constant target, 0.0 for an imperfect fit of a constant target.
pub fn r2_score(y_true: ArrayView1<f64>, y_pred: ArrayView1<f64>) -> Result<f64> {
    check_pair(&y_true, &y_pred)?;
    let ss_res = reduction::sum_zip(y_true, y_pred, |t, p| (t - p) * (t - p));
    let ss_tot = reduction::moments(y_true).m2;
    Ok(explained_fraction(ss_res, ss_tot))
}

/// Explained variance: `1 - Var(y_true - y_pred) / Var(y_true)`, with the same constant-target
/// rule as [`r2_score`].
pub fn explained_variance_score(y_true: ArrayView1<f64>, y_pred: ArrayView1<f64>) -> Result<f64> {
    check_pair(&y_true, &y_pred)?;
    let n = y_true.len() as f64;
    let mean_diff = reduction::sum_zip(y_true, y_pred, |t, p| t - p) / n;
    let numerator = reduction::sum_zip(y_true, y_pred, |t, p| {
        let r = t - p - mean_diff;
        r * r
    }) / n;
    let denominator = reduction::moments(y_true).m2 / n;
    Ok(explained_fraction(numerator, denominator))
}

/// Median of the absolute errors (the mean of the two middle values for an even count, as
/// NumPy's `median`).
pub fn median_absolute_error(y_true: ArrayView1<f64>, y_pred: ArrayView1<f64>) -> Result<f64> {
    check_pair(&y_true, &y_pred)?;
    let mut errors: Vec<f64> = y_true
        .iter()
        .zip(y_pred.iter())
        .map(|(t, p)| (p - t).abs())
        .collect();
    Ok(reduction::median_in_place(&mut errors))
}

/// Mean absolute percentage error, as a fraction (not multiplied by 100): `|y_pred - y_true|
/// / max(|y_true|, eps)`, averaged.
pub fn mean_absolute_percentage_error(
    y_true: ArrayView1<f64>,
    y_pred: ArrayView1<f64>,
) -> Result<f64> {
    check_pair(&y_true, &y_pred)?;
    let total = reduction::sum_zip(y_true, y_pred, |t, p| {
        (p - t).abs() / t.abs().max(f64::EPSILON)
    });
    if !total.is_finite() {
        return Err(Error::invalid_input(
            "mean_absolute_percentage_error overflowed: y_true has values too close to 0 for the errors' size",
        ));
    }
    Ok(total / y_true.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::arr1;

    #[test]
    fn regression_metrics_match_hand_computation() {
        // y = [1,2,3,4], pred = [1,2,3,5]: residuals [0,0,0,-1]
        let (t, p) = (arr1(&[1.0, 2.0, 3.0, 4.0]), arr1(&[1.0, 2.0, 3.0, 5.0]));
        // ss_res = 1, ss_tot = 5 -> 0.8
        assert!((r2_score(t.view(), p.view()).unwrap() - 0.8).abs() < 1e-15);
        assert_eq!(mean_squared_error(t.view(), p.view()).unwrap(), 0.25);
        assert_eq!(root_mean_squared_error(t.view(), p.view()).unwrap(), 0.5);
        assert_eq!(mean_absolute_error(t.view(), p.view()).unwrap(), 0.25);
        // Var(residual) = mean([0,0,0,-1] + 0.25)^2 = 3/16; Var(y) = 5/4 -> 1 - 0.15
        assert!((explained_variance_score(t.view(), p.view()).unwrap() - 0.85).abs() < 1e-15);
        assert_eq!(median_absolute_error(t.view(), p.view()).unwrap(), 0.0);
        assert_eq!(
            median_absolute_error(
                arr1(&[0.0, 0.0, 0.0]).view(),
                arr1(&[3.0, -1.0, 2.0]).view()
            )
            .unwrap(),
            2.0
        );
        // 1/4 * (1/4) = 0.0625
        assert!(
            (mean_absolute_percentage_error(t.view(), p.view()).unwrap() - 0.0625).abs() < 1e-16
        );
    }

    #[test]
    fn constant_targets_follow_force_finite() {
        let c = arr1(&[2.0, 2.0, 2.0]);
        assert_eq!(r2_score(c.view(), c.view()).unwrap(), 1.0);
        assert_eq!(
            r2_score(c.view(), arr1(&[2.0, 2.0, 3.0]).view()).unwrap(),
            0.0
        );
        assert_eq!(
            explained_variance_score(c.view(), arr1(&[3.0, 3.0, 3.0]).view()).unwrap(),
            1.0
        );
    }

    #[test]
    fn bad_input_is_refused_by_name() {
        let a = arr1(&[1.0, 2.0]);
        let err = mean_squared_error(a.view(), arr1(&[1.0]).view())
            .unwrap_err()
            .to_string();
        assert!(err.contains("different lengths"), "{err}");
        let err = r2_score(arr1(&[]).view(), arr1(&[]).view())
            .unwrap_err()
            .to_string();
        assert!(err.contains("empty"), "{err}");
        let err = mean_absolute_error(a.view(), arr1(&[1.0, f64::NAN]).view())
            .unwrap_err()
            .to_string();
        assert!(err.contains("y_pred") && err.contains("NaN"), "{err}");
    }
}
