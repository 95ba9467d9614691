//! Linear models (the original crate's `machine_learning::linear_model`), and the input checks
//! and trait glue shared by this crate's supervised models in the original's API.

pub use super::linear_regression;
pub use super::logistic_regression;
pub use linear_regression::{LeastSquaresSolver, LinearRegression};
pub use logistic_regression::{generate_polynomial_features, LogisticRegression};

use crate::error::{Error, Result};
use crate::machine_learning::validation::require_data;
use ndarray::{ArrayBase, ArrayView1, ArrayView2, Data, Ix1};

/// The original API's training-data guard: empty `x` -> `EmptyInput`, NaN/inf in `x` or `y`
/// -> `NonFinite`, `y` of another length -> `DimensionMismatch`.
pub(crate) fn require_xy<S: Data<Elem = f64>>(
    x: &ArrayView2<f64>,
    y: &ArrayBase<S, Ix1>,
) -> Result<()> {
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
