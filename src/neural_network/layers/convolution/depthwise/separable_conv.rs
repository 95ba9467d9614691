//! The separable layer behind `SeparableConv1D/2D`: the shared depthwise stage, then the
//! pointwise stage (a 1x1 convolution, bias and activation fused) on the convolutions' shared
//! im2col/GEMM engine (`convolution/engine.rs`), whose 1x1 stride-1 path is one product over
//! all positions.

use super::super::engine::{self as conv_engine, ConvGeometry};
use super::engine::DepthwiseGeometry;
use super::rank::ConvRank;
use super::stage::{positive, shared_builders, DepthwiseStage};
use super::PaddingType;
use crate::error::{Error, IoError, Result};
use crate::math::matmul;
use crate::neural_network::layers::activation::{Activation, ActivationCache};
use crate::neural_network::layers::initializers::glorot_uniform;
use crate::neural_network::layers::layer_util::{full_shape, require_shape};
use crate::neural_network::layers::layer_weight::LayerWeight;
use crate::neural_network::layers::TrainingParameters;
use crate::neural_network::traits::{Layer, ParamGrad};
use crate::neural_network::NnError;
use crate::neural_network::Tensor;
use ndarray::{Array, Array1, IxDyn};

/// A depthwise-separable convolution: a depthwise stage (kernel `[k.., C, dm]`, no bias) then a
/// pointwise stage (kernel `[1.., C*dm, filters]`) with the bias `[filters]` and the activation.
/// Both kernels start Glorot-uniform (depthwise first, from one stream), the bias at zero.
#[derive(Debug, Clone)]
pub struct SeparableConv<K: ConvRank> {
    stage: DepthwiseStage<K>,
    filters: usize,
    activation: Activation,
    use_bias: bool,
    pointwise: Array<f32, K>,
    bias: Array1<f32>,
    random_state: Option<u64>,
    /// Depthwise output `[batch, positions, C*dm]`, the pointwise geometry, the layer output.
    cache: Option<(Vec<f32>, ConvGeometry, ActivationCache)>,
    grad_pointwise: Option<Array<f32, K>>,
    grad_bias: Option<Array1<f32>>,
}

/// The pointwise stage's geometry: a 1x1 (stride 1, `Valid`) convolution over the depthwise
/// output's positions, `C*dm` channels in, `filters` out.
fn pointwise_geometry(layer: &str, g: &DepthwiseGeometry, filters: usize) -> Result<ConvGeometry> {
    let ones = vec![1; g.rank];
    ConvGeometry::new(
        layer,
        g.output_spatial(),
        &ones,
        &ones,
        &ones,
        PaddingType::Valid,
        g.lanes(),
        filters,
    )
}

/// The pointwise stage: `act(mid · pw + bias)` on the shared convolution engine, the bias and
/// a (Leaky)ReLU fused into its epilogue; whether the activation was fused comes back too.
fn pointwise_forward(
    geom: &ConvGeometry,
    batch: usize,
    mid: &[f32],
    pw: &[f32],
    bias: Option<&[f32]>,
    activation: Activation,
) -> Result<(Tensor, bool)> {
    let fused = match activation {
        Activation::ReLU => Some(matmul::Activation::Relu),
        Activation::LeakyReLU { negative_slope } => {
            Some(matmul::Activation::LeakyRelu(negative_slope))
        }
        _ => None,
    };
    let z = conv_engine::forward(geom, batch, mid, pw, bias, fused)?;
    Ok((z, fused.is_some()))
}

/// The pointwise stage's gradients from `dz` (`[batch, positions, filters]`): the kernel's
/// (`[C*dm, filters]`, flat), the bias's, and the depthwise output's (`[batch, positions, C*dm]`).
fn pointwise_backward(
    geom: &ConvGeometry,
    batch: usize,
    mid: &[f32],
    pw: &[f32],
    dz: &[f32],
) -> Result<(Vec<f32>, Vec<f32>, Tensor)> {
    let dpw = conv_engine::backward_weights(geom, batch, mid, dz)?;
    let db = conv_engine::channel_sums(dz, geom.filters);
    let dmid = conv_engine::backward_data(geom, batch, dz, pw, None)?;
    Ok((dpw.into_raw_vec_and_offset().0, db, dmid))
}

impl<K: ConvRank> SeparableConv<K> {
    /// The layer with the window checked under `padding` (see `DepthwiseConv::build_padded`).
    pub(crate) fn build_padded(
        filters: usize,
        kernel_size: Vec<usize>,
        input_shape: Vec<usize>,
        strides: Vec<usize>,
        depth_multiplier: usize,
        padding: PaddingType,
        activation: impl Into<Activation>,
    ) -> Result<Self> {
        if filters == 0 {
            return Err(Error::invalid_parameter("filters", "must be > 0"));
        }
        let activation = activation.into();
        activation.validate()?;
        let stage = DepthwiseStage::new(
            K::SEPARABLE,
            kernel_size,
            input_shape,
            strides,
            depth_multiplier,
            padding,
        )?;
        {
            // the pointwise kernel [C*dm, filters] and one sample's output
            // [positions.., filters], checked before the bias and kernel are drawn
            use crate::neural_network::layers::size_guard::check_f32_alloc;
            check_f32_alloc(K::SEPARABLE, "pointwise kernel", &[stage.lanes(), filters])?;
            let mut out = stage.input_shape[1..=K::SPATIAL].to_vec();
            out.push(filters);
            check_f32_alloc(K::SEPARABLE, "one sample's output", &out)?;
        }
        let mut layer = Self {
            pointwise: Array::zeros(K::zeros(K::SPATIAL + 2)),
            stage,
            filters,
            activation,
            use_bias: true,
            bias: Array1::zeros(filters),
            random_state: None,
            cache: None,
            grad_pointwise: None,
            grad_bias: None,
        };
        layer.init_weights();
        Ok(layer)
    }

    fn pointwise_shape(&self) -> K {
        let mut shape = vec![1; K::SPATIAL];
        shape.extend([self.stage.lanes(), self.filters]);
        K::from_dimension(&IxDyn(&shape)).expect("kernel rank matches the layer")
    }

    fn init_weights(&mut self) {
        let mut rng = crate::random::rng_from(self.random_state);
        self.stage.init_kernel(&mut rng);
        self.pointwise = glorot_uniform(self.pointwise_shape(), &mut rng);
        self.bias = Array1::zeros(self.filters);
    }

    shared_builders!();

    /// Replaces the depthwise kernel (`[k.., channels, dm]`), the pointwise kernel
    /// (`[1.., channels * dm, filters]`) and the bias (`[filters]`).
    pub fn set_weights(
        &mut self,
        depthwise_weights: Array<f32, K>,
        pointwise_weights: Array<f32, K>,
        bias: Array1<f32>,
    ) -> Result<()> {
        NnError::check_weight_shape(
            "depthwise_weights",
            self.stage.kernel_shape().slice(),
            depthwise_weights.shape(),
        )?;
        NnError::check_weight_shape(
            "pointwise_weights",
            self.pointwise_shape().slice(),
            pointwise_weights.shape(),
        )?;
        NnError::check_weight_shape("bias", &[self.filters], bias.shape())?;
        self.stage.kernel = depthwise_weights.as_standard_layout().into_owned();
        self.pointwise = pointwise_weights.as_standard_layout().into_owned();
        self.bias = bias.as_standard_layout().into_owned();
        Ok(())
    }

    /// The pre-activation (the activation too when it is fused: then the flag is true), then
    /// for the cache: the depthwise output, the pointwise geometry, the depthwise geometry and
    /// the C-order input.
    #[allow(clippy::type_complexity)]
    fn pre_activation(
        &self,
        input: &Tensor,
    ) -> Result<(
        Tensor,
        bool,
        Vec<f32>,
        ConvGeometry,
        DepthwiseGeometry,
        Tensor,
    )> {
        let (mid, g, x) = self.stage.run(input, None)?;
        let pg = pointwise_geometry(K::SEPARABLE, &g, self.filters)?;
        let bias = self
            .use_bias
            .then(|| self.bias.as_slice().expect("C order"));
        let pw = self.pointwise.as_slice().expect("C order");
        let (z, fused) = pointwise_forward(&pg, g.batch, &mid, pw, bias, self.activation)?;
        Ok((z, fused, mid, pg, g, x))
    }
}

impl<K: ConvRank> Layer for SeparableConv<K> {
    fn forward(&mut self, input: &Tensor) -> Result<Tensor> {
        self.stage.cache = None;
        self.cache = None;
        let (z, fused, mid, pg, g, x) = self.pre_activation(input)?;
        let (out, activation_cache) = self.activation.forward_training(z, fused)?;
        self.stage.cache = Some((x, g));
        self.cache = Some((mid, pg, activation_cache));
        Ok(out)
    }

    fn predict(&self, input: &Tensor) -> Result<Tensor> {
        let (mut out, fused, ..) = self.pre_activation(input)?;
        if !fused {
            self.activation.forward_in_place(&mut out)?;
        }
        Ok(out)
    }

    fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor> {
        let Some((mid, pg, cache)) = &self.cache else {
            return Err(Error::forward_pass_not_run(K::SEPARABLE));
        };
        require_shape(cache.shape(), grad_output.shape())?;
        let dz = self.activation.backward_cached(cache, grad_output)?;
        let batch = cache.shape()[0];
        let pw = self.pointwise.as_slice().expect("C order");
        let dz = dz.as_slice().expect("activation gradients are C order");
        let (dpw, db, dmid) = pointwise_backward(pg, batch, mid, pw, dz)?;
        self.grad_bias = Some(Array1::from_vec(db));
        self.grad_pointwise = Some(
            Array::from_shape_vec(self.pointwise.raw_dim(), dpw).expect("pointwise-sized gradient"),
        );
        let (dx, _) = self.stage.backward(dmid.as_slice().expect("C order"))?;
        Ok(dx)
    }

    fn layer_type(&self) -> &str {
        K::SEPARABLE
    }

    fn output_shape(&self) -> String {
        full_shape(&self.stage.output_dims(self.filters))
    }

    fn uses_bias(&self) -> bool {
        self.use_bias
    }

    fn param_count(&self) -> TrainingParameters {
        let bias = if self.use_bias { self.filters } else { 0 };
        TrainingParameters::Trainable(self.stage.kernel.len() + self.pointwise.len() + bias)
    }

    fn parameters(&mut self) -> Vec<ParamGrad<'_>> {
        let (Some(gd), Some(gp), Some(gb)) = (
            &self.stage.grad_kernel,
            &self.grad_pointwise,
            &self.grad_bias,
        ) else {
            return Vec::new();
        };
        let mut params = vec![
            ParamGrad::weight(
                self.stage.kernel.as_slice_mut().expect("C order"),
                gd.as_slice().expect("C order"),
            ),
            ParamGrad::weight(
                self.pointwise.as_slice_mut().expect("C order"),
                gp.as_slice().expect("C order"),
            ),
        ];
        if self.use_bias {
            params.push(ParamGrad::no_decay(
                self.bias.as_slice_mut().expect("C order"),
                gb.as_slice().expect("C order"),
            ));
        }
        params
    }

    fn get_weights(&self) -> LayerWeight<'_> {
        K::separable_weights(&self.stage.kernel, &self.pointwise, &self.bias)
    }

    fn apply_weights(&mut self, weights: &LayerWeight<'_>) -> Result<()> {
        let (d, p, b) = K::separable_parts(weights).ok_or_else(|| {
            IoError::ModelStructureMismatch(format!(
                "expected {} weights for a {} layer",
                K::SEPARABLE,
                K::SEPARABLE
            ))
        })?;
        self.set_weights(d.clone(), p.clone(), b.clone())
            .map_err(|e| IoError::ModelStructureMismatch(format!("{}: {e}", K::SEPARABLE)).into())
    }
}
