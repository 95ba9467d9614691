//! Instance normalisation (Ulyanov et al. 2016) in Keras's channels-last form.

use super::grouped::{grouped_layer, GroupedNorm};
use crate::error::Result;

/// Normalises each (sample, channel) over the spatial positions with population statistics;
/// per-channel gamma and beta follow. Group normalisation with one channel per group.
/// Input `[batch, spatial.., channels]`, rank >= 3.
#[derive(Debug)]
pub struct InstanceNormalization {
    core: GroupedNorm,
}

impl InstanceNormalization {
    /// `input_shape` includes the batch axis; its last axis is the channel axis.
    pub fn new(input_shape: Vec<usize>, epsilon: f32) -> Result<Self> {
        Ok(Self {
            core: GroupedNorm::new("InstanceNormalization", input_shape, None, epsilon)?,
        })
    }
}

grouped_layer!(
    InstanceNormalization,
    InstanceNormalization,
    InstanceNormalizationLayerWeight
);
