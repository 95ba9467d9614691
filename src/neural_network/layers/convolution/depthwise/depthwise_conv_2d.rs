//! `DepthwiseConv2D`: one filter bank per input channel over `[batch, height, width, channels]`.

use super::DepthwiseConv;
use super::PaddingType;
use crate::error::Result;
use crate::neural_network::layers::activation::Activation;
use crate::neural_network::layers::layer_weight::DepthwiseConv2DLayerWeight;
use crate::neural_network::traits::ApplyWeights;
use ndarray::Ix4;

/// Depthwise 2-D convolution: `[batch, h, w, C] -> [batch, out_h, out_w, C * depth_multiplier]`,
/// kernel `[kh, kw, C, depth_multiplier]`, bias `[C * depth_multiplier]` (Keras's layout).
pub type DepthwiseConv2D = DepthwiseConv<Ix4>;

impl DepthwiseConv<Ix4> {
    /// A layer for inputs shaped like `input_shape` (`[batch, height, width, channels]`),
    /// `Valid` padding and `depth_multiplier` 1 until changed by the builders.
    pub fn new(
        kernel_size: (usize, usize),
        input_shape: Vec<usize>,
        strides: (usize, usize),
        activation: impl Into<Activation>,
    ) -> Result<Self> {
        Self::build_padded(
            vec![kernel_size.0, kernel_size.1],
            input_shape,
            vec![strides.0, strides.1],
            PaddingType::Valid,
            activation,
        )
    }

    /// Keras's `dilation_rate` per spatial axis (default `(1, 1)`).
    pub fn with_dilation_rate(self, dilation_rate: (usize, usize)) -> Result<Self> {
        self.dilated(vec![dilation_rate.0, dilation_rate.1])
    }
}

impl ApplyWeights<DepthwiseConv2D> for DepthwiseConv2DLayerWeight<'_> {
    fn apply_to_layer(&self, layer: &mut DepthwiseConv2D) -> Result<()> {
        layer.set_weights(self.weight.as_ref().clone(), self.bias.as_ref().clone())
    }
}
