//! `DepthwiseConv1D`: one filter bank per input channel over `[batch, length, channels]`.

use super::DepthwiseConv;
use super::PaddingType;
use crate::error::Result;
use crate::neural_network::layers::activation::Activation;
use crate::neural_network::layers::layer_weight::DepthwiseConv1DLayerWeight;
use crate::neural_network::traits::ApplyWeights;
use ndarray::Ix3;

/// Depthwise 1-D convolution: `[batch, length, C] -> [batch, out_length, C * depth_multiplier]`,
/// kernel `[kernel_size, C, depth_multiplier]`, bias `[C * depth_multiplier]` (Keras's layout).
pub type DepthwiseConv1D = DepthwiseConv<Ix3>;

impl DepthwiseConv<Ix3> {
    /// A layer for inputs shaped like `input_shape` (`[batch, length, channels]`), `Valid`
    /// padding and `depth_multiplier` 1 until changed by the builders.
    pub fn new(
        kernel_size: usize,
        input_shape: Vec<usize>,
        stride: usize,
        activation: impl Into<Activation>,
    ) -> Result<Self> {
        Self::build_padded(
            vec![kernel_size],
            input_shape,
            vec![stride],
            PaddingType::Valid,
            activation,
        )
    }

    /// Keras's `dilation_rate`: taps `dilation_rate` cells apart (default 1).
    pub fn with_dilation_rate(self, dilation_rate: usize) -> Result<Self> {
        self.dilated(vec![dilation_rate])
    }
}

impl ApplyWeights<DepthwiseConv1D> for DepthwiseConv1DLayerWeight<'_> {
    fn apply_to_layer(&self, layer: &mut DepthwiseConv1D) -> Result<()> {
        layer.set_weights(self.weight.as_ref().clone(), self.bias.as_ref().clone())
    }
}
