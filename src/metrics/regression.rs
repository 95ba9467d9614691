//! Regression metrics.

use crate::error::{Result, RustymlError};
use crate::math::reduction;
use ndarray::{ArrayView1, Zip};

pub(crate) fn check_pair(y_true: &ArrayView1<f64>, y_pred: &ArrayView1<f64>) -> Result<()> {
    if y_true.len() != y_pred.len() {
        return Err(RustymlError::invalid(format!(
            "y_true and y_pred have different lengths ({} and {})",
            y_true.len(),
            y_pred.len()
        )));
    }
    if y_true.is_empty() {
        return Err(RustymlError::invalid("y_true and y_pred are empty"));
    }
    if y_true.iter().chain(y_pred.iter()).any(|v| !v.is_finite()) {
        return Err(RustymlError::invalid(
            "y_true or y_pred contains NaN or infinity",
        ));
    }
    Ok(())
}

/// Coefficient of determination, scikit-learn's conventions: 1.0 for a perfect fit of a
/// constant target, 0.0 for an imperfect fit of a constant target.
pub fn r2_score(y_true: ArrayView1<f64>, y_pred: ArrayView1<f64>) -> Result<f64> {
    check_pair(&y_true, &y_pred)?;
    let residual = Zip::from(&y_true).and(&y_pred).map_collect(|&t, &p| t - p);
    let ss_res = reduction::sq_sum(residual.view());
    let m = reduction::moments(y_true);
    let ss_tot = m.m2;
    Ok(if ss_tot == 0.0 {
        if ss_res == 0.0 {
            1.0
        } else {
            0.0
        }
    } else {
        1.0 - ss_res / ss_tot
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::arr1;

    #[test]
    fn r2_matches_hand_computation() {
        // y = [1,2,3,4], pred = [1,2,3,5]: ss_res = 1, ss_tot = 5 -> 0.8
        let r2 = r2_score(
            arr1(&[1.0, 2.0, 3.0, 4.0]).view(),
            arr1(&[1.0, 2.0, 3.0, 5.0]).view(),
        )
        .unwrap();
        assert!((r2 - 0.8).abs() < 1e-15);
        assert!(r2_score(arr1(&[1.0]).view(), arr1(&[1.0, 2.0]).view()).is_err());
    }
}
