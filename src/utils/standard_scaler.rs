//! Zero mean, unit variance per feature (scikit-learn's `StandardScaler`).

use super::scaling::{check_batch, checked_column_moments, fitted, std_scale};
use crate::error::Result;
use crate::math::elementwise;
use crate::math::reduction::Moments;
use crate::persistence::Persist;
use ndarray::{Array1, Array2, ArrayBase, Data, Ix2};
use serde::{Deserialize, Serialize};

/// `z = (x - mean_) / scale_` per feature.
///
/// Fitted attributes follow scikit-learn: `mean_` (when `with_mean` or `with_std`), `var_`
/// (population variance) and `scale_` (its square root, 1 for a constant feature) when
/// `with_std`, `n_samples_seen_`. Statistics are deterministic Welford/Chan column moments;
/// [`partial_fit`](Self::partial_fit) merges batches exactly as one fit over their union would
/// up to rounding.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StandardScaler {
    pub with_mean: bool,
    pub with_std: bool,
    n_features: Option<usize>,
    n_samples_seen: usize,
    mean: Option<Array1<f64>>,
    /// Sums of squared deviations (`var * n`), kept for exact batch merging.
    m2: Option<Array1<f64>>,
    scale: Option<Array1<f64>>,
}

impl Default for StandardScaler {
    fn default() -> Self {
        Self::new(true, true)
    }
}

impl StandardScaler {
    pub fn new(with_mean: bool, with_std: bool) -> Self {
        Self {
            with_mean,
            with_std,
            n_features: None,
            n_samples_seen: 0,
            mean: None,
            m2: None,
            scale: None,
        }
    }

    /// Per-feature mean (`mean_`); `None` before fit or when neither centring nor scaling.
    pub fn mean(&self) -> Option<&Array1<f64>> {
        self.mean
            .as_ref()
            .filter(|_| self.with_mean || self.with_std)
    }

    /// Per-feature population variance (`var_`); `None` unless `with_std`.
    pub fn var(&self) -> Option<Array1<f64>> {
        let m2 = self.m2.as_ref().filter(|_| self.with_std)?;
        Some(m2 / self.n_samples_seen as f64)
    }

    /// Per-feature divisor (`scale_`); `None` unless `with_std`.
    pub fn scale(&self) -> Option<&Array1<f64>> {
        self.scale.as_ref().filter(|_| self.with_std)
    }

    /// Samples seen by the fits so far (`n_samples_seen_`).
    pub fn n_samples_seen(&self) -> Option<usize> {
        self.n_features.map(|_| self.n_samples_seen)
    }

    /// Features seen at fit (`n_features_in_`).
    pub fn n_features_in(&self) -> Option<usize> {
        self.n_features
    }

    /// Compute the statistics of `x` (`n_samples x n_features`), forgetting earlier fits.
    pub fn fit<S: Data<Elem = f64>>(&mut self, x: &ArrayBase<S, Ix2>) -> Result<&mut Self> {
        *self = Self::new(self.with_mean, self.with_std);
        self.partial_fit(x)
    }

    /// Merge the statistics of one more batch.
    pub fn partial_fit<S: Data<Elem = f64>>(&mut self, x: &ArrayBase<S, Ix2>) -> Result<&mut Self> {
        let x = x.view();
        if let Some(d) = self.n_features {
            check_batch(&x, d, "StandardScaler")?;
        }
        let batch = checked_column_moments(&x)?;
        let merged: Vec<Moments> = match (&self.mean, &self.m2) {
            (Some(mean), Some(m2)) => mean
                .iter()
                .zip(m2)
                .zip(&batch)
                .map(|((&mean, &m2), b)| {
                    Moments {
                        count: self.n_samples_seen,
                        mean,
                        m2,
                    }
                    .merge(*b)
                })
                .collect(),
            _ => batch,
        };
        self.n_samples_seen += x.nrows();
        self.n_features = Some(x.ncols());
        self.scale = Some(merged.iter().map(std_scale).collect());
        self.mean = Some(merged.iter().map(|m| m.mean).collect());
        self.m2 = Some(merged.iter().map(|m| m.m2).collect());
        Ok(self)
    }

    fn map(&self, x: ndarray::ArrayView2<f64>) -> Array2<f64> {
        let center = self
            .mean
            .as_ref()
            .filter(|_| self.with_mean)
            .and_then(|m| m.as_slice());
        let scale = self
            .scale
            .as_ref()
            .filter(|_| self.with_std)
            .and_then(|s| s.as_slice());
        elementwise::center_scale_columns(x, center, scale)
    }

    /// `(x - mean_) / scale_` (each step only when enabled).
    pub fn transform<S: Data<Elem = f64>>(&self, x: &ArrayBase<S, Ix2>) -> Result<Array2<f64>> {
        let d = fitted(self.n_features, "StandardScaler")?;
        check_batch(&x.view(), d, "StandardScaler")?;
        Ok(self.map(x.view()))
    }

    /// Fit, then transform the same data (validated once).
    pub fn fit_transform<S: Data<Elem = f64>>(
        &mut self,
        x: &ArrayBase<S, Ix2>,
    ) -> Result<Array2<f64>> {
        self.fit(x)?;
        Ok(self.map(x.view()))
    }

    /// `x * scale_ + mean_`, undoing [`transform`](Self::transform).
    pub fn inverse_transform<S: Data<Elem = f64>>(
        &self,
        x: &ArrayBase<S, Ix2>,
    ) -> Result<Array2<f64>> {
        let d = fitted(self.n_features, "StandardScaler")?;
        check_batch(&x.view(), d, "StandardScaler")?;
        let scale = self
            .scale
            .as_ref()
            .filter(|_| self.with_std)
            .and_then(|s| s.as_slice());
        let center = self
            .mean
            .as_ref()
            .filter(|_| self.with_mean)
            .and_then(|m| m.as_slice());
        Ok(elementwise::scale_shift_columns(x.view(), scale, center))
    }
}

impl Persist for StandardScaler {
    const MODEL_NAME: &'static str = "StandardScaler";
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{arr2, s};

    #[test]
    fn standardizes_by_hand_and_inverts() {
        // column 0: [1, 3] mean 2, std 1; column 1 constant 5 -> scale 1
        let x = arr2(&[[1.0, 5.0], [3.0, 5.0]]);
        let mut sc = StandardScaler::default();
        let z = sc.fit_transform(&x).unwrap();
        assert_eq!(z, arr2(&[[-1.0, 0.0], [1.0, 0.0]]));
        assert_eq!(sc.mean().unwrap().to_vec(), vec![2.0, 5.0]);
        assert_eq!(sc.var().unwrap().to_vec(), vec![1.0, 0.0]);
        assert_eq!(sc.scale().unwrap().to_vec(), vec![1.0, 1.0]);
        assert_eq!(sc.n_samples_seen(), Some(2));
        assert_eq!(sc.inverse_transform(&z).unwrap(), x);
        let mut only_std = StandardScaler::new(false, true);
        assert_eq!(
            only_std.fit_transform(&x).unwrap(),
            arr2(&[[1.0, 5.0], [3.0, 5.0]])
        );
        let mut neither = StandardScaler::new(false, false);
        neither.fit(&x).unwrap();
        assert!(neither.mean().is_none() && neither.scale().is_none());
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
        for (a, b) in whole.var().unwrap().iter().zip(parts.var().unwrap().iter()) {
            assert!((a - b).abs() <= 1e-13 * a.abs().max(1.0));
        }
        assert_eq!(parts.n_samples_seen(), Some(101));
    }

    #[test]
    fn bad_input_is_refused() {
        let mut sc = StandardScaler::default();
        assert!(sc
            .transform(&arr2(&[[1.0]]))
            .unwrap_err()
            .to_string()
            .contains("has not been fitted"));
        let err = sc.fit(&arr2(&[[1.0, f64::NAN]])).unwrap_err().to_string();
        assert!(err.contains("NaN") && err.contains("column 1"), "{err}");
        sc.fit(&arr2(&[[1.0, 2.0]])).unwrap();
        assert!(sc
            .transform(&arr2(&[[1.0]]))
            .unwrap_err()
            .to_string()
            .contains("features"));
        let bytes = sc.to_bytes().unwrap();
        let back = StandardScaler::from_bytes(&bytes).unwrap();
        assert_eq!(back.mean(), sc.mean());
    }
}
