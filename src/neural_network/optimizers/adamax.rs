//! Adamax (Kingma & Ba 2015, section 7.1): Adam with the infinity norm in place of the second
//! moment, in Keras 3's form.

use super::common::{common_builders, common_optimizer_methods, Common};
use super::kernels::adamax_step;
use super::rules::{DecayCoupling, DecayScope, GradientClip, WeightDecayRule};
use super::state::{LayerSlots, OptimizerState};
use super::validation::{self, positive, unit_interval};
use crate::error::Result;
use crate::neural_network::traits::{Layer, Optimizer};

/// Adamax with Keras 3's update rule; weight decay is decoupled and applies to every
/// trainable parameter by default (`with_weight_decay_rule` changes it).
#[derive(Debug, Clone)]
pub struct Adamax {
    beta1: f32,
    beta2: f32,
    epsilon: f32,
    common: Common,
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
            moments: LayerSlots::default(),
        })
    }

    common_builders!(common, "decoupled, every trainable parameter");
}

impl Optimizer for Adamax {
    common_optimizer_methods!(common);

    fn step(&mut self) {
        self.t += 1;
        self.moments.rewind();
    }

    fn update(&mut self, layer: &mut dyn Layer, grad_scale: f32) {
        let lr = self.common.learning_rate;
        let t = self.t.max(1);
        let mut params = layer.parameters();
        let slots = self.moments.claim(&params);
        for (param, [m, u]) in params.iter_mut().zip(slots.iter_mut()) {
            let grad = self.common.grad(param, grad_scale);
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
