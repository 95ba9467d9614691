//! Preprocessing: scalers with scikit-learn's statistics and the original crate's API, the
//! one-shot `standardize` / `normalize` (any array rank), train/test splitting and label
//! encoding.
//!
//! The scalers' column statistics come from the deterministic reductions in
//! [`crate::math::reduction`] (gate `tuning::reduction::sum_f64`) and their maps from the
//! elementwise engine [`crate::math::elementwise`] (gate `tuning::elementwise::cheap_map_f64`),
//! so results never depend on thread counts or gate settings. Constant columns and zero rows
//! follow scikit-learn's rules: a scale that would be (nearly) zero becomes 1, so no division
//! by zero and no NaN ever comes out.

pub mod label_encoding;
pub mod normalize;
pub mod scaler;
pub(crate) mod scaling;
pub mod standardize;
pub mod train_test_split;

pub use crate::traits::{Fit, FitTransform, Predict, Transform};
pub use label_encoding::{to_categorical, to_categorical_with_mapping, to_sparse_categorical};
pub use normalize::{normalize, NormalizationAxis, NormalizationOrder};
pub use scaler::{MaxAbsScaler, MinMaxScaler, Normalizer, RobustScaler, StandardScaler};
pub use standardize::{standardize, StandardizationAxis};
pub use train_test_split::{train_test_split, train_test_split_stratified, TrainTestSplit};
