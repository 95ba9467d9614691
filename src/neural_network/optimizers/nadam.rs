//! Nadam (Dozat 2016): Adam with Nesterov momentum, in Keras 3's form (the momentum schedule
//! `u_t = b1 (1 - 0.5 * 0.96^t)` and its running product).

use super::kernels::{nadam_step, NadamFactors};
use super::rules::{prepare_grad, DecayCoupling, DecayScope, GradientClip, WeightDecayRule};
use super::state::{LayerSlots, OptimizerState};
use super::validation::{self, non_negative, positive, unit_interval};
use crate::error::Result;
use crate::neural_network::traits::{Layer, Optimizer};

/// Nadam with Keras 3's update rule; weight decay is decoupled and applies to every trainable
/// parameter by default (`with_weight_decay_rule` changes it).
#[derive(Debug, Clone)]
pub struct Nadam {
    learning_rate: f32,
    beta1: f32,
    beta2: f32,
    epsilon: f32,
    weight_decay: f32,
    global_clipnorm: Option<f32>,
    clip: Option<GradientClip>,
    decay: WeightDecayRule,
    t: u64,
    /// `prod_{k <= t} u_k`, advanced by `step` in float32 in the order Keras multiplies.
    u_product: f32,
    moments: LayerSlots<2>,
}

impl Nadam {
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
            u_product: 1.0,
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

    /// `u_t = b1 (1 - 0.5 * 0.96^t)`.
    fn momentum_schedule(&self, t: u64) -> f32 {
        let t = t.min(i32::MAX as u64) as f32;
        self.beta1 * (1.0 - 0.5 * 0.96f32.powf(t))
    }

    /// The running product after `t` steps, multiplied in the same order as `step` does.
    fn product_after(&self, t: u64) -> f32 {
        (1..=t).fold(1.0f32, |acc, k| {
            acc * self.beta1 * (1.0 - 0.5 * 0.96f32.powf(k as f32))
        })
    }

    fn factors(&self) -> NadamFactors {
        // An update without a preceding `step` is the first step.
        let (t, product) = if self.t == 0 {
            (1, self.product_after(1))
        } else {
            (self.t, self.u_product)
        };
        let u_next = self.momentum_schedule(t + 1);
        NadamFactors {
            u_t: self.momentum_schedule(t),
            u_next,
            product,
            product_next: product * u_next,
            beta2_power: self.beta2.powf(t.min(i32::MAX as u64) as f32),
        }
    }
}

impl Optimizer for Nadam {
    fn step(&mut self) {
        self.t += 1;
        let t = self.t.min(i32::MAX as u64) as f32;
        self.u_product = self.u_product * self.beta1 * (1.0 - 0.5 * 0.96f32.powf(t));
        self.moments.rewind();
    }

    fn global_clipnorm(&self) -> Option<f32> {
        self.global_clipnorm
    }

    fn update(&mut self, layer: &mut dyn Layer, grad_scale: f32) {
        let (lr, wd) = (self.learning_rate, self.weight_decay);
        let factors = self.factors();
        let mut params = layer.parameters();
        let slots = self.moments.claim(&params);
        for (param, [m, v]) in params.iter_mut().zip(slots.iter_mut()) {
            let grad = prepare_grad(param, grad_scale, self.clip, self.decay, lr, wd);
            nadam_step(
                param.value,
                &grad,
                m,
                v,
                lr,
                self.beta1,
                self.beta2,
                self.epsilon,
                factors,
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
        state.check("Nadam", 1, 1)?;
        self.moments.import(&state.groups[0])?;
        self.t = state.steps[0];
        // The product is a function of the step count: recomputed, not stored.
        self.u_product = self.product_after(self.t);
        Ok(())
    }
}
