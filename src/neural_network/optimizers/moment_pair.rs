//! What the Adam family (Adam, AdamW, Adamax, Nadam) holds besides its own update rule: the two
//! decay rates, epsilon, the shared settings, the step count and two moments per parameter.

use super::common::Common;
use super::state::{LayerSlots, OptimizerState};
use crate::error::Result;
use crate::neural_network::traits::Layer;

#[derive(Debug, Clone)]
pub(crate) struct MomentPair {
    pub(crate) beta1: f32,
    pub(crate) beta2: f32,
    pub(crate) epsilon: f32,
    pub(crate) common: Common,
    pub(crate) t: u64,
    /// Per parameter: the first moment and the second (Adamax: the infinity norm).
    pub(crate) moments: LayerSlots<2>,
}

/// Declares `new` for an Adam-family optimizer (Adam, AdamW, Adamax, Nadam): Keras's five
/// arguments, checked in this order: `learning_rate` by `$check_learning_rate` (Adam's and
/// AdamW's original constructors refuse 0), `beta1` and `beta2` in [0, 1), `epsilon` (finite,
/// above 0), `weight_decay` (finite, 0 or more) under the default rule `$decay`; `$build` makes
/// `Self` from the [`MomentPair`] bound to `$pair`.
macro_rules! moment_pair_constructor {
    ($(#[$doc:meta])* $check_learning_rate:path, $decay:expr, |$pair:ident| $build:expr) => {
        $(#[$doc])*
        pub fn new(
            learning_rate: f32,
            beta1: f32,
            beta2: f32,
            epsilon: f32,
            weight_decay: f32,
        ) -> Result<Self> {
            let learning_rate = $check_learning_rate(learning_rate)?;
            let $pair = super::moment_pair::MomentPair {
                beta1: super::validation::unit_interval("beta1", beta1)?,
                beta2: super::validation::unit_interval("beta2", beta2)?,
                epsilon: super::validation::positive("epsilon", epsilon)?,
                common: super::common::Common::new(learning_rate, weight_decay, $decay)?,
                t: 0,
                moments: Default::default(),
            };
            Ok($build)
        }
    };
}
pub(super) use moment_pair_constructor;

impl MomentPair {
    /// The learning rate, `beta1`, `beta2` and `epsilon`, for an update rule to capture.
    pub(crate) fn rates(&self) -> (f32, f32, f32, f32) {
        (
            self.common.learning_rate,
            self.beta1,
            self.beta2,
            self.epsilon,
        )
    }

    /// Counts a step and rewinds the moments to the first layer.
    pub(crate) fn step(&mut self) {
        self.t += 1;
        self.moments.rewind();
    }

    /// [`Common::update_each`] over the moments: `rule` gets each parameter's values, prepared
    /// gradient, first and second moment.
    pub(crate) fn update_each(
        &mut self,
        layer: &mut dyn Layer,
        grad_scale: f32,
        mut rule: impl FnMut(&mut [f32], &[f32], &mut [f32], &mut [f32]),
    ) {
        self.common
            .update_each(layer, grad_scale, &mut self.moments, 0.0, |p, g, [m, v]| {
                rule(p, g, m, v)
            });
    }

    /// The step count and the moments, as one group (see `Optimizer::export_state`).
    pub(crate) fn export_state(&self) -> OptimizerState {
        OptimizerState {
            steps: vec![self.t],
            groups: vec![self.moments.export()],
        }
    }

    /// Puts back a state from [`Self::export_state`] of an optimizer named `kind`.
    pub(crate) fn import_state(&mut self, kind: &str, state: &OptimizerState) -> Result<()> {
        state.check(kind, 1, 1)?;
        self.moments.import(&state.groups[0])?;
        self.t = state.steps[0];
        Ok(())
    }
}
