//! Per-layer optimizer state (velocities, moments, accumulators).
//!
//! `Optimizer::update` receives layers, not names, so state is kept in slots claimed in call
//! order: `step` rewinds the cursor once per batch, and the k-th `update` of the batch uses the
//! k-th slot. A model always updates its layers in the same order, so each layer meets its own
//! buffers again; a slot whose sizes no longer match its layer starts from zeros.

use crate::error::{Error, Result};
use crate::neural_network::traits::ParamGrad;
use serde::{Deserialize, Serialize};

/// An optimizer's running state, for saving and restoring a model mid-training: its step
/// counters (Adam's `t`) and its buffer groups (velocities, moments, accumulators), each
/// group per layer, per parameter, its buffers. From `Optimizer::export_state`, put back by
/// `Optimizer::import_state` on an optimizer of the same kind and options.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct OptimizerState {
    pub steps: Vec<u64>,
    pub groups: Vec<Vec<Vec<Vec<Vec<f32>>>>>,
}

impl OptimizerState {
    /// Refuses a state of another shape than `steps` counters and `groups` buffer groups.
    pub(crate) fn check(&self, kind: &str, steps: usize, groups: usize) -> Result<()> {
        if self.steps.len() != steps || self.groups.len() != groups {
            return Err(Error::invalid_input(format!(
                "the optimizer state does not belong to {kind} (expected {steps} step counters \
                 and {groups} buffer groups, got {} and {})",
                self.steps.len(),
                self.groups.len()
            )));
        }
        if self
            .groups
            .iter()
            .flatten()
            .flatten()
            .flatten()
            .flatten()
            .any(|v| !v.is_finite())
        {
            return Err(Error::invalid_input(
                "the optimizer state holds NaN or infinity",
            ));
        }
        Ok(())
    }
}

/// `K` zero-initialised buffers per parameter, per layer.
#[derive(Debug, Clone, Default)]
pub(crate) struct LayerSlots<const K: usize> {
    slots: Vec<Vec<[Vec<f32>; K]>>,
    cursor: usize,
}

impl<const K: usize> LayerSlots<K> {
    /// Starts a new batch: the next `claim` returns the first layer's slot.
    pub(crate) fn rewind(&mut self) {
        self.cursor = 0;
    }

    /// The buffers, per layer and parameter (see [`OptimizerState`]).
    pub(crate) fn export(&self) -> Vec<Vec<Vec<Vec<f32>>>> {
        self.slots
            .iter()
            .map(|layer| layer.iter().map(|bufs| bufs.to_vec()).collect())
            .collect()
    }

    /// The whole state of an optimizer whose only state is these buffers (SGD's velocities,
    /// AdaGrad's accumulators): no step counter, one group.
    pub(crate) fn export_state(&self) -> OptimizerState {
        OptimizerState {
            steps: Vec::new(),
            groups: vec![self.export()],
        }
    }

    /// Puts back a state from [`Self::export_state`] of an optimizer named `kind`.
    pub(crate) fn import_state(&mut self, kind: &str, state: &OptimizerState) -> Result<()> {
        state.check(kind, 0, 1)?;
        self.import(&state.groups[0])
    }

    /// Puts back buffers from [`Self::export`]; a slot whose sizes do not match its layer
    /// when it is next claimed starts from zeros, as a new one would.
    pub(crate) fn import(&mut self, layers: &[Vec<Vec<Vec<f32>>>]) -> Result<()> {
        let mut slots = Vec::with_capacity(layers.len());
        for layer in layers {
            let mut params = Vec::with_capacity(layer.len());
            for bufs in layer {
                let bufs: [Vec<f32>; K] = bufs.clone().try_into().map_err(|_| {
                    Error::invalid_input(format!(
                        "the optimizer state has {} buffers per parameter where {K} are kept",
                        bufs.len()
                    ))
                })?;
                params.push(bufs);
            }
            slots.push(params);
        }
        self.slots = slots;
        self.cursor = 0;
        Ok(())
    }

    /// The next layer's buffers, sized to `params`.
    pub(crate) fn claim(&mut self, params: &[ParamGrad<'_>]) -> &mut Vec<[Vec<f32>; K]> {
        self.claim_filled(params, 0.0)
    }

    /// [`Self::claim`], with new buffers starting at `fill` instead of zero.
    pub(crate) fn claim_filled(
        &mut self,
        params: &[ParamGrad<'_>],
        fill: f32,
    ) -> &mut Vec<[Vec<f32>; K]> {
        if self.cursor == self.slots.len() {
            self.slots.push(Vec::new());
        }
        let slot = &mut self.slots[self.cursor];
        self.cursor += 1;
        let fits = slot.len() == params.len()
            && slot
                .iter()
                .zip(params)
                .all(|(bufs, p)| bufs.iter().all(|b| b.len() == p.value.len()));
        if !fits {
            *slot = params
                .iter()
                .map(|p| std::array::from_fn(|_| vec![fill; p.value.len()]))
                .collect();
        }
        slot
    }
}
