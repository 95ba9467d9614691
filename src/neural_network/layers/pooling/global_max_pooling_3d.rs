//! GlobalMaxPooling3D: the maximum of each channel over all positions of `[batch, depth, height, width, channels]` inputs.

use super::generic::GlobalPooling;

/// GlobalMaxPooling3D: the maximum of each channel over all positions; output `[batch, channels]` (`with_keepdims(true)`: pooled axes kept as
/// size 1). See [`GlobalPooling`].
pub type GlobalMaxPooling3D = GlobalPooling<3, true>;
