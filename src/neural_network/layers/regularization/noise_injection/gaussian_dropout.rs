//! The `GaussianDropout` layer: multiplicative Gaussian noise (Keras semantics).

use super::super::stochastic::{check_rate, impl_stochastic_layer, Noise, Stochastic};
use crate::error::Result;

/// While training, multiplies each element by a draw of `N(1, sqrt(rate / (1 - rate)))` (the
/// variance of inverted dropout at the same rate); inference is the identity. The backward
/// pass multiplies by the same draws.
#[derive(Debug)]
pub struct GaussianDropout {
    core: Stochastic,
}

impl GaussianDropout {
    /// `rate` must lie in [0, 1) (else `InvalidParameter`). `input_shape` includes the batch
    /// axis, which is not checked; an empty shape accepts any input.
    pub fn new(rate: f32, input_shape: Vec<usize>) -> Result<Self> {
        check_rate(rate, false)?;
        let stddev = (rate / (1.0 - rate)).sqrt();
        Ok(Self {
            core: Stochastic::new(Noise::Multiplicative { stddev }, input_shape),
        })
    }
}

impl_stochastic_layer!(GaussianDropout);
