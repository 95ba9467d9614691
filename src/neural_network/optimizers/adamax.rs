//! Adamax (Kingma & Ba 2015, section 7.1): Adam with the infinity norm in place of the second
//! moment, in Keras 3's form.

use super::common::{common_builders, common_optimizer_methods};
use super::kernels::adamax_step;
use super::moment_pair::{moment_pair_constructor, MomentPair};
use super::rules::{DecayCoupling, DecayScope, GradientClip, WeightDecayRule};
use super::state::OptimizerState;
use super::validation;
use crate::error::Result;
use crate::neural_network::traits::{Layer, Optimizer};

/// Adamax with Keras 3's update rule; weight decay is decoupled and applies to every
/// trainable parameter by default (`with_weight_decay_rule` changes it).
#[derive(Debug, Clone)]
pub struct Adamax {
    /// The moments are the first moment and the exponentially weighted infinity norm.
    pair: MomentPair,
}

impl Adamax {
    moment_pair_constructor!(
        /// `learning_rate` finite and >= 0; `epsilon` finite and > 0; `beta1`, `beta2` in [0, 1);
        /// `weight_decay` finite and >= 0.
        validation::learning_rate,
        WeightDecayRule::new(DecayCoupling::Decoupled, DecayScope::AllTrainable),
        |pair| Self { pair }
    );

    common_builders!(pair.common, "decoupled, every trainable parameter");
}

impl Optimizer for Adamax {
    common_optimizer_methods!(pair.common);

    fn step(&mut self) {
        self.pair.step();
    }

    fn update(&mut self, layer: &mut dyn Layer, grad_scale: f32) {
        let (lr, beta1, beta2, epsilon) = self.pair.rates();
        // An update without a preceding `step` is the first step.
        let t = self.pair.t.max(1);
        self.pair.update_each(layer, grad_scale, |p, g, m, u| {
            adamax_step(p, g, m, u, lr, beta1, beta2, epsilon, t)
        });
    }

    fn export_state(&self) -> Option<OptimizerState> {
        Some(self.pair.export_state())
    }

    fn import_state(&mut self, state: &OptimizerState) -> Result<()> {
        self.pair.import_state("Adamax", state)
    }
}
