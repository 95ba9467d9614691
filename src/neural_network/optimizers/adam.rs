//! Adam (Kingma & Ba 2015) with L2-coupled weight decay: `g + wd * p` enters the moments.

use super::adam_core::AdamCore;
use super::rules::{AdamEpsilon, DecayCoupling, DecayScope, GradientClip, WeightDecayRule};
use super::state::OptimizerState;
use crate::error::Result;
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
    ) -> Result<Self> {
        Ok(Self {
            core: AdamCore::new(
                learning_rate,
                beta1,
                beta2,
                epsilon,
                weight_decay,
                WeightDecayRule::new(DecayCoupling::CoupledL2, DecayScope::KernelsOnly),
            )?,
        })
    }

    /// Clips every batch's gradients so that their global L2 norm is at most `global_clipnorm`.
    pub fn with_global_clipnorm(mut self, global_clipnorm: f32) -> Result<Self> {
        self.core.set_global_clipnorm(global_clipnorm)?;
        Ok(self)
    }

    /// Replaces how weight decay applies (default: L2-coupled, kernels only).
    pub fn with_weight_decay_rule(mut self, rule: WeightDecayRule) -> Self {
        self.core.decay = rule;
        self
    }

    /// Where epsilon meets the second moment (default: [`AdamEpsilon::CorrectedRoot`]).
    pub fn with_epsilon_placement(mut self, placement: AdamEpsilon) -> Self {
        self.core.epsilon_placement = placement;
        self
    }

    /// AMSGrad (Reddi et al. 2018): the denominator uses the running maximum of the second
    /// moment.
    pub fn with_amsgrad(mut self, amsgrad: bool) -> Self {
        self.core.amsgrad = amsgrad;
        self
    }

    /// Clips each parameter's gradient (by its own norm, or elementwise by value) after the
    /// global-norm scale.
    pub fn with_gradient_clip(mut self, clip: GradientClip) -> Result<Self> {
        self.core.set_gradient_clip(clip)?;
        Ok(self)
    }

    /// Replaces the learning rate; unlike the constructor's, this one may be 0 (finite and
    /// >= 0), as a warm-up schedule's first step is.
    pub fn with_learning_rate(mut self, learning_rate: f32) -> Result<Self> {
        self.core.set_learning_rate_checked(learning_rate)?;
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

    fn export_state(&self) -> Option<OptimizerState> {
        Some(self.core.export_state())
    }

    fn import_state(&mut self, state: &OptimizerState) -> Result<()> {
        self.core.import_state(state)
    }
}
