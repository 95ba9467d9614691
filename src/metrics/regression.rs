//! Regression metrics with the original crate's signatures: `(y_true, y_pred)` of any f64
//! storage, a plain `f64` result, a panic on mismatched lengths or empty input.
//!
//! Each delegates to the scikit-learn-style function of the same name in
//! [`checked::regression`](super::checked::regression); only the constant-target rule of
//! [`r2_score`] and [`explained_variance_score`] is the original's (see there).

use super::checked::regression as checked;
use super::{or_panic, pair_views};
use crate::error::Result;
use ndarray::{ArrayBase, ArrayView1, Data, Ix1};

/// Generates the original-API wrapper of a checked regression metric.
macro_rules! regression_metric {
    ($(#[$doc:meta])* $name:ident => $body:expr) => {
        $(#[$doc])*
        ///
        /// # Panics
        /// If the lengths differ, the input is empty or holds NaN/infinity.
        pub fn $name<S1, S2>(y_true: &ArrayBase<S1, Ix1>, y_pred: &ArrayBase<S2, Ix1>) -> f64
        where
            S1: Data<Elem = f64>,
            S2: Data<Elem = f64>,
        {
            let body: fn(ArrayView1<f64>, ArrayView1<f64>) -> Result<f64> = $body;
            or_panic(pair_views(y_true, y_pred).and_then(|(t, p)| body(t, p)))
        }
    };
}

regression_metric!(
    /// Mean squared error.
    mean_squared_error => checked::mean_squared_error
);
regression_metric!(
    /// Root mean squared error.
    root_mean_squared_error => checked::root_mean_squared_error
);
regression_metric!(
    /// Mean absolute error.
    mean_absolute_error => checked::mean_absolute_error
);
regression_metric!(
    /// Median of the absolute errors.
    median_absolute_error => checked::median_absolute_error
);
regression_metric!(
    /// Mean absolute percentage error as a fraction; `|y_true|` is floored at `f64::EPSILON`.
    mean_absolute_percentage_error => checked::mean_absolute_percentage_error
);
regression_metric!(
    /// Coefficient of determination. A constant `y_true` (all values equal, checked on the
    /// values themselves because the mean of e.g. eight `0.1`s does not round-trip) scores 1.0
    /// for a perfect prediction and 0.0 otherwise.
    r2_score => |t, p| match all_equal(&t) {
        true => Ok(perfect_or_zero(t.iter().zip(p.iter()).all(|(a, b)| a == b))),
        false => checked::r2_score(t, p),
    }
);
regression_metric!(
    /// Explained variance `1 - Var(y_true - y_pred) / Var(y_true)`. A constant `y_true`
    /// scores 1.0 when the residuals are constant too (a pure bias explains everything) and
    /// 0.0 otherwise.
    explained_variance_score => |t, p| match all_equal(&t) {
        true => {
            let first = t[0] - p[0];
            Ok(perfect_or_zero(t.iter().zip(p.iter()).all(|(a, b)| a - b == first)))
        }
        false => checked::explained_variance_score(t, p),
    }
);

/// Whether every value equals the first (the input is not empty here).
fn all_equal(v: &ArrayView1<f64>) -> bool {
    v.iter().all(|&x| x == v[0])
}

fn perfect_or_zero(perfect: bool) -> f64 {
    if perfect {
        1.0
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::arr1;

    #[test]
    fn constant_target_is_recognised_on_the_values() {
        // 0.1 does not survive sum / n, so a mean-based variance is ~1e-33, not 0.
        let t = arr1(&[0.1; 8]);
        assert_eq!(r2_score(&t, &t), 1.0);
        assert_eq!(r2_score(&t, &arr1(&[0.2; 8])), 0.0);
        assert_eq!(explained_variance_score(&t, &arr1(&[0.2; 8])), 1.0);
        assert_eq!(
            explained_variance_score(&t, &arr1(&[0.2, 0.3, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2])),
            0.0
        );
        // A non-constant target goes through the general formula: 1 - 1/5.
        let y = arr1(&[1.0, 2.0, 3.0, 4.0]);
        assert!((r2_score(&y, &arr1(&[1.0, 2.0, 3.0, 5.0]).view()) - 0.8).abs() < 1e-15);
    }

    #[test]
    #[should_panic(expected = "dimension mismatch: expected 2, found 1")]
    fn length_mismatch_panics_with_the_original_message() {
        mean_squared_error(&arr1(&[1.0, 2.0]), &arr1(&[1.0]));
    }

    #[test]
    #[should_panic(expected = "input is empty")]
    fn empty_input_panics() {
        mean_absolute_error(&arr1::<f64>(&[]), &arr1::<f64>(&[]));
    }
}
