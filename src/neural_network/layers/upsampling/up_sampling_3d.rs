//! `UpSampling3D`: repeats every position of `[batch, d1, d2, d3, channels]` per axis.

use super::engine::UpSamplingCore;
use super::{Factor3D, Interpolation};
use crate::error::Result;
use crate::neural_network::layers::layer_util::weightless_core_layer;

/// Repeats positions `size.k` times along spatial axis `k`.
#[derive(Debug)]
pub struct UpSampling3D(UpSamplingCore);

impl UpSampling3D {
    /// `size`: one factor or one per axis, each >= 1 (else `InvalidParameter`).
    pub fn new(size: impl Into<Factor3D>) -> Result<Self> {
        UpSamplingCore::new(
            "UpSampling3D",
            "[batch, dim1, dim2, dim3, channels]",
            size.into().factors(),
            Interpolation::Nearest,
        )
        .map(Self)
    }
}

weightless_core_layer!(UpSampling3D);
