//! Activation functions: the [`Activation`] enum used as a layer's `activation`, and one
//! activation layer per file wrapping it. Backward passes work from the activated output, so a
//! layer keeps one tensor, not two.

use crate::error::{Error, RustymlResult};
use crate::neural_network::Tensor;
use ndarray::{Axis, Zip};
use serde::{Deserialize, Serialize};

/// SELU's constants (Klambauer et al. 2017), as Keras and PyTorch use them.
pub const SELU_ALPHA: f32 = 1.673_263_2;
pub const SELU_SCALE: f32 = 1.050_701;

/// An elementwise (or, for softmax, last-axis) activation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Activation {
    Linear,
    ReLU,
    Sigmoid,
    Tanh,
    Softmax,
    LeakyReLU { negative_slope: f32 },
    ELU { alpha: f32 },
    SELU,
    Softplus,
    Softsign,
    HardSigmoid,
    Exponential,
}

#[inline]
fn sigmoid(x: f32) -> f32 {
    // Two branches keep exp's argument non-positive: no overflow, full precision near 0 and 1.
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

#[inline]
fn softplus(x: f32) -> f32 {
    // log(1 + e^x) = max(x, 0) + log1p(e^-|x|): exact for large |x|.
    x.max(0.0) + (-x.abs()).exp().ln_1p()
}

impl Activation {
    /// Refuses parameters whose backward pass could not tell the branches apart.
    pub fn validate(&self) -> RustymlResult<()> {
        match *self {
            Activation::LeakyReLU { negative_slope }
                if !(negative_slope.is_finite() && negative_slope > 0.0) =>
            {
                Err(Error::invalid_parameter(
                    "negative_slope",
                    format!("must be finite and > 0, got {negative_slope}"),
                ))
            }
            Activation::ELU { alpha } if !(alpha.is_finite() && alpha > 0.0) => Err(
                Error::invalid_parameter("alpha", format!("must be finite and > 0, got {alpha}")),
            ),
            _ => Ok(()),
        }
    }

    /// Keras's name for the activation (`"relu"`, `"leaky_relu"`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Activation::Linear => "linear",
            Activation::ReLU => "relu",
            Activation::Sigmoid => "sigmoid",
            Activation::Tanh => "tanh",
            Activation::Softmax => "softmax",
            Activation::LeakyReLU { .. } => "leaky_relu",
            Activation::ELU { .. } => "elu",
            Activation::SELU => "selu",
            Activation::Softplus => "softplus",
            Activation::Softsign => "softsign",
            Activation::HardSigmoid => "hard_sigmoid",
            Activation::Exponential => "exponential",
        }
    }

    /// Applies the activation to a scalar (every variant but softmax).
    #[inline]
    pub fn apply_scalar(&self, x: f32) -> f32 {
        match *self {
            Activation::Linear | Activation::Softmax => x,
            Activation::ReLU => x.max(0.0),
            Activation::Sigmoid => sigmoid(x),
            Activation::Tanh => x.tanh(),
            Activation::LeakyReLU { negative_slope } => {
                if x >= 0.0 {
                    x
                } else {
                    negative_slope * x
                }
            }
            Activation::ELU { alpha } => {
                if x > 0.0 {
                    x
                } else {
                    alpha * x.exp_m1()
                }
            }
            Activation::SELU => {
                if x > 0.0 {
                    SELU_SCALE * x
                } else {
                    SELU_SCALE * SELU_ALPHA * x.exp_m1()
                }
            }
            Activation::Softplus => softplus(x),
            Activation::Softsign => x / (1.0 + x.abs()),
            Activation::HardSigmoid => (x / 6.0 + 0.5).clamp(0.0, 1.0),
            Activation::Exponential => x.exp(),
        }
    }

    /// The derivative at the point whose activated value is `a` (every variant but softmax).
    #[inline]
    pub fn derivative_from_output(&self, a: f32) -> f32 {
        match *self {
            Activation::Linear | Activation::Softmax => 1.0,
            Activation::ReLU => {
                if a > 0.0 {
                    1.0
                } else {
                    0.0
                }
            }
            Activation::Sigmoid => a * (1.0 - a),
            Activation::Tanh => 1.0 - a * a,
            Activation::LeakyReLU { negative_slope } => {
                if a >= 0.0 {
                    1.0
                } else {
                    negative_slope
                }
            }
            Activation::ELU { alpha } => {
                if a > 0.0 {
                    1.0
                } else {
                    a + alpha
                }
            }
            Activation::SELU => {
                if a > 0.0 {
                    SELU_SCALE
                } else {
                    a + SELU_SCALE * SELU_ALPHA
                }
            }
            // d/dx softplus = sigmoid(x) = 1 - e^{-softplus(x)}
            Activation::Softplus => -(-a).exp_m1(),
            Activation::Softsign => {
                let t = 1.0 - a.abs();
                t * t
            }
            Activation::HardSigmoid => {
                if a > 0.0 && a < 1.0 {
                    1.0 / 6.0
                } else {
                    0.0
                }
            }
            Activation::Exponential => a,
        }
    }

    /// Forward pass. Softmax normalises over the last axis and needs at least 2 axes.
    pub fn forward(&self, z: &Tensor) -> RustymlResult<Tensor> {
        let mut out = z.clone();
        self.forward_in_place(&mut out)?;
        Ok(out)
    }

    /// Forward pass in place (the fused epilogue of layers that own their pre-activation).
    pub fn forward_in_place(&self, z: &mut Tensor) -> RustymlResult<()> {
        match self {
            Activation::Linear => Ok(()),
            Activation::Softmax => {
                if z.ndim() < 2 {
                    return Err(Error::invalid_input(format!(
                        "softmax needs at least 2 axes (batch, classes), got shape {:?}",
                        z.shape()
                    )));
                }
                let last = Axis(z.ndim() - 1);
                for mut lane in z.lanes_mut(last) {
                    let max = lane.fold(f32::NEG_INFINITY, |m, &v| m.max(v));
                    let mut sum = 0.0f32;
                    lane.mapv_inplace(|v| {
                        let e = (v - max).exp();
                        sum += e;
                        e
                    });
                    lane.mapv_inplace(|e| e / sum);
                }
                Ok(())
            }
            act => {
                z.mapv_inplace(|v| act.apply_scalar(v));
                Ok(())
            }
        }
    }

    /// Backward pass from the activated output: the gradient with respect to the pre-activation.
    pub fn backward(&self, activated: &Tensor, grad_output: &Tensor) -> RustymlResult<Tensor> {
        if activated.shape() != grad_output.shape() {
            return Err(Error::shape_mismatch(
                activated.shape(),
                grad_output.shape(),
            ));
        }
        match self {
            Activation::Linear => Ok(grad_output.clone()),
            Activation::Softmax => {
                if activated.ndim() < 2 {
                    return Err(Error::invalid_input(format!(
                        "softmax needs at least 2 axes (batch, classes), got shape {:?}",
                        activated.shape()
                    )));
                }
                let last = Axis(activated.ndim() - 1);
                let mut grad = grad_output.clone();
                for (mut g, a) in grad.lanes_mut(last).into_iter().zip(activated.lanes(last)) {
                    let dot: f32 = g.iter().zip(a.iter()).map(|(&g, &a)| g * a).sum();
                    Zip::from(&mut g)
                        .and(&a)
                        .for_each(|g, &a| *g = a * (*g - dot));
                }
                Ok(grad)
            }
            act => {
                let mut grad = grad_output.clone();
                Zip::from(&mut grad)
                    .and(activated)
                    .for_each(|g, &a| *g *= act.derivative_from_output(a));
                Ok(grad)
            }
        }
    }
}
