//! AveragePooling1D: the mean of each window (under `same` padding, of the cells it really covers) over `[batch, length, channels]` inputs.

use super::generic::Pooling;

/// AveragePooling1D: the mean of each window (under `same` padding, of the cells it really covers). `new(pool_size, input_shape)`, `with_stride`, `with_padding`; see [`Pooling`].
pub type AveragePooling1D = Pooling<1, false>;
