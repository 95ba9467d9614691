//! The `GELU` layer (Keras's `Activation("gelu")`): `f(x) = x Φ(x)`, or its tanh
//! approximation.

use super::Activation;

/// `f(x) = x Φ(x)` with Φ the standard normal CDF (`approximate`: Keras's tanh
/// approximation); its backward pass reads the input, not the output.
#[derive(Debug, Default)]
pub struct GELU {
    approximate: bool,
    /// What the last training forward kept for `backward`.
    cache: Option<super::ActivationCache>,
}

impl GELU {
    /// The exact GELU (Keras's default and its `"gelu"`); `approximate` selects the tanh form.
    pub fn new(approximate: bool) -> Self {
        Self {
            approximate,
            cache: None,
        }
    }

    fn activation(&self) -> Activation {
        Activation::GELU {
            approximate: self.approximate,
        }
    }
}

impl_activation_layer!(GELU);
