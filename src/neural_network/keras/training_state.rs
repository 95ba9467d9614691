//! A built network's whole training state as bytes: the weights (Keras's layout), the
//! optimizer's running state (moments, accumulators, step counters) and the shuffling
//! position (seed, epochs run), so that a copy made from them, built from the same configs
//! and compiled alike, predicts and continues training with the original's bits.

use super::KerasSequential;
use crate::error::{Error, Result};
use crate::neural_network::optimizers::OptimizerState;
use crate::neural_network::traits::RandomStream;
use ndarray::{ArrayD, IxDyn};
use serde::{Deserialize, Serialize};

/// Leads every state; the last byte is the layout's version.
const STATE_MAGIC: &[u8; 8] = b"RMLNNST\x01";

#[derive(Serialize, Deserialize)]
struct TrainingState {
    weights: Vec<(Vec<usize>, Vec<f32>)>,
    optimizer: Option<OptimizerState>,
    shuffle_seed: Option<u64>,
    epochs_trained: u64,
    /// Each layer's random stream (dropout, noise), `None` for the others.
    random_streams: Vec<Option<RandomStream>>,
}

impl KerasSequential {
    /// The training state as bytes (see the module docs). Refused for a compiled model
    /// whose optimizer cannot export its state.
    pub fn state_bytes(&self) -> Result<Vec<u8>> {
        let optimizer = match self.is_compiled() {
            true => Some(self.model.optimizer_state().ok_or_else(|| {
                Error::invalid_input("this model's optimizer cannot export its state")
            })?),
            false => None,
        };
        let state = TrainingState {
            weights: self
                .get_weights()
                .into_iter()
                .map(|a| (a.shape().to_vec(), a.iter().copied().collect()))
                .collect(),
            optimizer,
            shuffle_seed: self.model.seed(),
            epochs_trained: self.model.epochs_trained(),
            random_streams: self
                .model
                .layers()
                .iter()
                .map(|l| l.random_stream())
                .collect(),
        };
        let mut bytes = STATE_MAGIC.to_vec();
        bytes.extend(postcard::to_allocvec(&state).map_err(Error::from)?);
        Ok(bytes)
    }

    /// Puts back a state from [`Self::state_bytes`] of a model built from the same configs
    /// (and compiled alike, when the state holds an optimizer state). Everything is checked
    /// before anything changes: on error the model is as it was.
    pub fn load_state_bytes(&mut self, bytes: &[u8]) -> Result<()> {
        let bad = |what: String| Error::invalid_input(format!("invalid model state: {what}"));
        let body = bytes
            .strip_prefix(STATE_MAGIC)
            .ok_or_else(|| bad("it does not start with rustyml's state header".into()))?;
        let state: TrainingState = postcard::from_bytes(body).map_err(|e| bad(e.to_string()))?;
        let weights = state
            .weights
            .into_iter()
            .map(|(shape, values)| {
                ArrayD::from_shape_vec(IxDyn(&shape), values).map_err(|e| bad(e.to_string()))
            })
            .collect::<Result<Vec<_>>>()?;
        if state.random_streams.len() != self.model.layers().len() {
            return Err(bad(format!(
                "it holds {} layers, this model has {}",
                state.random_streams.len(),
                self.model.layers().len()
            )));
        }
        if state.optimizer.is_some() != self.is_compiled() {
            return Err(bad(format!(
                "it was saved from a model {}compiled, this one is {}",
                if state.optimizer.is_some() {
                    ""
                } else {
                    "not "
                },
                if self.is_compiled() {
                    "compiled"
                } else {
                    "not compiled"
                }
            )));
        }
        // the optimizer first, on a copy: set_weights below is the last step that can fail
        let before = self.model.snapshot();
        if let Some(opt) = &state.optimizer {
            self.model.load_optimizer_state(opt)?;
        }
        if let Err(e) = self.set_weights(weights) {
            if let Some(snapshot) = before {
                self.model.restore(&snapshot)?;
            }
            return Err(e);
        }
        self.model
            .resume_shuffling(state.shuffle_seed, state.epochs_trained);
        for (layer, stream) in self
            .model
            .layers_mut()
            .iter_mut()
            .zip(&state.random_streams)
        {
            if let Some(stream) = stream {
                layer.set_random_stream(stream);
            }
        }
        Ok(())
    }
}
