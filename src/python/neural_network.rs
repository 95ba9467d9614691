//! `rustyml._native.neural_network`: one native model class for every Keras-style network.
//!
//! A model crosses the boundary as its layer configs (Keras's `{"class_name", "config"}` JSON,
//! the same JSON a saved file stores) plus arrays. [`LayerSpec`] is the registry: adding a
//! layer is one variant there and one arm in [`LayerSpec::build`]. Training runs batch by
//! batch with the GIL released; between batches the GIL is taken back briefly to check for
//! Ctrl-C and report progress, so an interrupt stops at a batch boundary with the model intact.

use crate::error::{Error, RustymlResult};
use crate::neural_network::layers::activation::{
    Activation, Exponential, HardSigmoid, LeakyReLU, Linear, ReLU, Sigmoid, Softmax, Softplus,
    Softsign, Tanh, ELU, SELU,
};
use crate::neural_network::layers::regularization::{
    BatchNormalization, Dropout, GaussianDropout, GaussianNoise, GroupNormalization,
    InstanceNormalization, LayerNormalization, LayerNormalizationAxis, SpatialDropout1D,
    SpatialDropout2D, SpatialDropout3D, UnitNormalization, UnitNormalizationAxis,
};
use crate::neural_network::layers::{
    Dense, Embedding, Flatten, Identity, PReLU, Permute, RepeatVector, Reshape,
};
// nnshape family
use crate::neural_network::layers::border::{
    Cropping1D, Cropping2D, Cropping3D, ZeroPadding1D, ZeroPadding2D, ZeroPadding3D,
};
use crate::neural_network::layers::upsampling::{UpSampling1D, UpSampling2D, UpSampling3D};
// recurrent family (nnrnn)
use crate::neural_network::layers::recurrent::{Bidirectional, MergeMode, SimpleRNN, GRU, LSTM};
use crate::neural_network::losses::{
    BinaryCrossEntropy, CategoricalCrossEntropy, MeanAbsoluteError, MeanSquaredError,
    SparseCategoricalCrossEntropy,
};
use crate::neural_network::optimizers::{AdaGrad, Adam, RMSprop, SGD};
use crate::neural_network::sequential::{Sequential, TrainingSnapshot};
use crate::neural_network::traits::{Layer, Loss, Optimizer};
use crate::neural_network::Tensor;
use crate::python::to_py_err;
use ndarray::{ArrayD, Axis, IxDyn};
use numpy::{IntoPyArray, PyArrayDyn, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::Mutex;
// nnconv
use crate::neural_network::layers::convolution::{
    Conv1D, Conv1DTranspose, Conv2D, Conv2DTranspose, Conv3D, Conv3DTranspose,
};

/// `axis` as Keras writes it: one integer or a list.
#[derive(Deserialize, Clone)]
#[serde(untagged)]
enum AxisSpec {
    One(i64),
    Many(Vec<i64>),
}

/// The layer registry: Keras's class names (spelled as Keras spells them, acronyms included) and the arguments rustyml reads from their configs
/// (other keys, such as `name` and `input_shape`, are ignored here).
#[derive(Deserialize)]
#[serde(tag = "class_name", content = "config")]
#[allow(clippy::upper_case_acronyms)]
enum LayerSpec {
    Dense {
        units: usize,
        #[serde(default)]
        activation: Option<String>,
        #[serde(default = "default_true")]
        use_bias: bool,
        #[serde(default)]
        seed: Option<u64>,
    },
    Embedding {
        input_dim: usize,
        output_dim: usize,
        #[serde(default)]
        seed: Option<u64>,
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
    // nnconv: the standard and transposed convolutions (one shared config)
    Conv1D(ConvSpec),
    Conv2D(ConvSpec),
    Conv3D(ConvSpec),
    Conv1DTranspose(ConvSpec),
    Conv2DTranspose(ConvSpec),
    Conv3DTranspose(ConvSpec),
    // nnshape family: border and upsampling layers (channels-last; amounts as the Python
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
    // Depthwise and separable convolutions (nndepth).
    DepthwiseConv1D(DepthwiseSpec),
    DepthwiseConv2D(DepthwiseSpec),
    SeparableConv1D(DepthwiseSpec),
    SeparableConv2D(DepthwiseSpec),
    // --- recurrent family (nnrnn) ---
    SimpleRNN(RecurrentSpec),
    LSTM(RecurrentSpec),
    GRU(RecurrentSpec),
    Bidirectional(BidirectionalSpec),
}

/// A spatial argument as Keras writes it (kernel_size, strides, dilation_rate, pool_size):
/// one integer for every axis, or one per axis.
#[derive(Deserialize, Clone)]
#[serde(untagged)]
enum SpatialArg {
    One(usize),
    Many(Vec<usize>),
}

impl SpatialArg {
    fn per_axis(&self, rank: usize, name: &str, layer: &str) -> RustymlResult<Vec<usize>> {
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

fn default_one() -> SpatialArg {
    SpatialArg::One(1)
}

fn default_true() -> bool {
    true
}

fn default_valid() -> String {
    "valid".to_string()
}

/// Keras's padding names (any case); `None` is Keras's default, "valid".
fn parse_padding(
    padding: Option<&str>,
    layer: &str,
) -> RustymlResult<crate::neural_network::layers::convolution::PaddingType> {
    use crate::neural_network::layers::convolution::PaddingType;
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

// Depthwise and separable convolutions (nndepth).

/// The config shared by `DepthwiseConv1D/2D` (no `filters`) and `SeparableConv1D/2D`.
#[derive(Deserialize)]
struct DepthwiseSpec {
    #[serde(default)]
    filters: Option<usize>,
    kernel_size: SpatialArg,
    #[serde(default = "default_one")]
    strides: SpatialArg,
    #[serde(default = "default_valid")]
    padding: String,
    #[serde(default = "dw_one_usize")]
    depth_multiplier: usize,
    #[serde(default = "default_one")]
    dilation_rate: SpatialArg,
    #[serde(default)]
    activation: Option<String>,
    #[serde(default = "default_true")]
    use_bias: bool,
    #[serde(default)]
    seed: Option<u64>,
}

fn dw_one_usize() -> usize {
    1
}

impl DepthwiseSpec {
    /// The layer `class` (one of the four) over samples of shape `sample`.
    fn build(&self, class: &str, sample: &[usize], seed: u64) -> RustymlResult<Box<dyn Layer>> {
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

/// Keras's activation names.
fn parse_activation(name: Option<&str>) -> RustymlResult<Activation> {
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
        other => {
            return Err(Error::invalid_parameter(
                "activation",
                format!(
                    "unknown activation {other:?}; expected one of linear, relu, sigmoid, tanh, \
                     softmax, leaky_relu, elu, selu, softplus, softsign, hard_sigmoid, exponential"
                ),
            ))
        }
    })
}

/// The layer that applies `activation` on its own.
fn activation_layer(activation: Activation) -> RustymlResult<Box<dyn Layer>> {
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
    })
}

/// Keras's axis numbering (negative from the end, batch axis 0) to a non-negative index in a
/// tensor of `rank` axes including the batch axis.
fn resolve_axis(axis: i64, rank: usize) -> RustymlResult<usize> {
    let a = if axis < 0 { axis + rank as i64 } else { axis };
    if a < 1 || a >= rank as i64 {
        return Err(Error::invalid_parameter(
            "axis",
            format!("axis {axis} is out of range for inputs of rank {rank} (the batch axis cannot be normalised)"),
        ));
    }
    Ok(a as usize)
}

fn resolve_axes(spec: &AxisSpec, rank: usize) -> RustymlResult<Vec<usize>> {
    match spec {
        AxisSpec::One(a) => Ok(vec![resolve_axis(*a, rank)?]),
        AxisSpec::Many(v) => v.iter().map(|&a| resolve_axis(a, rank)).collect(),
    }
}

impl LayerSpec {
    /// Builds the Rust layer for samples of shape `sample` (no batch axis). `seed` is the
    /// layer's own seed, or one derived from the model seed.
    fn build(&self, sample: &[usize], seed: Option<u64>) -> RustymlResult<Box<dyn Layer>> {
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
            } => {
                if sample.len() != 1 {
                    return Err(Error::invalid_input(format!(
                        "Dense expects inputs of shape (batch, features), but its input has per-sample shape {sample:?}; add a Flatten layer before it"
                    )));
                }
                let act = parse_activation(activation.as_deref())?;
                Box::new(
                    Dense::new(sample[0], *units, act)?
                        .with_use_bias(*use_bias)
                        .with_random_state(rng_seed(own)),
                )
            }
            LayerSpec::Embedding {
                input_dim,
                output_dim,
                seed: own,
            } => {
                Box::new(Embedding::new(*input_dim, *output_dim)?.with_random_state(rng_seed(own)))
            }
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
            // nnconv: the standard and transposed convolutions
            LayerSpec::Conv1D(c) => conv_layer!(c, Conv1D, 1, single),
            LayerSpec::Conv2D(c) => conv_layer!(c, Conv2D, 2, pair),
            LayerSpec::Conv3D(c) => conv_layer!(c, Conv3D, 3, triple),
            LayerSpec::Conv1DTranspose(c) => conv_layer!(c, Conv1DTranspose, 1, single),
            LayerSpec::Conv2DTranspose(c) => conv_layer!(c, Conv2DTranspose, 2, pair),
            LayerSpec::Conv3DTranspose(c) => conv_layer!(c, Conv3DTranspose, 3, triple),
            // nnshape family
            LayerSpec::ZeroPadding1D { padding } => Box::new(ZeroPadding1D::new(
                nnshape::pairs::<1>(padding, "padding").map(|[a]| a)?,
            )),
            LayerSpec::ZeroPadding2D { padding } => Box::new(ZeroPadding2D::new(
                nnshape::pairs::<2>(padding, "padding").map(|[a, b]| (a, b))?,
            )),
            LayerSpec::ZeroPadding3D { padding } => Box::new(ZeroPadding3D::new(
                nnshape::pairs::<3>(padding, "padding").map(|[a, b, c]| (a, b, c))?,
            )),
            LayerSpec::Cropping1D { cropping } => Box::new(Cropping1D::new(
                nnshape::pairs::<1>(cropping, "cropping").map(|[a]| a)?,
            )),
            LayerSpec::Cropping2D { cropping } => Box::new(Cropping2D::new(
                nnshape::pairs::<2>(cropping, "cropping").map(|[a, b]| (a, b))?,
            )),
            LayerSpec::Cropping3D { cropping } => Box::new(Cropping3D::new(
                nnshape::pairs::<3>(cropping, "cropping").map(|[a, b, c]| (a, b, c))?,
            )),
            LayerSpec::UpSampling1D { size } => Box::new(UpSampling1D::new(*size)?),
            LayerSpec::UpSampling2D {
                size,
                interpolation,
            } => Box::new(UpSampling2D::new(
                *size,
                nnshape::interpolation(interpolation.as_deref())?,
            )?),
            LayerSpec::UpSampling3D { size } => Box::new(UpSampling3D::new(*size)?),
            // Depthwise and separable convolutions (nndepth).
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
            // --- recurrent family (nnrnn) ---
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
        })
    }
}

// nnconv: the convolutions' shared Keras config

/// Keras's Conv*/Conv*Transpose arguments.
#[derive(Deserialize)]
struct ConvSpec {
    filters: usize,
    kernel_size: SpatialArg,
    #[serde(default = "default_one")]
    strides: SpatialArg,
    #[serde(default = "default_valid")]
    padding: String,
    #[serde(default = "default_one")]
    dilation_rate: SpatialArg,
    #[serde(default)]
    activation: Option<String>,
    #[serde(default = "default_true")]
    use_bias: bool,
    #[serde(default)]
    seed: Option<u64>,
}

/// A [`ConvSpec`] resolved for `rank` spatial axes.
struct ConvParts {
    kernel: Vec<usize>,
    strides: Vec<usize>,
    dilation: Vec<usize>,
    padding: crate::neural_network::layers::convolution::PaddingType,
    activation: Activation,
}

impl ConvParts {
    fn single(&self, v: &[usize]) -> usize {
        v[0]
    }
    fn pair(&self, v: &[usize]) -> (usize, usize) {
        (v[0], v[1])
    }
    fn triple(&self, v: &[usize]) -> (usize, usize, usize) {
        (v[0], v[1], v[2])
    }
}

impl ConvSpec {
    fn resolve(&self, layer: &str, rank: usize, sample: &[usize]) -> RustymlResult<ConvParts> {
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

/// nnshape family: config decoding for the border and upsampling layers.
mod nnshape {
    use crate::error::{Error, RustymlResult};
    use crate::neural_network::layers::upsampling::Interpolation;

    /// Exactly `N` `(before, after)` pairs.
    pub(super) fn pairs<const N: usize>(
        v: &[(usize, usize)],
        name: &str,
    ) -> RustymlResult<[(usize, usize); N]> {
        <[(usize, usize); N]>::try_from(v).map_err(|_| {
            Error::invalid_parameter(
                name,
                format!("expected {N} (before, after) pairs, got {v:?}"),
            )
        })
    }

    pub(super) fn interpolation(name: Option<&str>) -> RustymlResult<Interpolation> {
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

// ---- pooling family -------------------------------------------------------------------------

fn channels_last_only(data_format: &Option<String>, layer: &str) -> RustymlResult<()> {
    match data_format.as_deref() {
        None | Some("channels_last") => Ok(()),
        Some(other) => Err(Error::invalid_parameter(
            "data_format",
            format!("{layer}: only channels_last is supported, got {other:?}"),
        )),
    }
}

/// A pooling input is `[spatial.., channels]` per sample.
fn pool_sample_rank(sample: &[usize], rank: usize, layer: &str) -> RustymlResult<()> {
    if sample.len() != rank + 1 {
        return Err(Error::invalid_input(format!(
            "{layer} expects inputs with {rank} spatial axes and a channel axis (per-sample rank {}), got per-sample shape {sample:?}",
            rank + 1
        )));
    }
    Ok(())
}

/// Config of MaxPooling / AveragePooling 1D-3D.
#[derive(Deserialize)]
struct PoolSpec {
    pool_size: SpatialArg,
    #[serde(default)]
    strides: Option<SpatialArg>,
    #[serde(default)]
    padding: Option<String>,
    #[serde(default)]
    data_format: Option<String>,
}

impl PoolSpec {
    fn build<const N: usize, const MAX: bool>(
        &self,
        sample: &[usize],
    ) -> RustymlResult<Box<dyn Layer>> {
        use crate::neural_network::layers::pooling::Pooling;
        let name = Pooling::<N, MAX>::NAME;
        channels_last_only(&self.data_format, name)?;
        pool_sample_rank(sample, N, name)?;
        let padding = parse_padding(self.padding.as_deref(), name)?;
        let fixed = |arg: &SpatialArg, what: &str| -> RustymlResult<[usize; N]> {
            Ok(arg
                .per_axis(N, what, name)?
                .try_into()
                .expect("per_axis gives N entries"))
        };
        let pool = fixed(&self.pool_size, "pool_size")?;
        let strides = self
            .strides
            .as_ref()
            .map(|s| fixed(s, "strides"))
            .transpose()?;
        let mut shape = vec![1];
        shape.extend_from_slice(sample);
        Ok(Box::new(Pooling::<N, MAX>::with_config(
            pool, strides, padding, shape,
        )?))
    }
}

/// Config of GlobalMaxPooling / GlobalAveragePooling 1D-3D.
#[derive(Deserialize)]
struct GlobalPoolSpec {
    #[serde(default)]
    keepdims: bool,
    #[serde(default)]
    data_format: Option<String>,
}

impl GlobalPoolSpec {
    fn build<const N: usize, const MAX: bool>(
        &self,
        sample: &[usize],
    ) -> RustymlResult<Box<dyn Layer>> {
        use crate::neural_network::layers::pooling::GlobalPooling;
        let name = GlobalPooling::<N, MAX>::NAME;
        channels_last_only(&self.data_format, name)?;
        pool_sample_rank(sample, N, name)?;
        Ok(Box::new(
            GlobalPooling::<N, MAX>::new().with_keepdims(self.keepdims),
        ))
    }
}

// --- recurrent family (nnrnn) ---

fn default_tanh() -> Option<String> {
    Some("tanh".to_string())
}

fn default_sigmoid() -> Option<String> {
    Some("sigmoid".to_string())
}

/// Keras's SimpleRNN / LSTM / GRU config (each reads the keys it has).
#[derive(Deserialize)]
struct RecurrentSpec {
    units: usize,
    #[serde(default = "default_tanh")]
    activation: Option<String>,
    #[serde(default = "default_sigmoid")]
    recurrent_activation: Option<String>,
    #[serde(default = "default_true")]
    use_bias: bool,
    #[serde(default)]
    return_sequences: bool,
    #[serde(default)]
    return_state: bool,
    #[serde(default)]
    go_backwards: bool,
    #[serde(default = "default_true")]
    unit_forget_bias: bool,
    #[serde(default = "default_true")]
    reset_after: bool,
    #[serde(default)]
    seed: Option<u64>,
}

/// Keras's Bidirectional config: the wrapped layer's own `{class_name, config}`.
#[derive(Deserialize)]
struct BidirectionalSpec {
    layer: Box<LayerSpec>,
    #[serde(default)]
    merge_mode: Option<String>,
}

/// A layer's weight arrays in Keras's order: a `Bidirectional` keeps each array's forward
/// and backward halves side by side on the last axis, Keras lists the forward layer's arrays
/// and then the backward layer's.
fn keras_arrays(
    layer: &dyn Layer,
    mut arrays: Vec<(&'static str, ArrayD<f32>)>,
) -> Vec<(&'static str, ArrayD<f32>)> {
    if !layer.uses_bias() {
        // Keras's use_bias=False layers list no bias at all.
        arrays.retain(|(name, _)| *name != "bias");
    }
    if layer.layer_type() != "Bidirectional" {
        return arrays;
    }
    let half = |a: &ArrayD<f32>, i: usize| {
        let last = Axis(a.ndim() - 1);
        let n = a.len_of(last) / 2;
        let v = a.slice_axis(last, ndarray::Slice::from(i * n..(i + 1) * n));
        // A fresh C-order copy: `to_owned` may keep the parent's strides.
        ArrayD::from_shape_vec(v.raw_dim(), v.iter().copied().collect())
            .expect("the element count matches the shape")
    };
    (0..2)
        .flat_map(|i| arrays.iter().map(move |(name, a)| (*name, half(a, i))))
        .collect()
}

/// The inverse of [`keras_arrays`] (the given arrays already checked against its shapes);
/// `current` is the layer's own full list, which supplies an unused bias.
fn from_keras_arrays(
    layer: &dyn Layer,
    arrays: Vec<ArrayD<f32>>,
    current: &[(&'static str, ArrayD<f32>)],
) -> Vec<ArrayD<f32>> {
    let arrays: Vec<ArrayD<f32>> = if layer.layer_type() == "Bidirectional" {
        let n = arrays.len() / 2;
        (0..n)
            .map(|i| {
                let (f, b) = (&arrays[i], &arrays[n + i]);
                ndarray::concatenate(Axis(f.ndim() - 1), &[f.view(), b.view()])
                    .expect("halves checked against the layer's shapes")
            })
            .collect()
    } else {
        arrays
    };
    if layer.uses_bias() {
        return arrays;
    }
    // Both halves of a Bidirectional share the flag, so the joined list lacks just the bias.
    let mut given = arrays.into_iter();
    current
        .iter()
        .map(|(name, old)| {
            if *name == "bias" {
                old.clone()
            } else {
                given.next().expect("one given array per listed name")
            }
        })
        .collect()
}

/// One of the three cells, built from its config.
enum AnyRecurrent {
    Simple(SimpleRNN),
    Lstm(LSTM),
    Gru(GRU),
}

impl AnyRecurrent {
    fn boxed(self) -> Box<dyn Layer> {
        match self {
            AnyRecurrent::Simple(l) => Box::new(l),
            AnyRecurrent::Lstm(l) => Box::new(l),
            AnyRecurrent::Gru(l) => Box::new(l),
        }
    }

    fn bidirectional(self, mode: MergeMode) -> RustymlResult<Bidirectional> {
        match self {
            AnyRecurrent::Simple(l) => Bidirectional::new(l, mode),
            AnyRecurrent::Lstm(l) => Bidirectional::new(l, mode),
            AnyRecurrent::Gru(l) => Bidirectional::new(l, mode),
        }
    }
}

/// Builds a SimpleRNN / LSTM / GRU spec for samples `[timesteps, features]`.
fn build_recurrent(
    spec: &LayerSpec,
    sample: &[usize],
    seed: Option<u64>,
) -> RustymlResult<AnyRecurrent> {
    let (class, cfg) = match spec {
        LayerSpec::SimpleRNN(c) => ("SimpleRNN", c),
        LayerSpec::LSTM(c) => ("LSTM", c),
        LayerSpec::GRU(c) => ("GRU", c),
        _ => {
            return Err(Error::invalid_parameter(
                "layer",
                "Bidirectional wraps a SimpleRNN, LSTM or GRU layer",
            ))
        }
    };
    if sample.len() != 2 {
        return Err(Error::invalid_input(format!(
            "{class} expects inputs of shape (batch, timesteps, features), but its input has per-sample shape {sample:?}"
        )));
    }
    if cfg.return_state {
        return Err(Error::invalid_parameter(
            "return_state",
            format!("{class}: return_state=True returns several tensors, which a Sequential model cannot pass on"),
        ));
    }
    let act = parse_activation(cfg.activation.as_deref())?;
    let ract = parse_activation(cfg.recurrent_activation.as_deref())?;
    let rng_seed = cfg
        .seed
        .or(seed)
        .unwrap_or_else(|| crate::random::resolve_seed(None));
    let d = sample[1];
    Ok(match spec {
        LayerSpec::SimpleRNN(_) => AnyRecurrent::Simple(
            SimpleRNN::new(d, cfg.units, act)?
                .with_use_bias(cfg.use_bias)
                .with_random_state(rng_seed)
                .with_return_sequences(cfg.return_sequences)
                .with_go_backwards(cfg.go_backwards),
        ),
        LayerSpec::LSTM(_) => AnyRecurrent::Lstm(
            LSTM::new(d, cfg.units, act)?
                .with_use_bias(cfg.use_bias)
                .with_random_state(rng_seed)
                .with_unit_forget_bias(cfg.unit_forget_bias)
                .with_return_sequences(cfg.return_sequences)
                .with_go_backwards(cfg.go_backwards)
                .with_recurrent_activation(ract)?,
        ),
        _ => AnyRecurrent::Gru(
            GRU::new(d, cfg.units, act)?
                .with_reset_after(cfg.reset_after)
                .with_use_bias(cfg.use_bias)
                .with_random_state(rng_seed)
                .with_return_sequences(cfg.return_sequences)
                .with_go_backwards(cfg.go_backwards)
                .with_recurrent_activation(ract)?,
        ),
    })
}

use crate::neural_network::losses::ProbabilityClamp;
use crate::neural_network::optimizers::{
    AdamEpsilon, DecayCoupling, DecayScope, EpsilonPlacement, GradientClip, WeightDecayRule,
};

/// How an optimizer spec's weight decay applies. Keras's rule is the default, so that files
/// saved before the field existed load with the door's semantics.
#[derive(Deserialize, Clone, Copy, Default)]
#[serde(rename_all = "snake_case")]
enum WeightDecayRuleSpec {
    /// Keras 3: `p -= p * wd * lr` on every trainable variable before the update.
    #[default]
    Decoupled,
    /// scikit-learn's MLP `alpha`: `g + wd * p` on the kernels only.
    CoupledL2Kernels,
}

impl WeightDecayRuleSpec {
    fn rule(self) -> WeightDecayRule {
        match self {
            Self::Decoupled => {
                WeightDecayRule::new(DecayCoupling::Decoupled, DecayScope::AllTrainable)
            }
            Self::CoupledL2Kernels => {
                WeightDecayRule::new(DecayCoupling::CoupledL2, DecayScope::KernelsOnly)
            }
        }
    }
}

/// Keras's clipping arguments and the decay rule, common to every optimizer spec. Fields
/// added after the first release default so that older saved files still load.
#[derive(Deserialize)]
struct CommonSpec {
    learning_rate: f32,
    #[serde(default)]
    weight_decay: f32,
    #[serde(default)]
    global_clipnorm: Option<f32>,
    #[serde(default)]
    clipnorm: Option<f32>,
    #[serde(default)]
    clipvalue: Option<f32>,
    #[serde(default)]
    weight_decay_rule: WeightDecayRuleSpec,
}

impl CommonSpec {
    /// The per-variable clip, refusing more than one of Keras's three clipping arguments.
    fn clip(&self) -> RustymlResult<Option<GradientClip>> {
        let set = [
            self.clipnorm.is_some(),
            self.clipvalue.is_some(),
            self.global_clipnorm.is_some(),
        ];
        if set.iter().filter(|&&s| s).count() > 1 {
            return Err(Error::invalid_parameter(
                "clipnorm",
                "only one of clipnorm, clipvalue and global_clipnorm can be set".to_string(),
            ));
        }
        Ok(match (self.clipnorm, self.clipvalue) {
            (Some(c), _) => Some(GradientClip::Norm(c)),
            (_, Some(c)) => Some(GradientClip::Value(c)),
            _ => None,
        })
    }
}

/// Keras's optimizer configs (Keras's class names), trained by Keras 3's update rules.
#[derive(Deserialize)]
#[serde(tag = "class_name", content = "config")]
#[allow(clippy::upper_case_acronyms)]
enum OptimizerSpec {
    SGD {
        #[serde(flatten)]
        common: CommonSpec,
        momentum: f32,
        nesterov: bool,
    },
    // Keras's AdamW is its Adam with a default weight decay: the door sets the same rules on
    // both, so one spec and one engine serve them.
    #[serde(alias = "AdamW")]
    Adam {
        #[serde(flatten)]
        common: CommonSpec,
        beta_1: f32,
        beta_2: f32,
        epsilon: f32,
        #[serde(default)]
        amsgrad: bool,
    },
    RMSprop {
        #[serde(flatten)]
        common: CommonSpec,
        rho: f32,
        epsilon: f32,
        #[serde(default)]
        momentum: f32,
        #[serde(default)]
        centered: bool,
    },
    Adagrad {
        #[serde(flatten)]
        common: CommonSpec,
        epsilon: f32,
        /// Keras's default; files saved before the field existed had accumulators from 0
        /// and now start at Keras's 0.1.
        #[serde(default = "keras_initial_accumulator")]
        initial_accumulator_value: f32,
    },
}

fn keras_initial_accumulator() -> f32 {
    0.1
}

/// Every optimizer's options that Keras shares: the per-variable and global clips.
fn finish<O: Optimizer + 'static>(
    opt: O,
    common: &CommonSpec,
    with_clip: impl FnOnce(O, GradientClip) -> RustymlResult<O>,
    with_global: impl FnOnce(O, f32) -> RustymlResult<O>,
) -> RustymlResult<Box<dyn Optimizer>> {
    let opt = match common.clip()? {
        Some(c) => with_clip(opt, c)?,
        None => opt,
    };
    Ok(match common.global_clipnorm {
        Some(c) => Box::new(with_global(opt, c)?),
        None => Box::new(opt),
    })
}

/// The constructors refuse a learning rate of 0 (RustyML 0.15's guard); Keras accepts it, so
/// each optimizer is built at this rate and then given the spec's through
/// `with_learning_rate`, which accepts any finite rate >= 0.
const PROVISIONAL_LR: f32 = 1.0;

impl OptimizerSpec {
    fn build(&self) -> RustymlResult<Box<dyn Optimizer>> {
        match self {
            OptimizerSpec::SGD {
                common,
                momentum,
                nesterov,
            } => finish(
                SGD::new(PROVISIONAL_LR, *momentum, *nesterov, common.weight_decay)?
                    .with_learning_rate(common.learning_rate)?
                    .with_weight_decay_rule(common.weight_decay_rule.rule()),
                common,
                SGD::with_gradient_clip,
                SGD::with_global_clipnorm,
            ),
            OptimizerSpec::Adam {
                common,
                beta_1,
                beta_2,
                epsilon,
                amsgrad,
            } => finish(
                Adam::new(
                    PROVISIONAL_LR,
                    *beta_1,
                    *beta_2,
                    *epsilon,
                    common.weight_decay,
                )?
                .with_learning_rate(common.learning_rate)?
                .with_weight_decay_rule(common.weight_decay_rule.rule())
                .with_epsilon_placement(AdamEpsilon::UncorrectedRoot)
                .with_amsgrad(*amsgrad),
                common,
                Adam::with_gradient_clip,
                Adam::with_global_clipnorm,
            ),
            OptimizerSpec::RMSprop {
                common,
                rho,
                epsilon,
                momentum,
                centered,
            } => finish(
                RMSprop::new(PROVISIONAL_LR, *rho, *epsilon, common.weight_decay)?
                    .with_learning_rate(common.learning_rate)?
                    .with_weight_decay_rule(common.weight_decay_rule.rule())
                    .with_epsilon_placement(EpsilonPlacement::InsideRoot)
                    .with_momentum(*momentum)?
                    .with_centered(*centered),
                common,
                RMSprop::with_gradient_clip,
                RMSprop::with_global_clipnorm,
            ),
            OptimizerSpec::Adagrad {
                common,
                epsilon,
                initial_accumulator_value,
            } => finish(
                AdaGrad::new(PROVISIONAL_LR, *epsilon, common.weight_decay)?
                    .with_learning_rate(common.learning_rate)?
                    .with_weight_decay_rule(common.weight_decay_rule.rule())
                    .with_epsilon_placement(EpsilonPlacement::InsideRoot)
                    .with_initial_accumulator(*initial_accumulator_value)?,
                common,
                AdaGrad::with_gradient_clip,
                AdaGrad::with_global_clipnorm,
            ),
        }
    }
}

#[derive(Deserialize)]
struct LossSpec {
    name: String,
    #[serde(default)]
    from_logits: bool,
}

impl LossSpec {
    fn build(&self) -> RustymlResult<Box<dyn Loss>> {
        Ok(match self.name.as_str() {
            "mean_squared_error" => Box::new(MeanSquaredError::new()),
            "mean_absolute_error" => Box::new(MeanAbsoluteError::new()),
            // Keras clamps probabilities in float32 (upper bound 1 - 2^-23).
            "binary_crossentropy" => Box::new(
                BinaryCrossEntropy::configured()
                    .with_from_logits(self.from_logits)
                    .with_probability_clamp(ProbabilityClamp::Float32),
            ),
            "categorical_crossentropy" => Box::new(CategoricalCrossEntropy::new(self.from_logits)),
            "sparse_categorical_crossentropy" => {
                Box::new(SparseCategoricalCrossEntropy::new(self.from_logits))
            }
            other => {
                return Err(Error::invalid_parameter(
                    "loss",
                    format!("unknown loss {other:?}"),
                ))
            }
        })
    }
}

fn json_error(what: &str, e: serde_json::Error) -> PyErr {
    PyValueError::new_err(format!("invalid {what} config: {e}"))
}

/// Names of the weight arrays whose Rust shape carries leading unit axes that Keras omits
/// (a Dense bias is `[1, units]` here, `(units,)` in Keras).
fn keras_drops_leading_ones(name: &str) -> bool {
    matches!(
        name,
        "bias" | "gamma" | "beta" | "running_mean" | "running_var"
    )
}

fn to_keras_shape(name: &str, mut a: ArrayD<f32>) -> ArrayD<f32> {
    if !keras_drops_leading_ones(name) {
        return a;
    }
    // Removing an axis is a view change whatever the memory order (a reshape would need C
    // order); at least one axis stays.
    while a.ndim() > 1 && a.shape()[0] == 1 {
        a = a.index_axis_move(Axis(0), 0);
    }
    a
}

struct State {
    model: Sequential,
    /// Per-sample input shape and each layer's per-sample output shape.
    input_shape: Vec<usize>,
    output_shapes: Vec<Vec<usize>>,
    shuffle_seed: u64,
    compiled: bool,
}

impl State {
    /// Refuses a training batch whose activations could not fit: training keeps every
    /// layer's output for the backward pass plus one gradient of the widest, for the whole
    /// batch (inference runs in chunks and needs none of this). The bound is half the
    /// machine's physical memory; the message names the widest layer, the bytes and the
    /// largest batch_size that fits.
    fn check_training_batch(&self, batch_size: usize) -> PyResult<()> {
        use crate::neural_network::layers::size_guard::{describe_bytes, physical_memory_bytes};
        let per_sample = |s: &[usize]| s.iter().fold(4u128, |a, &d| a.saturating_mul(d as u128));
        let mut total = per_sample(&self.input_shape);
        let mut widest = (0u128, 0usize);
        for (i, shape) in self.output_shapes.iter().enumerate() {
            let b = per_sample(shape);
            total = total.saturating_add(b);
            if b > widest.0 {
                widest = (b, i);
            }
        }
        // outputs kept for backward + the widest gradient in flight
        let per_sample_total = total.saturating_add(widest.0.saturating_mul(2));
        let need = per_sample_total.saturating_mul(batch_size as u128);
        let limit = (physical_memory_bytes() / 2) as u128;
        if need <= limit {
            return Ok(());
        }
        let fits = (limit / per_sample_total.max(1)).min(usize::MAX as u128);
        let layer = &self.model.layers()[widest.1];
        Err(PyValueError::new_err(format!(
            "training with batch_size={batch_size} needs about {} of activations and gradients per batch \
             (layer {} ({}) alone outputs {} per sample), more than half of this machine's memory ({}); \
             use a smaller batch_size{}",
            describe_bytes(need),
            widest.1,
            layer.layer_type(),
            describe_bytes(widest.0),
            describe_bytes(physical_memory_bytes() as u128),
            if fits >= 1 {
                format!(" (at most {fits})")
            } else {
                " or smaller layers: not even one sample fits".to_string()
            }
        )))
    }
}

/// The rows `idx` of `a` as a new tensor: one copy of each row's contiguous run when `a` is
/// C-ordered (what the Python front hands in), else ndarray's general `select`.
fn gather(a: &ndarray::ArrayViewD<'_, f32>, idx: &[usize]) -> Tensor {
    let Some(data) = a.as_slice() else {
        return a.select(Axis(0), idx);
    };
    let row = a.shape()[1..].iter().product::<usize>();
    let mut out = Vec::with_capacity(idx.len() * row);
    for &i in idx {
        out.extend_from_slice(&data[i * row..(i + 1) * row]);
    }
    let mut shape = a.shape().to_vec();
    shape[0] = idx.len();
    Tensor::from_shape_vec(IxDyn(&shape), out).expect("rows of the source's shape")
}

/// One network: the Rust `Sequential` plus the shapes the Python front asks about.
#[pyclass(
    name = "NativeSequential",
    module = "rustyml._native.neural_network",
    frozen
)]
pub(crate) struct PySequential {
    state: Mutex<State>,
    /// Held by a training call for its whole length (the state lock is held only during each
    /// step, never while Python runs): a second training call from another thread waits its
    /// turn, one from the training thread itself (a metric or callback) is refused.
    train_gate: Mutex<()>,
    trainer: Mutex<Option<std::thread::ThreadId>>,
}

/// The weights and optimizer state of a model at one moment (see `snapshot`).
#[pyclass(
    name = "NativeSnapshot",
    module = "rustyml._native.neural_network",
    frozen
)]
pub(crate) struct PySnapshot {
    inner: TrainingSnapshot,
}

/// Marks the thread as the model's trainer until dropped.
struct Training<'a> {
    _gate: std::sync::MutexGuard<'a, ()>,
    trainer: &'a Mutex<Option<std::thread::ThreadId>>,
}

impl Drop for Training<'_> {
    fn drop(&mut self) {
        *self
            .trainer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    }
}

impl PySequential {
    /// The model's state, for one call. The lock is waited for with the GIL released: a
    /// thread holding it may need the GIL to finish (it reattaches after its own detached
    /// work), so waiting for it while holding the GIL would deadlock the two.
    fn lock(&self, py: Python<'_>) -> PyResult<std::sync::MutexGuard<'_, State>> {
        let poisoned = || PyValueError::new_err("the model was poisoned by an earlier failure");
        loop {
            match self.state.try_lock() {
                Ok(guard) => return Ok(guard),
                Err(std::sync::TryLockError::Poisoned(_)) => return Err(poisoned()),
                Err(std::sync::TryLockError::WouldBlock) => {
                    // wait until the holder is done, then try again with the GIL back
                    py.detach(|| drop(self.state.lock()));
                }
            }
        }
    }

    /// The right to train, for one training call: refused (RuntimeError) when this thread
    /// is already training the model (a metric or callback calling back into it), waited
    /// for (GIL released) when another thread is.
    fn begin_training(&self, py: Python<'_>) -> PyResult<Training<'_>> {
        let me = std::thread::current().id();
        let trainer = || {
            self.trainer
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if *trainer() == Some(me) {
            return Err(PyRuntimeError::new_err(
                "this model is already training on this thread: fit or train_on_batch cannot \
                 be called from inside its own training loop (a metric or callback)",
            ));
        }
        loop {
            match self.train_gate.try_lock() {
                Ok(gate) => {
                    *trainer() = Some(me);
                    return Ok(Training {
                        _gate: gate,
                        trainer: &self.trainer,
                    });
                }
                Err(std::sync::TryLockError::Poisoned(p)) => {
                    drop(p.into_inner());
                    self.train_gate.clear_poison();
                }
                Err(std::sync::TryLockError::WouldBlock) => {
                    py.detach(|| drop(self.train_gate.lock()));
                }
            }
        }
    }
}

fn check_batch(batch_size: usize) -> PyResult<usize> {
    if batch_size == 0 {
        return Err(PyValueError::new_err("batch_size must be at least 1"));
    }
    Ok(batch_size)
}

/// A weight array must hold finite values (NaN or infinity reaches every prediction; a
/// float64 value beyond float32's range arrives here as infinity), and a BatchNormalization
/// moving variance must not be negative (its square root would be NaN).
fn check_weight_values(
    index: usize,
    layer: &str,
    name: &str,
    a: &ndarray::ArrayD<f32>,
) -> PyResult<()> {
    if let Some(v) = a.iter().find(|v| !v.is_finite()) {
        return Err(PyValueError::new_err(format!(
            "set_weights: layer {index} ({layer}) {name} holds {v} (weights must be finite; \
             a float64 value beyond float32's range of ±3.4e38 becomes infinity)"
        )));
    }
    if name == "running_var" {
        if let Some(v) = a.iter().find(|v| **v < 0.0) {
            return Err(PyValueError::new_err(format!(
                "set_weights: layer {index} ({layer}) moving variance (running_var) holds the negative value {v}; a variance must be >= 0"
            )));
        }
    }
    Ok(())
}

#[pymethods]
impl PySequential {
    /// Builds every layer for samples of `input_shape`; a layer that does not fit its
    /// predecessor is refused, naming both.
    #[new]
    #[pyo3(signature = (layers_json, input_shape, seed=None))]
    fn new(layers_json: &str, input_shape: Vec<usize>, seed: Option<u64>) -> PyResult<Self> {
        let specs: Vec<serde_json::Value> =
            serde_json::from_str(layers_json).map_err(|e| json_error("layers", e))?;
        if specs.is_empty() {
            return Err(PyValueError::new_err("the model has no layers"));
        }
        let shuffle_seed = crate::random::resolve_seed(seed);
        let mut model = Sequential::new_with_seed(shuffle_seed);
        let mut shape = input_shape.clone();
        let mut output_shapes = Vec::with_capacity(specs.len());
        let mut previous = String::from("the input");
        let mut total_params: u128 = 0;
        for (i, raw) in specs.into_iter().enumerate() {
            let class = raw
                .get("class_name")
                .and_then(|v| v.as_str())
                .unwrap_or("?")
                .to_string();
            let spec: LayerSpec = serde_json::from_value(raw)
                .map_err(|e| json_error(&format!("layer {i} ({class})"), e))?;
            // Each layer's own stream: the model seed and the position, so adding a layer
            // does not reshuffle the others' initialisation.
            let layer_seed = seed.map(|s| {
                s.wrapping_mul(0x9E37_79B9_7F4A_7C15)
                    .wrapping_add(i as u64 + 1)
            });
            let fail = |e: Error| {
                PyValueError::new_err(format!(
                    "layer {i} ({class}) does not fit {previous} of per-sample shape {shape:?}: {}",
                    e
                ))
            };
            // the probe (one sample of the layer's input) is checked before it is allocated
            let probe_shape = [&[1usize][..], &shape[..]].concat();
            crate::neural_network::layers::size_guard::check_f32_alloc(
                &class,
                "one sample's input",
                &probe_shape,
            )
            .map_err(fail)?;
            let layer = spec.build(&shape, layer_seed).map_err(fail)?;
            // Each layer's weights passed the one-array bound; together they must too.
            {
                use crate::neural_network::layers::size_guard::{array_byte_limit, describe_bytes};
                use crate::neural_network::layers::TrainingParameters;
                let own = match layer.param_count() {
                    TrainingParameters::Trainable(n) | TrainingParameters::NonTrainable(n) => n,
                    TrainingParameters::NoTrainable => 0,
                };
                total_params = total_params.saturating_add(own as u128);
                if total_params * 4 > array_byte_limit() as u128 {
                    return Err(PyValueError::new_err(format!(
                        "layer {i} ({class}): the model's weights would need {}, more than half of this machine's memory; use smaller layers",
                        describe_bytes(total_params * 4)
                    )));
                }
            }
            let probe = ArrayD::<f32>::zeros(IxDyn(&probe_shape));
            let out = layer.predict(&probe).map_err(fail)?;
            shape = out.shape()[1..].to_vec();
            output_shapes.push(shape.clone());
            model.add(layer);
            previous = format!("layer {i} ({class})");
        }
        Ok(Self {
            state: Mutex::new(State {
                model,
                input_shape,
                output_shapes,
                shuffle_seed,
                compiled: false,
            }),
            train_gate: Mutex::new(()),
            trainer: Mutex::new(None),
        })
    }

    /// Sets the optimizer and the loss from their configs.
    fn compile(&self, py: Python<'_>, optimizer_json: &str, loss_json: &str) -> PyResult<()> {
        let opt: OptimizerSpec =
            serde_json::from_str(optimizer_json).map_err(|e| json_error("optimizer", e))?;
        let loss: LossSpec = serde_json::from_str(loss_json).map_err(|e| json_error("loss", e))?;
        let opt = opt.build().map_err(to_py_err)?;
        let loss = loss.build().map_err(to_py_err)?;
        let mut st = self.lock(py)?;
        st.model.compile(opt, loss);
        st.compiled = true;
        Ok(())
    }

    /// The per-sample output shape of the last layer.
    fn output_shape(&self, py: Python<'_>) -> PyResult<Vec<usize>> {
        Ok(self
            .lock(py)?
            .output_shapes
            .last()
            .cloned()
            .unwrap_or_default())
    }

    /// `(layer type, kind, per-sample output shape, parameter count)` per layer.
    #[allow(clippy::type_complexity)]
    fn layer_summaries(
        &self,
        py: Python<'_>,
    ) -> PyResult<Vec<(String, String, Vec<usize>, usize)>> {
        let mut st = self.lock(py)?;
        let shapes = st.output_shapes.clone();
        let layers = st.model.layers_mut();
        Ok(layers
            .iter_mut()
            .zip(shapes)
            .map(|(layer, shape)| {
                // Keras counts every weight it lists (BatchNormalization's moving statistics
                // too), trained yet or not.
                let params: usize =
                    keras_arrays(layer.as_ref(), layer.get_weights().named_arrays())
                        .iter()
                        .map(|(_, a)| a.len())
                        .sum();
                let kind = layer.layer_type().to_string();
                (kind.to_lowercase(), kind, shape, params)
            })
            .collect())
    }

    /// One epoch of mini-batch training; returns the sample-weighted mean loss. `progress`
    /// is called as `progress(batches_done, mean_loss_so_far)` after every batch, and
    /// `batch_output` (for Keras's running training metrics) as `batch_output(output, indices)`
    /// with the batch's training-mode output and the samples it holds, so no epoch-long copy
    /// of the outputs is kept.
    ///
    /// The model's lock is held during each step only, not while Python runs: the callbacks
    /// may use the model (predict, get_weights, set_weights, ...). A loss or weight that
    /// becomes NaN or infinite at any batch (the last included) is an error; with `snapshot`
    /// the model's weights and optimizer state are first put back to it.
    #[pyo3(signature = (x, y, batch_size, shuffle, epoch, progress=None, batch_output=None, snapshot=None))]
    #[allow(clippy::too_many_arguments)]
    fn train_epoch(
        &self,
        py: Python<'_>,
        x: PyReadonlyArrayDyn<'_, f32>,
        y: PyReadonlyArrayDyn<'_, f32>,
        batch_size: usize,
        shuffle: bool,
        epoch: u64,
        progress: Option<Py<PyAny>>,
        batch_output: Option<Py<PyAny>>,
        snapshot: Option<PyRef<'_, PySnapshot>>,
    ) -> PyResult<f32> {
        let batch_size = check_batch(batch_size)?;
        let (xv, yv) = (x.as_array(), y.as_array());
        let n = xv.shape()[0];
        if yv.shape()[0] != n {
            return Err(PyValueError::new_err(format!(
                "x and y have different numbers of samples ({n} and {})",
                yv.shape()[0]
            )));
        }
        let _training = self.begin_training(py)?;
        let shuffle_seed = {
            let st = self.lock(py)?;
            if !st.compiled {
                return Err(PyValueError::new_err(
                    "the model must be compiled before training",
                ));
            }
            st.check_training_batch(batch_size.min(n.max(1)))?;
            st.shuffle_seed
        };
        let mut order: Vec<usize> = (0..n).collect();
        if shuffle {
            // Depends on the seed and the epoch only: the same order at any thread count.
            let mut rng =
                ChaCha8Rng::seed_from_u64(shuffle_seed ^ epoch.wrapping_mul(0xA076_1D64_78BD_642F));
            order.shuffle(&mut rng);
        }
        let snapshot = snapshot.as_deref().map(|s| &s.inner);
        let mut total = 0.0f64;
        let mut seen = 0usize;
        for (b, idx) in order.chunks(batch_size).enumerate() {
            let out = {
                let mut st = self.lock(py)?;
                let model = &mut st.model;
                crate::python::parallel::detach(py, || -> PyResult<Tensor> {
                    let (xb, yb) = (gather(&xv, idx), gather(&yv, idx));
                    let (loss, out) = model.train_batch_with_output(xb, &yb).map_err(to_py_err)?;
                    let problem = if !loss.is_finite() {
                        format!("the loss became {loss} at batch {b}")
                    } else if !model.weights_finite() {
                        format!(
                            "the weights became NaN or infinite at batch {b} (the step diverged)"
                        )
                    } else {
                        total += f64::from(loss) * idx.len() as f64;
                        seen += idx.len();
                        return Ok(out);
                    };
                    let restored = match snapshot {
                        Some(snap) => {
                            model.restore(snap).map_err(to_py_err)?;
                            "; the weights and optimizer state are back to their values before \
                             this call"
                        }
                        None => "",
                    };
                    Err(PyValueError::new_err(format!(
                        "{problem}: lower the learning rate or scale the inputs{restored}"
                    )))
                })?
            };
            // the lock is released: Python code below may use the model
            py.check_signals()?;
            if let Some(cb) = &batch_output {
                let indices = numpy::PyArray1::from_slice(py, idx);
                cb.call1(py, (out.into_pyarray(py), indices))?;
            }
            if let Some(cb) = &progress {
                cb.call1(py, (b + 1, (total / seen as f64) as f32))?;
            }
        }
        Ok((total / seen.max(1) as f64) as f32)
    }

    /// The model's weights and optimizer state now; `None` when the optimizer cannot copy
    /// its state.
    fn snapshot(&self, py: Python<'_>) -> PyResult<Option<PySnapshot>> {
        Ok(self
            .lock(py)?
            .model
            .snapshot()
            .map(|inner| PySnapshot { inner }))
    }

    /// Puts back the weights and optimizer state of `snapshot`.
    fn restore(&self, py: Python<'_>, snapshot: PyRef<'_, PySnapshot>) -> PyResult<()> {
        self.lock(py)?
            .model
            .restore(&snapshot.inner)
            .map_err(to_py_err)
    }

    /// Which layers get optimizer updates (Keras's `trainable`), one flag per layer.
    fn set_trainable(&self, py: Python<'_>, flags: Vec<bool>) -> PyResult<()> {
        let mut st = self.lock(py)?;
        if flags.len() != st.model.layers().len() {
            return Err(PyValueError::new_err(format!(
                "set_trainable: the model has {} layers, got {} flags",
                st.model.layers().len(),
                flags.len()
            )));
        }
        for (i, t) in flags.into_iter().enumerate() {
            st.model.set_layer_trainable(i, t).map_err(to_py_err)?;
        }
        Ok(())
    }

    fn evaluate(
        &self,
        py: Python<'_>,
        x: PyReadonlyArrayDyn<'_, f32>,
        y: PyReadonlyArrayDyn<'_, f32>,
        batch_size: usize,
    ) -> PyResult<f32> {
        let batch_size = check_batch(batch_size)?;
        let (xv, yv) = (x.as_array(), y.as_array());
        let n = xv.shape()[0];
        let st = self.lock(py)?;
        if !st.compiled {
            return Err(PyValueError::new_err(
                "the model must be compiled before evaluate",
            ));
        }
        crate::python::parallel::detach(py, || {
            let mut total = 0.0f64;
            for start in (0..n).step_by(batch_size) {
                let end = (start + batch_size).min(n);
                // the caller's rows, read in place
                let xb = xv.slice_axis(Axis(0), (start..end).into());
                let yb = yv.slice_axis(Axis(0), (start..end).into()).to_owned();
                total += f64::from(st.model.evaluate_view(xb, &yb)?) * (end - start) as f64;
            }
            Ok((total / n.max(1) as f64) as f32)
        })
        .map_err(to_py_err)
    }

    /// Inference outputs, in batches.
    fn predict<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArrayDyn<'py, f32>,
        batch_size: usize,
    ) -> PyResult<Bound<'py, PyArrayDyn<f32>>> {
        let batch_size = check_batch(batch_size)?;
        let xv = x.as_array();
        let n = xv.shape()[0];
        let st = self.lock(py)?;
        let out = crate::python::parallel::detach(py, || -> RustymlResult<Tensor> {
            let mut parts = Vec::new();
            for start in (0..n).step_by(batch_size) {
                let end = (start + batch_size).min(n);
                // the caller's rows, read in place
                let xb = xv.slice_axis(Axis(0), (start..end).into());
                parts.push(st.model.predict_view(xb)?);
            }
            if parts.len() == 1 {
                return Ok(parts.pop().expect("one part"));
            }
            let views: Vec<_> = parts.iter().map(|p| p.view()).collect();
            ndarray::concatenate(Axis(0), &views)
                .map_err(|e| Error::computation(format!("joining batch outputs: {e}")))
        })
        .map_err(to_py_err)?;
        Ok(out.into_pyarray(py))
    }

    /// The first layer whose inference output holds NaN or infinity for the samples `x`
    /// (index and type), or `None`: how `predict` names the layer where finite input went
    /// non-finite. Runs layer by layer, so the caller passes only the offending samples.
    fn first_non_finite_layer(
        &self,
        py: Python<'_>,
        x: PyReadonlyArrayDyn<'_, f32>,
    ) -> PyResult<Option<(usize, String)>> {
        let st = self.lock(py)?;
        let mut t: Tensor = x.as_array().to_owned();
        for (i, layer) in st.model.layers().iter().enumerate() {
            t = layer.predict(&t).map_err(to_py_err)?;
            if t.iter().any(|v| !v.is_finite()) {
                return Ok(Some((i, layer.layer_type().to_string())));
            }
        }
        Ok(None)
    }

    /// Every layer's weights in Keras's order and shapes.
    fn get_weights<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyArrayDyn<f32>>>> {
        let mut st = self.lock(py)?;
        let mut out = Vec::new();
        for layer in st.model.layers_mut().iter() {
            for (name, a) in keras_arrays(layer.as_ref(), layer.get_weights().named_arrays()) {
                out.push(to_keras_shape(name, a).into_pyarray(py));
            }
        }
        Ok(out)
    }

    /// The names of each layer's weight arrays, in `get_weights` order (e.g. `kernel`... as
    /// this crate names them: `weight`, `bias`, `running_mean`).
    fn weight_names(&self, py: Python<'_>) -> PyResult<Vec<Vec<String>>> {
        let st = self.lock(py)?;
        Ok(st
            .model
            .layers()
            .iter()
            .map(|layer| {
                keras_arrays(layer.as_ref(), layer.get_weights().named_arrays())
                    .into_iter()
                    .map(|(name, _)| name.to_string())
                    .collect()
            })
            .collect())
    }

    /// Loads weights given in Keras's order and shapes; all are checked before any is set.
    fn set_weights(
        &self,
        py: Python<'_>,
        weights: Vec<PyReadonlyArrayDyn<'_, f32>>,
    ) -> PyResult<()> {
        let mut st = self.lock(py)?;
        let mut given = weights.iter().map(|w| w.as_array().to_owned());
        let mut staged = Vec::new();
        let total_given = weights.len();
        let mut expected_total = 0;
        for (i, layer) in st.model.layers_mut().iter().enumerate() {
            let current = layer.get_weights();
            let names = keras_arrays(layer.as_ref(), current.named_arrays());
            expected_total += names.len();
            if names.is_empty() {
                continue;
            }
            let mut arrays = Vec::with_capacity(names.len());
            for (name, old) in &names {
                let Some(a) = given.next() else {
                    return Err(PyValueError::new_err(format!(
                        "set_weights: expected more weight arrays (layer {i} {} needs {name})",
                        layer.layer_type()
                    )));
                };
                let keras_shape = to_keras_shape(name, old.clone()).shape().to_vec();
                if a.shape() != old.shape() && a.shape() != keras_shape.as_slice() {
                    return Err(PyValueError::new_err(format!(
                        "set_weights: layer {i} ({}) {name} must have shape {:?}, got {:?}",
                        layer.layer_type(),
                        keras_shape,
                        a.shape()
                    )));
                }
                check_weight_values(i, layer.layer_type(), name, &a)?;
                arrays.push(a);
            }
            let arrays = from_keras_arrays(layer.as_ref(), arrays, &current.named_arrays());
            staged.push((i, current.with_arrays(arrays).map_err(to_py_err)?));
        }
        if total_given != expected_total {
            return Err(PyValueError::new_err(format!(
                "set_weights: the model has {expected_total} weight arrays, got {total_given}"
            )));
        }
        let layers = st.model.layers_mut();
        for (i, w) in staged {
            layers[i].apply_weights(&w).map_err(to_py_err)?;
        }
        Ok(())
    }

    #[getter]
    fn learning_rate(&self, py: Python<'_>) -> PyResult<Option<f32>> {
        Ok(self.lock(py)?.model.learning_rate())
    }

    #[setter]
    fn set_learning_rate(&self, py: Python<'_>, value: f32) -> PyResult<()> {
        // 0 is a learning rate Keras accepts (warm-up schedules start there)
        if !(value.is_finite() && value >= 0.0) {
            return Err(PyValueError::new_err(format!(
                "learning_rate must be a finite number >= 0, got {value}"
            )));
        }
        self.lock(py)?.model.set_learning_rate(value);
        Ok(())
    }

    /// Per-sample input shape the model was built for.
    fn input_shape(&self, py: Python<'_>) -> PyResult<Vec<usize>> {
        Ok(self.lock(py)?.input_shape.clone())
    }
}

/// The metadata key holding the file's digest.
const DIGEST_KEY: &str = "rustyml.sha256";

/// SHA-256 over the metadata (every key but [`DIGEST_KEY`], sorted) and the tensors (sorted
/// by name: name, dtype, shape, bytes), each field length-prefixed so no two different
/// files hash the same byte stream. safetensors has no checksum of its own: without this a
/// flipped byte in a weight loads silently and changes every prediction.
fn file_digest<'a>(
    metadata: &HashMap<String, String>,
    tensors: impl IntoIterator<Item = (&'a str, String, &'a [usize], &'a [u8])>,
) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    let mut field = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field(b"rustyml.safetensors.sha256/1");
    let mut keys: Vec<&String> = metadata.keys().filter(|k| *k != DIGEST_KEY).collect();
    keys.sort();
    field(&(keys.len() as u64).to_le_bytes());
    for k in keys {
        field(k.as_bytes());
        field(metadata[k].as_bytes());
    }
    let mut tensors: Vec<_> = tensors.into_iter().collect();
    tensors.sort_by(|a, b| a.0.cmp(b.0));
    field(&(tensors.len() as u64).to_le_bytes());
    for (name, dtype, shape, bytes) in tensors {
        field(name.as_bytes());
        field(dtype.as_bytes());
        let dims: Vec<u8> = shape
            .iter()
            .flat_map(|d| (*d as u64).to_le_bytes())
            .collect();
        field(&dims);
        field(bytes);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Where a save to `path` writes: the final target of a chain of symlinks (so the link is
/// kept and its target updated), refused when that is not a regular file (a FIFO, a device,
/// a directory) or cannot be resolved.
fn save_target(path: &std::path::Path) -> PyResult<std::path::PathBuf> {
    let mut target = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&target) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(target),
            Err(e) => {
                return Err(PyOSError::new_err(format!(
                    "cannot write {}: {e}",
                    path.display()
                )))
            }
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&target).map_err(|e| {
                    PyOSError::new_err(format!("cannot write {}: {e}", path.display()))
                })?;
                target = match target.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            Ok(m) if m.is_file() => return Ok(target),
            Ok(m) => {
                let kind = if m.is_dir() {
                    "a directory"
                } else {
                    "not a regular file (a FIFO, socket or device)"
                };
                return Err(PyValueError::new_err(format!(
                    "cannot save to {}: {} is {kind}; give the path of a regular file",
                    path.display(),
                    target.display()
                )));
            }
        }
    }
    Err(PyOSError::new_err(format!(
        "cannot write {}: too many levels of symbolic links",
        path.display()
    )))
}

/// Writes `bytes` to `target` atomically: a temporary file in the same directory, flushed to
/// disk, then renamed over `target`, so a failed save leaves any earlier file whole.
fn write_atomically(
    path: &std::path::Path,
    target: &std::path::Path,
    bytes: &[u8],
) -> PyResult<()> {
    use std::io::Write;
    let err =
        |e: std::io::Error| PyOSError::new_err(format!("cannot write {}: {e}", path.display()));
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".to_string());
    let mut tmp = None;
    for attempt in 0..100u32 {
        let candidate = dir.join(format!(".{name}.{}.{attempt}.tmp", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(f) => {
                tmp = Some((candidate, f));
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(err(e)),
        }
    }
    let Some((tmp_path, mut file)) = tmp else {
        return Err(PyOSError::new_err(format!(
            "cannot write {}: no free temporary name in {}",
            path.display(),
            dir.display()
        )));
    };
    let result = (|| {
        // keep the permissions of the file being replaced
        if let Ok(m) = std::fs::metadata(target) {
            file.set_permissions(m.permissions())?;
        }
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp_path, target)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp_path);
        return Err(err(e));
    }
    Ok(())
}

/// Writes `arrays` (named `weight_000`, `weight_001`, ... to keep their order) and `metadata`
/// as a safetensors file that any safetensors reader can open, with the SHA-256 of both in
/// the metadata (key `rustyml.sha256`). `path` may be a symlink (its target is written); a
/// FIFO, device or directory there is refused; the file is replaced atomically.
#[pyfunction]
fn save_safetensors(
    py: Python<'_>,
    path: std::path::PathBuf,
    mut metadata: HashMap<String, String>,
    arrays: Vec<PyReadonlyArrayDyn<'_, f32>>,
) -> PyResult<()> {
    let owned: Vec<(String, Vec<usize>, Vec<u8>)> = arrays
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let bytes: Vec<u8> = a.as_array().iter().flat_map(|v| v.to_le_bytes()).collect();
            (format!("weight_{i:04}"), a.shape().to_vec(), bytes)
        })
        .collect();
    py.detach(|| {
        let digest = file_digest(
            &metadata,
            owned.iter().map(|(n, s, b)| {
                (
                    n.as_str(),
                    format!("{:?}", safetensors::Dtype::F32),
                    s.as_slice(),
                    b.as_slice(),
                )
            }),
        );
        metadata.insert(DIGEST_KEY.to_string(), digest);
        let views = owned
            .iter()
            .map(|(name, shape, bytes)| {
                safetensors::tensor::TensorView::new(safetensors::Dtype::F32, shape.clone(), bytes)
                    .map(|v| (name.clone(), v))
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| PyValueError::new_err(format!("cannot encode weights: {e}")))?;
        let bytes = safetensors::tensor::serialize(views, Some(metadata))
            .map_err(|e| PyValueError::new_err(format!("cannot encode weights: {e}")))?;
        let target = save_target(&path)?;
        write_atomically(&path, &target, &bytes)
    })
}

/// Reads a file written by [`save_safetensors`]: its metadata, its f32 arrays in order, and
/// whether it carried a digest (files written before digests were stored do not; the caller
/// warns that they cannot be verified). A truncated or altered file (a digest mismatch), or
/// a tensor holding NaN or infinity, is a `ValueError` that says so.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn load_safetensors<'py>(
    py: Python<'py>,
    path: std::path::PathBuf,
) -> PyResult<(Bound<'py, PyDict>, Vec<Bound<'py, PyArrayDyn<f32>>>, bool)> {
    let bytes = std::fs::read(&path)
        .map_err(|e| PyOSError::new_err(format!("cannot read {}: {e}", path.display())))?;
    let bad = |e: &dyn std::fmt::Display| {
        PyValueError::new_err(format!(
            "{} is not a valid safetensors model file (truncated or altered?): {e}",
            path.display()
        ))
    };
    let (_, header) = safetensors::SafeTensors::read_metadata(&bytes).map_err(|e| bad(&e))?;
    let tensors = safetensors::SafeTensors::deserialize(&bytes).map_err(|e| bad(&e))?;
    let metadata: HashMap<String, String> = header.metadata().clone().unwrap_or_default();
    let named = tensors.tensors();
    let verified = match metadata.get(DIGEST_KEY) {
        Some(stored) => {
            let actual = file_digest(
                &metadata,
                named
                    .iter()
                    .map(|(n, v)| (n.as_str(), format!("{:?}", v.dtype()), v.shape(), v.data())),
            );
            if *stored != actual {
                return Err(bad(
                    &"its contents do not match the SHA-256 digest stored in it",
                ));
            }
            true
        }
        None => false,
    };
    let meta = PyDict::new(py);
    for (k, v) in &metadata {
        if k != DIGEST_KEY {
            meta.set_item(k, v)?;
        }
    }
    let mut named = named;
    named.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = Vec::with_capacity(named.len());
    for (name, view) in named {
        if view.dtype() != safetensors::Dtype::F32 {
            return Err(bad(&format!(
                "tensor {name} is {:?}, not F32",
                view.dtype()
            )));
        }
        let values: Vec<f32> = view
            .data()
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        // save writes finite weights only from a finite model; NaN or infinity here means a
        // damaged file, and would reach every prediction silently
        if values.iter().any(|v| !v.is_finite()) {
            return Err(bad(&format!("tensor {name} holds NaN or infinity")));
        }
        let arr = ArrayD::from_shape_vec(IxDyn(view.shape()), values).map_err(|e| bad(&e))?;
        out.push(arr.into_pyarray(py));
    }
    Ok((meta, out, verified))
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySequential>()?;
    m.add_class::<PySnapshot>()?;
    m.add_function(wrap_pyfunction!(save_safetensors, m)?)?;
    m.add_function(wrap_pyfunction!(load_safetensors, m)?)?;
    Ok(())
}
