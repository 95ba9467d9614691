//! Adam (Kingma & Ba 2015) with L2-coupled weight decay: `g + wd * p` enters the moments.

use super::adam_core::{AdamCore, Decay};
use crate::error::RustymlResult;
use crate::neural_network::traits::{Layer, Optimizer};

/// Adam (Kingma & Ba 2015) with L2-coupled weight decay: `g + wd * p` enters the moments. Biases and normalisation parameters never decay.
#[derive(Debug, Clone)]
pub struct Adam {
    core: AdamCore,
}

impl Adam {
    /// `learning_rate` and `epsilon` finite and > 0; `beta1`, `beta2` in [0, 1);
    /// `weight_decay` finite and >= 0.
    pub fn new(
        learning_rate: f32,
        beta1: f32,
        beta2: f32,
        epsilon: f32,
        weight_decay: f32,
    ) -> RustymlResult<Self> {
        Ok(Self {
            core: AdamCore::new(
                learning_rate,
                beta1,
                beta2,
                epsilon,
                weight_decay,
                Decay::Coupled,
            )?,
        })
    }

    /// Clips every batch's gradients so that their global L2 norm is at most `global_clipnorm`.
    pub fn with_global_clipnorm(mut self, global_clipnorm: f32) -> RustymlResult<Self> {
        self.core.set_global_clipnorm(global_clipnorm)?;
        Ok(self)
    }
}

impl Optimizer for Adam {
    fn step(&mut self) {
        self.core.step();
    }

    fn global_clipnorm(&self) -> Option<f32> {
        self.core.global_clipnorm
    }

    fn update(&mut self, layer: &mut dyn Layer, grad_scale: f32) {
        self.core.update(layer, grad_scale);
    }

    fn learning_rate(&self) -> f32 {
        self.core.learning_rate
    }

    fn set_learning_rate(&mut self, learning_rate: f32) {
        self.core.learning_rate = learning_rate;
    }

    fn snapshot(&self) -> Option<Box<dyn Optimizer>> {
        Some(Box::new(self.clone()))
    }
}
