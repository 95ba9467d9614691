//! AdaGrad (Duchi, Hazan & Singer 2011) with L2-coupled weight decay.

use super::kernels::{adagrad_step, coupled_grad};
use super::state::LayerSlots;
use super::validation::{non_negative, positive};
use crate::error::RustymlResult;
use crate::neural_network::traits::{Layer, Optimizer};

/// AdaGrad: `a += g²`, `p -= lr g / (sqrt(a) + eps)`, accumulators starting at 0. Weight decay is
/// L2-coupled (`g + wd * p`); biases and normalisation parameters never decay.
#[derive(Debug, Clone)]
pub struct AdaGrad {
    learning_rate: f32,
    epsilon: f32,
    weight_decay: f32,
    global_clipnorm: Option<f32>,
    accumulators: LayerSlots<1>,
}

impl AdaGrad {
    /// `learning_rate`, `epsilon` finite and > 0; `weight_decay` finite and >= 0.
    pub fn new(learning_rate: f32, epsilon: f32, weight_decay: f32) -> RustymlResult<Self> {
        Ok(Self {
            learning_rate: positive("learning_rate", learning_rate)?,
            epsilon: positive("epsilon", epsilon)?,
            weight_decay: non_negative("weight_decay", weight_decay)?,
            global_clipnorm: None,
            accumulators: LayerSlots::default(),
        })
    }

    /// Clips every batch's gradients so that their global L2 norm is at most `global_clipnorm`.
    pub fn with_global_clipnorm(mut self, global_clipnorm: f32) -> RustymlResult<Self> {
        self.global_clipnorm = Some(positive("global_clipnorm", global_clipnorm)?);
        Ok(self)
    }
}

impl Optimizer for AdaGrad {
    fn step(&mut self) {
        self.accumulators.rewind();
    }

    fn global_clipnorm(&self) -> Option<f32> {
        self.global_clipnorm
    }

    fn update(&mut self, layer: &mut dyn Layer, grad_scale: f32) {
        let mut params = layer.parameters();
        let slots = self.accumulators.claim(&params);
        for (param, [acc]) in params.iter_mut().zip(slots.iter_mut()) {
            let grad = coupled_grad(
                param.grad,
                param.value,
                param.decays,
                grad_scale,
                self.weight_decay,
            );
            adagrad_step(param.value, &grad, acc, self.learning_rate, self.epsilon);
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
