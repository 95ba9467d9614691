//! RMSprop (Hinton's lecture 6e) with L2-coupled weight decay.

use super::kernels::{coupled_grad, rmsprop_step};
use super::state::LayerSlots;
use super::validation::{non_negative, positive, unit_interval};
use crate::error::RustymlResult;
use crate::neural_network::traits::{Layer, Optimizer};

/// RMSprop: `c = rho c + (1 - rho) g²`, `p -= lr g / (sqrt(c) + eps)`. Weight decay is L2-coupled
/// (`g + wd * p`, as PyTorch does); biases and normalisation parameters never decay.
#[derive(Debug, Clone)]
pub struct RMSprop {
    learning_rate: f32,
    rho: f32,
    epsilon: f32,
    weight_decay: f32,
    global_clipnorm: Option<f32>,
    cache: LayerSlots<1>,
}

impl RMSprop {
    /// `learning_rate`, `epsilon` finite and > 0; `rho` in [0, 1); `weight_decay` >= 0.
    pub fn new(
        learning_rate: f32,
        rho: f32,
        epsilon: f32,
        weight_decay: f32,
    ) -> RustymlResult<Self> {
        Ok(Self {
            learning_rate: positive("learning_rate", learning_rate)?,
            rho: unit_interval("rho", rho)?,
            epsilon: positive("epsilon", epsilon)?,
            weight_decay: non_negative("weight_decay", weight_decay)?,
            global_clipnorm: None,
            cache: LayerSlots::default(),
        })
    }

    /// Clips every batch's gradients so that their global L2 norm is at most `global_clipnorm`.
    pub fn with_global_clipnorm(mut self, global_clipnorm: f32) -> RustymlResult<Self> {
        self.global_clipnorm = Some(positive("global_clipnorm", global_clipnorm)?);
        Ok(self)
    }
}

impl Optimizer for RMSprop {
    fn step(&mut self) {
        self.cache.rewind();
    }

    fn global_clipnorm(&self) -> Option<f32> {
        self.global_clipnorm
    }

    fn update(&mut self, layer: &mut dyn Layer, grad_scale: f32) {
        let mut params = layer.parameters();
        let slots = self.cache.claim(&params);
        for (param, [cache]) in params.iter_mut().zip(slots.iter_mut()) {
            let grad = coupled_grad(
                param.grad,
                param.value,
                param.decays,
                grad_scale,
                self.weight_decay,
            );
            rmsprop_step(
                param.value,
                &grad,
                cache,
                self.rho,
                self.learning_rate,
                self.epsilon,
            );
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
