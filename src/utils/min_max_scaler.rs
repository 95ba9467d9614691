//! Scale each feature to a range (scikit-learn's `MinMaxScaler`).

use super::scaling::{check_batch, fitted, handle_zero_scale};
use crate::error::{Result, RustymlError};
use crate::math::{elementwise, reduction};
use crate::persistence::Persist;
use crate::validation;
use ndarray::{Array1, Array2, ArrayBase, Data, Ix2};
use serde::{Deserialize, Serialize};

/// `x * scale_ + min_` per feature, mapping `[data_min_, data_max_]` onto `feature_range`.
///
/// Fitted attributes as scikit-learn: `data_min_`, `data_max_`, `data_range_`, `scale_ =
/// (hi - lo) / data_range_` (a constant feature's range counts as 1), `min_ = lo - data_min_ *
/// scale_`, `n_samples_seen_`. With `clip`, transformed values are clipped to the range.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MinMaxScaler {
    pub feature_range: (f64, f64),
    pub clip: bool,
    n_features: Option<usize>,
    n_samples_seen: usize,
    data_min: Option<Array1<f64>>,
    data_max: Option<Array1<f64>>,
    scale: Option<Array1<f64>>,
    min: Option<Array1<f64>>,
}

impl Default for MinMaxScaler {
    fn default() -> Self {
        Self::new((0.0, 1.0), false)
    }
}

impl MinMaxScaler {
    pub fn new(feature_range: (f64, f64), clip: bool) -> Self {
        Self {
            feature_range,
            clip,
            n_features: None,
            n_samples_seen: 0,
            data_min: None,
            data_max: None,
            scale: None,
            min: None,
        }
    }

    pub fn data_min(&self) -> Option<&Array1<f64>> {
        self.data_min.as_ref()
    }

    pub fn data_max(&self) -> Option<&Array1<f64>> {
        self.data_max.as_ref()
    }

    /// `data_max_ - data_min_`.
    pub fn data_range(&self) -> Option<Array1<f64>> {
        Some(self.data_max.as_ref()? - self.data_min.as_ref()?)
    }

    pub fn scale(&self) -> Option<&Array1<f64>> {
        self.scale.as_ref()
    }

    /// The per-feature offset (`min_`).
    pub fn min(&self) -> Option<&Array1<f64>> {
        self.min.as_ref()
    }

    pub fn n_samples_seen(&self) -> Option<usize> {
        self.n_features.map(|_| self.n_samples_seen)
    }

    pub fn n_features_in(&self) -> Option<usize> {
        self.n_features
    }

    fn check_params(&self) -> Result<()> {
        let (lo, hi) = self.feature_range;
        if !(lo.is_finite() && hi.is_finite()) || lo >= hi {
            return Err(RustymlError::invalid(format!(
                "Minimum of desired feature range must be smaller than maximum. Got ({lo}, {hi})."
            )));
        }
        Ok(())
    }

    pub fn fit<S: Data<Elem = f64>>(&mut self, x: &ArrayBase<S, Ix2>) -> Result<&mut Self> {
        *self = Self::new(self.feature_range, self.clip);
        self.partial_fit(x)
    }

    /// Widen the fitted minima and maxima with one more batch.
    pub fn partial_fit<S: Data<Elem = f64>>(&mut self, x: &ArrayBase<S, Ix2>) -> Result<&mut Self> {
        self.check_params()?;
        let x = x.view();
        match self.n_features {
            Some(d) => check_batch(&x, d, "MinMaxScaler")?,
            None => validation::check_features(&x, "X")?,
        }
        let (mut lo, mut hi) = reduction::column_min_max(x);
        if let (Some(old_lo), Some(old_hi)) = (&self.data_min, &self.data_max) {
            lo.iter_mut().zip(old_lo).for_each(|(a, &b)| *a = a.min(b));
            hi.iter_mut().zip(old_hi).for_each(|(a, &b)| *a = a.max(b));
        }
        let (r0, r1) = self.feature_range;
        let scale: Array1<f64> = lo
            .iter()
            .zip(&hi)
            .map(|(&a, &b)| (r1 - r0) / handle_zero_scale(b - a))
            .collect();
        self.min = Some(lo.iter().zip(&scale).map(|(&a, &s)| r0 - a * s).collect());
        self.scale = Some(scale);
        self.data_min = Some(Array1::from(lo));
        self.data_max = Some(Array1::from(hi));
        self.n_samples_seen += x.nrows();
        self.n_features = Some(x.ncols());
        Ok(self)
    }

    fn map(&self, x: ndarray::ArrayView2<f64>) -> Array2<f64> {
        let (scale, offset) = (self.scale.as_ref().unwrap(), self.min.as_ref().unwrap());
        let (scale, offset) = (scale.as_slice().unwrap(), offset.as_slice().unwrap());
        if self.clip {
            let (lo, hi) = self.feature_range;
            elementwise::map_rows(x, |_, row, out| {
                for (((o, &v), &s), &m) in out.iter_mut().zip(row).zip(scale).zip(offset) {
                    *o = (v * s + m).clamp(lo, hi);
                }
            })
        } else {
            elementwise::scale_shift_columns(x, Some(scale), Some(offset))
        }
    }

    /// `x * scale_ + min_` (then clipped with `clip`).
    pub fn transform<S: Data<Elem = f64>>(&self, x: &ArrayBase<S, Ix2>) -> Result<Array2<f64>> {
        let d = fitted(self.n_features, "MinMaxScaler")?;
        check_batch(&x.view(), d, "MinMaxScaler")?;
        Ok(self.map(x.view()))
    }

    pub fn fit_transform<S: Data<Elem = f64>>(
        &mut self,
        x: &ArrayBase<S, Ix2>,
    ) -> Result<Array2<f64>> {
        self.fit(x)?;
        Ok(self.map(x.view()))
    }

    /// `(x - min_) / scale_`.
    pub fn inverse_transform<S: Data<Elem = f64>>(
        &self,
        x: &ArrayBase<S, Ix2>,
    ) -> Result<Array2<f64>> {
        let d = fitted(self.n_features, "MinMaxScaler")?;
        check_batch(&x.view(), d, "MinMaxScaler")?;
        let (scale, offset) = (self.scale.as_ref().unwrap(), self.min.as_ref().unwrap());
        Ok(elementwise::center_scale_columns(
            x.view(),
            offset.as_slice(),
            scale.as_slice(),
        ))
    }
}

impl Persist for MinMaxScaler {
    const MODEL_NAME: &'static str = "MinMaxScaler";
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::arr2;

    #[test]
    fn maps_onto_the_range_by_hand() {
        // column 0 in [0, 4], column 1 constant 3
        let x = arr2(&[[0.0, 3.0], [4.0, 3.0], [2.0, 3.0]]);
        let mut sc = MinMaxScaler::new((-1.0, 1.0), false);
        let z = sc.fit_transform(&x).unwrap();
        // scale = [2/4, 2/1], min = [-1 - 0, -1 - 3*2]
        assert_eq!(z, arr2(&[[-1.0, -1.0], [1.0, -1.0], [0.0, -1.0]]));
        assert_eq!(sc.data_range().unwrap().to_vec(), vec![4.0, 0.0]);
        assert_eq!(sc.inverse_transform(&z).unwrap(), x);
        let mut clipped = sc.clone();
        clipped.clip = true;
        assert_eq!(
            clipped.transform(&arr2(&[[8.0, 3.0]])).unwrap(),
            arr2(&[[1.0, -1.0]])
        );
        assert!(MinMaxScaler::new((1.0, 0.0), false)
            .fit(&x)
            .unwrap_err()
            .to_string()
            .contains("smaller than maximum"));
    }

    #[test]
    fn partial_fit_widens_the_range() {
        let mut sc = MinMaxScaler::default();
        sc.partial_fit(&arr2(&[[1.0], [2.0]])).unwrap();
        sc.partial_fit(&arr2(&[[-3.0], [0.0]])).unwrap();
        assert_eq!(
            (sc.data_min().unwrap()[0], sc.data_max().unwrap()[0]),
            (-3.0, 2.0)
        );
        assert_eq!(sc.n_samples_seen(), Some(4));
    }
}
