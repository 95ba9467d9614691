//! The state and passes GroupNormalization and InstanceNormalization share (instance
//! normalisation is group normalisation with one channel per group).

use super::common::{
    check_epsilon, check_input_shape, contiguous, slice_of, summary_shape, Cache, ScaleShift,
};
use super::engine::{self, Layout, GN_GATES};
use crate::error::{Error, Result};
use crate::neural_network::traits::ParamGrad;
use crate::neural_network::Tensor;
use ndarray::ArrayD;

/// Per-(sample, group) normalisation of a channels-last `[batch, spatial.., channels]` input
/// with per-channel gamma and beta. Statistics always come from the input; `training` only
/// decides whether `backward` differentiates (training) or passes the gradient through.
#[derive(Debug)]
pub(crate) struct GroupedNorm {
    name: &'static str,
    input_shape: Vec<usize>,
    /// `None`: one group per channel.
    groups: Option<usize>,
    epsilon: f32,
    pub params: ScaleShift,
    training: bool,
    cache: Cache,
}

impl GroupedNorm {
    pub(crate) fn new(
        name: &'static str,
        input_shape: Vec<usize>,
        groups: Option<usize>,
        epsilon: f32,
    ) -> Result<Self> {
        if input_shape.is_empty() {
            return Err(Error::empty_input(format!("{name} input_shape")));
        }
        if groups == Some(0) {
            return Err(Error::invalid_parameter("num_groups", "must be at least 1"));
        }
        check_epsilon(epsilon)?;
        let channels = input_shape[input_shape.len() - 1];
        Ok(Self {
            name,
            input_shape,
            groups,
            epsilon,
            params: ScaleShift::new(&[channels]),
            training: true,
            cache: Cache::Empty,
        })
    }

    pub(crate) fn set_training(&mut self, is_training: bool) {
        self.training = is_training;
    }

    /// The `[batch, positions, channels]` view of an accepted input.
    fn layout(&self, input: &Tensor) -> Result<Layout> {
        let shape = input.shape();
        if shape.len() < 3 {
            return Err(Error::invalid_input(format!(
                "{} expects a [batch, spatial.., channels] input of rank >= 3, got rank {}",
                self.name,
                shape.len()
            )));
        }
        let c = shape[shape.len() - 1];
        let g = self.groups.unwrap_or(c);
        if !c.is_multiple_of(g) {
            return Err(Error::invalid_parameter(
                "num_groups",
                format!("{g} groups do not divide {c} channels"),
            ));
        }
        check_input_shape(&self.input_shape, shape, &[])?;
        if input.is_empty() {
            return Err(Error::empty_input(format!("{} input", self.name)));
        }
        Ok(Layout {
            n: shape[0],
            s: shape[1..shape.len() - 1].iter().product(),
            c,
            g,
        })
    }

    fn shaped(input: &Tensor, y: Vec<f32>) -> Tensor {
        ArrayD::from_shape_vec(input.raw_dim(), y).expect("output has the input's length")
    }

    pub(crate) fn forward(&mut self, input: &Tensor) -> Result<Tensor> {
        let lay = self.layout(input)?;
        let xc = contiguous(input);
        let (gamma, beta) = (self.params.gamma_slice(), self.params.beta_slice());
        if !self.training {
            let y = engine::forward_infer(slice_of(&xc), lay, gamma, beta, self.epsilon, GN_GATES);
            self.cache = Cache::PassThrough;
            return Ok(Self::shaped(input, y));
        }
        let (y, saved, _) =
            engine::forward_train(slice_of(&xc), lay, gamma, beta, self.epsilon, GN_GATES);
        self.cache = Cache::Train {
            saved,
            shape: input.shape().to_vec(),
        };
        Ok(Self::shaped(input, y))
    }

    pub(crate) fn predict(&self, input: &Tensor) -> Result<Tensor> {
        let lay = self.layout(input)?;
        let xc = contiguous(input);
        let y = engine::forward_infer(
            slice_of(&xc),
            lay,
            self.params.gamma_slice(),
            self.params.beta_slice(),
            self.epsilon,
            GN_GATES,
        );
        Ok(Self::shaped(input, y))
    }

    pub(crate) fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor> {
        let Some(saved) = self.cache.saved(self.name, grad_output)? else {
            return Ok(grad_output.clone());
        };
        let gc = contiguous(grad_output);
        let (dx, dgamma, dbeta) =
            engine::backward(slice_of(&gc), saved, self.params.gamma_slice(), GN_GATES);
        self.params.store_grads(dgamma, dbeta);
        Ok(Self::shaped(grad_output, dx))
    }

    pub(crate) fn output_shape(&self) -> String {
        summary_shape(&self.input_shape)
    }

    pub(crate) fn parameters(&mut self) -> Vec<ParamGrad<'_>> {
        self.params.parameters()
    }
}

/// The API and `Layer` impl of a layer that wraps a [`GroupedNorm`] in a field `core`:
/// `set_training`, `set_weights(gamma, beta)`, and weights of `LayerWeight::$variant`.
macro_rules! grouped_layer {
    ($layer:ident, $variant:ident, $weights:ident) => {
        impl $layer {
            /// Training mode (`backward` differentiates) or inference mode (`backward` passes
            /// the gradient through); the forward statistics always come from the input.
            pub fn set_training(&mut self, is_training: bool) {
                self.core.set_training(is_training);
            }

            /// Replaces gamma and beta (each of shape `[channels]`).
            pub fn set_weights(
                &mut self,
                gamma: $crate::neural_network::Tensor,
                beta: $crate::neural_network::Tensor,
            ) -> $crate::error::Result<()> {
                self.core.params.set(gamma, beta)
            }
        }

        impl $crate::neural_network::traits::Layer for $layer {
            $crate::neural_network::layers::layer_util::core_passes!();

            fn layer_type(&self) -> &str {
                stringify!($layer)
            }

            fn output_shape(&self) -> String {
                self.core.output_shape()
            }

            fn param_count(&self) -> $crate::neural_network::layers::TrainingParameters {
                $crate::neural_network::layers::TrainingParameters::Trainable(
                    2 * self.core.params.len(),
                )
            }

            fn parameters(&mut self) -> Vec<$crate::neural_network::traits::ParamGrad<'_>> {
                self.core.parameters()
            }

            fn get_weights(&self) -> $crate::neural_network::layers::layer_weight::LayerWeight<'_> {
                $crate::neural_network::layers::layer_weight::LayerWeight::$variant(
                    $crate::neural_network::layers::layer_weight::$weights {
                        gamma: std::borrow::Cow::Borrowed(&self.core.params.gamma),
                        beta: std::borrow::Cow::Borrowed(&self.core.params.beta),
                    },
                )
            }

            fn set_training_if_mode_dependent(&mut self, is_training: bool) {
                self.set_training(is_training);
            }

            fn apply_weights(
                &mut self,
                weights: &$crate::neural_network::layers::layer_weight::LayerWeight<'_>,
            ) -> $crate::error::Result<()> {
                use $crate::neural_network::traits::ApplyWeights;
                match weights {
                    $crate::neural_network::layers::layer_weight::LayerWeight::$variant(w) => w
                        .apply_to_layer(self)
                        .map_err(|e| super::common::structure_mismatch(stringify!($layer), e)),
                    _ => Err(super::common::wrong_weights(stringify!($layer))),
                }
            }
        }

        impl $crate::neural_network::traits::ApplyWeights<$layer>
            for $crate::neural_network::layers::layer_weight::$weights<'_>
        {
            fn apply_to_layer(&self, layer: &mut $layer) -> $crate::error::Result<()> {
                layer.set_weights(
                    self.gamma.clone().into_owned(),
                    self.beta.clone().into_owned(),
                )
            }
        }
    };
}
pub(crate) use grouped_layer;
