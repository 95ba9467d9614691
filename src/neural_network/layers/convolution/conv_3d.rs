//! The 3D convolution (Keras's `Conv3D`): a cross-correlation over depth, height and width.

use super::conv_nd::conv_layer;

conv_layer! {
    /// The 3D convolution (Keras's `Conv3D`): a cross-correlation over depth, height and width.
    ///
    /// Channels-last input `[batch, depth, height, width, channels]`; kernel `[kd, kh, kw, channels, filters]`, bias `[filters]`.
    Conv3D, (usize, usize, usize), ndarray::Ix5, Conv3D, Conv3DLayerWeight, transposed = false
}
