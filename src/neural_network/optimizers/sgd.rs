//! Stochastic gradient descent with optional (Nesterov) momentum and decoupled weight decay.

use super::kernels::{apply_weight_decay, scaled_grad, sgd_momentum_step, sgd_step};
use super::state::LayerSlots;
use super::validation::{non_negative, positive};
use crate::error::RustymlResult;
use crate::neural_network::traits::{Layer, Optimizer};

/// SGD: `p -= lr * g`; with momentum Keras's `v = momentum v - lr g`, `p += v` (Nesterov:
/// `p += momentum v - lr g`). Weight decay is decoupled: kernels shrink by `1 - lr * wd`
/// before the gradient step; biases and normalisation parameters never decay.
#[derive(Debug, Clone)]
pub struct SGD {
    learning_rate: f32,
    momentum: f32,
    nesterov: bool,
    weight_decay: f32,
    global_clipnorm: Option<f32>,
    velocity: LayerSlots<1>,
}

impl SGD {
    /// `learning_rate` finite and > 0; `momentum` and `weight_decay` finite and >= 0.
    pub fn new(
        learning_rate: f32,
        momentum: f32,
        nesterov: bool,
        weight_decay: f32,
    ) -> RustymlResult<Self> {
        Ok(Self {
            learning_rate: positive("learning_rate", learning_rate)?,
            momentum: non_negative("momentum", momentum)?,
            nesterov,
            weight_decay: non_negative("weight_decay", weight_decay)?,
            global_clipnorm: None,
            velocity: LayerSlots::default(),
        })
    }

    /// Clips every batch's gradients so that their global L2 norm is at most `global_clipnorm`.
    pub fn with_global_clipnorm(mut self, global_clipnorm: f32) -> RustymlResult<Self> {
        self.global_clipnorm = Some(positive("global_clipnorm", global_clipnorm)?);
        Ok(self)
    }
}

impl Optimizer for SGD {
    fn step(&mut self) {
        self.velocity.rewind();
    }

    fn global_clipnorm(&self) -> Option<f32> {
        self.global_clipnorm
    }

    fn update(&mut self, layer: &mut dyn Layer, grad_scale: f32) {
        let lr = self.learning_rate;
        let mut params = layer.parameters();
        let slots = self.velocity.claim(&params);
        for (param, [velocity]) in params.iter_mut().zip(slots.iter_mut()) {
            let grad = scaled_grad(param.grad, grad_scale);
            if param.decays && self.weight_decay > 0.0 {
                apply_weight_decay(param.value, lr, self.weight_decay);
            }
            if self.momentum > 0.0 {
                sgd_momentum_step(
                    param.value,
                    &grad,
                    velocity,
                    lr,
                    self.momentum,
                    self.nesterov,
                );
            } else {
                sgd_step(param.value, &grad, lr);
            }
        }
    }

    fn learning_rate(&self) -> f32 {
        self.learning_rate
    }

    fn set_learning_rate(&mut self, learning_rate: f32) {
        self.learning_rate = learning_rate;
    }

    fn snapshot(&self) -> Option<Box<dyn Optimizer>> {
        Some(Box::new(self.clone()))
    }
}
