//! The 1D convolution (Keras's `Conv1D`): a cross-correlation along the steps axis.

use super::conv_nd::conv_layer;

conv_layer! {
    /// The 1D convolution (Keras's `Conv1D`): a cross-correlation along the steps axis.
    ///
    /// Channels-last input `[batch, steps, channels]`; kernel `[k, channels, filters]`, bias `[filters]`.
    Conv1D, usize, ndarray::Ix3, Conv1D, Conv1DLayerWeight, transposed = false
}
