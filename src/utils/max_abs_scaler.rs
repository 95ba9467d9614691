//! Scale each feature by its maximum absolute value (scikit-learn's `MaxAbsScaler`).

use super::scaling::{check_batch, fitted, handle_zero_scale};
use crate::error::Result;
use crate::math::{elementwise, reduction};
use crate::persistence::Persist;
use crate::validation;
use ndarray::{Array1, Array2, ArrayBase, Data, Ix2};
use serde::{Deserialize, Serialize};

/// `x / scale_` per feature with `scale_ = max_abs_` (1 for an all-zero feature), so values
/// land in `[-1, 1]` without shifting (sparsity is kept).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct MaxAbsScaler {
    n_features: Option<usize>,
    n_samples_seen: usize,
    max_abs: Option<Array1<f64>>,
    scale: Option<Array1<f64>>,
}

impl MaxAbsScaler {
    pub fn new() -> Self {
        Self::default()
    }

    /// Per-feature maximum absolute value (`max_abs_`).
    pub fn max_abs(&self) -> Option<&Array1<f64>> {
        self.max_abs.as_ref()
    }

    pub fn scale(&self) -> Option<&Array1<f64>> {
        self.scale.as_ref()
    }

    pub fn n_samples_seen(&self) -> Option<usize> {
        self.n_features.map(|_| self.n_samples_seen)
    }

    pub fn n_features_in(&self) -> Option<usize> {
        self.n_features
    }

    pub fn fit<S: Data<Elem = f64>>(&mut self, x: &ArrayBase<S, Ix2>) -> Result<&mut Self> {
        *self = Self::new();
        self.partial_fit(x)
    }

    /// Raise the fitted maxima with one more batch.
    pub fn partial_fit<S: Data<Elem = f64>>(&mut self, x: &ArrayBase<S, Ix2>) -> Result<&mut Self> {
        let x = x.view();
        match self.n_features {
            Some(d) => check_batch(&x, d, "MaxAbsScaler")?,
            None => validation::check_features(&x, "X")?,
        }
        let mut max_abs = reduction::column_max_abs(x);
        if let Some(old) = &self.max_abs {
            max_abs
                .iter_mut()
                .zip(old)
                .for_each(|(a, &b)| *a = a.max(b));
        }
        self.scale = Some(max_abs.iter().map(|&m| handle_zero_scale(m)).collect());
        self.max_abs = Some(Array1::from(max_abs));
        self.n_samples_seen += x.nrows();
        self.n_features = Some(x.ncols());
        Ok(self)
    }

    fn scale_slice(&self) -> &[f64] {
        self.scale
            .as_ref()
            .and_then(|s| s.as_slice())
            .expect("fitted")
    }

    /// `x / scale_`.
    pub fn transform<S: Data<Elem = f64>>(&self, x: &ArrayBase<S, Ix2>) -> Result<Array2<f64>> {
        let d = fitted(self.n_features, "MaxAbsScaler")?;
        check_batch(&x.view(), d, "MaxAbsScaler")?;
        Ok(elementwise::center_scale_columns(
            x.view(),
            None,
            Some(self.scale_slice()),
        ))
    }

    pub fn fit_transform<S: Data<Elem = f64>>(
        &mut self,
        x: &ArrayBase<S, Ix2>,
    ) -> Result<Array2<f64>> {
        self.fit(x)?;
        Ok(elementwise::center_scale_columns(
            x.view(),
            None,
            Some(self.scale_slice()),
        ))
    }

    /// `x * scale_`.
    pub fn inverse_transform<S: Data<Elem = f64>>(
        &self,
        x: &ArrayBase<S, Ix2>,
    ) -> Result<Array2<f64>> {
        let d = fitted(self.n_features, "MaxAbsScaler")?;
        check_batch(&x.view(), d, "MaxAbsScaler")?;
        Ok(elementwise::scale_shift_columns(
            x.view(),
            Some(self.scale_slice()),
            None,
        ))
    }
}

impl Persist for MaxAbsScaler {
    const MODEL_NAME: &'static str = "MaxAbsScaler";
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::arr2;

    #[test]
    fn divides_by_max_abs_and_keeps_zero_columns() {
        let x = arr2(&[[-4.0, 0.0, 1.0], [2.0, 0.0, -0.5]]);
        let mut sc = MaxAbsScaler::new();
        let z = sc.fit_transform(&x).unwrap();
        assert_eq!(z, arr2(&[[-1.0, 0.0, 1.0], [0.5, 0.0, -0.5]]));
        assert_eq!(sc.max_abs().unwrap().to_vec(), vec![4.0, 0.0, 1.0]);
        assert_eq!(sc.scale().unwrap().to_vec(), vec![4.0, 1.0, 1.0]);
        assert_eq!(sc.inverse_transform(&z).unwrap(), x);
        assert!(sc.transform(&arr2(&[[f64::INFINITY, 0.0, 0.0]])).is_err());
    }
}
