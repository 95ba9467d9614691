//! `SeparableConv2D`: a depthwise 2-D convolution followed by a pointwise (1x1) one.

use super::PaddingType;
use super::SeparableConv;
use crate::error::Result;
use crate::neural_network::layers::activation::Activation;
use crate::neural_network::layers::layer_weight::SeparableConv2DLayerWeight;
use crate::neural_network::traits::ApplyWeights;
use ndarray::Ix4;

/// Separable 2-D convolution: `[batch, h, w, C] -> [batch, out_h, out_w, filters]`; depthwise
/// kernel `[kh, kw, C, dm]`, pointwise kernel `[1, 1, C * dm, filters]`, bias `[filters]`.
pub type SeparableConv2D = SeparableConv<Ix4>;

impl SeparableConv<Ix4> {
    /// A layer for inputs shaped like `input_shape` (`[batch, height, width, channels]`),
    /// `Valid` padding until changed by `with_padding`.
    pub fn new(
        filters: usize,
        kernel_size: (usize, usize),
        input_shape: Vec<usize>,
        strides: (usize, usize),
        depth_multiplier: usize,
        activation: impl Into<Activation>,
    ) -> Result<Self> {
        Self::build_padded(
            filters,
            vec![kernel_size.0, kernel_size.1],
            input_shape,
            vec![strides.0, strides.1],
            depth_multiplier,
            PaddingType::Valid,
            activation,
        )
    }

    /// Keras's `dilation_rate` of the depthwise stage (default `(1, 1)`).
    pub fn with_dilation_rate(self, dilation_rate: (usize, usize)) -> Result<Self> {
        self.dilated(vec![dilation_rate.0, dilation_rate.1])
    }
}

impl ApplyWeights<SeparableConv2D> for SeparableConv2DLayerWeight<'_> {
    fn apply_to_layer(&self, layer: &mut SeparableConv2D) -> Result<()> {
        layer.set_weights(
            self.depthwise_weight.as_ref().clone(),
            self.pointwise_weight.as_ref().clone(),
            self.bias.as_ref().clone(),
        )
    }
}
