//! `UpSampling1D`: repeats every step of `[batch, steps, channels]` `size` times.

use super::engine::UpSamplingCore;
use super::Interpolation;
use crate::error::Result;
use crate::neural_network::layers::layer_util::weightless_core_layer;

/// Repeats each step `size` times; the gradient of a step sums its `size` copies.
#[derive(Debug)]
pub struct UpSampling1D(UpSamplingCore);

impl UpSampling1D {
    /// `size` must be >= 1 (else `InvalidParameter`).
    pub fn new(size: usize) -> Result<Self> {
        UpSamplingCore::new(
            "UpSampling1D",
            "[batch, steps, channels]",
            vec![size],
            Interpolation::Nearest,
        )
        .map(Self)
    }
}

weightless_core_layer!(UpSampling1D);
