//! Linear models (the original crate's `machine_learning::linear_model`), and the input checks
//! and trait glue shared by this crate's supervised models in the original's API.

pub use super::linear_regression;
pub use super::logistic_regression;
pub use linear_regression::{LeastSquaresSolver, LinearRegression};
pub use logistic_regression::{generate_polynomial_features, LogisticRegression};

use crate::error::{Error, Result};
use crate::machine_learning::validation::require_data;
use ndarray::{ArrayRef1, ArrayView1, ArrayView2};

/// The original API's training-data guard: empty `x` -> `EmptyInput`, NaN/inf in `x` or `y`
/// -> `NonFinite`, `y` of another length -> `DimensionMismatch`.
pub(crate) fn require_xy(x: &ArrayView2<f64>, y: &ArrayRef1<f64>) -> Result<()> {
    require_data(x, "x")?;
    if y.len() != x.nrows() {
        return Err(Error::dimension_mismatch(x.nrows(), y.len()));
    }
    let y: ArrayView1<f64> = y.view();
    if !y.iter().all(|v| v.is_finite()) {
        return Err(Error::non_finite("y"));
    }
    Ok(())
}

/// `Fit<(&x, &y)>` and `Predict<&x>` forwarding to the inherent `fit` / `predict` of a model
/// whose targets have element type `$y` and whose predictions are `$out`.
macro_rules! supervised_traits {
    ($model:ty, $y:ty, $out:ty) => {
        impl<'a, S1, S2>
            $crate::traits::Fit<(
                &'a ndarray::ArrayBase<S1, ndarray::Ix2>,
                &'a ndarray::ArrayBase<S2, ndarray::Ix1>,
            )> for $model
        where
            S1: ndarray::Data<Elem = f64>,
            S2: ndarray::Data<Elem = $y>,
        {
            fn fit(
                &mut self,
                data: (
                    &'a ndarray::ArrayBase<S1, ndarray::Ix2>,
                    &'a ndarray::ArrayBase<S2, ndarray::Ix1>,
                ),
            ) -> $crate::error::Result<&mut Self> {
                <$model>::fit(self, data.0, data.1)
            }
        }

        impl<'a, S> $crate::traits::Predict<&'a ndarray::ArrayBase<S, ndarray::Ix2>> for $model
        where
            S: ndarray::Data<Elem = f64>,
        {
            type Output = $out;
            fn predict(
                &self,
                input: &'a ndarray::ArrayBase<S, ndarray::Ix2>,
            ) -> $crate::error::Result<$out> {
                <$model>::predict(self, input)
            }
        }
    };
}
pub(crate) use supervised_traits;

/// The original API's conveniences over a supervised model's inherent `fit` / `predict`
/// (`f64` targets and predictions), each named in the call: `fit_predict` (fit, then predict
/// the training data) and `accuracy_score` (a classifier's `score`: the mean accuracy).
macro_rules! supervised_conveniences {
    ($model:ty: $($item:ident),+) => {
        $($crate::machine_learning::linear_model::supervised_conveniences!(@$item $model);)+
    };
    (@fit_predict $model:ty) => {
        impl $model {
            /// Fit, then predict the training data.
            pub fn fit_predict<S1, S2>(
                &mut self,
                x: &ndarray::ArrayBase<S1, ndarray::Ix2>,
                y: &ndarray::ArrayBase<S2, ndarray::Ix1>,
            ) -> $crate::error::Result<ndarray::Array1<f64>>
            where
                S1: ndarray::Data<Elem = f64>,
                S2: ndarray::Data<Elem = f64>,
            {
                self.fit(x, y)?;
                self.predict(x)
            }
        }
    };
    (@accuracy_score $model:ty) => {
        impl $model {
            /// Mean accuracy on `x` against `y`.
            pub fn score<S1, S2>(
                &self,
                x: &ndarray::ArrayBase<S1, ndarray::Ix2>,
                y: &ndarray::ArrayBase<S2, ndarray::Ix1>,
            ) -> $crate::error::Result<f64>
            where
                S1: ndarray::Data<Elem = f64>,
                S2: ndarray::Data<Elem = f64>,
            {
                $crate::machine_learning::logistic_regression::accuracy(
                    self.predict(x)?.view(),
                    y.view(),
                )
            }
        }
    };
}
pub(crate) use supervised_conveniences;
