//! Stochastic gradient descent with optional (Nesterov) momentum and decoupled weight decay.

use super::kernels::{sgd_momentum_step, sgd_step};
use super::rules::{prepare_grad, DecayCoupling, DecayScope, GradientClip, WeightDecayRule};
use super::state::{LayerSlots, OptimizerState};
use super::validation::{self, non_negative, positive};
use crate::error::Result;
use crate::neural_network::traits::{Layer, Optimizer};

/// SGD: `p -= lr * g`; with momentum Keras's `v = momentum v - lr g`, `p += v` (Nesterov:
/// `p += momentum v - lr g`). Weight decay is decoupled: kernels shrink by `1 - lr * wd`
/// before the gradient step; biases and normalisation parameters never decay (see
/// [`SGD::with_weight_decay_rule`]).
#[derive(Debug, Clone)]
pub struct SGD {
    learning_rate: f32,
    momentum: f32,
    nesterov: bool,
    weight_decay: f32,
    global_clipnorm: Option<f32>,
    clip: Option<GradientClip>,
    decay: WeightDecayRule,
    velocity: LayerSlots<1>,
}

impl SGD {
    /// `learning_rate` finite and > 0; `momentum` and `weight_decay` finite and >= 0.
    pub fn new(
        learning_rate: f32,
        momentum: f32,
        nesterov: bool,
        weight_decay: f32,
    ) -> Result<Self> {
        Ok(Self {
            learning_rate: positive("learning_rate", learning_rate)?,
            momentum: non_negative("momentum", momentum)?,
            nesterov,
            weight_decay: non_negative("weight_decay", weight_decay)?,
            global_clipnorm: None,
            clip: None,
            decay: WeightDecayRule::new(DecayCoupling::Decoupled, DecayScope::KernelsOnly),
            velocity: LayerSlots::default(),
        })
    }

    /// Clips every batch's gradients so that their global L2 norm is at most `global_clipnorm`.
    pub fn with_global_clipnorm(mut self, global_clipnorm: f32) -> Result<Self> {
        self.global_clipnorm = Some(positive("global_clipnorm", global_clipnorm)?);
        Ok(self)
    }

    /// Replaces how weight decay applies (default: decoupled, kernels only).
    pub fn with_weight_decay_rule(mut self, rule: WeightDecayRule) -> Self {
        self.decay = rule;
        self
    }

    /// Clips each parameter's gradient (by its own norm, or elementwise by value) after the
    /// global-norm scale.
    pub fn with_gradient_clip(mut self, clip: GradientClip) -> Result<Self> {
        self.clip = Some(validation::gradient_clip(clip)?);
        Ok(self)
    }

    /// Replaces the learning rate; unlike the constructor's, this one may be 0 (finite and
    /// >= 0), as a warm-up schedule's first step is.
    pub fn with_learning_rate(mut self, learning_rate: f32) -> Result<Self> {
        self.learning_rate = validation::learning_rate(learning_rate)?;
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
            let grad = prepare_grad(
                param,
                grad_scale,
                self.clip,
                self.decay,
                lr,
                self.weight_decay,
            );
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

    fn export_state(&self) -> Option<OptimizerState> {
        Some(OptimizerState {
            steps: Vec::new(),
            groups: vec![self.velocity.export()],
        })
    }

    fn import_state(&mut self, state: &OptimizerState) -> Result<()> {
        state.check("SGD", 0, 1)?;
        self.velocity.import(&state.groups[0])
    }
}
