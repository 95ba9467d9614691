//! Errors specific to neural networks.

use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Error)]
pub enum NnError {
    #[error("forward pass has not been run on layer `{0}`; run `forward` before accessing outputs or `backward`")]
    ForwardPassNotRun(&'static str),
    #[error("weight shape mismatch for `{name}`: layer expects {expected:?}, got {found:?}")]
    WeightShape {
        name: String,
        expected: Vec<usize>,
        found: Vec<usize>,
    },
    #[error("model has not been compiled: `{0}` is not specified")]
    NotCompiled(&'static str),
    #[error("model has no layers")]
    EmptyModel,
}

impl NnError {
    /// `Ok` when a weight array has the shape the layer expects, else [`NnError::WeightShape`]
    /// naming the weight: the one check every layer's `set_weights` uses.
    pub(crate) fn check_weight_shape(
        name: &str,
        expected: &[usize],
        found: &[usize],
    ) -> crate::error::Result<()> {
        if expected == found {
            Ok(())
        } else {
            Err(NnError::WeightShape {
                name: name.to_string(),
                expected: expected.to_vec(),
                found: found.to_vec(),
            }
            .into())
        }
    }
}
