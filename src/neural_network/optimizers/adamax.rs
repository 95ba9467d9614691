//! Adamax (Kingma & Ba 2015, section 7.1): Adam with the infinity norm in place of the second
//! moment, in Keras 3's form.

use super::kernels::adamax_step;
use super::rules::{prepare_grad, DecayCoupling, DecayScope, GradientClip, WeightDecayRule};
use super::state::{LayerSlots, OptimizerState};
use super::validation::{self, non_negative, positive, unit_interval};
use crate::error::Result;
use crate::neural_network::traits::{Layer, Optimizer};

/// Adamax with Keras 3's update rule; weight decay is decoupled and applies to every
/// trainable parameter by default (`with_weight_decay_rule` changes it).
#[derive(Debug, Clone)]
pub struct Adamax {
    learning_rate: f32,
    beta1: f32,
    beta2: f32,
    epsilon: f32,
    weight_decay: f32,
    global_clipnorm: Option<f32>,
    clip: Option<GradientClip>,
    decay: WeightDecayRule,
    t: u64,
    /// Per parameter: the first moment and the exponentially weighted infinity norm.
    moments: LayerSlots<2>,
}

impl Adamax {
    /// `learning_rate` finite and >= 0; `epsilon` finite and > 0; `beta1`, `beta2` in [0, 1);
    /// `weight_decay` finite and >= 0.
    pub fn new(
        learning_rate: f32,
        beta1: f32,
        beta2: f32,
        epsilon: f32,
        weight_decay: f32,
    ) -> Result<Self> {
        Ok(Self {
            learning_rate: validation::learning_rate(learning_rate)?,
            beta1: unit_interval("beta1", beta1)?,
            beta2: unit_interval("beta2", beta2)?,
            epsilon: positive("epsilon", epsilon)?,
            weight_decay: non_negative("weight_decay", weight_decay)?,
            global_clipnorm: None,
            clip: None,
            decay: WeightDecayRule::new(DecayCoupling::Decoupled, DecayScope::AllTrainable),
            t: 0,
            moments: LayerSlots::default(),
        })
    }

    /// Clips every batch's gradients so that their global L2 norm is at most `global_clipnorm`.
    pub fn with_global_clipnorm(mut self, global_clipnorm: f32) -> Result<Self> {
        self.global_clipnorm = Some(positive("global_clipnorm", global_clipnorm)?);
        Ok(self)
    }

    /// Replaces how weight decay applies (default: decoupled, every trainable parameter).
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
}

impl Optimizer for Adamax {
    fn step(&mut self) {
        self.t += 1;
        self.moments.rewind();
    }

    fn global_clipnorm(&self) -> Option<f32> {
        self.global_clipnorm
    }

    fn update(&mut self, layer: &mut dyn Layer, grad_scale: f32) {
        let (lr, wd) = (self.learning_rate, self.weight_decay);
        let t = self.t.max(1);
        let mut params = layer.parameters();
        let slots = self.moments.claim(&params);
        for (param, [m, u]) in params.iter_mut().zip(slots.iter_mut()) {
            let grad = prepare_grad(param, grad_scale, self.clip, self.decay, lr, wd);
            adamax_step(
                param.value,
                &grad,
                m,
                u,
                lr,
                self.beta1,
                self.beta2,
                self.epsilon,
                t,
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

    fn export_state(&self) -> Option<OptimizerState> {
        Some(OptimizerState {
            steps: vec![self.t],
            groups: vec![self.moments.export()],
        })
    }

    fn import_state(&mut self, state: &OptimizerState) -> Result<()> {
        state.check("Adamax", 1, 1)?;
        self.moments.import(&state.groups[0])?;
        self.t = state.steps[0];
        Ok(())
    }
}
