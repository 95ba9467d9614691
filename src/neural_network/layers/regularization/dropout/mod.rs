//! Dropout layers, one per file: `Dropout` zeroes single elements, the spatial variants zero
//! whole channels of channels-last inputs.

#[allow(clippy::module_inception)] // the original's path: dropout::dropout::Dropout
pub mod dropout;
pub mod spatial_dropout_1d;
pub mod spatial_dropout_2d;
pub mod spatial_dropout_3d;

pub use dropout::Dropout;
pub use spatial_dropout_1d::SpatialDropout1D;
pub use spatial_dropout_2d::SpatialDropout2D;
pub use spatial_dropout_3d::SpatialDropout3D;
