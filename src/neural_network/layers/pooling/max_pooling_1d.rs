//! MaxPooling1D: the maximum of each window (gradient to the first maximal tap) over `[batch, length, channels]` inputs.

use super::generic::Pooling;

/// MaxPooling1D: the maximum of each window (gradient to the first maximal tap). `new(pool_size, input_shape)`, `with_stride`, `with_padding`; see [`Pooling`].
pub type MaxPooling1D = Pooling<1, true>;
