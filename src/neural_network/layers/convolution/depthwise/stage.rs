//! The depthwise stage both layers share ([`DepthwiseStage`]: window, kernel, cached input and
//! geometry, running the direct engine of [`super::engine`]), the helpers the layers share
//! (Glorot draw, shape and size checks) and their shared builders (`shared_builders!`).

use super::engine::{self, DepthwiseGeometry};
use super::rank::ConvRank;
use super::PaddingType;
use crate::error::{Error, Result};
use crate::neural_network::layers::initializers::glorot_uniform;
use crate::neural_network::layers::layer_util::full_shape;
use crate::neural_network::Tensor;
use ndarray::{Array, IxDyn};
use rand::Rng;

/// `(3, 3)` / `(5,)`: spatial sizes as the error messages print them.
fn tuple(v: &[usize]) -> String {
    full_shape(v)
}

pub(super) fn positive(name: &str, values: &[usize]) -> Result<()> {
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
    pub(super) name: &'static str,
    pub(super) input_shape: Vec<usize>,
    pub(super) kernel_size: Vec<usize>,
    strides: Vec<usize>,
    pub(super) dilation: Vec<usize>,
    pub(super) padding: PaddingType,
    pub(super) multiplier: usize,
    pub(super) kernel: Array<f32, K>,
    pub(super) grad_kernel: Option<Array<f32, K>>,
    pub(super) cache: Option<(Tensor, DepthwiseGeometry)>,
}

impl<K: ConvRank> DepthwiseStage<K> {
    pub(super) fn new(
        name: &'static str,
        kernel_size: Vec<usize>,
        input_shape: Vec<usize>,
        strides: Vec<usize>,
        multiplier: usize,
        padding: PaddingType,
    ) -> Result<Self> {
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
    pub(super) fn check_sizes(
        name: &str,
        kernel_size: &[usize],
        input_shape: &[usize],
        multiplier: usize,
    ) -> Result<()> {
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

    pub(super) fn lanes(&self) -> usize {
        self.channels() * self.multiplier
    }

    pub(super) fn kernel_shape(&self) -> K {
        let mut shape = self.kernel_size.clone();
        shape.extend([self.channels(), self.multiplier]);
        K::from_dimension(&IxDyn(&shape)).expect("kernel rank matches the layer")
    }

    /// The geometry of `input` (`[batch, spatial.., C]`) under this window.
    fn geometry(&self, input: &[usize]) -> Result<DepthwiseGeometry> {
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
    pub(super) fn check_window(&self) -> Result<()> {
        self.geometry(&self.input_shape).map(|_| ())
    }

    pub(super) fn init_kernel(&mut self, rng: &mut impl Rng) {
        self.kernel = glorot_uniform(self.kernel_shape(), rng);
    }

    pub(super) fn output_dims(&self, lanes: usize) -> Vec<usize> {
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
    pub(super) fn run(
        &self,
        input: &Tensor,
        bias: Option<&[f32]>,
    ) -> Result<(Vec<f32>, DepthwiseGeometry, Tensor)> {
        let g = self.geometry(input.shape())?;
        let x = ordered(input);
        let w = self.kernel.as_slice().expect("kernel is C order");
        let y = engine::forward(&g, x.as_slice().expect("C order"), w, bias);
        Ok((y, g, x))
    }

    /// Input gradient from the gradient of the stage output (`[batch * positions, C*dm]`);
    /// stores the kernel gradient, returns the input gradient and the per-lane sums of `dy`.
    pub(super) fn backward(&mut self, dy: &[f32]) -> Result<(Tensor, Vec<f32>)> {
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
        pub(crate) fn dilated(mut self, dilation_rate: Vec<usize>) -> Result<Self> {
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
pub(super) use shared_builders;
