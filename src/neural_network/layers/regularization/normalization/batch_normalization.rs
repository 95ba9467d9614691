//! Batch normalisation (Ioffe & Szegedy 2015) in Keras's channels-last form.

use super::common::{
    affine_layer_basics, check_epsilon, check_input_shape, check_weight, contiguous, slice_of,
    structure_mismatch, wrong_weights, Cache, ScaleShift,
};
use super::engine::{self, inv_std, Affine, Layout, BN_GATES};
use crate::error::{Error, Result};
use crate::neural_network::layers::layer_weight::{BatchNormalizationLayerWeight, LayerWeight};
use crate::neural_network::traits::{ApplyWeights, Layer};
use crate::neural_network::Tensor;
use ndarray::{ArrayD, IxDyn};
use std::borrow::Cow;

const NAME: &str = "BatchNormalization";

/// Normalises each channel (the last axis) over every other axis: the batch and, for rank > 2
/// inputs, every spatial position. Training uses the batch's mean and population variance and
/// moves the running statistics towards them
/// (`running = momentum * running + (1 - momentum) * batch`); inference uses the running
/// statistics. A rank-1 `input_shape` has one channel: every element is its own sample.
#[derive(Debug)]
pub struct BatchNormalization {
    input_shape: Vec<usize>,
    momentum: f32,
    epsilon: f32,
    params: ScaleShift,
    running_mean: Tensor,
    running_var: Tensor,
    training: bool,
    cache: Cache,
}

impl BatchNormalization {
    /// `input_shape` includes the batch axis; its last axis is the channel axis.
    pub fn new(input_shape: Vec<usize>, momentum: f32, epsilon: f32) -> Result<Self> {
        if input_shape.is_empty() {
            return Err(Error::empty_input("BatchNormalization input_shape"));
        }
        if !(0.0..=1.0).contains(&momentum) {
            return Err(Error::invalid_parameter(
                "momentum",
                format!("must lie in [0, 1], got {momentum}"),
            ));
        }
        check_epsilon(epsilon)?;
        let channels = Self::channels_of(&input_shape);
        Ok(Self {
            input_shape,
            momentum,
            epsilon,
            params: ScaleShift::new(&[channels]),
            running_mean: ArrayD::zeros(IxDyn(&[channels])),
            running_var: ArrayD::ones(IxDyn(&[channels])),
            training: true,
            cache: Cache::Empty,
        })
    }

    fn channels_of(shape: &[usize]) -> usize {
        if shape.len() < 2 {
            1
        } else {
            shape[shape.len() - 1]
        }
    }

    /// Training mode (batch statistics) or inference mode (running statistics).
    pub fn set_training(&mut self, is_training: bool) {
        self.training = is_training;
    }

    /// Replaces the four per-channel vectors (each of shape `[channels]`).
    pub fn set_weights(
        &mut self,
        gamma: Tensor,
        beta: Tensor,
        running_mean: Tensor,
        running_var: Tensor,
    ) -> Result<()> {
        let shape = self.running_mean.shape().to_vec();
        check_weight("running_mean", &shape, &running_mean)?;
        check_weight("running_var", &shape, &running_var)?;
        if running_var.iter().any(|v| !(v.is_finite() && *v >= 0.0)) {
            return Err(Error::invalid_parameter(
                "running_var",
                "BatchNormalization: a moving variance must be finite and >= 0",
            ));
        }
        self.params.set(gamma, beta)?;
        self.running_mean = running_mean.as_standard_layout().into_owned();
        self.running_var = running_var.as_standard_layout().into_owned();
        Ok(())
    }

    /// The `[1, rows, channels]` view of an accepted input.
    fn layout(&self, input: &Tensor) -> Result<Layout> {
        check_input_shape(&self.input_shape, input.shape(), &[])?;
        if input.is_empty() {
            return Err(Error::empty_input("BatchNormalization input"));
        }
        let c = self.running_mean.len();
        Ok(Layout {
            n: 1,
            s: input.len() / c,
            c,
            g: c,
        })
    }

    /// Normalisation with the running statistics.
    fn infer(&self, x: &[f32], lay: Layout) -> Vec<f32> {
        let mean = self.running_mean.as_slice().expect("standard layout");
        let inv: Vec<f32> = self
            .running_var
            .iter()
            .map(|&v| inv_std(v as f64, self.epsilon))
            .collect();
        let p = Affine {
            mean,
            inv: &inv,
            gamma: self.params.gamma_slice(),
            beta: self.params.beta_slice(),
        };
        engine::normalize(x, lay, &p, BN_GATES.apply, None)
    }

    fn shaped(input: &Tensor, y: Vec<f32>) -> Tensor {
        ArrayD::from_shape_vec(input.raw_dim(), y).expect("output has the input's length")
    }
}

impl Layer for BatchNormalization {
    fn forward(&mut self, input: &Tensor) -> Result<Tensor> {
        let lay = self.layout(input)?;
        let xc = contiguous(input);
        let x = slice_of(&xc);
        if !self.training {
            self.cache = Cache::PassThrough;
            return Ok(Self::shaped(input, self.infer(x, lay)));
        }
        let (y, saved, moments) = engine::forward_train(
            x,
            lay,
            self.params.gamma_slice(),
            self.params.beta_slice(),
            self.epsilon,
            BN_GATES,
        );
        let m = self.momentum as f64;
        for ((rm, rv), mo) in self
            .running_mean
            .iter_mut()
            .zip(self.running_var.iter_mut())
            .zip(&moments)
        {
            *rm = (m * *rm as f64 + (1.0 - m) * mo.mean) as f32;
            *rv = (m * *rv as f64 + (1.0 - m) * mo.variance()) as f32;
        }
        self.cache = Cache::Train {
            saved,
            shape: input.shape().to_vec(),
        };
        Ok(Self::shaped(input, y))
    }

    fn predict(&self, input: &Tensor) -> Result<Tensor> {
        let lay = self.layout(input)?;
        let xc = contiguous(input);
        Ok(Self::shaped(input, self.infer(slice_of(&xc), lay)))
    }

    fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor> {
        let Some(saved) = self.cache.saved(NAME, grad_output)? else {
            return Ok(grad_output.clone());
        };
        let gc = contiguous(grad_output);
        let (dx, dgamma, dbeta) =
            engine::backward(slice_of(&gc), saved, self.params.gamma_slice(), BN_GATES);
        self.params.store_grads(dgamma, dbeta);
        Ok(Self::shaped(grad_output, dx))
    }

    affine_layer_basics!(NAME);

    fn get_weights(&self) -> LayerWeight<'_> {
        LayerWeight::BatchNormalization(BatchNormalizationLayerWeight {
            gamma: Cow::Borrowed(&self.params.gamma),
            beta: Cow::Borrowed(&self.params.beta),
            running_mean: Cow::Borrowed(&self.running_mean),
            running_var: Cow::Borrowed(&self.running_var),
        })
    }

    fn set_training_if_mode_dependent(&mut self, is_training: bool) {
        self.set_training(is_training);
    }

    fn apply_weights(&mut self, weights: &LayerWeight<'_>) -> Result<()> {
        match weights {
            LayerWeight::BatchNormalization(w) => w
                .apply_to_layer(self)
                .map_err(|e| structure_mismatch(NAME, e)),
            _ => Err(wrong_weights(NAME)),
        }
    }
}

impl ApplyWeights<BatchNormalization> for BatchNormalizationLayerWeight<'_> {
    fn apply_to_layer(&self, layer: &mut BatchNormalization) -> Result<()> {
        layer.set_weights(
            self.gamma.clone().into_owned(),
            self.beta.clone().into_owned(),
            self.running_mean.clone().into_owned(),
            self.running_var.clone().into_owned(),
        )
    }
}
