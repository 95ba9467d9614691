//! The `Dropout` layer (inverted dropout, Keras semantics).

use super::super::stochastic::{check_rate, impl_stochastic_layer, Noise, Stochastic};
use crate::error::Result;

/// While training, zeroes each element with probability `rate` and scales the kept ones by
/// `1 / (1 - rate)`, so inference is the identity. The backward pass reuses the mask.
#[derive(Debug)]
pub struct Dropout {
    core: Stochastic,
}

impl Dropout {
    /// `rate` must lie in [0, 1] (else `InvalidParameter`). `input_shape` includes the batch
    /// axis, which is not checked (mini-batches vary); an empty shape accepts any input.
    pub fn new(rate: f32, input_shape: Vec<usize>) -> Result<Self> {
        check_rate(rate, true)?;
        Ok(Self {
            core: Stochastic::new(Noise::Dropout { rate }, input_shape),
        })
    }
}

impl_stochastic_layer!(Dropout);
