//! Zero mean, unit variance per feature (scikit-learn's `StandardScaler`).

use crate::error::{Error, Result};
use crate::math::elementwise;
use crate::math::reduction::Moments;
use crate::persistence::Persist;
use crate::utils::scaling::{
    check_batch, check_fit_counts, check_fitted_vector, check_not_empty, checked_column_moments,
    fitted, scaler_common, std_scale, CheckedPersist,
};
use ndarray::{Array1, Array2, ArrayRef2, ArrayView2};
use serde::{Deserialize, Serialize};

/// `z = (x - mean) / scale` per feature.
///
/// Fitted statistics: the mean, the population variance and `scale` (its square root, 1 for a
/// constant feature). They are computed whatever the flags; `with_mean` / `with_std` only
/// decide which steps `transform` applies. Statistics are deterministic Welford/Chan column
/// moments; [`partial_fit`](Self::partial_fit) merges batches as one fit over their union
/// would, up to rounding.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StandardScaler {
    with_mean: bool,
    with_std: bool,
    n_samples_seen: usize,
    state: Option<StandardState>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct StandardState {
    mean: Array1<f64>,
    var: Array1<f64>,
    scale: Array1<f64>,
}

impl Default for StandardScaler {
    fn default() -> Self {
        Self::new()
    }
}

const NAME: &str = "StandardScaler";

impl StandardScaler {
    /// Centring and scaling both on, not fitted.
    pub fn new() -> Self {
        Self {
            with_mean: true,
            with_std: true,
            n_samples_seen: 0,
            state: None,
        }
    }

    crate::accessors::builder_setters! {
        /// Whether `transform` subtracts the mean.
        with_mean(with_mean: bool),
        /// Whether `transform` divides by the standard deviation.
        with_std(with_std: bool),
    }

    crate::accessors::field_getters! {
        get_with_mean -> with_mean: bool,
        get_with_std -> with_std: bool,
        /// Samples seen by the fits so far (0 before any).
        get_n_samples_seen -> n_samples_seen: usize,
    }

    crate::accessors::fitted_getters! {
        state;
        /// Per-feature mean.
        get_mean -> &mean: Array1<f64>,
        /// Per-feature population variance.
        get_var -> &var: Array1<f64>,
        /// Per-feature divisor (the standard deviation, 1 for a constant feature).
        get_scale -> &scale: Array1<f64>,
    }

    /// Features seen at fit.
    pub fn get_n_features(&self) -> Option<usize> {
        self.state.as_ref().map(|s| s.mean.len())
    }

    /// Compute the statistics of `x` (`n_samples x n_features`), forgetting earlier fits. On
    /// error the scaler is left as it was.
    pub fn fit(&mut self, x: &ArrayRef2<f64>) -> Result<&mut Self> {
        let mut fresh = Self::new()
            .with_mean(self.with_mean)
            .with_std(self.with_std);
        fresh.partial_fit(x)?;
        *self = fresh;
        Ok(self)
    }

    /// Merge the statistics of one more batch (the first batch fits). On error the scaler is
    /// left as it was.
    pub fn partial_fit(&mut self, x: &ArrayRef2<f64>) -> Result<&mut Self> {
        let x = x.view();
        if let Some(n_features) = self.get_n_features() {
            check_not_empty(&x, "X")?;
            if x.ncols() != n_features {
                return Err(Error::dimension_mismatch(n_features, x.ncols()));
            }
        }
        let batch = checked_column_moments(&x)?;
        let merged: Vec<Moments> = match &self.state {
            Some(s) => s
                .mean
                .iter()
                .zip(&s.var)
                .zip(&batch)
                .map(|((&mean, &var), b)| {
                    let count = self.n_samples_seen;
                    let m2 = var * count as f64;
                    Moments { count, mean, m2 }.merge(*b)
                })
                .collect(),
            None => batch,
        };
        let n = (self.n_samples_seen + x.nrows()) as f64;
        self.state = Some(StandardState {
            mean: merged.iter().map(|m| m.mean).collect(),
            var: merged.iter().map(|m| m.m2 / n).collect(),
            scale: merged.iter().map(std_scale).collect(),
        });
        self.n_samples_seen += x.nrows();
        Ok(self)
    }

    fn map(&self, state: &StandardState, x: ArrayView2<f64>) -> Array2<f64> {
        let center = self.with_mean.then(|| state.mean.as_slice()).flatten();
        let scale = self.with_std.then(|| state.scale.as_slice()).flatten();
        elementwise::center_scale_columns(x, center, scale)
    }

    /// `x * scale + mean` (each step only when enabled), undoing
    /// [`transform`](Self::transform).
    pub fn inverse_transform(&self, x: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        let state = fitted(&self.state, NAME)?;
        check_batch(&x.view(), state.mean.len())?;
        let scale = self.with_std.then(|| state.scale.as_slice()).flatten();
        let center = self.with_mean.then(|| state.mean.as_slice()).flatten();
        Ok(elementwise::scale_shift_columns(x.view(), scale, center))
    }
}

impl Persist for StandardScaler {
    const MODEL_NAME: &'static str = NAME;
}

impl CheckedPersist for StandardScaler {
    fn validate(&self) -> Result<()> {
        let counts = check_fit_counts(NAME, self.n_samples_seen, self.get_n_features())?;
        let (Some(d), Some(s)) = (counts, &self.state) else {
            return Ok(());
        };
        check_fitted_vector(NAME, "mean", &s.mean, d, |_| true)?;
        check_fitted_vector(NAME, "var", &s.var, d, |v| v >= 0.0)?;
        check_fitted_vector(NAME, "scale", &s.scale, d, |v| v > 0.0)
    }
}

scaler_common!(
    StandardScaler,
    map over mean,
    /// `(x - mean) / scale` (each step only when enabled).
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::utils::scaling::refused_at_load;
    use ndarray::{arr2, s};

    #[test]
    fn standardizes_by_hand_and_inverts() {
        // column 0: [1, 3] mean 2, std 1; column 1 constant 5 -> scale 1
        let x = arr2(&[[1.0, 5.0], [3.0, 5.0]]);
        let mut sc = StandardScaler::default();
        let z = sc.fit_transform(&x).unwrap();
        assert_eq!(z, arr2(&[[-1.0, 0.0], [1.0, 0.0]]));
        assert_eq!(sc.get_mean().unwrap().to_vec(), vec![2.0, 5.0]);
        assert_eq!(sc.get_var().unwrap().to_vec(), vec![1.0, 0.0]);
        assert_eq!(sc.get_scale().unwrap().to_vec(), vec![1.0, 1.0]);
        assert_eq!(sc.get_n_samples_seen(), 2);
        assert_eq!(sc.inverse_transform(&z).unwrap(), x);
        let mut only_std = StandardScaler::new().with_mean(false);
        assert_eq!(only_std.fit_transform(&x).unwrap(), x);
        let mut neither = StandardScaler::new().with_mean(false).with_std(false);
        assert_eq!(neither.fit_transform(&x).unwrap(), x);
        assert_eq!(neither.get_mean().unwrap().to_vec(), vec![2.0, 5.0]);
    }

    #[test]
    fn partial_fit_equals_one_fit() {
        let x = ndarray::Array2::from_shape_fn((101, 3), |(i, j)| {
            ((i * 3 + j) as f64).sqrt() * (j as f64 - 1.0)
        });
        let mut whole = StandardScaler::default();
        whole.fit(&x).unwrap();
        let mut parts = StandardScaler::default();
        parts.partial_fit(&x.slice(s![..40, ..])).unwrap();
        parts.partial_fit(&x.slice(s![40.., ..])).unwrap();
        let (a, b) = (whole.get_var().unwrap(), parts.get_var().unwrap());
        for (a, b) in a.iter().zip(b) {
            assert!((a - b).abs() <= 1e-13 * a.abs().max(1.0));
        }
        assert_eq!(parts.get_n_samples_seen(), 101);
    }

    #[test]
    fn bad_input_is_refused_and_leaves_the_fit_alone() {
        let mut sc = StandardScaler::default();
        assert!(matches!(
            sc.transform(&arr2(&[[1.0]])),
            Err(Error::NotFitted("StandardScaler"))
        ));
        let err = sc.fit(&arr2(&[[1.0, f64::NAN]])).unwrap_err();
        assert!(matches!(err, Error::NonFinite(_)), "{err:?}");
        assert!(err.to_string().contains("column 1"), "{err}");
        sc.fit(&arr2(&[[1.0, 2.0], [3.0, 4.0]])).unwrap();
        assert!(matches!(
            sc.transform(&arr2(&[[1.0]])),
            Err(Error::DimensionMismatch {
                expected: 2,
                found: 1
            })
        ));
        // a failed refit or partial fit keeps the previous statistics
        assert!(sc.fit(&arr2(&[[f64::INFINITY, 0.0]])).is_err());
        assert!(sc.partial_fit(&arr2(&[[1.0, 2.0, 3.0]])).is_err());
        assert_eq!(sc.get_mean().unwrap().to_vec(), vec![2.0, 3.0]);
        assert_eq!(sc.get_n_samples_seen(), 2);
        let back = StandardScaler::from_bytes_checked(&sc.to_bytes().unwrap()).unwrap();
        assert_eq!(back.get_mean(), sc.get_mean());
    }

    #[test]
    fn a_corrupt_state_is_refused_at_load() {
        let mut sc = StandardScaler::new();
        sc.fit(&arr2(&[[1.0, 2.0], [3.0, 5.0]])).unwrap();
        let mut bad = sc.clone();
        bad.state.as_mut().unwrap().scale[1] = 0.0;
        assert!(refused_at_load(&bad));
        let mut bad = sc.clone();
        bad.state.as_mut().unwrap().var = Array1::zeros(3);
        assert!(refused_at_load(&bad));
        let mut bad = sc.clone();
        bad.state.as_mut().unwrap().mean[0] = f64::NAN;
        assert!(refused_at_load(&bad));
        // a count that a later partial fit would overflow, or one without statistics
        let mut bad = sc.clone();
        bad.n_samples_seen = usize::MAX;
        assert!(refused_at_load(&bad));
        let mut bad = sc;
        bad.state = None;
        assert!(refused_at_load(&bad));
        bad.n_samples_seen = 0;
        assert!(StandardScaler::from_bytes_checked(&bad.to_bytes().unwrap()).is_ok());
    }

    #[test]
    fn a_constant_feature_has_exactly_its_value_and_no_variance() {
        // summed and divided, ten copies of 1e-10 are not 1e-10: the variance was ~1e-52
        for (n, v) in [
            (10, 1e-10),
            (7, 0.1),
            (1000, 1.0 / 3.0),
            (5, -2.5e7),
            (3, 1e300),
        ] {
            let x = Array2::from_elem((n, 1), v);
            let mut sc = StandardScaler::new();
            sc.fit(&x).unwrap();
            assert_eq!(sc.get_var().unwrap()[0], 0.0, "{v}");
            assert_eq!(sc.get_mean().unwrap()[0], v);
            assert_eq!(sc.get_scale().unwrap()[0], 1.0);
            assert!(sc.transform(&x).unwrap().iter().all(|&z| z == 0.0));
            sc.partial_fit(&x).unwrap();
            assert_eq!(sc.get_var().unwrap()[0], 0.0);
        }
    }
}
