//! The `LeakyReLU` layer: `x` at 0 and above, `negative_slope * x` below 0.

use super::Activation;
use crate::error::Result;

/// `f(x) = x` for `x >= 0`, `negative_slope * x` below; the derivative at 0 is 1.
#[derive(Debug)]
pub struct LeakyReLU {
    negative_slope: f32,
    /// What the last training forward kept for `backward`.
    cache: Option<super::ActivationCache>,
}

impl LeakyReLU {
    /// `negative_slope` must be finite and > 0 (the backward pass reads the branch from the
    /// sign of the output, which a slope of 0 or below would erase).
    pub fn new(negative_slope: f32) -> Result<Self> {
        Activation::LeakyReLU { negative_slope }.validate()?;
        Ok(Self {
            negative_slope,
            cache: None,
        })
    }

    fn activation(&self) -> Activation {
        Activation::LeakyReLU {
            negative_slope: self.negative_slope,
        }
    }
}

impl Default for LeakyReLU {
    /// Keras's default slope, 0.3.
    fn default() -> Self {
        Self {
            negative_slope: 0.3,
            cache: None,
        }
    }
}

impl_activation_layer!(LeakyReLU);
