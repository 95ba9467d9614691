//! The `SpatialDropout3D` layer: dropout of whole channels of a [batch, depth, height, width, channels] input.

use super::super::stochastic::{check_rate, impl_stochastic_layer, Noise, Stochastic};
use crate::error::Result;

/// While training, zeroes each (sample, channel) of a channels-last [batch, depth, height, width, channels] input with
/// probability `rate` at every position at once, and scales the kept channels by
/// `1 / (1 - rate)` (neighbouring positions are correlated, so single-element dropout would
/// barely regularise). Inference is the identity.
#[derive(Debug)]
pub struct SpatialDropout3D {
    core: Stochastic,
}

impl SpatialDropout3D {
    /// `rate` must lie in [0, 1] (else `InvalidParameter`). `input_shape` includes the batch
    /// axis, which is not checked; an empty shape accepts any rank-5 input.
    pub fn new(rate: f32, input_shape: Vec<usize>) -> Result<Self> {
        check_rate(rate, true)?;
        Ok(Self {
            core: Stochastic::new(Noise::SpatialDropout { rate, rank: 5 }, input_shape),
        })
    }
}

impl_stochastic_layer!(SpatialDropout3D);
