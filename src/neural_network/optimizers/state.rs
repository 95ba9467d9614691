//! Per-layer optimizer state (velocities, moments, accumulators).
//!
//! `Optimizer::update` receives layers, not names, so state is kept in slots claimed in call
//! order: `step` rewinds the cursor once per batch, and the k-th `update` of the batch uses the
//! k-th slot. A model always updates its layers in the same order, so each layer meets its own
//! buffers again; a slot whose sizes no longer match its layer starts from zeros.

use crate::neural_network::traits::ParamGrad;

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
