//! Design choices on which published optimizers differ, as explicit options.
//!
//! The original constructors (`SGD::new`, `Adam::new`, ...) keep RustyML 0.15's choices; a
//! front end that must reproduce another framework's numbers (the Keras-facing Python door)
//! sets these options explicitly:
//!
//! - [`WeightDecayRule`]: whether weight decay is an L2 term added to the gradient or a
//!   decoupled shrink of the parameter ([`DecayCoupling`]), and which parameters decay
//!   ([`DecayScope`]).
//! - [`AdamEpsilon`]: whether Adam's epsilon is added to the root of the bias-corrected
//!   second moment (Kingma & Ba's Algorithm 1, PyTorch) or of the raw one (the paper's
//!   "epsilon hat", Keras and TensorFlow).
//! - [`EpsilonPlacement`]: whether RMSprop's and AdaGrad's epsilon is added after the square
//!   root (PyTorch) or inside it (Keras).
//! - [`GradientClip`]: per-variable clipping of the gradient, by L2 norm or by value.

use super::kernels::{
    apply_weight_decay, clip_by_norm, clip_by_value, coupled_grad, l2_regularized_grad, scaled_grad,
};
use crate::neural_network::traits::ParamGrad;
use std::borrow::Cow;

/// How weight decay enters the update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecayCoupling {
    /// `g + wd * p` flows through the update rule (L2 regularisation).
    CoupledL2,
    /// `p -= lr * wd * p` before the update rule, with the current learning rate
    /// (Loshchilov & Hutter's decoupled decay).
    Decoupled,
}

/// Which parameters weight decay applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecayScope {
    /// Only parameters marked as decaying (kernels); biases and normalisation parameters keep
    /// their values (`ParamGrad::no_decay`).
    KernelsOnly,
    /// Every trainable parameter, biases and normalisation parameters included.
    AllTrainable,
}

/// How and where weight decay applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WeightDecayRule {
    pub coupling: DecayCoupling,
    pub scope: DecayScope,
}

impl WeightDecayRule {
    pub const fn new(coupling: DecayCoupling, scope: DecayScope) -> Self {
        Self { coupling, scope }
    }

    fn applies_to(&self, param: &ParamGrad<'_>) -> bool {
        param.decays || self.scope == DecayScope::AllTrainable
    }
}

/// Where Adam adds epsilon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdamEpsilon {
    /// `p -= lr * m̂ / (sqrt(v̂) + eps)` with `m̂ = m / (1 - b1^t)`, `v̂ = v / (1 - b2^t)`.
    CorrectedRoot,
    /// `p -= alpha * m / (sqrt(v) + eps)` with `alpha = lr * sqrt(1 - b2^t) / (1 - b1^t)`:
    /// epsilon meets the raw second moment, so it weighs `1 / sqrt(1 - b2^t)` times less
    /// than with [`AdamEpsilon::CorrectedRoot`] early in training.
    UncorrectedRoot,
}

/// Where RMSprop and AdaGrad add epsilon to the root of their second-moment statistic `s`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EpsilonPlacement {
    /// `g / (sqrt(s) + eps)`.
    OutsideRoot,
    /// `g / sqrt(s + eps)`.
    InsideRoot,
}

/// Per-variable gradient clipping, applied after the clip-by-global-norm scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GradientClip {
    /// Each parameter's gradient is rescaled so that its own L2 norm is at most the bound.
    Norm(f32),
    /// Each gradient element is clamped to `[-bound, bound]`.
    Value(f32),
}

/// The gradient an optimizer steps with, after applying the global-norm scale, the
/// per-variable clip and the weight decay rule; a decoupled decay shrinks `param.value` here,
/// before the update rule runs (as Keras and PyTorch order it).
pub(crate) fn prepare_grad<'a>(
    param: &mut ParamGrad<'a>,
    grad_scale: f32,
    clip: Option<GradientClip>,
    rule: WeightDecayRule,
    learning_rate: f32,
    weight_decay: f32,
) -> Cow<'a, [f32]> {
    let decays = rule.applies_to(param) && weight_decay > 0.0;
    match rule.coupling {
        DecayCoupling::CoupledL2 => match clip {
            // The original constructors' path, unchanged.
            None => coupled_grad(param.grad, param.value, decays, grad_scale, weight_decay),
            Some(_) => {
                let grad = clipped(param.grad, grad_scale, clip);
                if decays {
                    Cow::Owned(l2_regularized_grad(&grad, param.value, weight_decay))
                } else {
                    grad
                }
            }
        },
        DecayCoupling::Decoupled => {
            if decays {
                apply_weight_decay(param.value, learning_rate, weight_decay);
            }
            clipped(param.grad, grad_scale, clip)
        }
    }
}

fn clipped(grad: &[f32], grad_scale: f32, clip: Option<GradientClip>) -> Cow<'_, [f32]> {
    let grad = scaled_grad(grad, grad_scale);
    match clip {
        None => grad,
        Some(GradientClip::Norm(bound)) => clip_by_norm(grad, bound),
        Some(GradientClip::Value(bound)) => clip_by_value(grad, bound),
    }
}
