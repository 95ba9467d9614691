//! AveragePooling2D: the mean of each window (under `same` padding, of the cells it really covers) over `[batch, height, width, channels]` inputs.

use super::generic::Pooling;

/// AveragePooling2D: the mean of each window (under `same` padding, of the cells it really covers). `new((ph, pw), input_shape)`, `with_strides`, `with_padding`; see [`Pooling`].
pub type AveragePooling2D = Pooling<2, false>;
