//! The one implementation behind Conv1D/2D/3D and Conv1D/2D/3DTranspose: a struct generic over
//! the kernel's array dimension, and the macro that wraps it into each public layer.
//!
//! A transposed layer is the plain convolution run backwards: its forward pass is the
//! engine's backward-data pass and its input gradient the engine's forward pass. Its Keras
//! kernel `[k.., filters, channels]` is exactly the engine's `[k.., cin, filters]` kernel of
//! that convolution (whose input has the transposed layer's `filters` channels), so both kinds
//! hand the engine their kernel's flat buffer unchanged.

use super::engine::{self, ConvGeometry, FusedActivation};
use super::PaddingType;
use crate::error::{Error, Result};
use crate::math::matmul;
use crate::neural_network::layers::activation::{Activation, ActivationCache};
use crate::neural_network::layers::initializers::glorot_uniform;
use crate::neural_network::layers::layer_util::{full_shape, require_shape};
use crate::neural_network::layers::TrainingParameters;
use crate::neural_network::traits::ParamGrad;
use crate::neural_network::{NnError, Tensor, TensorView};
use ndarray::{Array, Array1, Dimension, IxDyn};
use std::borrow::Cow;

/// Kernel sizes, strides and dilation rates as the constructors take them (`usize` for 1D,
/// tuples for 2D and 3D).
pub trait SpatialDims: Copy {
    fn dims(self) -> Vec<usize>;
}

impl SpatialDims for usize {
    fn dims(self) -> Vec<usize> {
        vec![self]
    }
}

impl SpatialDims for (usize, usize) {
    fn dims(self) -> Vec<usize> {
        vec![self.0, self.1]
    }
}

impl SpatialDims for (usize, usize, usize) {
    fn dims(self) -> Vec<usize> {
        vec![self.0, self.1, self.2]
    }
}

/// One convolution layer of either kind over `D` (the kernel's dimension, `spatial + 2`).
#[derive(Debug)]
pub(crate) struct ConvNd<D: Dimension> {
    name: &'static str,
    transposed: bool,
    filters: usize,
    kernel_size: Vec<usize>,
    strides: Vec<usize>,
    dilation: Vec<usize>,
    padding: PaddingType,
    input_shape: Vec<usize>,
    activation: Activation,
    use_bias: bool,
    pub(crate) weights: Array<f32, D>,
    pub(crate) bias: Array1<f32>,
    input_cache: Option<Tensor>,
    /// What the activation's backward pass reads (nothing for linear).
    activation_cache: Option<ActivationCache>,
    grad_weights: Option<Array<f32, D>>,
    grad_bias: Option<Array1<f32>>,
}

impl<D: Dimension> ConvNd<D> {
    /// Validates the configuration (zero filters / kernel / stride / dilation:
    /// `InvalidParameter`; wrong-rank or empty `input_shape`, or a plain convolution whose
    /// `Valid`/`Same` geometry leaves no output: `InvalidInput`) and draws the kernel.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        name: &'static str,
        transposed: bool,
        filters: usize,
        kernel_size: Vec<usize>,
        input_shape: Vec<usize>,
        strides: Vec<usize>,
        activation: Activation,
        padding: PaddingType,
        dilation: Vec<usize>,
        use_bias: bool,
    ) -> Result<Self> {
        let rank = kernel_size.len();
        if filters == 0 {
            return Err(Error::invalid_parameter(
                "filters",
                format!("{name}: must be > 0"),
            ));
        }
        for (what, v) in [
            ("kernel_size", &kernel_size),
            ("strides", &strides),
            ("dilation_rate", &dilation),
        ] {
            if v.contains(&0) {
                return Err(Error::invalid_parameter(
                    what,
                    format!("{name}: every entry must be > 0, got {v:?}"),
                ));
            }
        }
        activation.validate()?;
        if input_shape.len() != rank + 2 {
            return Err(Error::invalid_input(format!(
                "{name}: input_shape must have {} axes [batch, {}channels], got {input_shape:?}",
                rank + 2,
                "spatial, ".repeat(rank)
            )));
        }
        if input_shape.contains(&0) {
            return Err(Error::invalid_input(format!(
                "{name}: input_shape {input_shape:?} has an empty axis"
            )));
        }
        // the bias (and below the kernel) only once their sizes are known to fit
        crate::neural_network::layers::size_guard::check_f32_alloc(name, "bias", &[filters])?;
        let mut layer = Self {
            name,
            transposed,
            filters,
            kernel_size,
            strides,
            dilation,
            padding,
            input_shape,
            activation,
            use_bias,
            weights: Array::zeros(D::zeros(rank + 2)),
            bias: Array1::zeros(0),
            input_cache: None,
            activation_cache: None,
            grad_weights: None,
            grad_bias: None,
        };
        layer.geometry(&layer.input_shape[1..=rank])?;
        crate::neural_network::layers::size_guard::check_f32_alloc(
            name,
            "kernel",
            &layer.kernel_shape(),
        )?;
        layer.draw_weights(None);
        Ok(layer)
    }

    fn channels(&self) -> usize {
        *self.input_shape.last().expect("validated rank")
    }

    /// Keras's kernel shape: `[k.., channels, filters]`, transposed `[k.., filters, channels]`.
    pub(crate) fn kernel_shape(&self) -> Vec<usize> {
        let mut shape = self.kernel_size.clone();
        if self.transposed {
            shape.extend([self.filters, self.channels()]);
        } else {
            shape.extend([self.channels(), self.filters]);
        }
        shape
    }

    /// Glorot-uniform kernel (`fan_in + fan_out = taps * (channels + filters)`), zero bias.
    pub(crate) fn draw_weights(&mut self, random_state: Option<u64>) {
        let shape = self.kernel_shape();
        let mut rng = crate::random::rng_from(random_state);
        let w = glorot_uniform(IxDyn(&shape), &mut rng);
        self.weights = w.into_dimensionality::<D>().expect("rank matches D");
        self.bias = Array1::zeros(self.filters);
    }

    pub(crate) fn set_padding(&mut self, padding: PaddingType) {
        self.padding = padding;
    }

    /// Keras's `dilation_rate`; re-validates the configured input for a plain convolution.
    pub(crate) fn set_dilation(&mut self, dilation: Vec<usize>) -> Result<()> {
        if dilation.contains(&0) {
            return Err(Error::invalid_parameter(
                "dilation_rate",
                format!("{}: every entry must be > 0, got {dilation:?}", self.name),
            ));
        }
        let old = std::mem::replace(&mut self.dilation, dilation);
        let rank = self.kernel_size.len();
        if let Err(e) = self.geometry(&self.input_shape[1..=rank]) {
            self.dilation = old;
            return Err(e);
        }
        Ok(())
    }

    /// Keras's `use_bias=False`: the bias stays zero and is neither trained nor counted.
    pub(crate) fn set_use_bias(&mut self, use_bias: bool) {
        self.use_bias = use_bias;
        if !use_bias {
            self.bias.fill(0.0);
        }
    }

    pub(crate) fn set_weights(&mut self, weights: Array<f32, D>, bias: Array1<f32>) -> Result<()> {
        let expected = self.kernel_shape();
        for (what, want, got) in [
            ("kernel", expected.as_slice(), weights.shape()),
            ("bias", &[self.filters][..], bias.shape()),
        ] {
            if want != got {
                return Err(NnError::WeightShape {
                    name: format!("{} {what}", self.name),
                    expected: want.to_vec(),
                    found: got.to_vec(),
                }
                .into());
            }
        }
        self.weights = weights.as_standard_layout().into_owned();
        self.bias = bias.as_standard_layout().into_owned();
        Ok(())
    }

    /// The engine geometry for a spatial input extent (the conv whose backward-data pass is
    /// this layer, for a transposed one).
    fn geometry(&self, spatial: &[usize]) -> Result<ConvGeometry> {
        if self.transposed || self.kernel_size.len() != 1 {
            self.padding.refuse_causal(self.name)?;
        }
        let build = if self.transposed {
            ConvGeometry::transposed
        } else {
            ConvGeometry::new
        };
        build(
            self.name,
            spatial,
            &self.kernel_size,
            &self.strides,
            &self.dilation,
            self.padding,
            self.channels(),
            self.filters,
        )
    }

    /// The geometry of an input tensor after checking its rank and channel count.
    fn check_input(&self, shape: &[usize]) -> Result<ConvGeometry> {
        let rank = self.kernel_size.len();
        if shape.len() != rank + 2 {
            return Err(Error::invalid_input(format!(
                "{}: expected a {}-D input [batch, {}channels], got shape {:?}",
                self.name,
                rank + 2,
                "spatial, ".repeat(rank),
                shape
            )));
        }
        let channels = shape[rank + 1];
        if channels != self.channels() {
            return Err(Error::invalid_input(format!(
                "{}: input has {channels} channels, the kernel expects {} (input shape {:?})",
                self.name,
                self.channels(),
                shape
            )));
        }
        self.geometry(&shape[1..=rank])
    }

    fn kernel_slice(&self) -> &[f32] {
        self.weights.as_slice().expect("kernel is C-order")
    }

    fn bias_slice(&self) -> Option<&[f32]> {
        self.use_bias
            .then(|| self.bias.as_slice().expect("bias is C-order"))
    }

    fn compute(&self, input: TensorView<'_>) -> Result<Tensor> {
        let (mut out, fused) = self.pre_activation(input)?;
        if !fused {
            self.activation.forward_in_place(&mut out)?;
        }
        Ok(out)
    }

    /// The convolution with its bias, and the activation too when it is fused into the
    /// engine's epilogue (ReLU, LeakyReLU: then the flag is true).
    fn pre_activation(&self, input: TensorView<'_>) -> Result<(Tensor, bool)> {
        let geom = self.check_input(input.shape())?;
        let x = input.as_standard_layout();
        let x = x.as_slice().expect("standard layout");
        let batch = input.shape()[0];
        let kernel = self.kernel_slice();
        if self.transposed {
            let out = engine::backward_data(&geom, batch, x, kernel, self.bias_slice())?;
            return Ok((out, false));
        }
        let fused: Option<FusedActivation> = match self.activation {
            Activation::ReLU => Some(matmul::Activation::Relu),
            Activation::LeakyReLU { negative_slope } => {
                Some(matmul::Activation::LeakyRelu(negative_slope))
            }
            _ => None,
        };
        let out = engine::forward(&geom, batch, x, kernel, self.bias_slice(), fused)?;
        Ok((out, fused.is_some()))
    }

    pub(crate) fn forward(&mut self, input: &Tensor) -> Result<Tensor> {
        self.forward_owned(input.as_standard_layout().into_owned())
    }

    pub(crate) fn forward_owned(&mut self, input: Tensor) -> Result<Tensor> {
        let (z, fused) = self.pre_activation(input.view())?;
        let (out, activation_cache) = self.activation.forward_training(z, fused)?;
        self.input_cache = Some(if input.is_standard_layout() {
            input
        } else {
            input.as_standard_layout().into_owned()
        });
        self.activation_cache = Some(activation_cache);
        Ok(out)
    }

    pub(crate) fn predict(&self, input: &Tensor) -> Result<Tensor> {
        self.compute(input.view())
    }

    pub(crate) fn predict_view(&self, input: TensorView<'_>) -> Result<Tensor> {
        self.compute(input)
    }

    pub(crate) fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor> {
        Ok(self
            .backward_with(grad_output, true)?
            .expect("input gradient requested"))
    }

    pub(crate) fn backward_params_only(&mut self, grad_output: &Tensor) -> Result<()> {
        self.backward_with(grad_output, false).map(drop)
    }

    /// The parameter gradients, and the input gradient when `input_gradient` (it is a product
    /// as large as the weight gradient's, wasted on a network's first layer).
    fn backward_with(
        &mut self,
        grad_output: &Tensor,
        input_gradient: bool,
    ) -> Result<Option<Tensor>> {
        let Some(x) = &self.input_cache else {
            return Err(Error::forward_pass_not_run(self.name));
        };
        let geom = self.check_input(x.shape())?;
        let batch = x.shape()[0];
        let out_shape = if self.transposed {
            geom.input_shape(batch)
        } else {
            geom.output_shape(batch)
        };
        require_shape(&out_shape, grad_output.shape())?;
        // A linear layer's backward passes the gradient through without a copy.
        let dz = match &self.activation_cache {
            Some(cache) if self.activation != Activation::Linear => {
                Cow::Owned(self.activation.backward_cached(cache, grad_output)?)
            }
            _ => Cow::Borrowed(grad_output),
        };
        let dz = dz.as_standard_layout();
        let dz = dz.as_slice().expect("standard layout");
        let xs = x.as_slice().expect("cached in C order");
        let kernel = self.kernel_slice();
        // A transposed layer's output is its convolution's input, its input that
        // convolution's output gradient.
        let (dw, dx) = if self.transposed {
            let dx = input_gradient
                .then(|| engine::forward(&geom, batch, dz, kernel, None, None))
                .transpose()?;
            (engine::backward_weights(&geom, batch, dz, xs)?, dx)
        } else {
            let dx = input_gradient
                .then(|| engine::backward_data(&geom, batch, dz, kernel, None))
                .transpose()?;
            (engine::backward_weights(&geom, batch, xs, dz)?, dx)
        };
        let dw = dw
            .into_shape_with_order(IxDyn(&self.kernel_shape()))
            .expect("[K, filters] is the kernel's flat order")
            .into_dimensionality::<D>()
            .expect("rank matches D");
        self.grad_weights = Some(dw);
        self.grad_bias = Some(Array1::from(engine::channel_sums(dz, self.filters)));
        Ok(dx)
    }

    pub(crate) fn uses_bias(&self) -> bool {
        self.use_bias
    }

    pub(crate) fn layer_type(&self) -> &str {
        self.name
    }

    /// The configured input's output shape, batch included (`(2, 11, 3)`).
    pub(crate) fn output_shape(&self) -> String {
        let rank = self.kernel_size.len();
        match self.geometry(&self.input_shape[1..=rank]) {
            Ok(g) => {
                let shape = if self.transposed {
                    g.input_shape(self.input_shape[0])
                } else {
                    g.output_shape(self.input_shape[0])
                };
                full_shape(&shape)
            }
            Err(_) => "Unknown".to_string(),
        }
    }

    pub(crate) fn param_count(&self) -> TrainingParameters {
        let bias = if self.use_bias { self.filters } else { 0 };
        TrainingParameters::Trainable(self.weights.len() + bias)
    }

    pub(crate) fn parameters(&mut self) -> Vec<ParamGrad<'_>> {
        let (Some(gw), Some(gb)) = (&self.grad_weights, &self.grad_bias) else {
            return Vec::new();
        };
        let mut params = vec![ParamGrad::weight(
            self.weights.as_slice_mut().expect("kernel is C-order"),
            gw.as_slice().expect("gradients are C-order"),
        )];
        if self.use_bias {
            params.push(ParamGrad::no_decay(
                self.bias.as_slice_mut().expect("bias is C-order"),
                gb.as_slice().expect("gradients are C-order"),
            ));
        }
        params
    }
}

/// Declares one public convolution layer over [`ConvNd`]: the original's constructor,
/// builders, `set_weights`, `Layer` and weight loading.
macro_rules! conv_layer {
    (
        $(#[$doc:meta])*
        $layer:ident, $dims:ty, $dim:ty, $variant:ident, $weight:ident, transposed = $transposed:expr
    ) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $layer {
            core: $crate::neural_network::layers::convolution::conv_nd::ConvNd<$dim>,
        }

        impl $layer {
            /// A layer of `filters` outputs over `input_shape` (batch first, channels last),
            /// `Valid` padding, kernel drawn Glorot-uniform from the global seed stream (or
            /// entropy), zero bias.
            pub fn new(
                filters: usize,
                kernel_size: $dims,
                input_shape: Vec<usize>,
                strides: $dims,
                activation: impl Into<$crate::neural_network::layers::activation::Activation>,
            ) -> $crate::error::Result<Self> {
                Self::with_config(
                    filters,
                    kernel_size,
                    input_shape,
                    strides,
                    activation,
                    $crate::neural_network::layers::convolution::PaddingType::Valid,
                    None,
                    true,
                )
            }

            /// Every Keras option at once (padding validated against the input up front,
            /// dilation, use_bias); used by the Python front.
            #[allow(clippy::too_many_arguments)]
            pub fn with_config(
                filters: usize,
                kernel_size: $dims,
                input_shape: Vec<usize>,
                strides: $dims,
                activation: impl Into<$crate::neural_network::layers::activation::Activation>,
                padding: $crate::neural_network::layers::convolution::PaddingType,
                dilation_rate: Option<$dims>,
                use_bias: bool,
            ) -> $crate::error::Result<Self> {
                use $crate::neural_network::layers::convolution::conv_nd::SpatialDims;
                let kernel = kernel_size.dims();
                let dilation = dilation_rate.map_or_else(|| vec![1; kernel.len()], |d| d.dims());
                let core = $crate::neural_network::layers::convolution::conv_nd::ConvNd::new(
                    stringify!($layer),
                    $transposed,
                    filters,
                    kernel,
                    input_shape,
                    strides.dims(),
                    activation.into(),
                    padding,
                    dilation,
                    use_bias,
                )?;
                Ok(Self { core })
            }

            /// Sets the padding mode (default `Valid`).
            pub fn with_padding(
                mut self,
                padding: $crate::neural_network::layers::convolution::PaddingType,
            ) -> Self {
                self.core.set_padding(padding);
                self
            }

            /// Re-draws the kernel from `random_state`: equal seeds give equal layers.
            pub fn with_random_state(mut self, random_state: u64) -> Self {
                self.core.draw_weights(Some(random_state));
                self
            }

            /// Keras's `dilation_rate` (default 1 on every axis).
            pub fn with_dilation_rate(
                mut self,
                dilation_rate: $dims,
            ) -> $crate::error::Result<Self> {
                use $crate::neural_network::layers::convolution::conv_nd::SpatialDims;
                self.core.set_dilation(dilation_rate.dims())?;
                Ok(self)
            }

            /// Keras's `use_bias` (default true); without it the bias stays zero, untrained.
            pub fn with_use_bias(mut self, use_bias: bool) -> Self {
                self.core.set_use_bias(use_bias);
                self
            }

            /// Replaces the kernel (Keras's shape) and the bias (`[filters]`); a wrong shape is
            /// `NnError::WeightShape`.
            pub fn set_weights(
                &mut self,
                weights: ndarray::Array<f32, $dim>,
                bias: ndarray::Array1<f32>,
            ) -> $crate::error::Result<()> {
                self.core.set_weights(weights, bias)
            }
        }

        impl $crate::neural_network::traits::Layer for $layer {
            $crate::neural_network::layers::layer_util::core_passes!();

            fn predict_view(
                &self,
                input: $crate::neural_network::TensorView<'_>,
            ) -> $crate::error::Result<$crate::neural_network::Tensor> {
                self.core.predict_view(input)
            }

            fn forward_owned(
                &mut self,
                input: $crate::neural_network::Tensor,
            ) -> $crate::error::Result<$crate::neural_network::Tensor> {
                self.core.forward_owned(input)
            }

            fn backward_params_only(
                &mut self,
                grad_output: &$crate::neural_network::Tensor,
            ) -> $crate::error::Result<()> {
                self.core.backward_params_only(grad_output)
            }

            fn layer_type(&self) -> &str {
                self.core.layer_type()
            }

            fn output_shape(&self) -> String {
                self.core.output_shape()
            }

            fn param_count(&self) -> $crate::neural_network::layers::TrainingParameters {
                self.core.param_count()
            }

            fn uses_bias(&self) -> bool {
                self.core.uses_bias()
            }

            fn parameters(&mut self) -> Vec<$crate::neural_network::traits::ParamGrad<'_>> {
                self.core.parameters()
            }

            fn get_weights(&self) -> $crate::neural_network::layers::layer_weight::LayerWeight<'_> {
                $crate::neural_network::layers::layer_weight::LayerWeight::$variant(
                    $crate::neural_network::layers::layer_weight::$weight {
                        weight: std::borrow::Cow::Borrowed(&self.core.weights),
                        bias: std::borrow::Cow::Borrowed(&self.core.bias),
                    },
                )
            }

            fn apply_weights(
                &mut self,
                weights: &$crate::neural_network::layers::layer_weight::LayerWeight<'_>,
            ) -> $crate::error::Result<()> {
                use $crate::neural_network::traits::ApplyWeights;
                match weights {
                    $crate::neural_network::layers::layer_weight::LayerWeight::$variant(w) => {
                        w.apply_to_layer(self)
                    }
                    _ => Err($crate::error::IoError::ModelStructureMismatch(format!(
                        "expected {} weights for a {} layer",
                        stringify!($variant),
                        stringify!($layer)
                    ))
                    .into()),
                }
            }
        }

        impl $crate::neural_network::traits::ApplyWeights<$layer>
            for $crate::neural_network::layers::layer_weight::$weight<'_>
        {
            fn apply_to_layer(&self, layer: &mut $layer) -> $crate::error::Result<()> {
                layer
                    .set_weights(self.weight.as_ref().clone(), self.bias.as_ref().clone())
                    .map_err(|e| {
                        $crate::error::IoError::ModelStructureMismatch(format!(
                            "{}: {e}",
                            stringify!($layer)
                        ))
                        .into()
                    })
            }
        }
    };
}

pub(crate) use conv_layer;

#[cfg(test)]
mod tests {
    use super::super::{Conv1DTranspose, Conv2D, Conv2DTranspose, Conv3D, Conv3DTranspose};
    use super::*;
    use crate::neural_network::layers::gradient_check::check_layer_gradients;
    use crate::neural_network::traits::Layer;

    fn ramp(shape: &[usize], seed: usize) -> Tensor {
        Tensor::from_shape_fn(IxDyn(shape), |i| {
            let flat: usize = i.slice().iter().fold(seed, |acc, &v| acc * 7 + v);
            ((flat * 37 % 89) as f32 - 44.0) / 40.0
        })
    }

    /// The layer's input and parameter gradients against central differences, and the same
    /// parameter gradients from a first layer's pass (no input gradient).
    fn check(layer: &mut dyn Layer, input_shape: &[usize]) {
        let x = ramp(input_shape, 3);
        // Tolerance: O(h²) truncation of tanh plus f32 rounding of sums of ~50 terms.
        let grads = check_layer_gradients(layer, &x, |shape| ramp(shape, 9), 1e-2, |_| 3e-3);
        assert_eq!(grads.len(), 2);
        let c = ramp(layer.predict(&x).unwrap().shape(), 9);
        layer.forward(&x).unwrap();
        layer.backward_params_only(&c).unwrap();
        let again: Vec<Vec<f32>> = layer.parameters().iter().map(|p| p.grad.to_vec()).collect();
        assert_eq!(again, grads, "{}", layer.layer_type());
    }

    #[test]
    fn gradients_match_central_differences() {
        let mut conv = Conv2D::new(3, (3, 2), vec![2, 5, 6, 2], (2, 1), Activation::Tanh)
            .unwrap()
            .with_padding(PaddingType::Same)
            .with_random_state(1);
        check(&mut conv, &[2, 5, 6, 2]);
        let mut dilated = Conv2D::new(2, (2, 2), vec![1, 5, 5, 2], (1, 1), Activation::Tanh)
            .unwrap()
            .with_dilation_rate((2, 1))
            .unwrap()
            .with_random_state(2);
        check(&mut dilated, &[1, 5, 5, 2]);
        let mut conv3 = Conv3D::new(
            2,
            (2, 2, 2),
            vec![1, 3, 4, 3, 2],
            (1, 2, 1),
            Activation::Tanh,
        )
        .unwrap()
        .with_random_state(3);
        check(&mut conv3, &[1, 3, 4, 3, 2]);
        let mut up = Conv1DTranspose::new(2, 3, vec![2, 4, 3], 2, Activation::Tanh)
            .unwrap()
            .with_random_state(4);
        check(&mut up, &[2, 4, 3]);
        let mut up2 = Conv2DTranspose::new(3, (3, 2), vec![1, 3, 2, 2], (2, 1), Activation::Tanh)
            .unwrap()
            .with_padding(PaddingType::Same)
            .with_random_state(5);
        check(&mut up2, &[1, 3, 2, 2]);
        let mut up3 = Conv3DTranspose::new(
            2,
            (2, 1, 2),
            vec![1, 2, 2, 2, 1],
            (1, 2, 2),
            Activation::Tanh,
        )
        .unwrap()
        .with_random_state(6);
        check(&mut up3, &[1, 2, 2, 2, 1]);
    }

    #[test]
    fn use_bias_false_keeps_a_zero_untrained_bias() {
        let mut conv = Conv2D::new(2, (2, 2), vec![1, 3, 3, 1], (1, 1), Activation::Linear)
            .unwrap()
            .with_use_bias(false);
        assert_eq!(conv.param_count(), TrainingParameters::Trainable(8));
        let out = conv.forward(&ramp(&[1, 3, 3, 1], 1)).unwrap();
        conv.backward(&Tensor::ones(out.raw_dim())).unwrap();
        assert_eq!(conv.parameters().len(), 1);
    }

    #[test]
    fn same_padding_accepts_an_input_below_the_kernel_only_through_with_config() {
        assert!(Conv2D::new(1, (5, 5), vec![1, 3, 3, 1], (1, 1), Activation::Linear).is_err());
        let mut conv = Conv2D::with_config(
            2,
            (5, 5),
            vec![1, 3, 3, 1],
            (1, 1),
            Activation::Linear,
            PaddingType::Same,
            None,
            true,
        )
        .unwrap();
        let out = conv.forward(&ramp(&[4, 3, 3, 1], 2)).unwrap();
        assert_eq!(out.shape(), &[4, 3, 3, 2]);
    }

    /// Causal = valid over the input with `dilation * (k - 1)` zeros put before it; output `t`
    /// depends on inputs up to `t * stride` only; gradients against central differences.
    #[test]
    fn conv1d_causal_is_valid_over_the_left_padded_input() {
        use super::super::Conv1D;
        for (k, s, d, n) in [
            (3, 1, 1, 7),
            (3, 1, 2, 7),
            (4, 2, 1, 8),
            (2, 3, 2, 7),
            (5, 1, 1, 2),
        ] {
            let pad = d * (k - 1);
            let causal = Conv1D::with_config(
                3,
                k,
                vec![2, n, 2],
                s,
                Activation::Tanh,
                PaddingType::Causal,
                Some(d),
                true,
            )
            .unwrap()
            .with_random_state(11);
            let mut valid = Conv1D::with_config(
                3,
                k,
                vec![2, n + pad, 2],
                s,
                Activation::Tanh,
                PaddingType::Valid,
                Some(d),
                true,
            )
            .unwrap();
            let bias = Array1::from(vec![0.1, -0.2, 0.3]);
            let kernel = ramp(&[k, 2, 3], 7)
                .into_dimensionality::<ndarray::Ix3>()
                .unwrap();
            valid.set_weights(kernel.clone(), bias.clone()).unwrap();
            let mut causal = causal;
            causal.set_weights(kernel, bias).unwrap();
            let x = ramp(&[2, n, 2], 5);
            let mut padded = Tensor::zeros(IxDyn(&[2, n + pad, 2]));
            padded.slice_mut(ndarray::s![.., pad.., ..]).assign(&x);
            let got = causal.predict(&x).unwrap();
            let want = valid.predict(&padded).unwrap();
            assert_eq!(got.shape(), &[2, n.div_ceil(s), 3]);
            assert_eq!(got.shape(), want.shape());
            for (g, w) in got.iter().zip(want.iter()) {
                // The same products; the padded run only adds exact zeros.
                assert!((g - w).abs() <= 1e-6, "k={k} s={s} d={d} n={n}: {g} vs {w}");
            }
            // Causality: changing input step i moves no output before step ceil(i / s).
            for i in 0..n {
                let mut x2 = x.clone();
                x2[[1, i, 0]] += 1.0;
                let moved = causal.predict(&x2).unwrap();
                for t in 0..i.div_ceil(s) {
                    assert_eq!(
                        moved.slice(ndarray::s![.., t, ..]),
                        got.slice(ndarray::s![.., t, ..]),
                        "k={k} s={s} d={d}: input {i} leaked into output {t}"
                    );
                }
            }
            assert_eq!(
                causal.output_shape(),
                format!("(2, {}, 3)", n.div_ceil(s)),
                "k={k} s={s} d={d} n={n}"
            );
            check(&mut causal, &[2, n, 2]);
        }
    }

    #[test]
    fn causal_padding_is_conv1d_only() {
        use super::super::{Conv1D, DepthwiseConv1D, SeparableConv1D};
        use crate::neural_network::layers::pooling::MaxPooling1D;
        let name_in = |e: crate::error::Error, name: &str| {
            let msg = e.to_string();
            assert!(msg.contains(name) && msg.contains("causal"), "{msg}");
        };
        let err = Conv2D::with_config(
            1,
            (2, 2),
            vec![1, 4, 4, 1],
            (1, 1),
            Activation::Linear,
            PaddingType::Causal,
            None,
            true,
        )
        .unwrap_err();
        name_in(err, "Conv2D");
        let mut later = Conv2D::new(1, (2, 2), vec![1, 4, 4, 1], (1, 1), Activation::Linear)
            .unwrap()
            .with_padding(PaddingType::Causal);
        name_in(
            later.forward(&ramp(&[1, 4, 4, 1], 1)).unwrap_err(),
            "Conv2D",
        );
        let err = Conv1DTranspose::with_config(
            1,
            2,
            vec![1, 4, 1],
            1,
            Activation::Linear,
            PaddingType::Causal,
            None,
            true,
        )
        .unwrap_err();
        name_in(err, "Conv1DTranspose");
        let dw = DepthwiseConv1D::new(2, vec![1, 5, 2], 1, Activation::Linear)
            .unwrap()
            .with_padding(PaddingType::Causal);
        name_in(
            dw.predict(&ramp(&[1, 5, 2], 1)).unwrap_err(),
            "DepthwiseConv1D",
        );
        let sep = SeparableConv1D::new(2, 2, vec![1, 5, 2], 1, 1, Activation::Linear)
            .unwrap()
            .with_padding(PaddingType::Causal);
        name_in(
            sep.predict(&ramp(&[1, 5, 2], 1)).unwrap_err(),
            "SeparableConv1D",
        );
        let pool = MaxPooling1D::with_config([2], None, PaddingType::Causal, vec![1, 5, 2]);
        name_in(pool.unwrap_err(), "MaxPooling1D");
        assert!(Conv1D::with_config(
            1,
            2,
            vec![1, 4, 1],
            1,
            Activation::Linear,
            PaddingType::Causal,
            None,
            true,
        )
        .is_ok());
    }

    #[test]
    fn relu_is_fused_and_backward_masks_by_the_output() {
        let make = |act: Activation| {
            Conv2D::new(3, (2, 2), vec![1, 4, 4, 2], (1, 1), act)
                .unwrap()
                .with_random_state(8)
        };
        let x = ramp(&[2, 4, 4, 2], 4);
        let relu = make(Activation::ReLU).predict(&x).unwrap();
        let lin = make(Activation::Linear).predict(&x).unwrap();
        for (r, l) in relu.iter().zip(lin.iter()) {
            assert_eq!(r.to_bits(), l.max(0.0).to_bits());
        }
    }
}
