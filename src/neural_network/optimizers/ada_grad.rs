//! AdaGrad (Duchi, Hazan & Singer 2011) with L2-coupled weight decay.

use super::kernels::adagrad_step_with;
use super::rules::{
    prepare_grad, DecayCoupling, DecayScope, EpsilonPlacement, GradientClip, WeightDecayRule,
};
use super::state::{LayerSlots, OptimizerState};
use super::validation::{self, non_negative, positive};
use crate::error::Result;
use crate::neural_network::traits::{Layer, Optimizer};

/// AdaGrad: `a += g²`, `p -= lr g / (sqrt(a) + eps)`, accumulators starting at 0. Weight decay is
/// L2-coupled (`g + wd * p`); biases and normalisation parameters never decay. Builders choose
/// the accumulators' starting value, epsilon inside the root and the decay rule.
#[derive(Debug, Clone)]
pub struct AdaGrad {
    learning_rate: f32,
    epsilon: f32,
    weight_decay: f32,
    initial_accumulator: f32,
    placement: EpsilonPlacement,
    global_clipnorm: Option<f32>,
    clip: Option<GradientClip>,
    decay: WeightDecayRule,
    accumulators: LayerSlots<1>,
}

impl AdaGrad {
    /// `learning_rate`, `epsilon` finite and > 0; `weight_decay` finite and >= 0.
    pub fn new(learning_rate: f32, epsilon: f32, weight_decay: f32) -> Result<Self> {
        Ok(Self {
            learning_rate: positive("learning_rate", learning_rate)?,
            epsilon: positive("epsilon", epsilon)?,
            weight_decay: non_negative("weight_decay", weight_decay)?,
            initial_accumulator: 0.0,
            placement: EpsilonPlacement::OutsideRoot,
            global_clipnorm: None,
            clip: None,
            decay: WeightDecayRule::new(DecayCoupling::CoupledL2, DecayScope::KernelsOnly),
            accumulators: LayerSlots::default(),
        })
    }

    /// Clips every batch's gradients so that their global L2 norm is at most `global_clipnorm`.
    pub fn with_global_clipnorm(mut self, global_clipnorm: f32) -> Result<Self> {
        self.global_clipnorm = Some(positive("global_clipnorm", global_clipnorm)?);
        Ok(self)
    }

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

    /// Replaces how weight decay applies (default: L2-coupled, kernels only).
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

    /// Replaces the learning rate; unlike the constructor's, this one may be 0 (finite and
    /// >= 0), as a warm-up schedule's first step is.
    pub fn with_learning_rate(mut self, learning_rate: f32) -> Result<Self> {
        self.learning_rate = validation::learning_rate(learning_rate)?;
        Ok(self)
    }
}

impl Optimizer for AdaGrad {
    fn step(&mut self) {
        self.accumulators.rewind();
    }

    fn global_clipnorm(&self) -> Option<f32> {
        self.global_clipnorm
    }

    fn update(&mut self, layer: &mut dyn Layer, grad_scale: f32) {
        let lr = self.learning_rate;
        let mut params = layer.parameters();
        let slots = self
            .accumulators
            .claim_filled(&params, self.initial_accumulator);
        for (param, [acc]) in params.iter_mut().zip(slots.iter_mut()) {
            let grad = prepare_grad(
                param,
                grad_scale,
                self.clip,
                self.decay,
                lr,
                self.weight_decay,
            );
            adagrad_step_with(param.value, &grad, acc, lr, self.epsilon, self.placement);
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
            steps: Vec::new(),
            groups: vec![self.accumulators.export()],
        })
    }

    fn import_state(&mut self, state: &OptimizerState) -> Result<()> {
        state.check("AdaGrad", 0, 1)?;
        self.accumulators.import(&state.groups[0])
    }
}
