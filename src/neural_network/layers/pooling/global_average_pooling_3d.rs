//! GlobalAveragePooling3D: the mean of each channel over all positions of `[batch, depth, height, width, channels]` inputs.

use super::generic::GlobalPooling;

/// GlobalAveragePooling3D: the mean of each channel over all positions; output `[batch, channels]` (`with_keepdims(true)`: pooled axes kept as
/// size 1). See [`GlobalPooling`].
pub type GlobalAveragePooling3D = GlobalPooling<3, false>;
