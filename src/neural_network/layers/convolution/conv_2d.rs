//! The 2D convolution (Keras's `Conv2D`): a cross-correlation over height and width.

use super::conv_nd::conv_layer;

conv_layer! {
    /// The 2D convolution (Keras's `Conv2D`): a cross-correlation over height and width.
    ///
    /// Channels-last input `[batch, height, width, channels]`; kernel `[kh, kw, channels, filters]`, bias `[filters]`.
    Conv2D, (usize, usize), ndarray::Ix4, Conv2D, Conv2DLayerWeight, transposed = false
}
