//! The `ELU` layer: `x` above 0, `alpha * (e^x - 1)` at 0 and below.

use super::Activation;
use crate::error::Result;

/// `f(x) = x` for `x > 0`, `alpha * (e^x - 1)` otherwise; the derivative at 0 is `alpha`.
#[derive(Debug)]
pub struct ELU {
    alpha: f32,
    /// What the last training forward kept for `backward`.
    cache: Option<super::ActivationCache>,
}

impl ELU {
    /// `alpha` must be finite and > 0 (the backward pass reads the branch from the output).
    pub fn new(alpha: f32) -> Result<Self> {
        Activation::ELU { alpha }.validate()?;
        Ok(Self { alpha, cache: None })
    }

    fn activation(&self) -> Activation {
        Activation::ELU { alpha: self.alpha }
    }
}

impl Default for ELU {
    /// Keras's default `alpha`, 1.0.
    fn default() -> Self {
        Self {
            alpha: 1.0,
            cache: None,
        }
    }
}

impl_activation_layer!(ELU);
