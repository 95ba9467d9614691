//! Keras's regularizer arguments in a layer config (`kernel_regularizer`, `bias_regularizer`,
//! `recurrent_regularizer`, `embeddings_regularizer`, `depthwise_regularizer`,
//! `pointwise_regularizer`, `activity_regularizer`) and the [`Regularized`] wrapper they put
//! around a built layer.

use super::layer_spec::LayerSpec;
use crate::error::{Error, Result};
use crate::neural_network::regularizers::{Regularized, Regularizer};
use crate::neural_network::traits::Layer;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The regularizer arguments of a layer config (each a Keras serialized regularizer or one of
/// its names; absent or `null`: none). Which ones a layer takes is Keras's choice, checked
/// when the layer is built ([`LayerRegularizers::wrap`]).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct LayerRegularizers {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_regularizer: Option<Regularizer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bias_regularizer: Option<Regularizer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recurrent_regularizer: Option<Regularizer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embeddings_regularizer: Option<Regularizer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depthwise_regularizer: Option<Regularizer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointwise_regularizer: Option<Regularizer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activity_regularizer: Option<Regularizer>,
}

/// Keras's regularizer arguments of layer class `class` and the weight each regularizes (as
/// `LayerWeight::named_arrays` names it); `None` for a weight means the layer's output.
pub(crate) fn regularizer_arguments(
    class: &str,
) -> &'static [(&'static str, Option<&'static str>)] {
    const ACTIVITY: (&str, Option<&str>) = ("activity_regularizer", None);
    match class {
        "Dense" | "Conv1D" | "Conv2D" | "Conv3D" | "Conv1DTranspose" | "Conv2DTranspose"
        | "Conv3DTranspose" => &[
            ("kernel_regularizer", Some("weight")),
            ("bias_regularizer", Some("bias")),
            ACTIVITY,
        ],
        "Embedding" => &[("embeddings_regularizer", Some("embeddings")), ACTIVITY],
        "SimpleRNN" | "LSTM" | "GRU" => &[
            ("kernel_regularizer", Some("kernel")),
            ("recurrent_regularizer", Some("recurrent_kernel")),
            ("bias_regularizer", Some("bias")),
            ACTIVITY,
        ],
        "DepthwiseConv1D" | "DepthwiseConv2D" => &[
            ("depthwise_regularizer", Some("weight")),
            ("bias_regularizer", Some("bias")),
            ACTIVITY,
        ],
        "SeparableConv1D" | "SeparableConv2D" => &[
            ("depthwise_regularizer", Some("depthwise_weight")),
            ("pointwise_regularizer", Some("pointwise_weight")),
            ("bias_regularizer", Some("bias")),
            ACTIVITY,
        ],
        // the wrapped recurrent layer's weight regularizers (both directions)
        "Bidirectional" => &[
            ("kernel_regularizer", Some("kernel")),
            ("recurrent_regularizer", Some("recurrent_kernel")),
            ("bias_regularizer", Some("bias")),
        ],
        _ => &[],
    }
}

fn not_supported(class: &str, argument: &str) -> Error {
    let takes: Vec<&str> = regularizer_arguments(class)
        .iter()
        .map(|(a, _)| *a)
        .collect();
    let detail = if class == "Bidirectional" && argument == "activity_regularizer" {
        "an activity_regularizer on the layer a Bidirectional wraps is not supported by rustyml"
            .to_string()
    } else if takes.is_empty() {
        format!("rustyml's {class} takes no regularizers")
    } else {
        format!("rustyml's {class} takes {}", takes.join(", "))
    };
    Error::invalid_parameter(
        argument,
        format!("{class}: {argument} is not supported ({detail})"),
    )
}

impl LayerRegularizers {
    fn get(&self, argument: &str) -> Option<Regularizer> {
        match argument {
            "kernel_regularizer" => self.kernel_regularizer,
            "bias_regularizer" => self.bias_regularizer,
            "recurrent_regularizer" => self.recurrent_regularizer,
            "embeddings_regularizer" => self.embeddings_regularizer,
            "depthwise_regularizer" => self.depthwise_regularizer,
            "pointwise_regularizer" => self.pointwise_regularizer,
            "activity_regularizer" => self.activity_regularizer,
            _ => None,
        }
    }

    /// Whether no regularizer is set.
    pub fn is_empty(&self) -> bool {
        self.set().is_empty()
    }

    fn set(&self) -> Vec<&'static str> {
        [
            "kernel_regularizer",
            "bias_regularizer",
            "recurrent_regularizer",
            "embeddings_regularizer",
            "depthwise_regularizer",
            "pointwise_regularizer",
            "activity_regularizer",
        ]
        .into_iter()
        .filter(|a| self.get(a).is_some())
        .collect()
    }

    /// `layer` (of Keras class `class`) with these regularizers: unchanged when there are
    /// none, a [`Regularized`] wrapper otherwise; an argument the class does not take is
    /// refused, naming it.
    pub(crate) fn wrap(&self, class: &str, layer: Box<dyn Layer>) -> Result<Box<dyn Layer>> {
        let set = self.set();
        if set.is_empty() {
            return Ok(layer);
        }
        let takes = regularizer_arguments(class);
        let mut weights = Vec::new();
        let mut activity = None;
        for argument in set {
            let r = self.get(argument).expect("listed as set");
            match takes.iter().find(|(a, _)| *a == argument) {
                Some((_, Some(weight))) => weights.push((*weight, r)),
                Some((_, None)) => activity = Some(r),
                None => return Err(not_supported(class, argument)),
            }
        }
        Ok(Box::new(Regularized::new(layer, weights, activity)?))
    }
}

/// Refuses a layer config with a regularizer argument (a key ending in `_regularizer`, not
/// null) that rustyml's layer of that class does not read, naming it: nothing in a config is
/// silently dropped.
pub(crate) fn check_regularizer_keys(spec: &LayerSpec, config: Option<&Value>) -> Result<()> {
    let Some(Value::Object(map)) = config else {
        return Ok(());
    };
    let class = spec.class_name();
    let takes = regularizer_arguments(&class);
    for (key, value) in map {
        if key.ends_with("_regularizer") && !value.is_null() && !takes.iter().any(|(a, _)| a == key)
        {
            return Err(not_supported(&class, key));
        }
    }
    Ok(())
}
