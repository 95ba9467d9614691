//! The Adam update shared by `Adam` (L2-coupled decay) and `AdamW` (decoupled decay).

use super::kernels::{adam_step, adam_step_with};
use super::moment_pair::MomentPair;
use super::rules::AdamEpsilon;
use super::state::{LayerSlots, OptimizerState};
use crate::error::Result;
use crate::neural_network::traits::Layer;

#[derive(Debug, Clone)]
pub(crate) struct AdamCore {
    pub(crate) pair: MomentPair,
    pub(crate) epsilon_placement: AdamEpsilon,
    pub(crate) amsgrad: bool,
    max_second_moments: LayerSlots<1>,
}

impl AdamCore {
    /// Adam's update over `pair`: epsilon on the corrected root, no AMSGrad.
    pub(crate) fn new(pair: MomentPair) -> Self {
        Self {
            pair,
            epsilon_placement: AdamEpsilon::CorrectedRoot,
            amsgrad: false,
            max_second_moments: LayerSlots::default(),
        }
    }

    /// The step count and both moment groups (see `Optimizer::export_state`).
    pub(crate) fn export_state(&self) -> OptimizerState {
        let mut state = self.pair.export_state();
        state.groups.push(self.max_second_moments.export());
        state
    }

    pub(crate) fn import_state(&mut self, state: &OptimizerState) -> Result<()> {
        state.check("Adam", 1, 2)?;
        self.pair.moments.import(&state.groups[0])?;
        self.max_second_moments.import(&state.groups[1])?;
        self.pair.t = state.steps[0];
        Ok(())
    }

    pub(crate) fn step(&mut self) {
        self.pair.step();
        self.max_second_moments.rewind();
    }

    pub(crate) fn update(&mut self, layer: &mut dyn Layer, grad_scale: f32) {
        let (lr, beta1, beta2, epsilon) = self.pair.rates();
        // An update without a preceding `step` is the first step.
        let t = self.pair.t.max(1);
        let mut params = layer.parameters();
        let slots = self.pair.moments.claim(&params);
        let mut max_slots = self.amsgrad.then(|| self.max_second_moments.claim(&params));
        for (i, (param, [m, v])) in params.iter_mut().zip(slots.iter_mut()).enumerate() {
            let grad = self.pair.common.grad(param, grad_scale);
            let v_max = max_slots.as_mut().map(|s| s[i][0].as_mut_slice());
            if v_max.is_none() && self.epsilon_placement == AdamEpsilon::CorrectedRoot {
                // The original constructors' kernel.
                adam_step(param.value, &grad, m, v, lr, beta1, beta2, epsilon, t);
            } else {
                adam_step_with(
                    param.value,
                    &grad,
                    m,
                    v,
                    v_max,
                    lr,
                    beta1,
                    beta2,
                    epsilon,
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
            super::moment_pair::moment_pair_constructor!(
                /// `learning_rate` and `epsilon` finite and > 0; `beta1`, `beta2` in [0, 1);
                /// `weight_decay` finite and >= 0.
                super::validation::constructor_learning_rate,
                WeightDecayRule::new($coupling, DecayScope::KernelsOnly),
                |pair| Self {
                    core: AdamCore::new(pair),
                }
            );

            super::common::common_builders!(core.pair.common, $default_rule);

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
            super::common::common_optimizer_methods!(core.pair.common);

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
