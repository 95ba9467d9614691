//! The layer registry: one [`LayerSpec`] variant per Keras class name, holding the arguments
//! rustyml reads from its config, and [`LayerSpec::build`], which calls the layer's Rust
//! constructor for the per-sample shape the previous layer produces.

use super::convolution::{ConvSpec, DepthwiseSpec};
use super::pooling::{GlobalPoolSpec, PoolSpec};
use super::recurrent::{build_recurrent, BidirectionalSpec, RecurrentSpec};
use super::regularizer_spec::LayerRegularizers;
use crate::error::{Error, Result};
use crate::neural_network::layers::activation::{
    Activation, Exponential, HardSigmoid, LeakyReLU, Linear, Mish, ReLU, SiLU, Sigmoid, Softmax,
    Softplus, Softsign, Tanh, ELU, GELU, SELU,
};
use crate::neural_network::layers::border::{
    Cropping1D, Cropping2D, Cropping3D, ZeroPadding1D, ZeroPadding2D, ZeroPadding3D,
};
use crate::neural_network::layers::convolution::{
    Conv1D, Conv1DTranspose, Conv2D, Conv2DTranspose, Conv3D, Conv3DTranspose,
};
use crate::neural_network::layers::recurrent::MergeMode;
use crate::neural_network::layers::regularization::{
    BatchNormalization, Dropout, GaussianDropout, GaussianNoise, GroupNormalization,
    InstanceNormalization, LayerNormalization, LayerNormalizationAxis, SpatialDropout1D,
    SpatialDropout2D, SpatialDropout3D, UnitNormalization, UnitNormalizationAxis,
};
use crate::neural_network::layers::upsampling::{UpSampling1D, UpSampling2D, UpSampling3D};
use crate::neural_network::layers::{
    Dense, Embedding, Flatten, Identity, Masking, Normalization, PReLU, Permute, RepeatVector,
    Rescaling, Reshape, TimeDistributed,
};
use crate::neural_network::traits::Layer;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `axis` as Keras writes it: one integer or a list.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(untagged)]
pub enum AxisSpec {
    One(i64),
    Many(Vec<i64>),
}

/// The layer registry: Keras's class names (spelled as Keras spells them, acronyms included) and the arguments rustyml reads from their configs
/// (other keys, such as `name` and `input_shape`, are ignored here).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "class_name", content = "config")]
#[allow(clippy::upper_case_acronyms)]
pub enum LayerSpec {
    Dense {
        units: usize,
        #[serde(default)]
        activation: Option<String>,
        #[serde(default = "default_true")]
        use_bias: bool,
        #[serde(default)]
        seed: Option<u64>,
        #[serde(flatten)]
        regularizers: LayerRegularizers,
    },
    Embedding {
        input_dim: usize,
        output_dim: usize,
        #[serde(default)]
        seed: Option<u64>,
        #[serde(flatten)]
        regularizers: LayerRegularizers,
        #[serde(default)]
        mask_zero: bool,
    },
    Masking {
        #[serde(default)]
        mask_value: f32,
    },
    Flatten {},
    Reshape {
        target_shape: Vec<isize>,
    },
    Permute {
        dims: Vec<usize>,
    },
    RepeatVector {
        n: usize,
    },
    Identity {},
    Activation {
        activation: String,
    },
    ReLU {},
    Softmax {},
    Sigmoid {},
    Tanh {},
    LeakyReLU {
        negative_slope: f32,
    },
    ELU {
        alpha: f32,
    },
    PReLU {
        alpha_initializer: f32,
        #[serde(default)]
        shared_axes: Option<Vec<usize>>,
    },
    Dropout {
        rate: f32,
        #[serde(default)]
        seed: Option<u64>,
    },
    SpatialDropout1D {
        rate: f32,
        #[serde(default)]
        seed: Option<u64>,
    },
    SpatialDropout2D {
        rate: f32,
        #[serde(default)]
        seed: Option<u64>,
    },
    SpatialDropout3D {
        rate: f32,
        #[serde(default)]
        seed: Option<u64>,
    },
    GaussianNoise {
        stddev: f32,
        #[serde(default)]
        seed: Option<u64>,
    },
    GaussianDropout {
        rate: f32,
        #[serde(default)]
        seed: Option<u64>,
    },
    BatchNormalization {
        momentum: f32,
        epsilon: f32,
    },
    LayerNormalization {
        axis: AxisSpec,
        epsilon: f32,
    },
    GroupNormalization {
        groups: usize,
        epsilon: f32,
    },
    InstanceNormalization {
        epsilon: f32,
    },
    UnitNormalization {
        axis: AxisSpec,
    },
    // pooling family
    MaxPooling1D(PoolSpec),
    MaxPooling2D(PoolSpec),
    MaxPooling3D(PoolSpec),
    AveragePooling1D(PoolSpec),
    AveragePooling2D(PoolSpec),
    AveragePooling3D(PoolSpec),
    GlobalMaxPooling1D(GlobalPoolSpec),
    GlobalMaxPooling2D(GlobalPoolSpec),
    GlobalMaxPooling3D(GlobalPoolSpec),
    GlobalAveragePooling1D(GlobalPoolSpec),
    GlobalAveragePooling2D(GlobalPoolSpec),
    GlobalAveragePooling3D(GlobalPoolSpec),
    // the standard and transposed convolutions (one shared config)
    Conv1D(ConvSpec),
    Conv2D(ConvSpec),
    Conv3D(ConvSpec),
    Conv1DTranspose(ConvSpec),
    Conv2DTranspose(ConvSpec),
    Conv3DTranspose(ConvSpec),
    // border and upsampling layers (channels-last; amounts as the Python
    // classes normalise them: one `[before, after]` pair per spatial axis).
    ZeroPadding1D {
        padding: Vec<(usize, usize)>,
    },
    ZeroPadding2D {
        padding: Vec<(usize, usize)>,
    },
    ZeroPadding3D {
        padding: Vec<(usize, usize)>,
    },
    Cropping1D {
        cropping: Vec<(usize, usize)>,
    },
    Cropping2D {
        cropping: Vec<(usize, usize)>,
    },
    Cropping3D {
        cropping: Vec<(usize, usize)>,
    },
    UpSampling1D {
        size: usize,
    },
    UpSampling2D {
        size: (usize, usize),
        #[serde(default)]
        interpolation: Option<String>,
    },
    UpSampling3D {
        size: (usize, usize, usize),
    },
    // depthwise and separable convolutions
    DepthwiseConv1D(DepthwiseSpec),
    DepthwiseConv2D(DepthwiseSpec),
    SeparableConv1D(DepthwiseSpec),
    SeparableConv2D(DepthwiseSpec),
    // recurrent layers
    SimpleRNN(RecurrentSpec),
    LSTM(RecurrentSpec),
    GRU(RecurrentSpec),
    Bidirectional(BidirectionalSpec),
    // preprocessing layers that compute inside the network, and the time-step wrapper
    Rescaling {
        scale: f32,
        #[serde(default)]
        offset: f32,
    },
    Normalization {
        /// `null`: one scalar mean and variance (Keras's `axis=None`).
        #[serde(default = "default_last_axis")]
        axis: Option<AxisSpec>,
        #[serde(default)]
        mean: Option<Value>,
        #[serde(default)]
        variance: Option<Value>,
        #[serde(default)]
        invert: bool,
    },
    TimeDistributed {
        layer: Box<LayerSpec>,
    },
}

/// A spatial argument as Keras writes it (kernel_size, strides, dilation_rate, pool_size):
/// one integer for every axis, or one per axis.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(untagged)]
pub enum SpatialArg {
    One(usize),
    Many(Vec<usize>),
}

impl SpatialArg {
    pub(crate) fn per_axis(&self, rank: usize, name: &str, layer: &str) -> Result<Vec<usize>> {
        match self {
            SpatialArg::One(v) => Ok(vec![*v; rank]),
            SpatialArg::Many(v) if v.len() == rank => Ok(v.clone()),
            SpatialArg::Many(v) => Err(Error::invalid_parameter(
                name,
                format!("{layer}: expected {rank} entries, got {v:?}"),
            )),
        }
    }
}

pub(crate) fn default_one() -> SpatialArg {
    SpatialArg::One(1)
}

fn default_last_axis() -> Option<AxisSpec> {
    Some(AxisSpec::One(-1))
}

/// A number or a nested list of numbers (Keras's `mean`/`variance` config values) as an f32
/// array of the nesting's shape.
fn json_array(value: &Value, name: &str) -> Result<ndarray::ArrayD<f32>> {
    fn walk(
        v: &Value,
        depth: usize,
        shape: &mut Vec<usize>,
        out: &mut Vec<f32>,
    ) -> std::result::Result<(), String> {
        match v {
            Value::Number(n) => {
                if depth != shape.len() {
                    return Err("a ragged nesting".to_string());
                }
                out.push(n.as_f64().ok_or("an unreadable number")? as f32);
                Ok(())
            }
            Value::Array(items) => {
                if depth == shape.len() {
                    if !out.is_empty() {
                        return Err("a ragged nesting".to_string());
                    }
                    shape.push(items.len());
                } else if shape.get(depth) != Some(&items.len()) {
                    return Err("a ragged nesting".to_string());
                }
                items
                    .iter()
                    .try_for_each(|item| walk(item, depth + 1, shape, out))
            }
            other => Err(format!("{other}")),
        }
    }
    let (mut shape, mut out) = (Vec::new(), Vec::new());
    walk(value, 0, &mut shape, &mut out).map_err(|what| {
        Error::invalid_parameter(
            name,
            format!(
                "Normalization: {name} must be a number or a nested list of numbers, got {what}"
            ),
        )
    })?;
    ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&shape), out).map_err(|_| {
        Error::invalid_parameter(
            name,
            format!("Normalization: {name} is an empty or ragged nested list"),
        )
    })
}

pub(crate) fn default_true() -> bool {
    true
}

pub(crate) fn default_valid() -> String {
    "valid".to_string()
}

/// Keras's activation names.
pub(crate) fn parse_activation(name: Option<&str>) -> Result<Activation> {
    Ok(match name.unwrap_or("linear") {
        "linear" | "None" => Activation::Linear,
        "relu" => Activation::ReLU,
        "sigmoid" => Activation::Sigmoid,
        "tanh" => Activation::Tanh,
        "softmax" => Activation::Softmax,
        "leaky_relu" => Activation::LeakyReLU {
            negative_slope: 0.2,
        },
        "elu" => Activation::ELU { alpha: 1.0 },
        "selu" => Activation::SELU,
        "softplus" => Activation::Softplus,
        "softsign" => Activation::Softsign,
        "hard_sigmoid" => Activation::HardSigmoid,
        "exponential" => Activation::Exponential,
        // Keras's "gelu" is the exact form; it writes "silu" for "swish".
        "gelu" => Activation::GELU { approximate: false },
        "silu" | "swish" => Activation::SiLU,
        "mish" => Activation::Mish,
        other => {
            return Err(Error::invalid_parameter(
                "activation",
                format!(
                    "unknown activation {other:?}; expected one of linear, relu, sigmoid, tanh, \
                     softmax, leaky_relu, elu, selu, softplus, softsign, hard_sigmoid, exponential, \
                     gelu, silu, swish, mish"
                ),
            ))
        }
    })
}

/// The layer that applies `activation` on its own.
pub(crate) fn activation_layer(activation: Activation) -> Result<Box<dyn Layer>> {
    Ok(match activation {
        Activation::Linear => Box::new(Linear::new()),
        Activation::ReLU => Box::new(ReLU::new()),
        Activation::Sigmoid => Box::new(Sigmoid::new()),
        Activation::Tanh => Box::new(Tanh::new()),
        Activation::Softmax => Box::new(Softmax::new()),
        Activation::LeakyReLU { negative_slope } => Box::new(LeakyReLU::new(negative_slope)?),
        Activation::ELU { alpha } => Box::new(ELU::new(alpha)?),
        Activation::SELU => Box::new(SELU::new()),
        Activation::Softplus => Box::new(Softplus::new()),
        Activation::Softsign => Box::new(Softsign::new()),
        Activation::HardSigmoid => Box::new(HardSigmoid::new()),
        Activation::Exponential => Box::new(Exponential::new()),
        Activation::GELU { approximate } => Box::new(GELU::new(approximate)),
        Activation::SiLU => Box::new(SiLU::new()),
        Activation::Mish => Box::new(Mish::new()),
    })
}

/// Keras's axis numbering (negative from the end, batch axis 0) to a non-negative index in a
/// tensor of `rank` axes including the batch axis.
pub(crate) fn resolve_axis(axis: i64, rank: usize) -> Result<usize> {
    let a = if axis < 0 { axis + rank as i64 } else { axis };
    if a < 1 || a >= rank as i64 {
        return Err(Error::invalid_parameter(
            "axis",
            format!("axis {axis} is out of range for inputs of rank {rank} (the batch axis cannot be normalised)"),
        ));
    }
    Ok(a as usize)
}

pub(crate) fn resolve_axes(spec: &AxisSpec, rank: usize) -> Result<Vec<usize>> {
    match spec {
        AxisSpec::One(a) => Ok(vec![resolve_axis(*a, rank)?]),
        AxisSpec::Many(v) => v.iter().map(|&a| resolve_axis(a, rank)).collect(),
    }
}

impl LayerSpec {
    /// Keras's class name of this layer (`"Dense"`, `"Conv2D"`...).
    pub fn class_name(&self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.get("class_name")?.as_str().map(str::to_string))
            .unwrap_or_default()
    }

    /// The regularizer arguments of the config (a `Bidirectional`: its wrapped layer's), for
    /// the layers that read them.
    pub fn regularizers(&self) -> Option<&LayerRegularizers> {
        match self {
            LayerSpec::Dense { regularizers, .. } | LayerSpec::Embedding { regularizers, .. } => {
                Some(regularizers)
            }
            LayerSpec::Conv1D(c)
            | LayerSpec::Conv2D(c)
            | LayerSpec::Conv3D(c)
            | LayerSpec::Conv1DTranspose(c)
            | LayerSpec::Conv2DTranspose(c)
            | LayerSpec::Conv3DTranspose(c) => Some(&c.regularizers),
            LayerSpec::DepthwiseConv1D(c)
            | LayerSpec::DepthwiseConv2D(c)
            | LayerSpec::SeparableConv1D(c)
            | LayerSpec::SeparableConv2D(c) => Some(&c.regularizers),
            LayerSpec::SimpleRNN(c) | LayerSpec::LSTM(c) | LayerSpec::GRU(c) => {
                Some(&c.regularizers)
            }
            LayerSpec::Bidirectional(spec) => spec.layer.regularizers(),
            _ => None,
        }
    }

    /// Builds the Rust layer for samples of shape `sample` (no batch axis). `seed` is used
    /// when the config has no `seed` of its own (`None`: the global seed stream). A layer
    /// with regularizers comes wrapped in [`crate::neural_network::regularizers::Regularized`].
    pub fn build(&self, sample: &[usize], seed: Option<u64>) -> Result<Box<dyn Layer>> {
        let layer = self.build_layer(sample, seed)?;
        match self.regularizers() {
            Some(r) if !r.is_empty() => r.wrap(&self.class_name(), layer),
            _ => Ok(layer),
        }
    }

    fn build_layer(&self, sample: &[usize], seed: Option<u64>) -> Result<Box<dyn Layer>> {
        let with_batch = |s: &[usize]| {
            let mut v = vec![1];
            v.extend_from_slice(s);
            v
        };
        let rng_seed = |own: &Option<u64>| {
            own.or(seed)
                .unwrap_or_else(|| crate::random::resolve_seed(None))
        };
        // One convolution layer from its Keras config: `$axes` turns the per-axis lists into
        // the argument form of a layer with `$rank` spatial axes.
        macro_rules! conv_layer {
            ($c:expr, $layer:ident, $rank:literal, $axes:ident) => {{
                let p = $c.resolve(stringify!($layer), $rank, sample)?;
                Box::new(
                    $layer::with_config(
                        $c.filters,
                        p.$axes(&p.kernel),
                        with_batch(sample),
                        p.$axes(&p.strides),
                        p.activation,
                        p.padding,
                        Some(p.$axes(&p.dilation)),
                        $c.use_bias,
                    )?
                    .with_random_state(rng_seed(&$c.seed)),
                )
            }};
        }
        Ok(match self {
            LayerSpec::Dense {
                units,
                activation,
                use_bias,
                seed: own,
                ..
            } => {
                // Keras applies the kernel to the last axis of any input of rank >= 2
                let Some(&features) = sample.last() else {
                    return Err(Error::invalid_input(
                        "Dense expects inputs of shape (batch, ..., features), but its input has no axis besides the batch".to_string(),
                    ));
                };
                let act = parse_activation(activation.as_deref())?;
                Box::new(
                    Dense::new(features, *units, act)?
                        .applied_to_last_axis()
                        .with_use_bias(*use_bias)
                        .with_random_state(rng_seed(own)),
                )
            }
            LayerSpec::Embedding {
                input_dim,
                output_dim,
                seed: own,
                mask_zero,
                ..
            } => Box::new(
                Embedding::new(*input_dim, *output_dim)?
                    .with_random_state(rng_seed(own))
                    .with_mask_zero(*mask_zero),
            ),
            LayerSpec::Masking { mask_value } => Box::new(Masking::new(*mask_value)?),
            LayerSpec::Flatten {} => Box::new(Flatten::new(with_batch(sample))?),
            LayerSpec::Reshape { target_shape } => Box::new(Reshape::new(target_shape.clone())?),
            LayerSpec::Permute { dims } => Box::new(Permute::new(dims.clone())?),
            LayerSpec::RepeatVector { n } => Box::new(RepeatVector::new(*n)?),
            LayerSpec::Identity {} => Box::new(Identity::new()),
            LayerSpec::Activation { activation } => {
                activation_layer(parse_activation(Some(activation))?)?
            }
            LayerSpec::ReLU {} => Box::new(ReLU::new()),
            LayerSpec::Softmax {} => Box::new(Softmax::new()),
            LayerSpec::Sigmoid {} => Box::new(Sigmoid::new()),
            LayerSpec::Tanh {} => Box::new(Tanh::new()),
            LayerSpec::LeakyReLU { negative_slope } => Box::new(LeakyReLU::new(*negative_slope)?),
            LayerSpec::ELU { alpha } => Box::new(ELU::new(*alpha)?),
            LayerSpec::PReLU {
                alpha_initializer,
                shared_axes,
            } => {
                let layer = PReLU::new(with_batch(sample), *alpha_initializer)?;
                Box::new(match shared_axes {
                    Some(axes) => layer.with_shared_axes(axes.clone())?,
                    None => layer,
                })
            }
            LayerSpec::Dropout { rate, seed: own } => {
                Box::new(Dropout::new(*rate, with_batch(sample))?.with_random_state(rng_seed(own)))
            }
            LayerSpec::SpatialDropout1D { rate, seed: own } => Box::new(
                SpatialDropout1D::new(*rate, with_batch(sample))?.with_random_state(rng_seed(own)),
            ),
            LayerSpec::SpatialDropout2D { rate, seed: own } => Box::new(
                SpatialDropout2D::new(*rate, with_batch(sample))?.with_random_state(rng_seed(own)),
            ),
            LayerSpec::SpatialDropout3D { rate, seed: own } => Box::new(
                SpatialDropout3D::new(*rate, with_batch(sample))?.with_random_state(rng_seed(own)),
            ),
            LayerSpec::GaussianNoise { stddev, seed: own } => Box::new(
                GaussianNoise::new(*stddev, with_batch(sample))?.with_random_state(rng_seed(own)),
            ),
            LayerSpec::GaussianDropout { rate, seed: own } => Box::new(
                GaussianDropout::new(*rate, with_batch(sample))?.with_random_state(rng_seed(own)),
            ),
            LayerSpec::BatchNormalization { momentum, epsilon } => Box::new(
                BatchNormalization::new(with_batch(sample), *momentum, *epsilon)?,
            ),
            LayerSpec::LayerNormalization { axis, epsilon } => {
                let rank = sample.len() + 1;
                let axes = resolve_axes(axis, rank)?;
                let normalized = match axes.as_slice() {
                    [a] if *a == rank - 1 => LayerNormalizationAxis::Default,
                    [a] => LayerNormalizationAxis::Custom(*a),
                    many => LayerNormalizationAxis::Multiple(many.to_vec()),
                };
                Box::new(
                    LayerNormalization::new(with_batch(sample), *epsilon)?
                        .with_normalized_axis(normalized)?,
                )
            }
            LayerSpec::GroupNormalization { groups, epsilon } => Box::new(GroupNormalization::new(
                with_batch(sample),
                *groups,
                *epsilon,
            )?),
            LayerSpec::InstanceNormalization { epsilon } => {
                Box::new(InstanceNormalization::new(with_batch(sample), *epsilon)?)
            }
            LayerSpec::UnitNormalization { axis } => {
                let rank = sample.len() + 1;
                let axes = resolve_axes(axis, rank)?;
                let normalized = match axes.as_slice() {
                    [a] if *a == rank - 1 => UnitNormalizationAxis::Default,
                    [a] => UnitNormalizationAxis::Custom(*a),
                    many => UnitNormalizationAxis::Multiple(many.to_vec()),
                };
                Box::new(UnitNormalization::new(normalized)?)
            }
            // pooling family
            LayerSpec::MaxPooling1D(p) => p.build::<1, true>(sample)?,
            LayerSpec::MaxPooling2D(p) => p.build::<2, true>(sample)?,
            LayerSpec::MaxPooling3D(p) => p.build::<3, true>(sample)?,
            LayerSpec::AveragePooling1D(p) => p.build::<1, false>(sample)?,
            LayerSpec::AveragePooling2D(p) => p.build::<2, false>(sample)?,
            LayerSpec::AveragePooling3D(p) => p.build::<3, false>(sample)?,
            LayerSpec::GlobalMaxPooling1D(p) => p.build::<1, true>(sample)?,
            LayerSpec::GlobalMaxPooling2D(p) => p.build::<2, true>(sample)?,
            LayerSpec::GlobalMaxPooling3D(p) => p.build::<3, true>(sample)?,
            LayerSpec::GlobalAveragePooling1D(p) => p.build::<1, false>(sample)?,
            LayerSpec::GlobalAveragePooling2D(p) => p.build::<2, false>(sample)?,
            LayerSpec::GlobalAveragePooling3D(p) => p.build::<3, false>(sample)?,
            // the standard and transposed convolutions
            LayerSpec::Conv1D(c) => conv_layer!(c, Conv1D, 1, single),
            LayerSpec::Conv2D(c) => conv_layer!(c, Conv2D, 2, pair),
            LayerSpec::Conv3D(c) => conv_layer!(c, Conv3D, 3, triple),
            LayerSpec::Conv1DTranspose(c) => conv_layer!(c, Conv1DTranspose, 1, single),
            LayerSpec::Conv2DTranspose(c) => conv_layer!(c, Conv2DTranspose, 2, pair),
            LayerSpec::Conv3DTranspose(c) => conv_layer!(c, Conv3DTranspose, 3, triple),
            // border and upsampling
            LayerSpec::ZeroPadding1D { padding } => Box::new(ZeroPadding1D::new(
                shape_args::pairs::<1>(padding, "padding").map(|[a]| a)?,
            )),
            LayerSpec::ZeroPadding2D { padding } => Box::new(ZeroPadding2D::new(
                shape_args::pairs::<2>(padding, "padding").map(|[a, b]| (a, b))?,
            )),
            LayerSpec::ZeroPadding3D { padding } => Box::new(ZeroPadding3D::new(
                shape_args::pairs::<3>(padding, "padding").map(|[a, b, c]| (a, b, c))?,
            )),
            LayerSpec::Cropping1D { cropping } => Box::new(Cropping1D::new(
                shape_args::pairs::<1>(cropping, "cropping").map(|[a]| a)?,
            )),
            LayerSpec::Cropping2D { cropping } => Box::new(Cropping2D::new(
                shape_args::pairs::<2>(cropping, "cropping").map(|[a, b]| (a, b))?,
            )),
            LayerSpec::Cropping3D { cropping } => Box::new(Cropping3D::new(
                shape_args::pairs::<3>(cropping, "cropping").map(|[a, b, c]| (a, b, c))?,
            )),
            LayerSpec::UpSampling1D { size } => Box::new(UpSampling1D::new(*size)?),
            LayerSpec::UpSampling2D {
                size,
                interpolation,
            } => Box::new(UpSampling2D::new(
                *size,
                shape_args::interpolation(interpolation.as_deref())?,
            )?),
            LayerSpec::UpSampling3D { size } => Box::new(UpSampling3D::new(*size)?),
            // depthwise and separable convolutions
            LayerSpec::DepthwiseConv1D(spec) => {
                spec.build("DepthwiseConv1D", sample, rng_seed(&spec.seed))?
            }
            LayerSpec::DepthwiseConv2D(spec) => {
                spec.build("DepthwiseConv2D", sample, rng_seed(&spec.seed))?
            }
            LayerSpec::SeparableConv1D(spec) => {
                spec.build("SeparableConv1D", sample, rng_seed(&spec.seed))?
            }
            LayerSpec::SeparableConv2D(spec) => {
                spec.build("SeparableConv2D", sample, rng_seed(&spec.seed))?
            }
            // recurrent layers
            LayerSpec::SimpleRNN(_) | LayerSpec::LSTM(_) | LayerSpec::GRU(_) => {
                build_recurrent(self, sample, seed)?.boxed()
            }
            LayerSpec::Bidirectional(spec) => {
                let mode = match spec.merge_mode.as_deref() {
                    Some("concat") => MergeMode::Concat,
                    Some("sum") => MergeMode::Sum,
                    Some("mul") => MergeMode::Mul,
                    Some("ave") => MergeMode::Ave,
                    other => {
                        return Err(Error::invalid_parameter(
                            "merge_mode",
                            format!("Bidirectional: merge_mode must be one of 'concat', 'sum', 'mul', 'ave' (a list of outputs does not fit a Sequential), got {other:?}"),
                        ))
                    }
                };
                let inner = build_recurrent(&spec.layer, sample, seed)?;
                let bi = inner.bidirectional(mode)?;
                // The backward half's own stream, derived from the layer's seed.
                let own = match &*spec.layer {
                    LayerSpec::SimpleRNN(c) | LayerSpec::LSTM(c) | LayerSpec::GRU(c) => c.seed,
                    _ => None,
                };
                Box::new(match own.or(seed) {
                    Some(s) => bi.with_random_state(s),
                    None => bi,
                })
            }
            LayerSpec::Rescaling { scale, offset } => Box::new(Rescaling::new(*scale, *offset)?),
            LayerSpec::Normalization {
                axis,
                mean,
                variance,
                invert,
            } => {
                let axes = match axis {
                    None => Vec::new(),
                    Some(AxisSpec::One(a)) => vec![*a],
                    Some(AxisSpec::Many(v)) => v.clone(),
                };
                let layer = Normalization::new(&with_batch(sample), &axes, *invert)?;
                Box::new(match (mean, variance) {
                    (None, None) => layer,
                    (Some(m), Some(v)) => layer
                        .with_statistics(json_array(m, "mean")?, json_array(v, "variance")?)?,
                    _ => {
                        return Err(Error::invalid_parameter(
                            if mean.is_none() { "mean" } else { "variance" },
                            "Normalization: mean and variance must be given together (or neither, for adapt)",
                        ))
                    }
                })
            }
            LayerSpec::TimeDistributed { layer } => {
                if sample.len() < 2 {
                    return Err(Error::invalid_input(format!(
                        "TimeDistributed: inputs must have at least 3 axes (batch, time, features...), got per-sample shape {sample:?}"
                    )));
                }
                if matches!(**layer, LayerSpec::Bidirectional(_)) {
                    return Err(Error::invalid_parameter(
                        "layer",
                        "TimeDistributed(Bidirectional(...)) is not supported in rustyml",
                    ));
                }
                Box::new(TimeDistributed::new(layer.build(&sample[1..], seed)?))
            }
        })
    }
}

/// Config decoding for the border and upsampling layers.
mod shape_args {
    use crate::error::{Error, Result};
    use crate::neural_network::layers::upsampling::Interpolation;

    /// Exactly `N` `(before, after)` pairs.
    pub(super) fn pairs<const N: usize>(
        v: &[(usize, usize)],
        name: &str,
    ) -> Result<[(usize, usize); N]> {
        <[(usize, usize); N]>::try_from(v).map_err(|_| {
            Error::invalid_parameter(
                name,
                format!("expected {N} (before, after) pairs, got {v:?}"),
            )
        })
    }

    pub(super) fn interpolation(name: Option<&str>) -> Result<Interpolation> {
        Ok(match name.unwrap_or("nearest") {
            "nearest" => Interpolation::Nearest,
            "bilinear" => Interpolation::Bilinear,
            "bicubic" => Interpolation::Bicubic,
            "lanczos3" => Interpolation::Lanczos3,
            "lanczos5" => Interpolation::Lanczos5,
            other => {
                return Err(Error::invalid_parameter(
                    "interpolation",
                    format!("unknown interpolation {other:?}; expected nearest, bilinear, bicubic, lanczos3 or lanczos5"),
                ))
            }
        })
    }
}
