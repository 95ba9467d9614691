//! `UpSampling2D`: enlarges the rows and columns of `[batch, rows, cols, channels]`.

use super::engine::UpSamplingCore;
use super::{Factor2D, Interpolation};
use crate::error::Result;
use crate::neural_network::layers::layer_util::weightless_core_layer;

/// Enlarges rows by `size.0` and columns by `size.1` with the chosen interpolation.
#[derive(Debug)]
pub struct UpSampling2D(UpSamplingCore);

impl UpSampling2D {
    /// `size`: one factor or `(rows, cols)`, each >= 1 (else `InvalidParameter`).
    pub fn new(size: impl Into<Factor2D>, interpolation: Interpolation) -> Result<Self> {
        UpSamplingCore::new(
            "UpSampling2D",
            "[batch, rows, cols, channels]",
            size.into().factors(),
            interpolation,
        )
        .map(Self)
    }
}

weightless_core_layer!(UpSampling2D);
