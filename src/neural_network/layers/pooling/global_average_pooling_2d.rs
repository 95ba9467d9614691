//! GlobalAveragePooling2D: the mean of each channel over all positions of `[batch, height, width, channels]` inputs.

use super::generic::GlobalPooling;

/// GlobalAveragePooling2D: the mean of each channel over all positions; output `[batch, channels]` (`with_keepdims(true)`: pooled axes kept as
/// size 1). See [`GlobalPooling`].
pub type GlobalAveragePooling2D = GlobalPooling<2, false>;
