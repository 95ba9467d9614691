//! Stochastic gradient descent with optional (Nesterov) momentum and decoupled weight decay.

use super::common::{common_builders, common_optimizer_methods, Common};
use super::kernels::{sgd_momentum_step, sgd_step};
use super::rules::{DecayCoupling, DecayScope, GradientClip, WeightDecayRule};
use super::state::{LayerSlots, OptimizerState};
use super::validation::{self, non_negative};
use crate::error::Result;
use crate::neural_network::traits::{Layer, Optimizer};

/// SGD: `p -= lr * g`; with momentum Keras's `v = momentum v - lr g`, `p += v` (Nesterov:
/// `p += momentum v - lr g`). Weight decay is decoupled: kernels shrink by `1 - lr * wd`
/// before the gradient step; biases and normalisation parameters never decay (see
/// [`SGD::with_weight_decay_rule`]).
#[derive(Debug, Clone)]
pub struct SGD {
    momentum: f32,
    nesterov: bool,
    common: Common,
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
        let learning_rate = validation::constructor_learning_rate(learning_rate)?;
        Ok(Self {
            momentum: non_negative("momentum", momentum)?,
            nesterov,
            common: Common::new(
                learning_rate,
                weight_decay,
                WeightDecayRule::new(DecayCoupling::Decoupled, DecayScope::KernelsOnly),
            )?,
            velocity: LayerSlots::default(),
        })
    }

    common_builders!(common, "decoupled, kernels only");
}

impl Optimizer for SGD {
    common_optimizer_methods!(common);

    fn step(&mut self) {
        self.velocity.rewind();
    }

    fn update(&mut self, layer: &mut dyn Layer, grad_scale: f32) {
        let lr = self.common.learning_rate;
        let (momentum, nesterov) = (self.momentum, self.nesterov);
        self.common.update_each(
            layer,
            grad_scale,
            &mut self.velocity,
            0.0,
            |p, g, [velocity]| {
                if momentum > 0.0 {
                    sgd_momentum_step(p, g, velocity, lr, momentum, nesterov);
                } else {
                    sgd_step(p, g, lr);
                }
            },
        );
    }

    fn export_state(&self) -> Option<OptimizerState> {
        Some(self.velocity.export_state())
    }

    fn import_state(&mut self, state: &OptimizerState) -> Result<()> {
        self.velocity.import_state("SGD", state)
    }
}
