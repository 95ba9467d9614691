//! Pooling layers (max, average, global) over one pooling engine.
//!
//! The twelve layers are aliases of two generic layers ([`Pooling`] for windows,
//! [`GlobalPooling`] for whole-input windows), parameterised by spatial rank and kind; each
//! file names one of them at the original's path.

pub mod average_pooling_1d;
pub mod average_pooling_2d;
pub mod average_pooling_3d;
pub(crate) mod engine;
pub(crate) mod generic;
pub mod global_average_pooling_1d;
pub mod global_average_pooling_2d;
pub mod global_average_pooling_3d;
pub mod global_max_pooling_1d;
pub mod global_max_pooling_2d;
pub mod global_max_pooling_3d;
pub mod max_pooling_1d;
pub mod max_pooling_2d;
pub mod max_pooling_3d;

pub use average_pooling_1d::AveragePooling1D;
pub use average_pooling_2d::AveragePooling2D;
pub use average_pooling_3d::AveragePooling3D;
pub use generic::{GlobalPooling, Pooling};
pub use global_average_pooling_1d::GlobalAveragePooling1D;
pub use global_average_pooling_2d::GlobalAveragePooling2D;
pub use global_average_pooling_3d::GlobalAveragePooling3D;
pub use global_max_pooling_1d::GlobalMaxPooling1D;
pub use global_max_pooling_2d::GlobalMaxPooling2D;
pub use global_max_pooling_3d::GlobalMaxPooling3D;
pub use max_pooling_1d::MaxPooling1D;
pub use max_pooling_2d::MaxPooling2D;
pub use max_pooling_3d::MaxPooling3D;
