//! RMSprop (Hinton's lecture 6e) with L2-coupled weight decay.

use super::common::{common_builders, common_optimizer_methods, Common};
use super::kernels::{rmsprop_step, rmsprop_step_with};
use super::rules::{DecayCoupling, DecayScope, EpsilonPlacement, GradientClip, WeightDecayRule};
use super::state::{LayerSlots, OptimizerState};
use super::validation::{self, non_negative, positive, unit_interval};
use crate::error::Result;
use crate::neural_network::traits::{Layer, Optimizer};

/// RMSprop: `c = rho c + (1 - rho) g²`, `p -= lr g / (sqrt(c) + eps)`. Weight decay is L2-coupled
/// (`g + wd * p`, as PyTorch does); biases and normalisation parameters never decay. Builders
/// choose epsilon inside the root, centring (Graves 2013), momentum and the decay rule.
#[derive(Debug, Clone)]
pub struct RMSprop {
    rho: f32,
    epsilon: f32,
    momentum: f32,
    centered: bool,
    placement: EpsilonPlacement,
    common: Common,
    cache: LayerSlots<1>,
    mean_grad: LayerSlots<1>,
    velocity: LayerSlots<1>,
}

impl RMSprop {
    /// `learning_rate`, `epsilon` finite and > 0; `rho` in [0, 1); `weight_decay` >= 0.
    pub fn new(learning_rate: f32, rho: f32, epsilon: f32, weight_decay: f32) -> Result<Self> {
        let learning_rate = validation::constructor_learning_rate(learning_rate)?;
        Ok(Self {
            rho: unit_interval("rho", rho)?,
            epsilon: positive("epsilon", epsilon)?,
            momentum: 0.0,
            centered: false,
            placement: EpsilonPlacement::OutsideRoot,
            common: Common::new(
                learning_rate,
                weight_decay,
                WeightDecayRule::new(DecayCoupling::CoupledL2, DecayScope::KernelsOnly),
            )?,
            cache: LayerSlots::default(),
            mean_grad: LayerSlots::default(),
            velocity: LayerSlots::default(),
        })
    }

    common_builders!(common, "L2-coupled, kernels only");

    /// Where epsilon meets the root (default: [`EpsilonPlacement::OutsideRoot`]).
    pub fn with_epsilon_placement(mut self, placement: EpsilonPlacement) -> Self {
        self.placement = placement;
        self
    }

    /// Momentum on the scaled step: `u = momentum u + lr g / root`, `p -= u` (finite, >= 0;
    /// 0 is plain RMSprop).
    pub fn with_momentum(mut self, momentum: f32) -> Result<Self> {
        self.momentum = non_negative("momentum", momentum)?;
        Ok(self)
    }

    /// Centred RMSprop: the statistic under the root is the variance estimate
    /// `c - a²` with `a` the running mean of the gradient.
    pub fn with_centered(mut self, centered: bool) -> Self {
        self.centered = centered;
        self
    }
}

impl Optimizer for RMSprop {
    common_optimizer_methods!(common);

    fn step(&mut self) {
        self.cache.rewind();
        self.mean_grad.rewind();
        self.velocity.rewind();
    }

    fn update(&mut self, layer: &mut dyn Layer, grad_scale: f32) {
        let lr = self.common.learning_rate;
        let mut params = layer.parameters();
        let slots = self.cache.claim(&params);
        let mut means = self.centered.then(|| self.mean_grad.claim(&params));
        let mut velocities = (self.momentum > 0.0).then(|| self.velocity.claim(&params));
        for (i, (param, [cache])) in params.iter_mut().zip(slots.iter_mut()).enumerate() {
            let grad = self.common.grad(param, grad_scale);
            let mean = means.as_mut().map(|s| s[i][0].as_mut_slice());
            let velocity = velocities.as_mut().map(|s| s[i][0].as_mut_slice());
            if mean.is_none()
                && velocity.is_none()
                && self.placement == EpsilonPlacement::OutsideRoot
            {
                // The original constructor's kernel.
                rmsprop_step(param.value, &grad, cache, self.rho, lr, self.epsilon);
            } else {
                rmsprop_step_with(
                    param.value,
                    &grad,
                    cache,
                    mean,
                    velocity,
                    self.rho,
                    lr,
                    self.epsilon,
                    self.momentum,
                    self.placement,
                );
            }
        }
    }

    fn export_state(&self) -> Option<OptimizerState> {
        Some(OptimizerState {
            steps: Vec::new(),
            groups: vec![
                self.cache.export(),
                self.mean_grad.export(),
                self.velocity.export(),
            ],
        })
    }

    fn import_state(&mut self, state: &OptimizerState) -> Result<()> {
        state.check("RMSprop", 0, 3)?;
        self.cache.import(&state.groups[0])?;
        self.mean_grad.import(&state.groups[1])?;
        self.velocity.import(&state.groups[2])
    }
}
