//! AdaGrad (Duchi, Hazan & Singer 2011) with L2-coupled weight decay.

use super::common::{common_builders, common_optimizer_methods, Common};
use super::kernels::adagrad_step_with;
use super::rules::{DecayCoupling, DecayScope, EpsilonPlacement, GradientClip, WeightDecayRule};
use super::state::{LayerSlots, OptimizerState};
use super::validation::{self, non_negative, positive};
use crate::error::Result;
use crate::neural_network::traits::{Layer, Optimizer};

/// AdaGrad: `a += g²`, `p -= lr g / (sqrt(a) + eps)`, accumulators starting at 0. Weight decay is
/// L2-coupled (`g + wd * p`); biases and normalisation parameters never decay. Builders choose
/// the accumulators' starting value, epsilon inside the root and the decay rule.
#[derive(Debug, Clone)]
pub struct AdaGrad {
    epsilon: f32,
    initial_accumulator: f32,
    placement: EpsilonPlacement,
    common: Common,
    accumulators: LayerSlots<1>,
}

impl AdaGrad {
    /// `learning_rate`, `epsilon` finite and > 0; `weight_decay` finite and >= 0.
    pub fn new(learning_rate: f32, epsilon: f32, weight_decay: f32) -> Result<Self> {
        let learning_rate = validation::constructor_learning_rate(learning_rate)?;
        Ok(Self {
            epsilon: positive("epsilon", epsilon)?,
            initial_accumulator: 0.0,
            placement: EpsilonPlacement::OutsideRoot,
            common: Common::new(
                learning_rate,
                weight_decay,
                WeightDecayRule::new(DecayCoupling::CoupledL2, DecayScope::KernelsOnly),
            )?,
            accumulators: LayerSlots::default(),
        })
    }

    common_builders!(common, "L2-coupled, kernels only");

    /// The value every accumulator starts at (finite, >= 0; default 0). Applies to
    /// accumulators created after the call.
    pub fn with_initial_accumulator(mut self, value: f32) -> Result<Self> {
        self.initial_accumulator = non_negative("initial_accumulator_value", value)?;
        Ok(self)
    }

    /// Where epsilon meets the root (default: [`EpsilonPlacement::OutsideRoot`]).
    pub fn with_epsilon_placement(mut self, placement: EpsilonPlacement) -> Self {
        self.placement = placement;
        self
    }
}

impl Optimizer for AdaGrad {
    common_optimizer_methods!(common);

    fn step(&mut self) {
        self.accumulators.rewind();
    }

    fn update(&mut self, layer: &mut dyn Layer, grad_scale: f32) {
        let lr = self.common.learning_rate;
        let (epsilon, placement) = (self.epsilon, self.placement);
        self.common.update_each(
            layer,
            grad_scale,
            &mut self.accumulators,
            self.initial_accumulator,
            |p, g, [acc]| adagrad_step_with(p, g, acc, lr, epsilon, placement),
        );
    }

    fn export_state(&self) -> Option<OptimizerState> {
        Some(self.accumulators.export_state())
    }

    fn import_state(&mut self, state: &OptimizerState) -> Result<()> {
        self.accumulators.import_state("AdaGrad", state)
    }
}
