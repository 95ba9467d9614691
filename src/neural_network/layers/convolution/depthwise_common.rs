//! The one implementation behind `DepthwiseConv1D/2D` and `SeparableConv1D/2D`: generic
//! layers over the kernel's array dimension (`Ix3` for one spatial axis, `Ix4` for two). The
//! per-rank files only add the original's constructors and name the weight containers.
//!
//! Both layers share a [`DepthwiseStage`] (window, kernel, cached input and geometry) that runs
//! the direct engine of [`super::depthwise_engine`]. The separable layer adds the pointwise
//! stage (a 1x1 convolution, bias and activation fused) on the shared im2col/GEMM engine
//! [`super::engine`], whose 1x1 stride-1 path is one product over all positions.

use super::depthwise_engine::{self as engine, DepthwiseGeometry};
use super::engine::{self as conv_engine, ConvGeometry};
use super::PaddingType;
use crate::error::{Error, IoError, RustymlResult};
use crate::math::matmul;
use crate::neural_network::layers::activation::Activation;
use crate::neural_network::layers::layer_util::{full_shape, require_shape};
use crate::neural_network::layers::layer_weight::LayerWeight;
use crate::neural_network::layers::TrainingParameters;
use crate::neural_network::traits::{Layer, ParamGrad};
use crate::neural_network::{NnError, Tensor};
use ndarray::{Array, Array1, Dimension, IxDyn};
use rand::Rng;
use std::borrow::Cow;

/// What differs between the 1-D and 2-D layers: the kernel rank, the names, the weight
/// containers.
pub trait ConvRank: Dimension + 'static {
    /// Spatial axes of the input (`kernel rank - 2`).
    const SPATIAL: usize;
    const DEPTHWISE: &'static str;
    const SEPARABLE: &'static str;
    fn depthwise_weights<'a>(
        kernel: &'a Array<f32, Self>,
        bias: &'a Array1<f32>,
    ) -> LayerWeight<'a>;
    fn separable_weights<'a>(
        depthwise: &'a Array<f32, Self>,
        pointwise: &'a Array<f32, Self>,
        bias: &'a Array1<f32>,
    ) -> LayerWeight<'a>;
    /// The kernel and bias if `w` is this rank's depthwise container.
    fn depthwise_parts<'b>(
        w: &'b LayerWeight<'_>,
    ) -> Option<(&'b Array<f32, Self>, &'b Array1<f32>)>;
    /// The three arrays if `w` is this rank's separable container.
    #[allow(clippy::type_complexity)]
    fn separable_parts<'b>(
        w: &'b LayerWeight<'_>,
    ) -> Option<(&'b Array<f32, Self>, &'b Array<f32, Self>, &'b Array1<f32>)>;
}

macro_rules! conv_rank {
    ($dim:ty, $spatial:expr, $dw:ident, $dwst:ident, $sep:ident, $sepst:ident) => {
        impl ConvRank for $dim {
            const SPATIAL: usize = $spatial;
            const DEPTHWISE: &'static str = stringify!($dw);
            const SEPARABLE: &'static str = stringify!($sep);
            fn depthwise_weights<'a>(
                kernel: &'a Array<f32, Self>,
                bias: &'a Array1<f32>,
            ) -> LayerWeight<'a> {
                LayerWeight::$dw(crate::neural_network::layers::layer_weight::$dwst {
                    weight: Cow::Borrowed(kernel),
                    bias: Cow::Borrowed(bias),
                })
            }
            fn separable_weights<'a>(
                depthwise: &'a Array<f32, Self>,
                pointwise: &'a Array<f32, Self>,
                bias: &'a Array1<f32>,
            ) -> LayerWeight<'a> {
                LayerWeight::$sep(crate::neural_network::layers::layer_weight::$sepst {
                    depthwise_weight: Cow::Borrowed(depthwise),
                    pointwise_weight: Cow::Borrowed(pointwise),
                    bias: Cow::Borrowed(bias),
                })
            }
            fn depthwise_parts<'b>(
                w: &'b LayerWeight<'_>,
            ) -> Option<(&'b Array<f32, Self>, &'b Array1<f32>)> {
                match w {
                    LayerWeight::$dw(w) => Some((w.weight.as_ref(), w.bias.as_ref())),
                    _ => None,
                }
            }
            fn separable_parts<'b>(
                w: &'b LayerWeight<'_>,
            ) -> Option<(&'b Array<f32, Self>, &'b Array<f32, Self>, &'b Array1<f32>)> {
                match w {
                    LayerWeight::$sep(w) => Some((
                        w.depthwise_weight.as_ref(),
                        w.pointwise_weight.as_ref(),
                        w.bias.as_ref(),
                    )),
                    _ => None,
                }
            }
        }
    };
}

conv_rank!(
    ndarray::Ix3,
    1,
    DepthwiseConv1D,
    DepthwiseConv1DLayerWeight,
    SeparableConv1D,
    SeparableConv1DLayerWeight
);
conv_rank!(
    ndarray::Ix4,
    2,
    DepthwiseConv2D,
    DepthwiseConv2DLayerWeight,
    SeparableConv2D,
    SeparableConv2DLayerWeight
);

/// `(3, 3)` / `(5,)`: spatial sizes as the error messages print them.
fn tuple(v: &[usize]) -> String {
    full_shape(v)
}

/// Glorot-uniform kernel of shape `[k.., fan_in_axis, fan_out_axis]`, fans as Keras counts
/// them (receptive field x the last two axes).
fn glorot<K: Dimension>(shape: K, rng: &mut impl Rng) -> Array<f32, K> {
    let s = shape.slice();
    let receptive: usize = s[..s.len() - 2].iter().product();
    let fan_in = receptive * s[s.len() - 2];
    let fan_out = receptive * s[s.len() - 1];
    let limit = (6.0 / (fan_in + fan_out) as f64).sqrt() as f32;
    Array::from_shape_simple_fn(shape, || rng.random_range(-limit..limit))
}

fn check_shape(name: &str, expected: &[usize], found: &[usize]) -> RustymlResult<()> {
    if expected == found {
        Ok(())
    } else {
        Err(NnError::WeightShape {
            name: name.to_string(),
            expected: expected.to_vec(),
            found: found.to_vec(),
        }
        .into())
    }
}

fn positive(name: &str, values: &[usize]) -> RustymlResult<()> {
    if values.contains(&0) {
        return Err(Error::invalid_parameter(
            name,
            format!("every entry must be > 0, got {}", tuple(values)),
        ));
    }
    Ok(())
}

fn ordered(t: &Tensor) -> Tensor {
    t.as_standard_layout().into_owned()
}

/// The depthwise stage both layers share: window, kernel `[k.., C, dm]`, and what the backward
/// pass needs (the C-order input and its geometry).
#[derive(Debug, Clone)]
pub struct DepthwiseStage<K: ConvRank> {
    name: &'static str,
    input_shape: Vec<usize>,
    kernel_size: Vec<usize>,
    strides: Vec<usize>,
    dilation: Vec<usize>,
    padding: PaddingType,
    multiplier: usize,
    kernel: Array<f32, K>,
    grad_kernel: Option<Array<f32, K>>,
    cache: Option<(Tensor, DepthwiseGeometry)>,
}

impl<K: ConvRank> DepthwiseStage<K> {
    fn new(
        name: &'static str,
        kernel_size: Vec<usize>,
        input_shape: Vec<usize>,
        strides: Vec<usize>,
        multiplier: usize,
        padding: PaddingType,
    ) -> RustymlResult<Self> {
        positive("kernel_size", &kernel_size)?;
        positive("strides", &strides)?;
        if multiplier == 0 {
            return Err(Error::invalid_parameter("depth_multiplier", "must be > 0"));
        }
        if input_shape.len() != K::SPATIAL + 2 {
            return Err(Error::invalid_input(format!(
                "{name}: input_shape must be [batch, {}channels] ({} axes), got {:?}",
                "spatial.., ",
                K::SPATIAL + 2,
                input_shape
            )));
        }
        if input_shape.contains(&0) {
            return Err(Error::invalid_input(format!(
                "{name}: input_shape {input_shape:?} has a zero-sized axis"
            )));
        }
        Self::check_sizes(name, &kernel_size, &input_shape, multiplier)?;
        let stage = Self {
            name,
            input_shape,
            dilation: vec![1; kernel_size.len()],
            kernel_size,
            strides,
            padding,
            multiplier,
            kernel: Array::zeros(K::zeros(K::SPATIAL + 2)),
            grad_kernel: None,
            cache: None,
        };
        stage.check_window()?;
        Ok(stage)
    }

    /// The kernel and one sample's output (at most the input's positions times the lanes)
    /// must be allocatable; checked before the kernel is drawn.
    fn check_sizes(
        name: &str,
        kernel_size: &[usize],
        input_shape: &[usize],
        multiplier: usize,
    ) -> RustymlResult<()> {
        use crate::neural_network::layers::size_guard::{check_f32_alloc, mul_size};
        let channels = input_shape[K::SPATIAL + 1];
        let mut kernel = kernel_size.to_vec();
        kernel.extend([channels, multiplier]);
        check_f32_alloc(name, "depthwise kernel", &kernel)?;
        let mut out = input_shape[1..=K::SPATIAL].to_vec();
        out.push(mul_size(
            name,
            "channels * depth_multiplier",
            channels,
            multiplier,
        )?);
        check_f32_alloc(name, "one sample's output", &out)?;
        Ok(())
    }

    fn channels(&self) -> usize {
        self.input_shape[K::SPATIAL + 1]
    }

    fn lanes(&self) -> usize {
        self.channels() * self.multiplier
    }

    fn kernel_shape(&self) -> K {
        let mut shape = self.kernel_size.clone();
        shape.extend([self.channels(), self.multiplier]);
        K::from_dimension(&IxDyn(&shape)).expect("kernel rank matches the layer")
    }

    /// The geometry of `input` (`[batch, spatial.., C]`) under this window.
    fn geometry(&self, input: &[usize]) -> RustymlResult<DepthwiseGeometry> {
        let name = self.name;
        if input.len() != K::SPATIAL + 2 {
            return Err(Error::invalid_input(format!(
                "{name}: expected a {}D input [batch, spatial.., channels], got shape {input:?}",
                K::SPATIAL + 2
            )));
        }
        let c = input[K::SPATIAL + 1];
        if c != self.channels() {
            return Err(Error::dimension_mismatch(self.channels(), c));
        }
        self.padding.refuse_causal(name)?;
        let spatial = &input[1..=K::SPATIAL];
        if spatial.contains(&0) {
            return Err(Error::invalid_input(format!(
                "{name}: input of shape {input:?} has an empty spatial axis"
            )));
        }
        DepthwiseGeometry::new(
            input[0],
            spatial,
            c,
            self.multiplier,
            &self.kernel_size,
            &self.strides,
            &self.dilation,
            self.padding,
        )
        .ok_or_else(|| {
            let span: Vec<usize> = self
                .kernel_size
                .iter()
                .zip(&self.dilation)
                .map(|(k, d)| d * (k - 1) + 1)
                .collect();
            Error::invalid_input(format!(
                "{name}: kernel {} (dilated span {}) larger than the input {} under 'valid' padding",
                tuple(&self.kernel_size),
                tuple(&span),
                tuple(spatial)
            ))
        })
    }

    /// The declared input admits at least one window.
    fn check_window(&self) -> RustymlResult<()> {
        self.geometry(&self.input_shape).map(|_| ())
    }

    fn init_kernel(&mut self, rng: &mut impl Rng) {
        self.kernel = glorot(self.kernel_shape(), rng);
    }

    fn output_dims(&self, lanes: usize) -> Vec<usize> {
        let mut dims = vec![self.input_shape[0]];
        match self.geometry(&self.input_shape) {
            Ok(g) => dims.extend_from_slice(g.output_spatial()),
            Err(_) => dims.extend(std::iter::repeat_n(0, K::SPATIAL)),
        }
        dims.push(lanes);
        dims
    }

    /// `[batch * positions, C*dm]` depthwise output (bias added when given) and the geometry;
    /// the C-order input comes back for the cache.
    fn run(
        &self,
        input: &Tensor,
        bias: Option<&[f32]>,
    ) -> RustymlResult<(Vec<f32>, DepthwiseGeometry, Tensor)> {
        let g = self.geometry(input.shape())?;
        let x = ordered(input);
        let w = self.kernel.as_slice().expect("kernel is C order");
        let y = engine::forward(&g, x.as_slice().expect("C order"), w, bias);
        Ok((y, g, x))
    }

    /// Input gradient from the gradient of the stage output (`[batch * positions, C*dm]`);
    /// stores the kernel gradient, returns the input gradient and the per-lane sums of `dy`.
    fn backward(&mut self, dy: &[f32]) -> RustymlResult<(Tensor, Vec<f32>)> {
        let Some((x, g)) = &self.cache else {
            return Err(Error::forward_pass_not_run(self.name));
        };
        let w = self.kernel.as_slice().expect("kernel is C order");
        let dx = engine::backward_input(g, dy, w);
        let (dw, db) = engine::backward_kernel(g, x.as_slice().expect("C order"), dy);
        self.grad_kernel =
            Some(Array::from_shape_vec(self.kernel.raw_dim(), dw).expect("kernel-sized gradient"));
        let dx = Tensor::from_shape_vec(x.raw_dim(), dx).expect("input-sized gradient");
        Ok((dx, db))
    }
}

/// `Tensor` of shape `[batch, out.., lanes]` over `data`.
fn output_tensor(g: &DepthwiseGeometry, lanes: usize, data: Vec<f32>) -> Tensor {
    let mut shape = vec![g.batch];
    shape.extend_from_slice(g.output_spatial());
    shape.push(lanes);
    Tensor::from_shape_vec(IxDyn(&shape), data).expect("engine output matches its geometry")
}

/// Builders every layer of the family shares.
macro_rules! shared_builders {
    () => {
        /// Keras's padding mode (default `Valid`).
        pub fn with_padding(mut self, padding: PaddingType) -> Self {
            self.stage.padding = padding;
            self
        }

        /// Re-draws the kernels from `random_state`: equal seeds give equal layers.
        pub fn with_random_state(mut self, random_state: u64) -> Self {
            self.random_state = Some(random_state);
            self.init_weights();
            self
        }

        /// Keras's `dilation_rate` per spatial axis (the per-rank `with_dilation_rate` calls this).
        pub(crate) fn dilated(mut self, dilation_rate: Vec<usize>) -> RustymlResult<Self> {
            positive("dilation_rate", &dilation_rate)?;
            if dilation_rate.len() != K::SPATIAL {
                return Err(Error::invalid_parameter(
                    "dilation_rate",
                    format!(
                        "expected {} entries, got {}",
                        K::SPATIAL,
                        dilation_rate.len()
                    ),
                ));
            }
            let previous = std::mem::replace(&mut self.stage.dilation, dilation_rate);
            if let Err(e) = self.stage.check_window() {
                self.stage.dilation = previous;
                return Err(e);
            }
            Ok(self)
        }

        /// Keras's `use_bias` (default true): without it the bias stays zero and untrained.
        pub fn with_use_bias(mut self, use_bias: bool) -> Self {
            self.use_bias = use_bias;
            if !use_bias {
                self.bias.fill(0.0);
            }
            self
        }

        /// The padding mode.
        pub fn padding(&self) -> PaddingType {
            self.stage.padding
        }
    };
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
    output_cache: Option<Tensor>,
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
    ) -> RustymlResult<Self> {
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
            output_cache: None,
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
    pub fn with_depth_multiplier(mut self, depth_multiplier: usize) -> RustymlResult<Self> {
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
    pub fn set_weights(&mut self, weights: Array<f32, K>, bias: Array1<f32>) -> RustymlResult<()> {
        check_shape(
            "weights",
            self.stage.kernel_shape().slice(),
            weights.shape(),
        )?;
        check_shape("bias", &[self.stage.lanes()], bias.shape())?;
        self.stage.kernel = weights.as_standard_layout().into_owned();
        self.bias = bias.as_standard_layout().into_owned();
        Ok(())
    }

    fn compute(&self, input: &Tensor) -> RustymlResult<(Tensor, DepthwiseGeometry, Tensor)> {
        let bias = self
            .use_bias
            .then(|| self.bias.as_slice().expect("C order"));
        let (y, g, x) = self.stage.run(input, bias)?;
        let mut out = output_tensor(&g, self.stage.lanes(), y);
        self.activation.forward_in_place(&mut out)?;
        Ok((out, g, x))
    }
}

impl<K: ConvRank> Layer for DepthwiseConv<K> {
    fn forward(&mut self, input: &Tensor) -> RustymlResult<Tensor> {
        self.stage.cache = None;
        self.output_cache = None;
        let (out, g, x) = self.compute(input)?;
        self.stage.cache = Some((x, g));
        self.output_cache = Some(out.clone());
        Ok(out)
    }

    fn predict(&self, input: &Tensor) -> RustymlResult<Tensor> {
        Ok(self.compute(input)?.0)
    }

    fn backward(&mut self, grad_output: &Tensor) -> RustymlResult<Tensor> {
        let Some(out) = &self.output_cache else {
            return Err(Error::forward_pass_not_run(K::DEPTHWISE));
        };
        require_shape(out.shape(), grad_output.shape())?;
        let dz = self.activation.backward(out, grad_output)?;
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

    fn apply_weights(&mut self, weights: &LayerWeight<'_>) -> RustymlResult<()> {
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
    cache: Option<(Vec<f32>, ConvGeometry, Tensor)>,
    grad_pointwise: Option<Array<f32, K>>,
    grad_bias: Option<Array1<f32>>,
}

/// The pointwise stage's geometry: a 1x1 (stride 1, `Valid`) convolution over the depthwise
/// output's positions, `C*dm` channels in, `filters` out.
fn pointwise_geometry(
    layer: &str,
    g: &DepthwiseGeometry,
    filters: usize,
) -> RustymlResult<ConvGeometry> {
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
) -> RustymlResult<(Tensor, bool)> {
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
) -> RustymlResult<(Vec<f32>, Vec<f32>, Tensor)> {
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
    ) -> RustymlResult<Self> {
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
        self.pointwise = glorot(self.pointwise_shape(), &mut rng);
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
    ) -> RustymlResult<()> {
        check_shape(
            "depthwise_weights",
            self.stage.kernel_shape().slice(),
            depthwise_weights.shape(),
        )?;
        check_shape(
            "pointwise_weights",
            self.pointwise_shape().slice(),
            pointwise_weights.shape(),
        )?;
        check_shape("bias", &[self.filters], bias.shape())?;
        self.stage.kernel = depthwise_weights.as_standard_layout().into_owned();
        self.pointwise = pointwise_weights.as_standard_layout().into_owned();
        self.bias = bias.as_standard_layout().into_owned();
        Ok(())
    }

    /// The output, then for the cache: the depthwise output, the pointwise geometry, the
    /// depthwise geometry and the C-order input.
    #[allow(clippy::type_complexity)]
    fn compute(
        &self,
        input: &Tensor,
    ) -> RustymlResult<(Tensor, Vec<f32>, ConvGeometry, DepthwiseGeometry, Tensor)> {
        let (mid, g, x) = self.stage.run(input, None)?;
        let pg = pointwise_geometry(K::SEPARABLE, &g, self.filters)?;
        let bias = self
            .use_bias
            .then(|| self.bias.as_slice().expect("C order"));
        let pw = self.pointwise.as_slice().expect("C order");
        let (mut out, fused) = pointwise_forward(&pg, g.batch, &mid, pw, bias, self.activation)?;
        if !fused {
            self.activation.forward_in_place(&mut out)?;
        }
        Ok((out, mid, pg, g, x))
    }
}

impl<K: ConvRank> Layer for SeparableConv<K> {
    fn forward(&mut self, input: &Tensor) -> RustymlResult<Tensor> {
        self.stage.cache = None;
        self.cache = None;
        let (out, mid, pg, g, x) = self.compute(input)?;
        self.stage.cache = Some((x, g));
        self.cache = Some((mid, pg, out.clone()));
        Ok(out)
    }

    fn predict(&self, input: &Tensor) -> RustymlResult<Tensor> {
        Ok(self.compute(input)?.0)
    }

    fn backward(&mut self, grad_output: &Tensor) -> RustymlResult<Tensor> {
        let Some((mid, pg, out)) = &self.cache else {
            return Err(Error::forward_pass_not_run(K::SEPARABLE));
        };
        require_shape(out.shape(), grad_output.shape())?;
        let dz = self.activation.backward(out, grad_output)?;
        let batch = out.shape()[0];
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

    fn apply_weights(&mut self, weights: &LayerWeight<'_>) -> RustymlResult<()> {
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

#[cfg(test)]
mod tests {
    use super::super::depthwise_engine::CONV_NAIVE_PARALLEL_MIN_FLOPS;
    use super::super::{DepthwiseConv1D, DepthwiseConv2D, SeparableConv1D, SeparableConv2D};
    use super::*;
    use crate::gate::serial_and_parallel;

    fn ramp(shape: &[usize], scale: f32) -> Tensor {
        Tensor::from_shape_fn(IxDyn(shape), |i| {
            let k: usize = i
                .slice()
                .iter()
                .enumerate()
                .map(|(a, &v)| v * (a + 3))
                .sum();
            ((k * 7 % 19) as f32 - 9.0) * scale
        })
    }

    /// L = Σ c ⊙ out with fixed weights c, so dL/dout = c; every input and parameter gradient
    /// against central differences of the layer's own forward pass, accumulated in f64.
    fn check_gradients(layer: &mut dyn Layer, x: &Tensor) {
        let out = layer.forward(x).unwrap();
        let c = ramp(out.shape(), 0.1).mapv(|v| v + 1.05);
        let dx = layer.backward(&c).unwrap();
        assert_eq!(dx.shape(), x.shape());
        let loss = |layer: &dyn Layer, x: &Tensor| -> f64 {
            let o = layer.predict(x).unwrap();
            o.iter()
                .zip(c.iter())
                .map(|(&o, &c)| o as f64 * c as f64)
                .sum()
        };
        // h balances truncation (smooth activations, O(h²)) against f32 rounding of the
        // outputs (~eps·Σ|c·out| / h); the bound is that rounding for these sizes.
        let h = 1e-2f32;
        let tol = 3e-3;
        for i in 0..x.len() {
            let (mut p, mut m) = (x.clone(), x.clone());
            p.as_slice_mut().unwrap()[i] += h;
            m.as_slice_mut().unwrap()[i] -= h;
            let num = (loss(layer, &p) - loss(layer, &m)) / (2.0 * h as f64);
            let got = dx.as_slice().unwrap()[i] as f64;
            assert!((got - num).abs() < tol, "dx[{i}]: {got} vs {num}");
        }
        let grads: Vec<Vec<f32>> = layer.parameters().iter().map(|p| p.grad.to_vec()).collect();
        assert!(!grads.is_empty());
        for (k, g) in grads.iter().enumerate() {
            for (i, &gi) in g.iter().enumerate() {
                let orig = layer.parameters()[k].value[i];
                layer.parameters()[k].value[i] = orig + h;
                let lp = loss(layer, x);
                layer.parameters()[k].value[i] = orig - h;
                let lm = loss(layer, x);
                layer.parameters()[k].value[i] = orig;
                let num = (lp - lm) / (2.0 * h as f64);
                assert!(
                    (gi as f64 - num).abs() < tol,
                    "param {k}[{i}]: {gi} vs {num}"
                );
            }
        }
    }

    #[test]
    fn depthwise_gradients_match_central_differences() {
        for (pad, stride, dil, dm) in [
            (PaddingType::Valid, 1, 1, 1),
            (PaddingType::Same, 2, 1, 2),
            (PaddingType::Same, 1, 2, 3),
        ] {
            let mut l = DepthwiseConv1D::new(3, vec![2, 9, 2], stride, Activation::Tanh)
                .unwrap()
                .with_padding(pad)
                .with_dilation_rate(dil)
                .unwrap()
                .with_depth_multiplier(dm)
                .unwrap()
                .with_random_state(4);
            check_gradients(&mut l, &ramp(&[2, 9, 2], 0.1));
            let mut l =
                DepthwiseConv2D::new((3, 2), vec![1, 6, 5, 2], (stride, 1), Activation::Sigmoid)
                    .unwrap()
                    .with_padding(pad)
                    .with_dilation_rate((dil, 1))
                    .unwrap()
                    .with_depth_multiplier(dm)
                    .unwrap()
                    .with_random_state(5);
            check_gradients(&mut l, &ramp(&[1, 6, 5, 2], 0.1));
        }
    }

    #[test]
    fn separable_gradients_match_central_differences() {
        for (pad, stride, dil, dm) in [
            (PaddingType::Valid, 1, 1, 1),
            (PaddingType::Same, 2, 1, 2),
            (PaddingType::Same, 1, 2, 2),
        ] {
            let mut l = SeparableConv1D::new(3, 3, vec![2, 9, 2], stride, dm, Activation::Tanh)
                .unwrap()
                .with_padding(pad)
                .with_dilation_rate(dil)
                .unwrap()
                .with_random_state(6);
            check_gradients(&mut l, &ramp(&[2, 9, 2], 0.1));
            let mut l = SeparableConv2D::new(
                2,
                (2, 3),
                vec![1, 5, 6, 2],
                (1, stride),
                dm,
                // smooth: a (Leaky)ReLU kink within h of an output breaks the difference quotient
                Activation::Sigmoid,
            )
            .unwrap()
            .with_padding(pad)
            .with_dilation_rate((1, dil))
            .unwrap()
            .with_random_state(7);
            check_gradients(&mut l, &ramp(&[1, 5, 6, 2], 0.1));
        }
    }

    /// The pointwise stage fuses (Leaky)ReLU into the product: the same bits as the linear
    /// layer's output passed through the activation afterwards.
    #[test]
    fn fused_leaky_relu_equals_linear_then_activation() {
        let make = |act| {
            SeparableConv2D::new(3, (2, 2), vec![2, 5, 5, 2], (1, 1), 2, act)
                .unwrap()
                .with_random_state(8)
        };
        let x = ramp(&[2, 5, 5, 2], 0.1);
        let slope = 0.2;
        let leaky = make(Activation::LeakyReLU {
            negative_slope: slope,
        })
        .predict(&x)
        .unwrap();
        let linear = make(Activation::Linear).predict(&x).unwrap();
        let want = linear.mapv(|v| if v > 0.0 { v } else { v * slope });
        assert_eq!(bits(&leaky), bits(&want));
    }

    fn bits(t: &Tensor) -> Vec<u32> {
        t.iter().map(|v| v.to_bits()).collect()
    }

    /// Forward, input gradient and every parameter gradient, at batch 1 and 3.
    fn run(layer: &mut dyn Layer, x: &Tensor) -> (Vec<u32>, Vec<u32>, Vec<Vec<u32>>) {
        let out = layer.forward(x).unwrap();
        let dx = layer.backward(&ramp(out.shape(), 0.05)).unwrap();
        let params = layer
            .parameters()
            .iter()
            .map(|p| p.grad.iter().map(|v| v.to_bits()).collect())
            .collect();
        (bits(&out), bits(&dx), params)
    }

    #[test]
    fn gate_never_changes_a_bit() {
        for batch in [1, 3] {
            let x1 = ramp(&[batch, 300, 8], 0.1);
            let x2 = ramp(&[batch, 24, 20, 6], 0.1);
            let (s, p) = serial_and_parallel(&CONV_NAIVE_PARALLEL_MIN_FLOPS, || {
                let mut a = DepthwiseConv1D::new(5, vec![batch, 300, 8], 2, Activation::ReLU)
                    .unwrap()
                    .with_depth_multiplier(2)
                    .unwrap()
                    .with_padding(PaddingType::Same)
                    .with_random_state(1);
                let mut b =
                    DepthwiseConv2D::new((3, 3), vec![batch, 24, 20, 6], (1, 1), Activation::Tanh)
                        .unwrap()
                        .with_random_state(2);
                let mut c =
                    SeparableConv1D::new(7, 5, vec![batch, 300, 8], 1, 2, Activation::Linear)
                        .unwrap()
                        .with_random_state(3);
                let mut d = SeparableConv2D::new(
                    5,
                    (3, 3),
                    vec![batch, 24, 20, 6],
                    (2, 2),
                    1,
                    Activation::ReLU,
                )
                .unwrap()
                .with_padding(PaddingType::Same)
                .with_random_state(4);
                [
                    run(&mut a, &x1),
                    run(&mut b, &x2),
                    run(&mut c, &x1),
                    run(&mut d, &x2),
                ]
            });
            assert_eq!(s, p, "batch {batch}");
        }
    }

    #[test]
    fn shapes_counts_and_weight_containers_follow_keras() {
        let l = SeparableConv2D::new(4, (3, 3), vec![2, 8, 8, 3], (2, 2), 2, Activation::Linear)
            .unwrap()
            .with_padding(PaddingType::Same);
        assert_eq!(l.output_shape(), "(2, 4, 4, 4)");
        assert_eq!(
            l.param_count(),
            TrainingParameters::Trainable(3 * 3 * 3 * 2 + 6 * 4 + 4)
        );
        let LayerWeight::SeparableConv2D(w) = l.get_weights() else {
            panic!("wrong container")
        };
        assert_eq!(w.pointwise_weight.shape(), &[1, 1, 6, 4]);
        let l = DepthwiseConv2D::new((3, 3), vec![1, 9, 9, 2], (1, 1), Activation::Linear)
            .unwrap()
            .with_dilation_rate((2, 2))
            .unwrap()
            .with_use_bias(false);
        assert_eq!(l.output_shape(), "(1, 5, 5, 2)");
        assert_eq!(l.param_count(), TrainingParameters::Trainable(18));
        // a dilated span wider than the input is refused when set
        assert!(matches!(
            DepthwiseConv1D::new(3, vec![1, 4, 1], 1, Activation::Linear)
                .unwrap()
                .with_dilation_rate(2),
            Err(Error::InvalidInput(_))
        ));
    }

    #[test]
    fn no_bias_layers_ignore_the_bias_and_train_only_their_kernels() {
        let make = |use_bias| {
            SeparableConv1D::new(2, 3, vec![1, 6, 2], 1, 1, Activation::Linear)
                .unwrap()
                .with_random_state(9)
                .with_use_bias(use_bias)
        };
        let (mut without, with) = (make(false), make(true));
        let (dw, pw) = match without.get_weights() {
            LayerWeight::SeparableConv1D(w) => (
                w.depthwise_weight.into_owned(),
                w.pointwise_weight.into_owned(),
            ),
            _ => panic!("wrong container"),
        };
        without
            .set_weights(dw, pw, Array1::from_elem(2, 5.0))
            .unwrap();
        let x = ramp(&[1, 6, 2], 0.1);
        let y = without.forward(&x).unwrap();
        assert_eq!(bits(&y), bits(&with.predict(&x).unwrap()));
        without.backward(&Tensor::ones(y.raw_dim())).unwrap();
        assert_eq!(without.parameters().len(), 2);
    }
}
