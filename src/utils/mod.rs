//! Preprocessing: scalers with scikit-learn's names and fitted attributes, the original
//! crate's one-shot `standardize` / `normalize`, train/test splitting and label encoding.
//!
//! The scalers' column statistics come from the deterministic reductions in
//! [`crate::math::reduction`] (gate `tuning::reduction::sum_f64`) and their maps from the
//! elementwise engine [`crate::math::elementwise`] (gate `tuning::elementwise::cheap_map_f64`),
//! so results never depend on thread counts or gate settings. Constant columns and zero rows
//! follow scikit-learn's rules: a scale that would be (nearly) zero becomes 1, so no division
//! by zero and no NaN ever comes out.

pub mod label_encoding;
pub mod max_abs_scaler;
pub mod min_max_scaler;
pub mod normalize;
pub mod normalizer;
pub mod robust_scaler;
mod scaling;
pub mod standard_scaler;
pub mod standardize;
pub mod train_test_split;

pub use label_encoding::{to_categorical, to_sparse_categorical, LabelEncoder};
pub use max_abs_scaler::MaxAbsScaler;
pub use min_max_scaler::MinMaxScaler;
pub use normalize::{normalize, NormalizationAxis, NormalizationOrder};
pub use normalizer::{Norm, Normalizer};
pub use robust_scaler::RobustScaler;
pub use standard_scaler::StandardScaler;
pub use standardize::{standardize, StandardizationAxis};
pub use train_test_split::{split_sizes, train_test_indices, train_test_split, SplitSize};
