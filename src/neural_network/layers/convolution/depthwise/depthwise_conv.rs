//! The depthwise layer behind `DepthwiseConv1D/2D`: the shared stage with its own bias and
//! activation.

use super::engine::DepthwiseGeometry;
use super::rank::ConvRank;
use super::stage::{positive, shared_builders, DepthwiseStage};
use super::PaddingType;
use crate::error::{Error, IoError, Result};
use crate::neural_network::layers::activation::{Activation, ActivationCache};
use crate::neural_network::layers::layer_util::{full_shape, require_shape};
use crate::neural_network::layers::layer_weight::LayerWeight;
use crate::neural_network::layers::TrainingParameters;
use crate::neural_network::traits::{Layer, ParamGrad};
use crate::neural_network::NnError;
use crate::neural_network::Tensor;
use ndarray::{Array, Array1, IxDyn};

/// `Tensor` of shape `[batch, out.., lanes]` over `data`.
fn output_tensor(g: &DepthwiseGeometry, lanes: usize, data: Vec<f32>) -> Tensor {
    let mut shape = vec![g.batch];
    shape.extend_from_slice(g.output_spatial());
    shape.push(lanes);
    Tensor::from_shape_vec(IxDyn(&shape), data).expect("engine output matches its geometry")
}

/// A depthwise convolution: `activation(depthwise(x) + bias)`, output `[batch, out.., C*dm]`.
/// The kernel `[k.., C, dm]` starts Glorot-uniform, the bias `[C*dm]` at zero.
#[derive(Debug, Clone)]
pub struct DepthwiseConv<K: ConvRank> {
    stage: DepthwiseStage<K>,
    activation: Activation,
    use_bias: bool,
    bias: Array1<f32>,
    random_state: Option<u64>,
    /// What the activation's backward pass reads.
    activation_cache: Option<ActivationCache>,
    grad_bias: Option<Array1<f32>>,
}

impl<K: ConvRank> DepthwiseConv<K> {
    /// The layer with the window checked under `padding` (the original's constructors check
    /// it under `Valid`, before `with_padding` can run).
    pub(crate) fn build_padded(
        kernel_size: Vec<usize>,
        input_shape: Vec<usize>,
        strides: Vec<usize>,
        padding: PaddingType,
        activation: impl Into<Activation>,
    ) -> Result<Self> {
        let activation = activation.into();
        activation.validate()?;
        let stage =
            DepthwiseStage::new(K::DEPTHWISE, kernel_size, input_shape, strides, 1, padding)?;
        let mut layer = Self {
            bias: Array1::zeros(stage.lanes()),
            stage,
            activation,
            use_bias: true,
            random_state: None,
            activation_cache: None,
            grad_bias: None,
        };
        layer.init_weights();
        Ok(layer)
    }

    fn init_weights(&mut self) {
        let mut rng = crate::random::rng_from(self.random_state);
        self.stage.init_kernel(&mut rng);
        self.bias = Array1::zeros(self.stage.lanes());
    }

    shared_builders!();

    /// Filters per input channel (default 1): the output has `channels * depth_multiplier`
    /// channels. Re-draws the kernel at its new shape and zeroes the bias.
    pub fn with_depth_multiplier(mut self, depth_multiplier: usize) -> Result<Self> {
        if depth_multiplier == 0 {
            return Err(Error::invalid_parameter("depth_multiplier", "must be > 0"));
        }
        DepthwiseStage::<K>::check_sizes(
            self.stage.name,
            &self.stage.kernel_size,
            &self.stage.input_shape,
            depth_multiplier,
        )?;
        self.stage.multiplier = depth_multiplier;
        self.init_weights();
        Ok(self)
    }

    /// Replaces the kernel (`[k.., channels, depth_multiplier]`) and the bias
    /// (`[channels * depth_multiplier]`).
    pub fn set_weights(&mut self, weights: Array<f32, K>, bias: Array1<f32>) -> Result<()> {
        NnError::check_weight_shape(
            "weights",
            self.stage.kernel_shape().slice(),
            weights.shape(),
        )?;
        NnError::check_weight_shape("bias", &[self.stage.lanes()], bias.shape())?;
        self.stage.kernel = weights.as_standard_layout().into_owned();
        self.bias = bias.as_standard_layout().into_owned();
        Ok(())
    }

    /// The pre-activation (the depthwise convolution plus bias), its geometry and the C-order
    /// input.
    fn pre_activation(&self, input: &Tensor) -> Result<(Tensor, DepthwiseGeometry, Tensor)> {
        let bias = self
            .use_bias
            .then(|| self.bias.as_slice().expect("C order"));
        let (y, g, x) = self.stage.run(input, bias)?;
        Ok((output_tensor(&g, self.stage.lanes(), y), g, x))
    }
}

impl<K: ConvRank> Layer for DepthwiseConv<K> {
    fn forward(&mut self, input: &Tensor) -> Result<Tensor> {
        self.stage.cache = None;
        self.activation_cache = None;
        let (z, g, x) = self.pre_activation(input)?;
        let (out, activation_cache) = self.activation.forward_training(z, false)?;
        self.stage.cache = Some((x, g));
        self.activation_cache = Some(activation_cache);
        Ok(out)
    }

    fn predict(&self, input: &Tensor) -> Result<Tensor> {
        let mut out = self.pre_activation(input)?.0;
        self.activation.forward_in_place(&mut out)?;
        Ok(out)
    }

    fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor> {
        let Some(cache) = &self.activation_cache else {
            return Err(Error::forward_pass_not_run(K::DEPTHWISE));
        };
        require_shape(cache.shape(), grad_output.shape())?;
        let dz = self.activation.backward_cached(cache, grad_output)?;
        let (dx, db) = self
            .stage
            .backward(dz.as_slice().expect("activation gradients are C order"))?;
        self.grad_bias = Some(Array1::from_vec(db));
        Ok(dx)
    }

    fn layer_type(&self) -> &str {
        K::DEPTHWISE
    }

    fn output_shape(&self) -> String {
        full_shape(&self.stage.output_dims(self.stage.lanes()))
    }

    fn uses_bias(&self) -> bool {
        self.use_bias
    }

    fn param_count(&self) -> TrainingParameters {
        let bias = if self.use_bias { self.bias.len() } else { 0 };
        TrainingParameters::Trainable(self.stage.kernel.len() + bias)
    }

    fn parameters(&mut self) -> Vec<ParamGrad<'_>> {
        let (Some(gw), Some(gb)) = (&self.stage.grad_kernel, &self.grad_bias) else {
            return Vec::new();
        };
        let mut params = vec![ParamGrad::weight(
            self.stage.kernel.as_slice_mut().expect("C order"),
            gw.as_slice().expect("C order"),
        )];
        if self.use_bias {
            params.push(ParamGrad::no_decay(
                self.bias.as_slice_mut().expect("C order"),
                gb.as_slice().expect("C order"),
            ));
        }
        params
    }

    fn get_weights(&self) -> LayerWeight<'_> {
        K::depthwise_weights(&self.stage.kernel, &self.bias)
    }

    fn apply_weights(&mut self, weights: &LayerWeight<'_>) -> Result<()> {
        let (w, b) = K::depthwise_parts(weights).ok_or_else(|| {
            IoError::ModelStructureMismatch(format!(
                "expected {} weights for a {} layer",
                K::DEPTHWISE,
                K::DEPTHWISE
            ))
        })?;
        self.set_weights(w.clone(), b.clone())
            .map_err(|e| IoError::ModelStructureMismatch(format!("{}: {e}", K::DEPTHWISE)).into())
    }
}
