//! The `GaussianNoise` layer: additive Gaussian noise (Keras semantics).

use super::super::stochastic::{impl_stochastic_layer, Noise, Stochastic};
use crate::error::{Error, Result};

/// While training, adds a draw of `N(0, stddev)` to each element; inference is the identity.
/// The noise does not depend on the input, so the gradient passes through.
#[derive(Debug)]
pub struct GaussianNoise {
    core: Stochastic,
}

impl GaussianNoise {
    /// `stddev` must be finite and >= 0 (else `InvalidParameter`). `input_shape` includes the
    /// batch axis, which is not checked; an empty shape accepts any input.
    pub fn new(stddev: f32, input_shape: Vec<usize>) -> Result<Self> {
        if !(stddev.is_finite() && stddev >= 0.0) {
            return Err(Error::invalid_parameter(
                "stddev",
                format!("must be finite and >= 0, got {stddev}"),
            ));
        }
        Ok(Self {
            core: Stochastic::new(Noise::Additive { stddev }, input_shape),
        })
    }
}

impl_stochastic_layer!(GaussianNoise);
