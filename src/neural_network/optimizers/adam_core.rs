//! The Adam update shared by `Adam` (L2-coupled decay) and `AdamW` (decoupled decay).

use super::kernels::{adam_step, apply_weight_decay, coupled_grad, scaled_grad};
use super::state::LayerSlots;
use super::validation::{non_negative, positive, unit_interval};
use crate::error::RustymlResult;
use crate::neural_network::traits::Layer;

/// How weight decay enters the update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decay {
    /// `g + wd * p` flows through the moments (Adam with L2).
    Coupled,
    /// `p *= 1 - lr * wd` beside the adaptive step (Loshchilov & Hutter's AdamW).
    Decoupled,
}

#[derive(Debug, Clone)]
pub(crate) struct AdamCore {
    pub(crate) learning_rate: f32,
    beta1: f32,
    beta2: f32,
    epsilon: f32,
    weight_decay: f32,
    pub(crate) global_clipnorm: Option<f32>,
    decay: Decay,
    t: u64,
    moments: LayerSlots<2>,
}

impl AdamCore {
    pub(crate) fn new(
        learning_rate: f32,
        beta1: f32,
        beta2: f32,
        epsilon: f32,
        weight_decay: f32,
        decay: Decay,
    ) -> RustymlResult<Self> {
        Ok(Self {
            learning_rate: positive("learning_rate", learning_rate)?,
            beta1: unit_interval("beta1", beta1)?,
            beta2: unit_interval("beta2", beta2)?,
            epsilon: positive("epsilon", epsilon)?,
            weight_decay: non_negative("weight_decay", weight_decay)?,
            global_clipnorm: None,
            decay,
            t: 0,
            moments: LayerSlots::default(),
        })
    }

    pub(crate) fn set_global_clipnorm(&mut self, global_clipnorm: f32) -> RustymlResult<()> {
        self.global_clipnorm = Some(positive("global_clipnorm", global_clipnorm)?);
        Ok(())
    }

    pub(crate) fn step(&mut self) {
        self.t += 1;
        self.moments.rewind();
    }

    pub(crate) fn update(&mut self, layer: &mut dyn Layer, grad_scale: f32) {
        let (lr, wd) = (self.learning_rate, self.weight_decay);
        // An update without a preceding `step` is the first step.
        let t = self.t.max(1);
        let mut params = layer.parameters();
        let slots = self.moments.claim(&params);
        for (param, [m, v]) in params.iter_mut().zip(slots.iter_mut()) {
            let grad = match self.decay {
                Decay::Coupled => {
                    coupled_grad(param.grad, param.value, param.decays, grad_scale, wd)
                }
                Decay::Decoupled => {
                    if param.decays && wd > 0.0 {
                        apply_weight_decay(param.value, lr, wd);
                    }
                    scaled_grad(param.grad, grad_scale)
                }
            };
            adam_step(
                param.value,
                &grad,
                m,
                v,
                lr,
                self.beta1,
                self.beta2,
                self.epsilon,
                t,
            );
        }
    }
}
