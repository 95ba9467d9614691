//! AveragePooling3D: the mean of each window (under `same` padding, of the cells it really covers) over `[batch, depth, height, width, channels]` inputs.

use super::generic::Pooling;

/// AveragePooling3D: the mean of each window (under `same` padding, of the cells it really covers). `new((pd, ph, pw), input_shape)`, `with_strides`, `with_padding`; see [`Pooling`].
pub type AveragePooling3D = Pooling<3, false>;
