//! Scale each feature by its maximum absolute value (scikit-learn's `MaxAbsScaler`).

use crate::error::Result;
use crate::math::{elementwise, reduction};
use crate::persistence::Persist;
use crate::utils::scaling::{
    check_batch, check_fit_counts, check_fitted_vector, check_input, corrupt, fitted,
    handle_zero_scale, scaler_common, CheckedPersist,
};
use ndarray::{Array1, Array2, ArrayRef2, ArrayView2};
use serde::{Deserialize, Serialize};

/// `x / scale` per feature with `scale = max_abs` (1 for an all-zero feature), so values land
/// in `[-1, 1]` without shifting (zeros stay zeros).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct MaxAbsScaler {
    n_samples_seen: usize,
    state: Option<MaxAbsState>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct MaxAbsState {
    max_abs: Array1<f64>,
    scale: Array1<f64>,
}

impl MaxAbsState {
    fn new(max_abs: Vec<f64>) -> Self {
        Self {
            scale: max_abs.iter().map(|&m| handle_zero_scale(m)).collect(),
            max_abs: Array1::from(max_abs),
        }
    }
}

const NAME: &str = "MaxAbsScaler";

impl MaxAbsScaler {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    pub fn get_n_samples_seen(&self) -> usize {
        self.n_samples_seen
    }

    crate::accessors::fitted_getters! {
        state;
        /// Per-feature maximum absolute value.
        get_max_abs -> &max_abs: Array1<f64>,
        /// Per-feature divisor.
        get_scale -> &scale: Array1<f64>,
    }

    pub fn get_n_features(&self) -> Option<usize> {
        self.state.as_ref().map(|s| s.max_abs.len())
    }

    /// Learn the per-feature maxima of `x`, forgetting earlier fits. On error the scaler is
    /// left as it was.
    pub fn fit(&mut self, x: &ArrayRef2<f64>) -> Result<&mut Self> {
        let mut fresh = Self::new();
        fresh.partial_fit(x)?;
        *self = fresh;
        Ok(self)
    }

    /// Raise the fitted maxima with one more batch (the first batch fits). On error the
    /// scaler is left as it was.
    pub fn partial_fit(&mut self, x: &ArrayRef2<f64>) -> Result<&mut Self> {
        let x = x.view();
        match &self.state {
            Some(s) => check_batch(&x, s.max_abs.len())?,
            None => check_input(&x, "X")?,
        }
        let mut max_abs = reduction::column_max_abs(x);
        if let Some(s) = &self.state {
            max_abs
                .iter_mut()
                .zip(&s.max_abs)
                .for_each(|(a, &b)| *a = a.max(b));
        }
        self.state = Some(MaxAbsState::new(max_abs));
        self.n_samples_seen += x.nrows();
        Ok(self)
    }

    fn map(&self, s: &MaxAbsState, x: ArrayView2<f64>) -> Array2<f64> {
        elementwise::center_scale_columns(x, None, s.scale.as_slice())
    }

    /// `x * scale`.
    pub fn inverse_transform(&self, x: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        let s = fitted(&self.state, NAME)?;
        check_batch(&x.view(), s.max_abs.len())?;
        Ok(elementwise::scale_shift_columns(
            x.view(),
            s.scale.as_slice(),
            None,
        ))
    }
}

impl Persist for MaxAbsScaler {
    const MODEL_NAME: &'static str = NAME;
}

impl CheckedPersist for MaxAbsScaler {
    fn validate(&self) -> Result<()> {
        let counts = check_fit_counts(NAME, self.n_samples_seen, self.get_n_features())?;
        let (Some(d), Some(s)) = (counts, &self.state) else {
            return Ok(());
        };
        check_fitted_vector(NAME, "max_abs", &s.max_abs, d, |m| m >= 0.0)?;
        check_fitted_vector(NAME, "scale", &s.scale, d, |v| v > 0.0)?;
        let consistent = s
            .max_abs
            .iter()
            .zip(&s.scale)
            .all(|(&m, &v)| handle_zero_scale(m).to_bits() == v.to_bits());
        if !consistent {
            return Err(corrupt(NAME, "`scale` disagrees with `max_abs`"));
        }
        Ok(())
    }
}

scaler_common!(
    MaxAbsScaler,
    map over max_abs,
    /// `x / scale`.
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::utils::scaling::{exercise_byte_corruptions, refused_at_load};
    use ndarray::arr2;

    #[test]
    fn divides_by_max_abs_and_keeps_zero_columns() {
        let x = arr2(&[[-4.0, 0.0, 1.0], [2.0, 0.0, -0.5]]);
        let mut sc = MaxAbsScaler::new();
        let z = sc.fit_transform(&x).unwrap();
        assert_eq!(z, arr2(&[[-1.0, 0.0, 1.0], [0.5, 0.0, -0.5]]));
        assert_eq!(sc.get_max_abs().unwrap().to_vec(), vec![4.0, 0.0, 1.0]);
        assert_eq!(sc.get_scale().unwrap().to_vec(), vec![4.0, 1.0, 1.0]);
        assert_eq!(sc.inverse_transform(&z).unwrap(), x);
        assert!(matches!(
            sc.transform(&arr2(&[[f64::INFINITY, 0.0, 0.0]])),
            Err(Error::NonFinite(_))
        ));
        assert!(sc.partial_fit(&arr2(&[[f64::NAN, 0.0, 0.0]])).is_err());
        assert_eq!(sc.get_n_samples_seen(), 2);
    }

    #[test]
    fn a_corrupt_state_is_refused_at_load() {
        let mut sc = MaxAbsScaler::new();
        sc.fit(&arr2(&[[1.0, -2.0], [3.0, 0.5]])).unwrap();
        let good = sc.to_bytes().unwrap();
        assert!(MaxAbsScaler::from_bytes_checked(&good).is_ok());
        let mut bad = sc.clone();
        bad.state.as_mut().unwrap().scale = Array1::from(vec![3.0]);
        assert!(refused_at_load(&bad));
        let mut bad = sc.clone();
        bad.state.as_mut().unwrap().max_abs[0] = f64::INFINITY;
        assert!(refused_at_load(&bad));
        // any single-byte corruption is refused or leaves a model that transforms cleanly
        let probe = arr2(&[[2.0, 3.0]]);
        exercise_byte_corruptions(&good, |m: &MaxAbsScaler| {
            let _ = m.transform(&probe);
            let _ = m.inverse_transform(&probe);
        });
    }
}
