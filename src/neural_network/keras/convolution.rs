//! Keras's convolution configs: `Conv1D`-`Conv3D` and their transposes ([`ConvSpec`]), the
//! depthwise and separable convolutions ([`DepthwiseSpec`]), and Keras's padding names.

use super::layer_spec::{default_one, default_true, default_valid, parse_activation, SpatialArg};
use super::regularizer_spec::LayerRegularizers;
use crate::error::{Error, Result};
use crate::neural_network::layers::activation::Activation;
use crate::neural_network::layers::convolution::PaddingType;
use crate::neural_network::traits::Layer;
use serde::{Deserialize, Serialize};

/// Keras's padding names (any case); `None` is Keras's default, "valid".
pub(crate) fn parse_padding(
    padding: Option<&str>,
    layer: &str,
) -> Result<crate::neural_network::layers::convolution::PaddingType> {
    match padding.map(str::to_ascii_lowercase).as_deref() {
        None | Some("valid") => Ok(PaddingType::Valid),
        Some("same") => Ok(PaddingType::Same),
        Some("causal") if layer == "Conv1D" => Ok(PaddingType::Causal),
        Some(other) => Err(Error::invalid_parameter(
            "padding",
            format!(
                "{layer}: padding must be \"valid\" or \"same\"{}, got {other:?}",
                if layer == "Conv1D" {
                    " or \"causal\""
                } else {
                    ""
                }
            ),
        )),
    }
}

/// The config shared by `DepthwiseConv1D/2D` (no `filters`) and `SeparableConv1D/2D`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct DepthwiseSpec {
    #[serde(default)]
    pub filters: Option<usize>,
    pub kernel_size: SpatialArg,
    #[serde(default = "default_one")]
    pub strides: SpatialArg,
    #[serde(default = "default_valid")]
    pub padding: String,
    #[serde(default = "dw_one_usize")]
    pub depth_multiplier: usize,
    #[serde(default = "default_one")]
    pub dilation_rate: SpatialArg,
    #[serde(default)]
    pub activation: Option<String>,
    #[serde(default = "default_true")]
    pub use_bias: bool,
    #[serde(default)]
    pub seed: Option<u64>,
    #[serde(flatten)]
    pub regularizers: LayerRegularizers,
}

pub(crate) fn dw_one_usize() -> usize {
    1
}

impl DepthwiseSpec {
    /// The layer `class` (one of the four) over samples of shape `sample`.
    pub(crate) fn build(&self, class: &str, sample: &[usize], seed: u64) -> Result<Box<dyn Layer>> {
        use crate::neural_network::layers::convolution::{DepthwiseConv, SeparableConv};
        use ndarray::{Ix3, Ix4};
        let rank = if class.ends_with("1D") { 1 } else { 2 };
        let kernel = self.kernel_size.per_axis(rank, "kernel_size", class)?;
        let strides = self.strides.per_axis(rank, "strides", class)?;
        let dilation = self.dilation_rate.per_axis(rank, "dilation_rate", class)?;
        let padding = parse_padding(Some(&self.padding), class)?;
        let act = parse_activation(self.activation.as_deref())?;
        let mut shape = vec![1];
        shape.extend_from_slice(sample);
        let separable = class.starts_with("Separable");
        let filters = match (separable, self.filters) {
            (true, Some(f)) => f,
            (true, None) => {
                return Err(Error::invalid_parameter(
                    "filters",
                    format!("{class} needs filters"),
                ))
            }
            (false, _) => 0,
        };
        macro_rules! finish {
            ($layer:expr) => {
                Box::new(
                    $layer
                        .dilated(dilation)?
                        .with_use_bias(self.use_bias)
                        .with_random_state(seed),
                )
            };
        }
        Ok(match (separable, rank) {
            (false, 1) => finish!(DepthwiseConv::<Ix3>::build_padded(
                kernel, shape, strides, padding, act
            )?
            .with_depth_multiplier(self.depth_multiplier)?),
            (false, _) => finish!(DepthwiseConv::<Ix4>::build_padded(
                kernel, shape, strides, padding, act
            )?
            .with_depth_multiplier(self.depth_multiplier)?),
            (true, 1) => finish!(SeparableConv::<Ix3>::build_padded(
                filters,
                kernel,
                shape,
                strides,
                self.depth_multiplier,
                padding,
                act
            )?),
            (true, _) => finish!(SeparableConv::<Ix4>::build_padded(
                filters,
                kernel,
                shape,
                strides,
                self.depth_multiplier,
                padding,
                act
            )?),
        })
    }
}

/// Keras's Conv*/Conv*Transpose arguments.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ConvSpec {
    pub filters: usize,
    pub kernel_size: SpatialArg,
    #[serde(default = "default_one")]
    pub strides: SpatialArg,
    #[serde(default = "default_valid")]
    pub padding: String,
    #[serde(default = "default_one")]
    pub dilation_rate: SpatialArg,
    #[serde(default)]
    pub activation: Option<String>,
    #[serde(default = "default_true")]
    pub use_bias: bool,
    #[serde(default)]
    pub seed: Option<u64>,
    #[serde(flatten)]
    pub regularizers: LayerRegularizers,
}

/// A [`ConvSpec`] resolved for `rank` spatial axes.
pub(crate) struct ConvParts {
    pub(crate) kernel: Vec<usize>,
    pub(crate) strides: Vec<usize>,
    pub(crate) dilation: Vec<usize>,
    pub(crate) padding: crate::neural_network::layers::convolution::PaddingType,
    pub(crate) activation: Activation,
}

impl ConvParts {
    pub(crate) fn single(&self, v: &[usize]) -> usize {
        v[0]
    }
    pub(crate) fn pair(&self, v: &[usize]) -> (usize, usize) {
        (v[0], v[1])
    }
    pub(crate) fn triple(&self, v: &[usize]) -> (usize, usize, usize) {
        (v[0], v[1], v[2])
    }
}

impl ConvSpec {
    pub(crate) fn resolve(&self, layer: &str, rank: usize, sample: &[usize]) -> Result<ConvParts> {
        if sample.len() != rank + 1 {
            return Err(Error::invalid_input(format!(
                "{layer} expects inputs of shape (batch, {}channels), but its input has per-sample shape {sample:?}",
                "spatial, ".repeat(rank)
            )));
        }
        Ok(ConvParts {
            kernel: self.kernel_size.per_axis(rank, "kernel_size", layer)?,
            strides: self.strides.per_axis(rank, "strides", layer)?,
            dilation: self.dilation_rate.per_axis(rank, "dilation_rate", layer)?,
            padding: parse_padding(Some(&self.padding), layer)?,
            activation: parse_activation(self.activation.as_deref())?,
        })
    }
}
