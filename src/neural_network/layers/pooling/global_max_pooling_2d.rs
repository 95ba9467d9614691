//! GlobalMaxPooling2D: the maximum of each channel over all positions of `[batch, height, width, channels]` inputs.

use super::generic::GlobalPooling;

/// GlobalMaxPooling2D: the maximum of each channel over all positions; output `[batch, channels]` (`with_keepdims(true)`: pooled axes kept as
/// size 1). See [`GlobalPooling`].
pub type GlobalMaxPooling2D = GlobalPooling<2, true>;
