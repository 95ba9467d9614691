//! GlobalAveragePooling1D: the mean of each channel over all positions of `[batch, length, channels]` inputs.

use super::generic::GlobalPooling;

/// GlobalAveragePooling1D: the mean of each channel over all positions; output `[batch, channels]` (`with_keepdims(true)`: pooled axes kept as
/// size 1). See [`GlobalPooling`].
pub type GlobalAveragePooling1D = GlobalPooling<1, false>;
