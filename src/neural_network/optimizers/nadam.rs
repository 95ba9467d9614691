//! Nadam (Dozat 2016): Adam with Nesterov momentum, in Keras 3's form (the momentum schedule
//! `u_t = b1 (1 - 0.5 * 0.96^t)` and its running product).

use super::common::{common_builders, common_optimizer_methods};
use super::kernels::{nadam_step, NadamFactors};
use super::moment_pair::{moment_pair_constructor, MomentPair};
use super::rules::{DecayCoupling, DecayScope, GradientClip, WeightDecayRule};
use super::state::OptimizerState;
use super::validation;
use crate::error::Result;
use crate::neural_network::traits::{Layer, Optimizer};

/// Nadam with Keras 3's update rule; weight decay is decoupled and applies to every trainable
/// parameter by default (`with_weight_decay_rule` changes it).
#[derive(Debug, Clone)]
pub struct Nadam {
    pair: MomentPair,
    /// `prod_{k <= t} u_k`, advanced by `step` in float32 in the order Keras multiplies.
    u_product: f32,
}

impl Nadam {
    moment_pair_constructor!(
        /// `learning_rate` finite and >= 0; `epsilon` finite and > 0; `beta1`, `beta2` in [0, 1);
        /// `weight_decay` finite and >= 0.
        validation::learning_rate,
        WeightDecayRule::new(DecayCoupling::Decoupled, DecayScope::AllTrainable),
        |pair| Self {
            pair,
            u_product: 1.0,
        }
    );

    common_builders!(pair.common, "decoupled, every trainable parameter");

    /// `u_t = b1 (1 - 0.5 * 0.96^t)`.
    fn momentum_schedule(&self, t: u64) -> f32 {
        let t = t.min(i32::MAX as u64) as f32;
        self.pair.beta1 * (1.0 - 0.5 * 0.96f32.powf(t))
    }

    /// The running product after `t` steps, multiplied in the same order as `step` does.
    fn product_after(&self, t: u64) -> f32 {
        (1..=t).fold(1.0f32, |acc, k| {
            acc * self.pair.beta1 * (1.0 - 0.5 * 0.96f32.powf(k as f32))
        })
    }

    fn factors(&self) -> NadamFactors {
        // An update without a preceding `step` is the first step.
        let (t, product) = if self.pair.t == 0 {
            (1, self.product_after(1))
        } else {
            (self.pair.t, self.u_product)
        };
        let u_next = self.momentum_schedule(t + 1);
        NadamFactors {
            u_t: self.momentum_schedule(t),
            u_next,
            product,
            product_next: product * u_next,
            beta2_power: self.pair.beta2.powf(t.min(i32::MAX as u64) as f32),
        }
    }
}

impl Optimizer for Nadam {
    common_optimizer_methods!(pair.common);

    fn step(&mut self) {
        self.pair.step();
        let t = self.pair.t.min(i32::MAX as u64) as f32;
        self.u_product = self.u_product * self.pair.beta1 * (1.0 - 0.5 * 0.96f32.powf(t));
    }

    fn update(&mut self, layer: &mut dyn Layer, grad_scale: f32) {
        let (lr, beta1, beta2, epsilon) = self.pair.rates();
        let factors = self.factors();
        self.pair.update_each(layer, grad_scale, |p, g, m, v| {
            nadam_step(p, g, m, v, lr, beta1, beta2, epsilon, factors)
        });
    }

    fn export_state(&self) -> Option<OptimizerState> {
        Some(self.pair.export_state())
    }

    fn import_state(&mut self, state: &OptimizerState) -> Result<()> {
        self.pair.import_state("Nadam", state)?;
        // The product is a function of the step count: recomputed, not stored.
        self.u_product = self.product_after(self.pair.t);
        Ok(())
    }
}
