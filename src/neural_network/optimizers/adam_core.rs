//! The Adam update shared by `Adam` (L2-coupled decay) and `AdamW` (decoupled decay).

use super::common::Common;
use super::kernels::{adam_step, adam_step_with};
use super::rules::{AdamEpsilon, WeightDecayRule};
use super::state::{LayerSlots, OptimizerState};
use super::validation::{positive, unit_interval};
use crate::error::Result;
use crate::neural_network::traits::Layer;

#[derive(Debug, Clone)]
pub(crate) struct AdamCore {
    beta1: f32,
    beta2: f32,
    epsilon: f32,
    pub(crate) common: Common,
    pub(crate) epsilon_placement: AdamEpsilon,
    pub(crate) amsgrad: bool,
    t: u64,
    moments: LayerSlots<2>,
    max_second_moments: LayerSlots<1>,
}

impl AdamCore {
    pub(crate) fn new(
        learning_rate: f32,
        beta1: f32,
        beta2: f32,
        epsilon: f32,
        weight_decay: f32,
        decay: WeightDecayRule,
    ) -> Result<Self> {
        let learning_rate = positive("learning_rate", learning_rate)?;
        Ok(Self {
            beta1: unit_interval("beta1", beta1)?,
            beta2: unit_interval("beta2", beta2)?,
            epsilon: positive("epsilon", epsilon)?,
            common: Common::new(learning_rate, weight_decay, decay)?,
            epsilon_placement: AdamEpsilon::CorrectedRoot,
            amsgrad: false,
            t: 0,
            moments: LayerSlots::default(),
            max_second_moments: LayerSlots::default(),
        })
    }

    /// The step count and both moment groups (see `Optimizer::export_state`).
    pub(crate) fn export_state(&self) -> OptimizerState {
        OptimizerState {
            steps: vec![self.t],
            groups: vec![self.moments.export(), self.max_second_moments.export()],
        }
    }

    pub(crate) fn import_state(&mut self, state: &OptimizerState) -> Result<()> {
        state.check("Adam", 1, 2)?;
        self.moments.import(&state.groups[0])?;
        self.max_second_moments.import(&state.groups[1])?;
        self.t = state.steps[0];
        Ok(())
    }

    pub(crate) fn step(&mut self) {
        self.t += 1;
        self.moments.rewind();
        self.max_second_moments.rewind();
    }

    pub(crate) fn update(&mut self, layer: &mut dyn Layer, grad_scale: f32) {
        let lr = self.common.learning_rate;
        // An update without a preceding `step` is the first step.
        let t = self.t.max(1);
        let mut params = layer.parameters();
        let slots = self.moments.claim(&params);
        let mut max_slots = self.amsgrad.then(|| self.max_second_moments.claim(&params));
        for (i, (param, [m, v])) in params.iter_mut().zip(slots.iter_mut()).enumerate() {
            let grad = self.common.grad(param, grad_scale);
            let v_max = max_slots.as_mut().map(|s| s[i][0].as_mut_slice());
            if v_max.is_none() && self.epsilon_placement == AdamEpsilon::CorrectedRoot {
                // The original constructors' kernel.
                adam_step(
                    param.value,
                    &grad,
                    m,
                    v,
                    lr,
                    self.beta1,
                    self.beta2,
                    self.epsilon,
                    t,
                );
            } else {
                adam_step_with(
                    param.value,
                    &grad,
                    m,
                    v,
                    v_max,
                    lr,
                    self.beta1,
                    self.beta2,
                    self.epsilon,
                    t,
                    self.epsilon_placement,
                );
            }
        }
    }
}

/// Declares an Adam-family optimizer over [`AdamCore`]: the struct, its constructor and
/// builders, and its `Optimizer` impl. Adam and AdamW differ only in the default weight-decay
/// coupling, so they are one declaration each.
macro_rules! adam_optimizer {
    ($(#[$doc:meta])* $name:ident, $coupling:expr, $default_rule:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $name {
            core: AdamCore,
        }

        impl $name {
            /// `learning_rate` and `epsilon` finite and > 0; `beta1`, `beta2` in [0, 1);
            /// `weight_decay` finite and >= 0.
            pub fn new(
                learning_rate: f32,
                beta1: f32,
                beta2: f32,
                epsilon: f32,
                weight_decay: f32,
            ) -> Result<Self> {
                Ok(Self {
                    core: AdamCore::new(
                        learning_rate,
                        beta1,
                        beta2,
                        epsilon,
                        weight_decay,
                        WeightDecayRule::new($coupling, DecayScope::KernelsOnly),
                    )?,
                })
            }

            super::common::common_builders!(core.common, $default_rule);

            /// Where epsilon meets the second moment (default: [`AdamEpsilon::CorrectedRoot`]).
            pub fn with_epsilon_placement(mut self, placement: AdamEpsilon) -> Self {
                self.core.epsilon_placement = placement;
                self
            }

            /// AMSGrad (Reddi et al. 2018): the denominator uses the running maximum of the second
            /// moment.
            pub fn with_amsgrad(mut self, amsgrad: bool) -> Self {
                self.core.amsgrad = amsgrad;
                self
            }
        }

        impl Optimizer for $name {
            super::common::common_optimizer_methods!(core.common);

            fn step(&mut self) {
                self.core.step();
            }

            fn update(&mut self, layer: &mut dyn Layer, grad_scale: f32) {
                self.core.update(layer, grad_scale);
            }

            fn export_state(&self) -> Option<OptimizerState> {
                Some(self.core.export_state())
            }

            fn import_state(&mut self, state: &OptimizerState) -> Result<()> {
                self.core.import_state(state)
            }
        }
    };
}
pub(super) use adam_optimizer;
