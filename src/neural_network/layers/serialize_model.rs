//! The model file format: a postcard-encoded [`SerializableSequential`] whose first two fields
//! (magic, format version) form a header checked before the body is decoded.

use super::layer_weight::LayerWeight;
use crate::error::{Error, IoError, Result};
use crate::neural_network::traits::Layer;
use serde::{Deserialize, Serialize};

/// `"RMLM"`: the first field of every model file.
pub const MODEL_MAGIC: u32 = 0x524D_4C4D;
/// Bumped whenever the encoding changes incompatibly.
pub const MODEL_FORMAT_VERSION: u32 = 1;

/// What a layer was when it was saved.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LayerInfo {
    pub layer_type: String,
    pub output_shape: String,
}

/// One saved layer: its description and its weights.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SerializableLayer<'a> {
    pub info: LayerInfo,
    pub weights: LayerWeight<'a>,
}

/// A saved `Sequential`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SerializableSequential<'a> {
    pub magic: u32,
    pub format_version: u32,
    pub layers: Vec<SerializableLayer<'a>>,
}

/// Loads `weights` into `layer` if the layer is of `expected_type`; a wrong type or a weight
/// shape the layer does not have is `IoError::ModelStructureMismatch`.
pub fn apply_weights_to_layer(
    layer: &mut dyn Layer,
    weights: &LayerWeight<'_>,
    expected_type: &str,
) -> Result<()> {
    if layer.layer_type() != expected_type {
        return Err(IoError::ModelStructureMismatch(format!(
            "the file holds a `{expected_type}` layer where the model has a `{}`",
            layer.layer_type()
        ))
        .into());
    }
    // A layer's own weight-shape error becomes a structure mismatch: the file and the model
    // disagree, not the caller's arrays.
    layer.apply_weights(weights).map_err(|e| match e {
        Error::Io(_) => e,
        other => IoError::ModelStructureMismatch(format!("{expected_type}: {other}")).into(),
    })
}
