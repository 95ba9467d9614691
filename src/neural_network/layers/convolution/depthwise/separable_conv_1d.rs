//! `SeparableConv1D`: a depthwise 1-D convolution followed by a pointwise (1-tap) one.

use super::PaddingType;
use super::SeparableConv;
use crate::error::Result;
use crate::neural_network::layers::activation::Activation;
use crate::neural_network::layers::layer_weight::SeparableConv1DLayerWeight;
use crate::neural_network::traits::ApplyWeights;
use ndarray::Ix3;

/// Separable 1-D convolution: `[batch, length, C] -> [batch, out_length, filters]`; depthwise
/// kernel `[kernel_size, C, dm]`, pointwise kernel `[1, C * dm, filters]`, bias `[filters]`.
pub type SeparableConv1D = SeparableConv<Ix3>;

impl SeparableConv<Ix3> {
    /// A layer for inputs shaped like `input_shape` (`[batch, length, channels]`), `Valid`
    /// padding until changed by `with_padding`.
    pub fn new(
        filters: usize,
        kernel_size: usize,
        input_shape: Vec<usize>,
        stride: usize,
        depth_multiplier: usize,
        activation: impl Into<Activation>,
    ) -> Result<Self> {
        Self::build_padded(
            filters,
            vec![kernel_size],
            input_shape,
            vec![stride],
            depth_multiplier,
            PaddingType::Valid,
            activation,
        )
    }

    /// Keras's `dilation_rate` of the depthwise stage (default 1).
    pub fn with_dilation_rate(self, dilation_rate: usize) -> Result<Self> {
        self.dilated(vec![dilation_rate])
    }
}

impl ApplyWeights<SeparableConv1D> for SeparableConv1DLayerWeight<'_> {
    fn apply_to_layer(&self, layer: &mut SeparableConv1D) -> Result<()> {
        layer.set_weights(
            self.depthwise_weight.as_ref().clone(),
            self.pointwise_weight.as_ref().clone(),
            self.bias.as_ref().clone(),
        )
    }
}
