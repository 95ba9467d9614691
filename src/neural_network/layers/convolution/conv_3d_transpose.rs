//! The 3D transposed convolution (Keras's `Conv3DTranspose`): Conv3D's input gradient as a layer; per axis `n * s + max(k - s, 0)` (Valid) or `n * s` (Same).

use super::conv_nd::conv_layer;

conv_layer! {
    /// The 3D transposed convolution (Keras's `Conv3DTranspose`): Conv3D's input gradient as a layer; per axis `n * s + max(k - s, 0)` (Valid) or `n * s` (Same).
    ///
    /// Channels-last input `[batch, depth, height, width, channels]`; kernel `[kd, kh, kw, filters, channels]`, bias `[filters]`.
    Conv3DTranspose, (usize, usize, usize), ndarray::Ix5, Conv3DTranspose, Conv3DTransposeLayerWeight, transposed = true
}
