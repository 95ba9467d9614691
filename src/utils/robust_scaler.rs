//! Centre on the median, scale by an inter-quantile range (scikit-learn's `RobustScaler`).

use super::scaling::{check_batch, fitted, handle_zero_scale};
use crate::error::{Result, RustymlError};
use crate::math::{elementwise, reduction};
use crate::persistence::Persist;
use crate::validation;
use ndarray::{Array1, Array2, ArrayBase, ArrayView2, Data, Ix2};
use serde::{Deserialize, Serialize};

/// `(x - center_) / scale_` with `center_` the per-feature median and `scale_` the spread
/// between the `quantile_range` percentiles (NumPy's linear interpolation; a zero spread
/// counts as 1). Outliers barely move either statistic.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RobustScaler {
    pub with_centering: bool,
    pub with_scaling: bool,
    pub quantile_range: (f64, f64),
    n_features: Option<usize>,
    center: Option<Array1<f64>>,
    scale: Option<Array1<f64>>,
}

impl Default for RobustScaler {
    fn default() -> Self {
        Self::new(true, true, (25.0, 75.0))
    }
}

impl RobustScaler {
    pub fn new(with_centering: bool, with_scaling: bool, quantile_range: (f64, f64)) -> Self {
        Self {
            with_centering,
            with_scaling,
            quantile_range,
            n_features: None,
            center: None,
            scale: None,
        }
    }

    /// Per-feature median (`center_`); `None` unless `with_centering`.
    pub fn center(&self) -> Option<&Array1<f64>> {
        self.center.as_ref()
    }

    /// Per-feature inter-quantile range (`scale_`); `None` unless `with_scaling`.
    pub fn scale(&self) -> Option<&Array1<f64>> {
        self.scale.as_ref()
    }

    pub fn n_features_in(&self) -> Option<usize> {
        self.n_features
    }

    pub fn fit<S: Data<Elem = f64>>(&mut self, x: &ArrayBase<S, Ix2>) -> Result<&mut Self> {
        let (q_min, q_max) = self.quantile_range;
        if !(0.0 <= q_min && q_min <= q_max && q_max <= 100.0) {
            return Err(RustymlError::invalid(format!(
                "Invalid quantile range: ({q_min}, {q_max})"
            )));
        }
        let x = x.view();
        validation::check_features(&x, "X")?;
        let mut center = Vec::with_capacity(x.ncols());
        let mut scale = Vec::with_capacity(x.ncols());
        let mut column = Vec::with_capacity(x.nrows());
        for col in x.columns() {
            column.clear();
            column.extend(col.iter().copied());
            if self.with_centering {
                center.push(reduction::median_in_place(&mut column));
            }
            if self.with_scaling {
                let lo = reduction::percentile_in_place(&mut column, q_min);
                let hi = reduction::percentile_in_place(&mut column, q_max);
                scale.push(handle_zero_scale(hi - lo));
            }
        }
        self.center = self.with_centering.then(|| Array1::from(center));
        self.scale = self.with_scaling.then(|| Array1::from(scale));
        self.n_features = Some(x.ncols());
        Ok(self)
    }

    fn map(&self, x: ArrayView2<f64>) -> Array2<f64> {
        let center = self.center.as_ref().and_then(|c| c.as_slice());
        let scale = self.scale.as_ref().and_then(|s| s.as_slice());
        elementwise::center_scale_columns(x, center, scale)
    }

    /// `(x - center_) / scale_` (each step only when enabled).
    pub fn transform<S: Data<Elem = f64>>(&self, x: &ArrayBase<S, Ix2>) -> Result<Array2<f64>> {
        let d = fitted(self.n_features, "RobustScaler")?;
        check_batch(&x.view(), d, "RobustScaler")?;
        Ok(self.map(x.view()))
    }

    pub fn fit_transform<S: Data<Elem = f64>>(
        &mut self,
        x: &ArrayBase<S, Ix2>,
    ) -> Result<Array2<f64>> {
        self.fit(x)?;
        Ok(self.map(x.view()))
    }

    /// `x * scale_ + center_`.
    pub fn inverse_transform<S: Data<Elem = f64>>(
        &self,
        x: &ArrayBase<S, Ix2>,
    ) -> Result<Array2<f64>> {
        let d = fitted(self.n_features, "RobustScaler")?;
        check_batch(&x.view(), d, "RobustScaler")?;
        let center = self.center.as_ref().and_then(|c| c.as_slice());
        let scale = self.scale.as_ref().and_then(|s| s.as_slice());
        Ok(elementwise::scale_shift_columns(x.view(), scale, center))
    }
}

impl Persist for RobustScaler {
    const MODEL_NAME: &'static str = "RobustScaler";
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::arr2;

    #[test]
    fn median_and_iqr_by_hand() {
        // column 0 sorted [1,2,3,4,100]: median 3, q25 2, q75 4 -> scale 2
        // column 1 constant -> scale 1
        let x = arr2(&[[4.0, 7.0], [1.0, 7.0], [100.0, 7.0], [3.0, 7.0], [2.0, 7.0]]);
        let mut sc = RobustScaler::default();
        let z = sc.fit_transform(&x).unwrap();
        assert_eq!(sc.center().unwrap().to_vec(), vec![3.0, 7.0]);
        assert_eq!(sc.scale().unwrap().to_vec(), vec![2.0, 1.0]);
        assert_eq!(z.column(0).to_vec(), vec![0.5, -1.0, 48.5, 0.0, -0.5]);
        assert_eq!(sc.inverse_transform(&z).unwrap(), x);
        assert!(RobustScaler::new(true, true, (80.0, 20.0)).fit(&x).is_err());
        let mut no_center = RobustScaler::new(false, true, (25.0, 75.0));
        no_center.fit(&x).unwrap();
        assert!(no_center.center().is_none());
    }
}
