//! `UpSampling1D`: repeats every step of `[batch, steps, channels]` `size` times.

use super::engine::UpSamplingCore;
use super::{up_sampling_layer, Interpolation};
use crate::error::Result;

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

up_sampling_layer!(UpSampling1D);
