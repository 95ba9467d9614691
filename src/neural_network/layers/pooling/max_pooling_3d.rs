//! MaxPooling3D: the maximum of each window (gradient to the first maximal tap) over `[batch, depth, height, width, channels]` inputs.

use super::generic::Pooling;

/// MaxPooling3D: the maximum of each window (gradient to the first maximal tap). `new((pd, ph, pw), input_shape)`, `with_strides`, `with_padding`; see [`Pooling`].
pub type MaxPooling3D = Pooling<3, true>;
