//! The weights of every layer kind, borrowed (`get_weights`) or owned (a loaded file). The
//! variant order is the file format's (postcard encodes the variant index): append, never reorder.
//! Each layer with weights implements `ApplyWeights` for its struct and `Layer::apply_weights`.
//! Front ends read and write weights generically through [`LayerWeight::named_arrays`] and
//! [`LayerWeight::with_arrays`]; the two macros below declare the structs and the enum from one table each.

use crate::error::{Error, Result};
use ndarray::{Array1, Array2, Array3, Array4, Array5, ArrayD};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Declares each weight struct (every field a `Cow` of an f32 array) with the per-struct halves
/// of `into_owned` / `named_arrays` / `with_arrays`, in field order.
macro_rules! weight_structs {
    ($($name:ident { $($field:ident: $array:ident),+ $(,)? })*) => {$(
        #[doc = concat!("Weights of a `", stringify!($name), "` (see [`LayerWeight`]).")]
        #[derive(Debug, Clone, Serialize, Deserialize)]
        pub struct $name<'a> {
            $(pub $field: Cow<'a, $array<f32>>,)+
        }

        impl $name<'_> {
            fn into_owned(self) -> $name<'static> {
                $name { $($field: Cow::Owned(self.$field.into_owned()),)+ }
            }

            fn named_arrays(&self) -> Vec<(&'static str, ArrayD<f32>)> {
                vec![$((stringify!($field), self.$field.as_ref().clone().into_dyn())),+]
            }

            fn array_views(&self) -> Vec<(&'static str, ndarray::ArrayViewD<'_, f32>)> {
                vec![$((stringify!($field), self.$field.view().into_dyn())),+]
            }

            fn all_finite(&self) -> bool {
                fn finite<D: ndarray::Dimension>(a: &ndarray::Array<f32, D>) -> bool {
                    match a.as_slice_memory_order() {
                        Some(s) => crate::validation::all_finite(s),
                        None => a.iter().all(|v| v.is_finite()),
                    }
                }
                true $(&& finite(self.$field.as_ref()))+
            }

            fn with_arrays(&self, next: &mut NextArray<'_>) -> Result<$name<'static>> {
                Ok($name {
                    $($field: Cow::Owned(
                        next(stringify!($field), self.$field.shape())?
                            .into_dimensionality()
                            .expect("reshaped to the field's own shape"),
                    ),)+
                })
            }
        }
    )*};
}

/// Yields the next given array, reshaped to `shape` (the field it replaces), or the error.
type NextArray<'n> = dyn FnMut(&'static str, &[usize]) -> Result<ArrayD<f32>> + 'n;

weight_structs! {
    DenseLayerWeight { weight: Array2, bias: Array2 }
    SimpleRNNLayerWeight { kernel: Array2, recurrent_kernel: Array2, bias: Array2 }
    LSTMLayerWeight { kernel: Array2, recurrent_kernel: Array2, bias: Array2 }
    GRULayerWeight { kernel: Array2, recurrent_kernel: Array2, bias: Array2 }
    Conv1DLayerWeight { weight: Array3, bias: Array1 }
    Conv2DLayerWeight { weight: Array4, bias: Array1 }
    Conv3DLayerWeight { weight: Array5, bias: Array1 }
    SeparableConv2DLayerWeight { depthwise_weight: Array4, pointwise_weight: Array4, bias: Array1 }
    DepthwiseConv2DLayerWeight { weight: Array4, bias: Array1 }
    BatchNormalizationLayerWeight { gamma: ArrayD, beta: ArrayD, running_mean: ArrayD, running_var: ArrayD }
    LayerNormalizationLayerWeight { gamma: ArrayD, beta: ArrayD }
    InstanceNormalizationLayerWeight { gamma: ArrayD, beta: ArrayD }
    GroupNormalizationLayerWeight { gamma: ArrayD, beta: ArrayD }
    EmbeddingLayerWeight { embeddings: Array2 }
    Conv1DTransposeLayerWeight { weight: Array3, bias: Array1 }
    Conv2DTransposeLayerWeight { weight: Array4, bias: Array1 }
    Conv3DTransposeLayerWeight { weight: Array5, bias: Array1 }
    PReLULayerWeight { alpha: ArrayD }
    DepthwiseConv1DLayerWeight { weight: Array3, bias: Array1 }
    SeparableConv1DLayerWeight { depthwise_weight: Array3, pointwise_weight: Array3, bias: Array1 }
    NormalizationLayerWeight { mean: ArrayD, variance: ArrayD, count: ArrayD }
}

/// Declares `LayerWeight` from its variant table (the postcard variant order: `Empty` sits at
/// index 13, as in the original's files) with `named_arrays` / `with_arrays` dispatching to the
/// weight structs.
macro_rules! layer_weight_enum {
    ([$($before:ident($bst:ident),)+] Empty [$($after:ident($ast:ident),)+]) => {
        // Borrowed weights are a few pointers each; boxing the large variants would change the
        // original's public enum for no gain.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Clone, Serialize, Deserialize)]
        pub enum LayerWeight<'a> {
            $($before($bst<'a>),)+
            Empty,
            $($after($ast<'a>),)+
        }

        impl LayerWeight<'_> {
            /// Every array with its name, in the order Keras lists a layer's weights.
            pub fn named_arrays(&self) -> Vec<(&'static str, ArrayD<f32>)> {
                match self {
                    $(LayerWeight::$before(w) => w.named_arrays(),)+
                    LayerWeight::Empty => Vec::new(),
                    $(LayerWeight::$after(w) => w.named_arrays(),)+
                }
            }

            /// Every array with its name, in [`LayerWeight::named_arrays`] order, read in place.
            pub fn array_views(&self) -> Vec<(&'static str, ndarray::ArrayViewD<'_, f32>)> {
                match self {
                    $(LayerWeight::$before(w) => w.array_views(),)+
                    LayerWeight::Empty => Vec::new(),
                    $(LayerWeight::$after(w) => w.array_views(),)+
                }
            }

            /// Whether every value of every array is finite (read in place).
            pub fn all_finite(&self) -> bool {
                match self {
                    $(LayerWeight::$before(w) => w.all_finite(),)+
                    LayerWeight::Empty => true,
                    $(LayerWeight::$after(w) => w.all_finite(),)+
                }
            }

            /// An owned copy, independent of the layer it was read from.
            pub fn into_owned(self) -> LayerWeight<'static> {
                match self {
                    $(LayerWeight::$before(w) => LayerWeight::$before(w.into_owned()),)+
                    LayerWeight::Empty => LayerWeight::Empty,
                    $(LayerWeight::$after(w) => LayerWeight::$after(w.into_owned()),)+
                }
            }

            fn rebuilt(&self, next: &mut NextArray<'_>) -> Result<LayerWeight<'static>> {
                Ok(match self {
                    $(LayerWeight::$before(w) => LayerWeight::$before(w.with_arrays(next)?),)+
                    LayerWeight::Empty => LayerWeight::Empty,
                    $(LayerWeight::$after(w) => LayerWeight::$after(w.with_arrays(next)?),)+
                })
            }
        }
    };
}

layer_weight_enum! {
    [
        Dense(DenseLayerWeight),
        SimpleRNN(SimpleRNNLayerWeight),
        LSTM(LSTMLayerWeight),
        GRU(GRULayerWeight),
        Conv1D(Conv1DLayerWeight),
        Conv2D(Conv2DLayerWeight),
        Conv3D(Conv3DLayerWeight),
        SeparableConv2D(SeparableConv2DLayerWeight),
        DepthwiseConv2D(DepthwiseConv2DLayerWeight),
        BatchNormalization(BatchNormalizationLayerWeight),
        LayerNormalization(LayerNormalizationLayerWeight),
        InstanceNormalization(InstanceNormalizationLayerWeight),
        GroupNormalization(GroupNormalizationLayerWeight),
    ]
    Empty
    [
        Embedding(EmbeddingLayerWeight),
        Conv1DTranspose(Conv1DTransposeLayerWeight),
        Conv2DTranspose(Conv2DTransposeLayerWeight),
        Conv3DTranspose(Conv3DTransposeLayerWeight),
        PReLU(PReLULayerWeight),
        DepthwiseConv1D(DepthwiseConv1DLayerWeight),
        SeparableConv1D(SeparableConv1DLayerWeight),
        Normalization(NormalizationLayerWeight),
    ]
}

impl LayerWeight<'_> {
    /// The same variant holding `arrays` (in [`LayerWeight::named_arrays`] order), each
    /// reshaped to the shape of the array it replaces; a wrong count or size is an error.
    pub fn with_arrays(&self, arrays: Vec<ArrayD<f32>>) -> Result<LayerWeight<'static>> {
        let expected = self.named_arrays().len();
        if arrays.len() != expected {
            return Err(Error::invalid_input(format!(
                "expected {expected} weight arrays, got {}",
                arrays.len()
            )));
        }
        let mut given = arrays.into_iter();
        let mut next = |name: &'static str, shape: &[usize]| -> Result<ArrayD<f32>> {
            let a = given.next().expect("counted above");
            if a.len() != shape.iter().product::<usize>() {
                return Err(crate::neural_network::NnError::WeightShape {
                    name: name.to_string(),
                    expected: shape.to_vec(),
                    found: a.shape().to_vec(),
                }
                .into());
            }
            let flat: Vec<f32> = a.iter().copied().collect();
            Ok(ArrayD::from_shape_vec(shape, flat).expect("sizes checked"))
        };
        self.rebuilt(&mut next)
    }
}
