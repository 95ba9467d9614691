//! The scalers: one file per scaler, each with scikit-learn's statistics and the original
//! crate's builder / getter API, save/load and the `Fit` / `Transform` / `FitTransform` traits.

pub mod max_abs_scaler;
pub mod min_max_scaler;
pub mod normalizer;
pub mod robust_scaler;
pub mod standard_scaler;

pub use max_abs_scaler::MaxAbsScaler;
pub use min_max_scaler::MinMaxScaler;
pub use normalizer::Normalizer;
pub use robust_scaler::RobustScaler;
pub use standard_scaler::StandardScaler;
