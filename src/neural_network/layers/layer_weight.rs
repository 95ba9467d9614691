//! The weights of every layer kind, borrowed (`get_weights`) or owned (a loaded file). The
//! variant order is the file format's (postcard encodes the variant index): append, never reorder.
//! Each layer with weights implements `ApplyWeights` for its struct and `Layer::apply_weights`.

use ndarray::{Array1, Array2, Array3, Array4, Array5, ArrayD};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

// Borrowed weights are a few pointers each; boxing the large variants would change the
// original's public enum for no gain.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum LayerWeight<'a> {
    Dense(DenseLayerWeight<'a>),
    SimpleRNN(SimpleRNNLayerWeight<'a>),
    LSTM(LSTMLayerWeight<'a>),
    GRU(GRULayerWeight<'a>),
    Conv1D(Conv1DLayerWeight<'a>),
    Conv2D(Conv2DLayerWeight<'a>),
    Conv3D(Conv3DLayerWeight<'a>),
    SeparableConv2D(SeparableConv2DLayerWeight<'a>),
    DepthwiseConv2D(DepthwiseConv2DLayerWeight<'a>),
    BatchNormalization(BatchNormalizationLayerWeight<'a>),
    LayerNormalization(LayerNormalizationLayerWeight<'a>),
    InstanceNormalization(InstanceNormalizationLayerWeight<'a>),
    GroupNormalization(GroupNormalizationLayerWeight<'a>),
    Empty,
    Embedding(EmbeddingLayerWeight<'a>),
    Conv1DTranspose(Conv1DTransposeLayerWeight<'a>),
    Conv2DTranspose(Conv2DTransposeLayerWeight<'a>),
    Conv3DTranspose(Conv3DTransposeLayerWeight<'a>),
    PReLU(PReLULayerWeight<'a>),
    DepthwiseConv1D(DepthwiseConv1DLayerWeight<'a>),
    SeparableConv1D(SeparableConv1DLayerWeight<'a>),
}

/// Weights of a `Dense` layer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DenseLayerWeight<'a> {
    pub weight: Cow<'a, Array2<f32>>,
    pub bias: Cow<'a, Array2<f32>>,
}

/// Weights of a `SimpleRNN` layer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SimpleRNNLayerWeight<'a> {
    pub kernel: Cow<'a, Array2<f32>>,
    pub recurrent_kernel: Cow<'a, Array2<f32>>,
    pub bias: Cow<'a, Array2<f32>>,
}

/// Weights of a `LSTM` layer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LSTMLayerWeight<'a> {
    pub kernel: Cow<'a, Array2<f32>>,
    pub recurrent_kernel: Cow<'a, Array2<f32>>,
    pub bias: Cow<'a, Array2<f32>>,
}

/// Weights of a `GRU` layer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GRULayerWeight<'a> {
    pub kernel: Cow<'a, Array2<f32>>,
    pub recurrent_kernel: Cow<'a, Array2<f32>>,
    pub bias: Cow<'a, Array2<f32>>,
}

/// Weights of a `Conv1D` layer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Conv1DLayerWeight<'a> {
    pub weight: Cow<'a, Array3<f32>>,
    pub bias: Cow<'a, Array1<f32>>,
}

/// Weights of a `Conv2D` layer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Conv2DLayerWeight<'a> {
    pub weight: Cow<'a, Array4<f32>>,
    pub bias: Cow<'a, Array1<f32>>,
}

/// Weights of a `Conv3D` layer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Conv3DLayerWeight<'a> {
    pub weight: Cow<'a, Array5<f32>>,
    pub bias: Cow<'a, Array1<f32>>,
}

/// Weights of a `SeparableConv2D` layer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SeparableConv2DLayerWeight<'a> {
    pub depthwise_weight: Cow<'a, Array4<f32>>,
    pub pointwise_weight: Cow<'a, Array4<f32>>,
    pub bias: Cow<'a, Array1<f32>>,
}

/// Weights of a `DepthwiseConv2D` layer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DepthwiseConv2DLayerWeight<'a> {
    pub weight: Cow<'a, Array4<f32>>,
    pub bias: Cow<'a, Array1<f32>>,
}

/// Weights of a `BatchNormalization` layer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BatchNormalizationLayerWeight<'a> {
    pub gamma: Cow<'a, ArrayD<f32>>,
    pub beta: Cow<'a, ArrayD<f32>>,
    pub running_mean: Cow<'a, ArrayD<f32>>,
    pub running_var: Cow<'a, ArrayD<f32>>,
}

/// Weights of a `LayerNormalization` layer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LayerNormalizationLayerWeight<'a> {
    pub gamma: Cow<'a, ArrayD<f32>>,
    pub beta: Cow<'a, ArrayD<f32>>,
}

/// Weights of a `InstanceNormalization` layer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InstanceNormalizationLayerWeight<'a> {
    pub gamma: Cow<'a, ArrayD<f32>>,
    pub beta: Cow<'a, ArrayD<f32>>,
}

/// Weights of a `GroupNormalization` layer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GroupNormalizationLayerWeight<'a> {
    pub gamma: Cow<'a, ArrayD<f32>>,
    pub beta: Cow<'a, ArrayD<f32>>,
}

/// Weights of a `Embedding` layer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EmbeddingLayerWeight<'a> {
    pub embeddings: Cow<'a, Array2<f32>>,
}

/// Weights of a `Conv1DTranspose` layer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Conv1DTransposeLayerWeight<'a> {
    pub weight: Cow<'a, Array3<f32>>,
    pub bias: Cow<'a, Array1<f32>>,
}

/// Weights of a `Conv2DTranspose` layer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Conv2DTransposeLayerWeight<'a> {
    pub weight: Cow<'a, Array4<f32>>,
    pub bias: Cow<'a, Array1<f32>>,
}

/// Weights of a `Conv3DTranspose` layer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Conv3DTransposeLayerWeight<'a> {
    pub weight: Cow<'a, Array5<f32>>,
    pub bias: Cow<'a, Array1<f32>>,
}

/// Weights of a `PReLU` layer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PReLULayerWeight<'a> {
    pub alpha: Cow<'a, ArrayD<f32>>,
}

/// Weights of a `DepthwiseConv1D` layer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DepthwiseConv1DLayerWeight<'a> {
    pub weight: Cow<'a, Array3<f32>>,
    pub bias: Cow<'a, Array1<f32>>,
}

/// Weights of a `SeparableConv1D` layer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SeparableConv1DLayerWeight<'a> {
    pub depthwise_weight: Cow<'a, Array3<f32>>,
    pub pointwise_weight: Cow<'a, Array3<f32>>,
    pub bias: Cow<'a, Array1<f32>>,
}

impl LayerWeight<'_> {
    /// An owned copy, independent of the layer it was read from.
    pub fn into_owned(self) -> LayerWeight<'static> {
        fn own<T: Clone>(c: Cow<'_, T>) -> Cow<'static, T> {
            Cow::Owned(c.into_owned())
        }
        match self {
            LayerWeight::Dense(DenseLayerWeight { weight, bias }) => {
                LayerWeight::Dense(DenseLayerWeight {
                    weight: own(weight),
                    bias: own(bias),
                })
            }
            LayerWeight::SimpleRNN(SimpleRNNLayerWeight {
                kernel,
                recurrent_kernel,
                bias,
            }) => LayerWeight::SimpleRNN(SimpleRNNLayerWeight {
                kernel: own(kernel),
                recurrent_kernel: own(recurrent_kernel),
                bias: own(bias),
            }),
            LayerWeight::LSTM(LSTMLayerWeight {
                kernel,
                recurrent_kernel,
                bias,
            }) => LayerWeight::LSTM(LSTMLayerWeight {
                kernel: own(kernel),
                recurrent_kernel: own(recurrent_kernel),
                bias: own(bias),
            }),
            LayerWeight::GRU(GRULayerWeight {
                kernel,
                recurrent_kernel,
                bias,
            }) => LayerWeight::GRU(GRULayerWeight {
                kernel: own(kernel),
                recurrent_kernel: own(recurrent_kernel),
                bias: own(bias),
            }),
            LayerWeight::Conv1D(Conv1DLayerWeight { weight, bias }) => {
                LayerWeight::Conv1D(Conv1DLayerWeight {
                    weight: own(weight),
                    bias: own(bias),
                })
            }
            LayerWeight::Conv2D(Conv2DLayerWeight { weight, bias }) => {
                LayerWeight::Conv2D(Conv2DLayerWeight {
                    weight: own(weight),
                    bias: own(bias),
                })
            }
            LayerWeight::Conv3D(Conv3DLayerWeight { weight, bias }) => {
                LayerWeight::Conv3D(Conv3DLayerWeight {
                    weight: own(weight),
                    bias: own(bias),
                })
            }
            LayerWeight::SeparableConv2D(SeparableConv2DLayerWeight {
                depthwise_weight,
                pointwise_weight,
                bias,
            }) => LayerWeight::SeparableConv2D(SeparableConv2DLayerWeight {
                depthwise_weight: own(depthwise_weight),
                pointwise_weight: own(pointwise_weight),
                bias: own(bias),
            }),
            LayerWeight::DepthwiseConv2D(DepthwiseConv2DLayerWeight { weight, bias }) => {
                LayerWeight::DepthwiseConv2D(DepthwiseConv2DLayerWeight {
                    weight: own(weight),
                    bias: own(bias),
                })
            }
            LayerWeight::BatchNormalization(BatchNormalizationLayerWeight {
                gamma,
                beta,
                running_mean,
                running_var,
            }) => LayerWeight::BatchNormalization(BatchNormalizationLayerWeight {
                gamma: own(gamma),
                beta: own(beta),
                running_mean: own(running_mean),
                running_var: own(running_var),
            }),
            LayerWeight::LayerNormalization(LayerNormalizationLayerWeight { gamma, beta }) => {
                LayerWeight::LayerNormalization(LayerNormalizationLayerWeight {
                    gamma: own(gamma),
                    beta: own(beta),
                })
            }
            LayerWeight::InstanceNormalization(InstanceNormalizationLayerWeight {
                gamma,
                beta,
            }) => LayerWeight::InstanceNormalization(InstanceNormalizationLayerWeight {
                gamma: own(gamma),
                beta: own(beta),
            }),
            LayerWeight::GroupNormalization(GroupNormalizationLayerWeight { gamma, beta }) => {
                LayerWeight::GroupNormalization(GroupNormalizationLayerWeight {
                    gamma: own(gamma),
                    beta: own(beta),
                })
            }
            LayerWeight::Empty => LayerWeight::Empty,
            LayerWeight::Embedding(EmbeddingLayerWeight { embeddings }) => {
                LayerWeight::Embedding(EmbeddingLayerWeight {
                    embeddings: own(embeddings),
                })
            }
            LayerWeight::Conv1DTranspose(Conv1DTransposeLayerWeight { weight, bias }) => {
                LayerWeight::Conv1DTranspose(Conv1DTransposeLayerWeight {
                    weight: own(weight),
                    bias: own(bias),
                })
            }
            LayerWeight::Conv2DTranspose(Conv2DTransposeLayerWeight { weight, bias }) => {
                LayerWeight::Conv2DTranspose(Conv2DTransposeLayerWeight {
                    weight: own(weight),
                    bias: own(bias),
                })
            }
            LayerWeight::Conv3DTranspose(Conv3DTransposeLayerWeight { weight, bias }) => {
                LayerWeight::Conv3DTranspose(Conv3DTransposeLayerWeight {
                    weight: own(weight),
                    bias: own(bias),
                })
            }
            LayerWeight::PReLU(PReLULayerWeight { alpha }) => {
                LayerWeight::PReLU(PReLULayerWeight { alpha: own(alpha) })
            }
            LayerWeight::DepthwiseConv1D(DepthwiseConv1DLayerWeight { weight, bias }) => {
                LayerWeight::DepthwiseConv1D(DepthwiseConv1DLayerWeight {
                    weight: own(weight),
                    bias: own(bias),
                })
            }
            LayerWeight::SeparableConv1D(SeparableConv1DLayerWeight {
                depthwise_weight,
                pointwise_weight,
                bias,
            }) => LayerWeight::SeparableConv1D(SeparableConv1DLayerWeight {
                depthwise_weight: own(depthwise_weight),
                pointwise_weight: own(pointwise_weight),
                bias: own(bias),
            }),
        }
    }
}

impl LayerWeight<'_> {
    /// Every array with its name, in the order Keras lists a layer's weights.
    pub fn named_arrays(&self) -> Vec<(&'static str, ArrayD<f32>)> {
        match self {
            LayerWeight::Dense(DenseLayerWeight { weight, bias }) => vec![
                ("weight", weight.as_ref().clone().into_dyn()),
                ("bias", bias.as_ref().clone().into_dyn()),
            ],
            LayerWeight::SimpleRNN(SimpleRNNLayerWeight {
                kernel,
                recurrent_kernel,
                bias,
            }) => vec![
                ("kernel", kernel.as_ref().clone().into_dyn()),
                (
                    "recurrent_kernel",
                    recurrent_kernel.as_ref().clone().into_dyn(),
                ),
                ("bias", bias.as_ref().clone().into_dyn()),
            ],
            LayerWeight::LSTM(LSTMLayerWeight {
                kernel,
                recurrent_kernel,
                bias,
            }) => vec![
                ("kernel", kernel.as_ref().clone().into_dyn()),
                (
                    "recurrent_kernel",
                    recurrent_kernel.as_ref().clone().into_dyn(),
                ),
                ("bias", bias.as_ref().clone().into_dyn()),
            ],
            LayerWeight::GRU(GRULayerWeight {
                kernel,
                recurrent_kernel,
                bias,
            }) => vec![
                ("kernel", kernel.as_ref().clone().into_dyn()),
                (
                    "recurrent_kernel",
                    recurrent_kernel.as_ref().clone().into_dyn(),
                ),
                ("bias", bias.as_ref().clone().into_dyn()),
            ],
            LayerWeight::Conv1D(Conv1DLayerWeight { weight, bias }) => vec![
                ("weight", weight.as_ref().clone().into_dyn()),
                ("bias", bias.as_ref().clone().into_dyn()),
            ],
            LayerWeight::Conv2D(Conv2DLayerWeight { weight, bias }) => vec![
                ("weight", weight.as_ref().clone().into_dyn()),
                ("bias", bias.as_ref().clone().into_dyn()),
            ],
            LayerWeight::Conv3D(Conv3DLayerWeight { weight, bias }) => vec![
                ("weight", weight.as_ref().clone().into_dyn()),
                ("bias", bias.as_ref().clone().into_dyn()),
            ],
            LayerWeight::SeparableConv2D(SeparableConv2DLayerWeight {
                depthwise_weight,
                pointwise_weight,
                bias,
            }) => vec![
                (
                    "depthwise_weight",
                    depthwise_weight.as_ref().clone().into_dyn(),
                ),
                (
                    "pointwise_weight",
                    pointwise_weight.as_ref().clone().into_dyn(),
                ),
                ("bias", bias.as_ref().clone().into_dyn()),
            ],
            LayerWeight::DepthwiseConv2D(DepthwiseConv2DLayerWeight { weight, bias }) => vec![
                ("weight", weight.as_ref().clone().into_dyn()),
                ("bias", bias.as_ref().clone().into_dyn()),
            ],
            LayerWeight::BatchNormalization(BatchNormalizationLayerWeight {
                gamma,
                beta,
                running_mean,
                running_var,
            }) => vec![
                ("gamma", gamma.as_ref().clone().into_dyn()),
                ("beta", beta.as_ref().clone().into_dyn()),
                ("running_mean", running_mean.as_ref().clone().into_dyn()),
                ("running_var", running_var.as_ref().clone().into_dyn()),
            ],
            LayerWeight::LayerNormalization(LayerNormalizationLayerWeight { gamma, beta }) => vec![
                ("gamma", gamma.as_ref().clone().into_dyn()),
                ("beta", beta.as_ref().clone().into_dyn()),
            ],
            LayerWeight::InstanceNormalization(InstanceNormalizationLayerWeight {
                gamma,
                beta,
            }) => vec![
                ("gamma", gamma.as_ref().clone().into_dyn()),
                ("beta", beta.as_ref().clone().into_dyn()),
            ],
            LayerWeight::GroupNormalization(GroupNormalizationLayerWeight { gamma, beta }) => vec![
                ("gamma", gamma.as_ref().clone().into_dyn()),
                ("beta", beta.as_ref().clone().into_dyn()),
            ],
            LayerWeight::Empty => Vec::new(),
            LayerWeight::Embedding(EmbeddingLayerWeight { embeddings }) => {
                vec![("embeddings", embeddings.as_ref().clone().into_dyn())]
            }
            LayerWeight::Conv1DTranspose(Conv1DTransposeLayerWeight { weight, bias }) => vec![
                ("weight", weight.as_ref().clone().into_dyn()),
                ("bias", bias.as_ref().clone().into_dyn()),
            ],
            LayerWeight::Conv2DTranspose(Conv2DTransposeLayerWeight { weight, bias }) => vec![
                ("weight", weight.as_ref().clone().into_dyn()),
                ("bias", bias.as_ref().clone().into_dyn()),
            ],
            LayerWeight::Conv3DTranspose(Conv3DTransposeLayerWeight { weight, bias }) => vec![
                ("weight", weight.as_ref().clone().into_dyn()),
                ("bias", bias.as_ref().clone().into_dyn()),
            ],
            LayerWeight::PReLU(PReLULayerWeight { alpha }) => {
                vec![("alpha", alpha.as_ref().clone().into_dyn())]
            }
            LayerWeight::DepthwiseConv1D(DepthwiseConv1DLayerWeight { weight, bias }) => vec![
                ("weight", weight.as_ref().clone().into_dyn()),
                ("bias", bias.as_ref().clone().into_dyn()),
            ],
            LayerWeight::SeparableConv1D(SeparableConv1DLayerWeight {
                depthwise_weight,
                pointwise_weight,
                bias,
            }) => vec![
                (
                    "depthwise_weight",
                    depthwise_weight.as_ref().clone().into_dyn(),
                ),
                (
                    "pointwise_weight",
                    pointwise_weight.as_ref().clone().into_dyn(),
                ),
                ("bias", bias.as_ref().clone().into_dyn()),
            ],
        }
    }

    /// The same variant holding `arrays` (in [`LayerWeight::named_arrays`] order), each
    /// reshaped to the shape of the array it replaces; a wrong count or size is an error.
    pub fn with_arrays(
        &self,
        arrays: Vec<ArrayD<f32>>,
    ) -> crate::error::RustymlResult<LayerWeight<'static>> {
        let current = self.named_arrays();
        if arrays.len() != current.len() {
            return Err(crate::error::Error::invalid_input(format!(
                "expected {} weight arrays, got {}",
                current.len(),
                arrays.len()
            )));
        }
        let mut it = arrays.into_iter().zip(current);
        let mut next = || -> crate::error::RustymlResult<ArrayD<f32>> {
            let (given, (name, old)) = it.next().expect("counted above");
            if given.len() != old.len() {
                return Err(crate::neural_network::NnError::WeightShape {
                    name: name.to_string(),
                    expected: old.shape().to_vec(),
                    found: given.shape().to_vec(),
                }
                .into());
            }
            let flat: Vec<f32> = given.iter().copied().collect();
            Ok(ArrayD::from_shape_vec(old.shape(), flat).expect("sizes checked"))
        };
        fn fixed<D: ndarray::Dimension>(a: ArrayD<f32>) -> ndarray::Array<f32, D> {
            a.into_dimensionality::<D>()
                .expect("shape taken from the same variant")
        }
        Ok(match self {
            LayerWeight::Dense(_) => LayerWeight::Dense(DenseLayerWeight {
                weight: Cow::Owned(fixed::<ndarray::Ix2>(next()?)),
                bias: Cow::Owned(fixed::<ndarray::Ix2>(next()?)),
            }),
            LayerWeight::SimpleRNN(_) => LayerWeight::SimpleRNN(SimpleRNNLayerWeight {
                kernel: Cow::Owned(fixed::<ndarray::Ix2>(next()?)),
                recurrent_kernel: Cow::Owned(fixed::<ndarray::Ix2>(next()?)),
                bias: Cow::Owned(fixed::<ndarray::Ix2>(next()?)),
            }),
            LayerWeight::LSTM(_) => LayerWeight::LSTM(LSTMLayerWeight {
                kernel: Cow::Owned(fixed::<ndarray::Ix2>(next()?)),
                recurrent_kernel: Cow::Owned(fixed::<ndarray::Ix2>(next()?)),
                bias: Cow::Owned(fixed::<ndarray::Ix2>(next()?)),
            }),
            LayerWeight::GRU(_) => LayerWeight::GRU(GRULayerWeight {
                kernel: Cow::Owned(fixed::<ndarray::Ix2>(next()?)),
                recurrent_kernel: Cow::Owned(fixed::<ndarray::Ix2>(next()?)),
                bias: Cow::Owned(fixed::<ndarray::Ix2>(next()?)),
            }),
            LayerWeight::Conv1D(_) => LayerWeight::Conv1D(Conv1DLayerWeight {
                weight: Cow::Owned(fixed::<ndarray::Ix3>(next()?)),
                bias: Cow::Owned(fixed::<ndarray::Ix1>(next()?)),
            }),
            LayerWeight::Conv2D(_) => LayerWeight::Conv2D(Conv2DLayerWeight {
                weight: Cow::Owned(fixed::<ndarray::Ix4>(next()?)),
                bias: Cow::Owned(fixed::<ndarray::Ix1>(next()?)),
            }),
            LayerWeight::Conv3D(_) => LayerWeight::Conv3D(Conv3DLayerWeight {
                weight: Cow::Owned(fixed::<ndarray::Ix5>(next()?)),
                bias: Cow::Owned(fixed::<ndarray::Ix1>(next()?)),
            }),
            LayerWeight::SeparableConv2D(_) => {
                LayerWeight::SeparableConv2D(SeparableConv2DLayerWeight {
                    depthwise_weight: Cow::Owned(fixed::<ndarray::Ix4>(next()?)),
                    pointwise_weight: Cow::Owned(fixed::<ndarray::Ix4>(next()?)),
                    bias: Cow::Owned(fixed::<ndarray::Ix1>(next()?)),
                })
            }
            LayerWeight::DepthwiseConv2D(_) => {
                LayerWeight::DepthwiseConv2D(DepthwiseConv2DLayerWeight {
                    weight: Cow::Owned(fixed::<ndarray::Ix4>(next()?)),
                    bias: Cow::Owned(fixed::<ndarray::Ix1>(next()?)),
                })
            }
            LayerWeight::BatchNormalization(_) => {
                LayerWeight::BatchNormalization(BatchNormalizationLayerWeight {
                    gamma: Cow::Owned(next()?),
                    beta: Cow::Owned(next()?),
                    running_mean: Cow::Owned(next()?),
                    running_var: Cow::Owned(next()?),
                })
            }
            LayerWeight::LayerNormalization(_) => {
                LayerWeight::LayerNormalization(LayerNormalizationLayerWeight {
                    gamma: Cow::Owned(next()?),
                    beta: Cow::Owned(next()?),
                })
            }
            LayerWeight::InstanceNormalization(_) => {
                LayerWeight::InstanceNormalization(InstanceNormalizationLayerWeight {
                    gamma: Cow::Owned(next()?),
                    beta: Cow::Owned(next()?),
                })
            }
            LayerWeight::GroupNormalization(_) => {
                LayerWeight::GroupNormalization(GroupNormalizationLayerWeight {
                    gamma: Cow::Owned(next()?),
                    beta: Cow::Owned(next()?),
                })
            }
            LayerWeight::Empty => LayerWeight::Empty,
            LayerWeight::Embedding(_) => LayerWeight::Embedding(EmbeddingLayerWeight {
                embeddings: Cow::Owned(fixed::<ndarray::Ix2>(next()?)),
            }),
            LayerWeight::Conv1DTranspose(_) => {
                LayerWeight::Conv1DTranspose(Conv1DTransposeLayerWeight {
                    weight: Cow::Owned(fixed::<ndarray::Ix3>(next()?)),
                    bias: Cow::Owned(fixed::<ndarray::Ix1>(next()?)),
                })
            }
            LayerWeight::Conv2DTranspose(_) => {
                LayerWeight::Conv2DTranspose(Conv2DTransposeLayerWeight {
                    weight: Cow::Owned(fixed::<ndarray::Ix4>(next()?)),
                    bias: Cow::Owned(fixed::<ndarray::Ix1>(next()?)),
                })
            }
            LayerWeight::Conv3DTranspose(_) => {
                LayerWeight::Conv3DTranspose(Conv3DTransposeLayerWeight {
                    weight: Cow::Owned(fixed::<ndarray::Ix5>(next()?)),
                    bias: Cow::Owned(fixed::<ndarray::Ix1>(next()?)),
                })
            }
            LayerWeight::PReLU(_) => LayerWeight::PReLU(PReLULayerWeight {
                alpha: Cow::Owned(next()?),
            }),
            LayerWeight::DepthwiseConv1D(_) => {
                LayerWeight::DepthwiseConv1D(DepthwiseConv1DLayerWeight {
                    weight: Cow::Owned(fixed::<ndarray::Ix3>(next()?)),
                    bias: Cow::Owned(fixed::<ndarray::Ix1>(next()?)),
                })
            }
            LayerWeight::SeparableConv1D(_) => {
                LayerWeight::SeparableConv1D(SeparableConv1DLayerWeight {
                    depthwise_weight: Cow::Owned(fixed::<ndarray::Ix3>(next()?)),
                    pointwise_weight: Cow::Owned(fixed::<ndarray::Ix3>(next()?)),
                    bias: Cow::Owned(fixed::<ndarray::Ix1>(next()?)),
                })
            }
        })
    }
}
