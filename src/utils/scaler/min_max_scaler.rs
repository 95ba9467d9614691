//! Scale each feature onto a range (scikit-learn's `MinMaxScaler`).

use crate::error::{Error, Result};
use crate::math::{elementwise, reduction};
use crate::persistence::Persist;
use crate::utils::scaling::{
    check_batch, check_fit_counts, check_fitted_vector, check_input, corrupt, fitted,
    handle_zero_scale, scaler_common, CheckedPersist,
};
use ndarray::{Array1, Array2, ArrayRef2, ArrayView2};
use serde::{Deserialize, Serialize};

/// Maps each feature's fitted `[data_min, data_max]` onto `feature_range` (default `(0, 1)`);
/// a constant feature's range counts as 1, so it lands on the low end. With `clip`,
/// transformed values are clamped into the range.
///
/// The fitted `scale = (hi - lo) / data_range` and `min = lo - data_min * scale` are
/// scikit-learn's attributes. The map itself is evaluated as
/// `lo + (x/2 - data_min/2) / (data_range/2) * (hi - lo)`: the halved difference cannot
/// overflow, so finite inputs of any magnitude give finite outputs (the textbook
/// `x * scale + min` turns into `inf - inf = NaN` once `data_max - data_min` overflows).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MinMaxScaler {
    feature_range: (f64, f64),
    clip: bool,
    n_samples_seen: usize,
    state: Option<MinMaxState>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct MinMaxState {
    data_min: Array1<f64>,
    data_max: Array1<f64>,
    scale: Array1<f64>,
    min: Array1<f64>,
}

impl Default for MinMaxScaler {
    fn default() -> Self {
        Self::new()
    }
}

const NAME: &str = "MinMaxScaler";

/// Half of a feature's range, or 1/2 for a constant feature (range below `10 eps` counts as
/// 1). `b/2 - a/2` is exactly `(b - a)/2` whenever `b - a` does not overflow.
fn half_range(a: f64, b: f64) -> f64 {
    let half = b * 0.5 - a * 0.5;
    if half < 5.0 * f64::EPSILON {
        0.5
    } else {
        half
    }
}

fn check_range(lo: f64, hi: f64) -> Result<()> {
    if !(lo.is_finite() && hi.is_finite()) || lo >= hi || !(hi - lo).is_finite() {
        return Err(Error::invalid_parameter(
            "feature_range",
            format!("Minimum of desired feature range must be smaller than maximum, both finite. Got ({lo}, {hi})."),
        ));
    }
    Ok(())
}

impl MinMaxState {
    /// The fitted state for extrema `lo`, `hi` and target range `(r0, r1)`.
    fn new(data_min: Vec<f64>, data_max: Vec<f64>, (r0, r1): (f64, f64)) -> Self {
        let scale: Array1<f64> = data_min
            .iter()
            .zip(&data_max)
            .map(|(&a, &b)| (r1 - r0) / handle_zero_scale(b - a))
            .collect();
        let min = data_min
            .iter()
            .zip(&scale)
            .map(|(&a, &s)| r0 - a * s)
            .collect();
        Self {
            data_min: Array1::from(data_min),
            data_max: Array1::from(data_max),
            scale,
            min,
        }
    }
}

impl MinMaxScaler {
    /// Target range `(0, 1)`, no clipping, not fitted.
    pub fn new() -> Self {
        Self {
            feature_range: (0.0, 1.0),
            clip: false,
            n_samples_seen: 0,
            state: None,
        }
    }

    /// Target range `(min, max)`; both finite with `min < max`, else `InvalidParameter`. A
    /// fitted scaler keeps its extrema and maps them onto the new range.
    pub fn with_feature_range(mut self, min: f64, max: f64) -> Result<Self> {
        check_range(min, max)?;
        self.feature_range = (min, max);
        if let Some(s) = self.state.take() {
            self.state = Some(MinMaxState::new(
                s.data_min.to_vec(),
                s.data_max.to_vec(),
                self.feature_range,
            ));
        }
        Ok(self)
    }

    crate::accessors::builder_setters! {
        /// Whether `transform` clamps its output into the range.
        with_clip(clip: bool),
    }

    crate::accessors::field_getters! {
        get_feature_range -> feature_range: (f64, f64),
        get_clip -> clip: bool,
        get_n_samples_seen -> n_samples_seen: usize,
    }

    crate::accessors::fitted_getters! {
        state;
        /// Per-feature minimum seen.
        get_data_min -> &data_min: Array1<f64>,
        /// Per-feature maximum seen.
        get_data_max -> &data_max: Array1<f64>,
        /// Per-feature factor `(hi - lo) / data_range`.
        get_scale -> &scale: Array1<f64>,
        /// Per-feature offset `lo - data_min * scale`.
        get_min -> &min: Array1<f64>,
    }

    /// `data_max - data_min`.
    pub fn get_data_range(&self) -> Option<Array1<f64>> {
        self.state.as_ref().map(|s| &s.data_max - &s.data_min)
    }

    pub fn get_n_features(&self) -> Option<usize> {
        self.state.as_ref().map(|s| s.data_min.len())
    }

    /// Learn the per-feature extrema of `x`, forgetting earlier fits. On error the scaler is
    /// left as it was.
    pub fn fit(&mut self, x: &ArrayRef2<f64>) -> Result<&mut Self> {
        let mut fresh = self.clone_params();
        fresh.partial_fit(x)?;
        *self = fresh;
        Ok(self)
    }

    fn clone_params(&self) -> Self {
        Self {
            feature_range: self.feature_range,
            clip: self.clip,
            n_samples_seen: 0,
            state: None,
        }
    }

    /// Widen the fitted extrema with one more batch (the first batch fits). On error the
    /// scaler is left as it was.
    pub fn partial_fit(&mut self, x: &ArrayRef2<f64>) -> Result<&mut Self> {
        let x = x.view();
        match &self.state {
            Some(s) => check_batch(&x, s.data_min.len())?,
            None => check_input(&x, "X")?,
        }
        let (mut lo, mut hi) = reduction::column_min_max(x);
        if let Some(s) = &self.state {
            lo.iter_mut()
                .zip(&s.data_min)
                .for_each(|(a, &b)| *a = a.min(b));
            hi.iter_mut()
                .zip(&s.data_max)
                .for_each(|(a, &b)| *a = a.max(b));
        }
        self.state = Some(MinMaxState::new(lo, hi, self.feature_range));
        self.n_samples_seen += x.nrows();
        Ok(self)
    }

    /// Per feature `(data_min / 2, half range)`.
    fn halves(s: &MinMaxState) -> Vec<(f64, f64)> {
        s.data_min
            .iter()
            .zip(&s.data_max)
            .map(|(&a, &b)| (a * 0.5, half_range(a, b)))
            .collect()
    }

    fn map(&self, s: &MinMaxState, x: ArrayView2<f64>) -> Array2<f64> {
        let (r0, r1) = self.feature_range;
        let (span, clip) = (r1 - r0, self.clip);
        let coef = Self::halves(s);
        elementwise::map_rows(x, |_, row, out| {
            for ((o, &v), &(a_half, half)) in out.iter_mut().zip(row).zip(&coef) {
                // a division, not a multiplication by 1/half: that reciprocal is subnormal
                // (and inexact) for ranges above ~4.5e307
                let z = r0 + (v * 0.5 - a_half) / half * span;
                *o = if clip { z.clamp(r0, r1) } else { z };
            }
        })
    }

    /// Undo [`transform`](Self::transform) (without clipping).
    pub fn inverse_transform(&self, x: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        let s = fitted(&self.state, NAME)?;
        check_batch(&x.view(), s.data_min.len())?;
        let (r0, r1) = self.feature_range;
        let span = r1 - r0;
        let coef = Self::halves(s);
        // x = 2 ((z - lo) / (hi - lo) * half + data_min / 2): the halves keep every step finite
        Ok(elementwise::map_rows(x.view(), |_, row, out| {
            for ((o, &z), &(a_half, half)) in out.iter_mut().zip(row).zip(&coef) {
                *o = ((z - r0) / span * half + a_half) * 2.0;
            }
        }))
    }
}

impl Persist for MinMaxScaler {
    const MODEL_NAME: &'static str = NAME;
}

impl CheckedPersist for MinMaxScaler {
    fn validate(&self) -> Result<()> {
        let (r0, r1) = self.feature_range;
        check_range(r0, r1).map_err(|_| corrupt(NAME, "invalid feature range"))?;
        let counts = check_fit_counts(NAME, self.n_samples_seen, self.get_n_features())?;
        let (Some(d), Some(s)) = (counts, &self.state) else {
            return Ok(());
        };
        check_fitted_vector(NAME, "data_min", &s.data_min, d, |_| true)?;
        check_fitted_vector(NAME, "data_max", &s.data_max, d, |_| true)?;
        if s.data_min.iter().zip(&s.data_max).any(|(a, b)| a > b) {
            return Err(corrupt(NAME, "a minimum above its maximum"));
        }
        // the derived attributes must be exactly what the extrema give
        let expected = MinMaxState::new(s.data_min.to_vec(), s.data_max.to_vec(), (r0, r1));
        let same = |a: &Array1<f64>, b: &Array1<f64>| {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
        };
        if !same(&s.scale, &expected.scale) || !same(&s.min, &expected.min) {
            return Err(corrupt(NAME, "`scale` / `min` disagree with the extrema"));
        }
        Ok(())
    }
}

scaler_common!(
    MinMaxScaler,
    map over data_min,
    /// Each feature mapped onto the range (then clamped with `clip`).
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::utils::scaling::{exercise_byte_corruptions, refused_at_load};
    use ndarray::arr2;

    #[test]
    fn maps_onto_the_range_by_hand() {
        // column 0 in [0, 4], column 1 constant 3
        let x = arr2(&[[0.0, 3.0], [4.0, 3.0], [2.0, 3.0]]);
        let mut sc = MinMaxScaler::new().with_feature_range(-1.0, 1.0).unwrap();
        let z = sc.fit_transform(&x).unwrap();
        assert_eq!(z, arr2(&[[-1.0, -1.0], [1.0, -1.0], [0.0, -1.0]]));
        // scale = [2/4, 2/1], min = [-1 - 0, -1 - 3*2]
        assert_eq!(sc.get_scale().unwrap().to_vec(), vec![0.5, 2.0]);
        assert_eq!(sc.get_min().unwrap().to_vec(), vec![-1.0, -7.0]);
        assert_eq!(sc.get_data_range().unwrap().to_vec(), vec![4.0, 0.0]);
        assert_eq!(sc.inverse_transform(&z).unwrap(), x);
        let clipped = sc.clone().with_clip(true);
        assert_eq!(
            clipped.transform(&arr2(&[[8.0, 3.0]])).unwrap(),
            arr2(&[[1.0, -1.0]])
        );
        assert!(matches!(
            MinMaxScaler::new().with_feature_range(1.0, 0.0),
            Err(Error::InvalidParameter { .. })
        ));
    }

    #[test]
    fn partial_fit_widens_the_range_and_failures_change_nothing() {
        let mut sc = MinMaxScaler::default();
        sc.partial_fit(&arr2(&[[1.0], [2.0]])).unwrap();
        sc.partial_fit(&arr2(&[[-3.0], [0.0]])).unwrap();
        assert!(sc.partial_fit(&arr2(&[[f64::NAN]])).is_err());
        assert!(sc.fit(&arr2(&[[1.0, 2.0], [f64::NAN, 0.0]])).is_err());
        assert_eq!(
            (sc.get_data_min().unwrap()[0], sc.get_data_max().unwrap()[0]),
            (-3.0, 2.0)
        );
        assert_eq!(sc.get_n_samples_seen(), 4);
    }

    #[test]
    fn huge_finite_inputs_give_finite_outputs() {
        // data_max - data_min overflows to infinity; the map must still be exact at the ends
        let x = arr2(&[[-1.5e308, 1e308], [1.5e308, -1e308], [0.0, 0.0]]);
        let mut sc = MinMaxScaler::new();
        let z = sc.fit_transform(&x).unwrap();
        assert_eq!(z, arr2(&[[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]]));
        let back = sc.inverse_transform(&z).unwrap();
        assert_eq!(back, x);
        let far = sc.transform(&arr2(&[[1.7e308, -1.7e308]])).unwrap();
        assert!(far.iter().all(|v| v.is_finite()), "{far}");
    }

    #[test]
    fn a_corrupt_state_is_refused_at_load() {
        let mut sc = MinMaxScaler::new();
        sc.fit(&arr2(&[[1.0, 2.0], [3.0, 5.0]])).unwrap();
        let good = sc.to_bytes().unwrap();
        assert!(MinMaxScaler::from_bytes_checked(&good).is_ok());
        let mut bad = sc.clone();
        bad.state.as_mut().unwrap().data_min = Array1::from(vec![1.0]);
        assert!(refused_at_load(&bad));
        let mut bad = sc.clone();
        bad.state.as_mut().unwrap().data_min[1] = 9.0;
        assert!(refused_at_load(&bad));
        let mut bad = sc.clone();
        bad.state.as_mut().unwrap().scale[0] = 7.0;
        assert!(refused_at_load(&bad));
        // every single-byte corruption either fails to decode, fails validation, or leaves a
        // model that still transforms without panicking
        let probe = arr2(&[[2.0, 3.0]]);
        exercise_byte_corruptions(&good, |m: &MinMaxScaler| {
            let _ = m.transform(&probe);
            let _ = m.inverse_transform(&probe);
        });
    }
}
