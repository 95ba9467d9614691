//! Centre on the median, scale by an inter-quantile range (scikit-learn's `RobustScaler`).

use crate::error::{Error, Result};
use crate::math::{elementwise, reduction};
use crate::persistence::Persist;
use crate::utils::scaling::{
    check_batch, check_fit_counts, check_fitted_vector, check_input, corrupt, fitted,
    handle_zero_scale, scaler_common, CheckedPersist,
};
use ndarray::{Array1, Array2, ArrayRef2, ArrayView2};
use serde::{Deserialize, Serialize};

/// `(x - center) / scale` with `center` the per-feature median and `scale` the spread between
/// the `quantile_range` percentiles (NumPy's linear interpolation; a zero spread counts as 1).
/// Both statistics are computed whatever the flags; `with_centering` / `with_scaling` decide
/// which steps `transform` applies. Outliers barely move either statistic.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RobustScaler {
    with_centering: bool,
    with_scaling: bool,
    quantile_range: (f64, f64),
    n_samples_seen: usize,
    state: Option<RobustState>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct RobustState {
    center: Array1<f64>,
    scale: Array1<f64>,
}

impl Default for RobustScaler {
    fn default() -> Self {
        Self::new()
    }
}

const NAME: &str = "RobustScaler";

/// `0 <= low < high <= 100` (`low == high` too when `allow_equal`, scikit-learn's rule).
fn check_quantile_range(low: f64, high: f64, allow_equal: bool) -> Result<()> {
    let ordered = if allow_equal { low <= high } else { low < high };
    if !(0.0 <= low && ordered && high <= 100.0) {
        return Err(Error::invalid_parameter(
            "quantile_range",
            format!("Invalid quantile range: ({low}, {high}); need 0 <= low < high <= 100"),
        ));
    }
    Ok(())
}

impl RobustScaler {
    /// Centring and scaling on, quantile range `(25, 75)`, not fitted.
    pub fn new() -> Self {
        Self {
            with_centering: true,
            with_scaling: true,
            quantile_range: (25.0, 75.0),
            n_samples_seen: 0,
            state: None,
        }
    }

    crate::accessors::builder_setters! {
        /// Whether `transform` subtracts the median.
        with_centering(with_centering: bool),
        /// Whether `transform` divides by the quantile spread.
        with_scaling(with_scaling: bool),
    }

    crate::accessors::field_getters! {
        get_with_centering -> with_centering: bool,
        get_with_scaling -> with_scaling: bool,
        get_quantile_range -> quantile_range: (f64, f64),
        get_n_samples_seen -> n_samples_seen: usize,
    }

    /// Percentiles `(low, high)` whose spread is the scale: `0 <= low < high <= 100`, else
    /// `InvalidParameter`. Any earlier fit is discarded (its scale used the old range).
    pub fn with_quantile_range(self, low: f64, high: f64) -> Result<Self> {
        self.set_quantile_range(low, high, false)
    }

    /// [`with_quantile_range`](Self::with_quantile_range) with scikit-learn's rule, which also
    /// accepts `low == high` (a zero spread, so no scaling): the Python class uses it.
    #[cfg_attr(not(feature = "python"), allow(dead_code))] // used by the Python bindings
    pub(crate) fn with_quantile_range_inclusive(self, low: f64, high: f64) -> Result<Self> {
        self.set_quantile_range(low, high, true)
    }

    fn set_quantile_range(mut self, low: f64, high: f64, allow_equal: bool) -> Result<Self> {
        check_quantile_range(low, high, allow_equal)?;
        self.quantile_range = (low, high);
        self.n_samples_seen = 0;
        self.state = None;
        Ok(self)
    }

    crate::accessors::fitted_getters! {
        state;
        /// Per-feature median.
        get_center -> &center: Array1<f64>,
        /// Per-feature quantile spread (1 where it is zero).
        get_scale -> &scale: Array1<f64>,
    }

    pub fn get_n_features(&self) -> Option<usize> {
        self.state.as_ref().map(|s| s.center.len())
    }

    /// Learn the per-feature median and quantile spread of `x`. On error the scaler is left
    /// as it was.
    pub fn fit(&mut self, x: &ArrayRef2<f64>) -> Result<&mut Self> {
        let x = x.view();
        check_input(&x, "X")?;
        let (q_min, q_max) = self.quantile_range;
        let mut center = Vec::with_capacity(x.ncols());
        let mut scale = Vec::with_capacity(x.ncols());
        let mut column = Vec::with_capacity(x.nrows());
        for col in x.columns() {
            column.clear();
            column.extend(col.iter().copied());
            center.push(reduction::median_in_place(&mut column));
            let lo = reduction::percentile_in_place(&mut column, q_min);
            let hi = reduction::percentile_in_place(&mut column, q_max);
            scale.push(handle_zero_scale(hi - lo));
        }
        self.state = Some(RobustState {
            center: Array1::from(center),
            scale: Array1::from(scale),
        });
        self.n_samples_seen = x.nrows();
        Ok(self)
    }

    fn steps<'a>(&self, s: &'a RobustState) -> (Option<&'a [f64]>, Option<&'a [f64]>) {
        (
            self.with_centering.then(|| s.center.as_slice()).flatten(),
            self.with_scaling.then(|| s.scale.as_slice()).flatten(),
        )
    }

    fn map(&self, s: &RobustState, x: ArrayView2<f64>) -> Array2<f64> {
        let (center, scale) = self.steps(s);
        elementwise::center_scale_columns(x, center, scale)
    }

    /// `x * scale + center` (each step only when enabled).
    pub fn inverse_transform(&self, x: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        let s = fitted(&self.state, NAME)?;
        check_batch(&x.view(), s.center.len())?;
        let (center, scale) = self.steps(s);
        Ok(elementwise::scale_shift_columns(x.view(), scale, center))
    }
}

impl Persist for RobustScaler {
    const MODEL_NAME: &'static str = NAME;
}

impl CheckedPersist for RobustScaler {
    fn validate(&self) -> Result<()> {
        let (low, high) = self.quantile_range;
        check_quantile_range(low, high, true)
            .map_err(|_| corrupt(NAME, "invalid quantile range"))?;
        let counts = check_fit_counts(NAME, self.n_samples_seen, self.get_n_features())?;
        let (Some(d), Some(s)) = (counts, &self.state) else {
            return Ok(());
        };
        check_fitted_vector(NAME, "center", &s.center, d, |_| true)?;
        check_fitted_vector(NAME, "scale", &s.scale, d, |v| v > 0.0)
    }
}

scaler_common!(
    RobustScaler,
    map over center,
    /// `(x - center) / scale` (each step only when enabled).
);

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
        assert_eq!(sc.get_center().unwrap().to_vec(), vec![3.0, 7.0]);
        assert_eq!(sc.get_scale().unwrap().to_vec(), vec![2.0, 1.0]);
        assert_eq!(z.column(0).to_vec(), vec![0.5, -1.0, 48.5, 0.0, -0.5]);
        assert_eq!(sc.inverse_transform(&z).unwrap(), x);
        assert!(RobustScaler::new().with_quantile_range(80.0, 20.0).is_err());
        assert!(RobustScaler::new().with_quantile_range(50.0, 50.0).is_err());
        let mut equal = RobustScaler::new()
            .with_quantile_range_inclusive(50.0, 50.0)
            .unwrap();
        assert_eq!(
            equal.fit_transform(&x).unwrap().column(1).to_vec(),
            vec![0.0; 5]
        );
        assert_eq!(equal.get_scale().unwrap().to_vec(), vec![1.0, 1.0]);
        let mut no_center = RobustScaler::new().with_centering(false);
        assert_eq!(
            no_center.fit_transform(&x).unwrap().column(1).to_vec(),
            vec![7.0; 5]
        );
        assert_eq!(no_center.get_n_samples_seen(), 5);
        // a failed refit leaves the fit alone
        assert!(no_center.fit(&arr2(&[[f64::NAN, 1.0]])).is_err());
        assert_eq!(no_center.get_center().unwrap().to_vec(), vec![3.0, 7.0]);
    }
}
