//! Group normalisation (Wu & He 2018) in Keras's channels-last form.

use super::grouped::{grouped_layer, GroupedNorm};
use crate::error::Result;

/// Splits the channels (the last axis) into `num_groups` contiguous groups and normalises each
/// (sample, group) over its channels at every spatial position, with population statistics;
/// per-channel gamma and beta follow. Input `[batch, spatial.., channels]`, rank >= 3.
#[derive(Debug)]
pub struct GroupNormalization {
    core: GroupedNorm,
}

impl GroupNormalization {
    /// `input_shape` includes the batch axis; `num_groups` must divide its last axis (checked
    /// when an input arrives).
    pub fn new(input_shape: Vec<usize>, num_groups: usize, epsilon: f32) -> Result<Self> {
        Ok(Self {
            core: GroupedNorm::new("GroupNormalization", input_shape, Some(num_groups), epsilon)?,
        })
    }
}

grouped_layer!(
    GroupNormalization,
    GroupNormalization,
    GroupNormalizationLayerWeight
);
