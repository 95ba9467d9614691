//! The 2D transposed convolution (Keras's `Conv2DTranspose`): Conv2D's input gradient as a layer; per axis `n * s + max(k - s, 0)` (Valid) or `n * s` (Same).

use super::conv_nd::conv_layer;

conv_layer! {
    /// The 2D transposed convolution (Keras's `Conv2DTranspose`): Conv2D's input gradient as a layer; per axis `n * s + max(k - s, 0)` (Valid) or `n * s` (Same).
    ///
    /// Channels-last input `[batch, height, width, channels]`; kernel `[kh, kw, filters, channels]`, bias `[filters]`.
    Conv2DTranspose, (usize, usize), ndarray::Ix4, Conv2DTranspose, Conv2DTransposeLayerWeight, transposed = true
}
