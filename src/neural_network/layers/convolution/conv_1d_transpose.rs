//! The 1D transposed convolution (Keras's `Conv1DTranspose`): Conv1D's input gradient as a layer; output length `n * s + max(k - s, 0)` (Valid) or `n * s` (Same).

use super::conv_nd::conv_layer;

conv_layer! {
    /// The 1D transposed convolution (Keras's `Conv1DTranspose`): Conv1D's input gradient as a layer; output length `n * s + max(k - s, 0)` (Valid) or `n * s` (Same).
    ///
    /// Channels-last input `[batch, steps, channels]`; kernel `[k, filters, channels]`, bias `[filters]`.
    Conv1DTranspose, usize, ndarray::Ix3, Conv1DTranspose, Conv1DTransposeLayerWeight, transposed = true
}
