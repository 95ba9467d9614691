//! Nadam (Dozat 2016): Adam with Nesterov momentum, in Keras 3's form (the momentum schedule
//! `u_t = b1 (1 - 0.5 * 0.96^t)` and its running product).

use super::common::{common_builders, common_optimizer_methods, Common};
use super::kernels::{nadam_step, NadamFactors};
use super::rules::{DecayCoupling, DecayScope, GradientClip, WeightDecayRule};
use super::state::{LayerSlots, OptimizerState};
use super::validation::{self, positive, unit_interval};
use crate::error::Result;
use crate::neural_network::traits::{Layer, Optimizer};

/// Nadam with Keras 3's update rule; weight decay is decoupled and applies to every trainable
/// parameter by default (`with_weight_decay_rule` changes it).
#[derive(Debug, Clone)]
pub struct Nadam {
    beta1: f32,
    beta2: f32,
    epsilon: f32,
    common: Common,
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
        let learning_rate = validation::learning_rate(learning_rate)?;
        Ok(Self {
            beta1: unit_interval("beta1", beta1)?,
            beta2: unit_interval("beta2", beta2)?,
            epsilon: positive("epsilon", epsilon)?,
            common: Common::new(
                learning_rate,
                weight_decay,
                WeightDecayRule::new(DecayCoupling::Decoupled, DecayScope::AllTrainable),
            )?,
            t: 0,
            u_product: 1.0,
            moments: LayerSlots::default(),
        })
    }

    common_builders!(common, "decoupled, every trainable parameter");

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
    common_optimizer_methods!(common);

    fn step(&mut self) {
        self.t += 1;
        let t = self.t.min(i32::MAX as u64) as f32;
        self.u_product = self.u_product * self.beta1 * (1.0 - 0.5 * 0.96f32.powf(t));
        self.moments.rewind();
    }

    fn update(&mut self, layer: &mut dyn Layer, grad_scale: f32) {
        let lr = self.common.learning_rate;
        let factors = self.factors();
        let mut params = layer.parameters();
        let slots = self.moments.claim(&params);
        for (param, [m, v]) in params.iter_mut().zip(slots.iter_mut()) {
            let grad = self.common.grad(param, grad_scale);
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
