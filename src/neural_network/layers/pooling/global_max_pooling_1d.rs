//! GlobalMaxPooling1D: the maximum of each channel over all positions of `[batch, length, channels]` inputs.

use super::generic::GlobalPooling;

/// GlobalMaxPooling1D: the maximum of each channel over all positions; output `[batch, channels]` (`with_keepdims(true)`: pooled axes kept as
/// size 1). See [`GlobalPooling`].
pub type GlobalMaxPooling1D = GlobalPooling<1, true>;
