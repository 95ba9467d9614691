//! Dropout layers, one per file: `Dropout` zeroes single elements, the spatial variants zero
//! whole channels of channels-last inputs.

/// Declares a `SpatialDropout{1,2,3}D` layer over the shared stochastic core: the three differ
/// only in the rank of their input (`$rank` axes, batch included, laid out as `$layout`).
macro_rules! spatial_dropout_layer {
    ($name:ident, $rank:literal, $layout:literal) => {
        use super::super::stochastic::{check_rate, impl_stochastic_layer, Noise, Stochastic};
        use crate::error::Result;

        #[doc = concat!(
                            "While training, zeroes each (sample, channel) of a channels-last ",
                            $layout,
                            " input with"
                        )]
        /// probability `rate` at every position at once, and scales the kept channels by
        /// `1 / (1 - rate)` (neighbouring positions are correlated, so single-element dropout would
        /// barely regularise). Inference is the identity.
        #[derive(Debug)]
        pub struct $name {
            core: Stochastic,
        }

        impl $name {
            /// `rate` must lie in [0, 1] (else `InvalidParameter`). `input_shape` includes the batch
            #[doc = concat!(
                                "axis, which is not checked; an empty shape accepts any rank-",
                                $rank,
                                " input."
                            )]
            pub fn new(rate: f32, input_shape: Vec<usize>) -> Result<Self> {
                check_rate(rate, true)?;
                Ok(Self {
                    core: Stochastic::new(Noise::SpatialDropout { rate, rank: $rank }, input_shape),
                })
            }
        }

        impl_stochastic_layer!($name);
    };
}

#[allow(clippy::module_inception)] // the original's path: dropout::dropout::Dropout
pub mod dropout;
pub mod spatial_dropout_1d;
pub mod spatial_dropout_2d;
pub mod spatial_dropout_3d;

pub use dropout::Dropout;
pub use spatial_dropout_1d::SpatialDropout1D;
pub use spatial_dropout_2d::SpatialDropout2D;
pub use spatial_dropout_3d::SpatialDropout3D;
