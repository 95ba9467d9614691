//! MaxPooling2D: the maximum of each window (gradient to the first maximal tap) over `[batch, height, width, channels]` inputs.

use super::generic::Pooling;

/// MaxPooling2D: the maximum of each window (gradient to the first maximal tap). `new((ph, pw), input_shape)`, `with_strides`, `with_padding`; see [`Pooling`].
pub type MaxPooling2D = Pooling<2, true>;
