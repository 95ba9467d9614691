//! Layer normalisation (Ba et al. 2016) over chosen axes.

use super::common::{
    affine_layer_basics, axis_option, check_axis_list, check_epsilon, check_input_shape,
    resolve_axes, slice_of, structure_mismatch, wrong_weights, AxisChoice, AxisPlan, Cache,
    ScaleShift,
};
use super::engine::{self, Layout, LN_GATES};
use crate::error::{Error, Result};
use crate::neural_network::layers::layer_weight::{LayerNormalizationLayerWeight, LayerWeight};
use crate::neural_network::traits::{ApplyWeights, Layer};
use crate::neural_network::Tensor;
use std::borrow::Cow;

const NAME: &str = "LayerNormalization";

axis_option! {
    /// The axes LayerNormalization normalises over.
    LayerNormalizationAxis
}

/// Normalises the values of every index of the other axes jointly over the chosen axes, with
/// population statistics; gamma and beta have the shape of the chosen axes. Statistics always
/// come from the input; `training` only decides whether `backward` differentiates (training)
/// or passes the gradient through.
#[derive(Debug)]
pub struct LayerNormalization {
    input_shape: Vec<usize>,
    epsilon: f32,
    axis: LayerNormalizationAxis,
    params: ScaleShift,
    training: bool,
    cache: Cache,
    plan: Option<AxisPlan>,
}

impl LayerNormalization {
    /// Normalises over the last axis; `input_shape` includes the batch axis (empty: any shape,
    /// the parameters take the first input's).
    pub fn new(input_shape: Vec<usize>, epsilon: f32) -> Result<Self> {
        check_epsilon(epsilon)?;
        let axis = LayerNormalizationAxis::Default;
        let params = ScaleShift::new(&Self::param_shape(&input_shape, &axis));
        Ok(Self {
            input_shape,
            epsilon,
            axis,
            params,
            training: true,
            cache: Cache::Empty,
            plan: None,
        })
    }

    /// Chooses the axes. An axis list must be non-empty, without repeats and (with a declared
    /// `input_shape`) in bounds; a single axis is checked against each input.
    pub fn with_normalized_axis(mut self, normalized_axis: LayerNormalizationAxis) -> Result<Self> {
        if let LayerNormalizationAxis::Multiple(list) = &normalized_axis {
            check_axis_list(list)?;
            let rank = self.input_shape.len();
            if rank > 0 {
                resolve_axes(normalized_axis.choice(), rank, |m| {
                    Error::invalid_parameter("normalized_axis", m)
                })?;
            }
        }
        self.params = ScaleShift::new(&Self::param_shape(&self.input_shape, &normalized_axis));
        self.axis = normalized_axis;
        Ok(self)
    }

    /// The sizes of the chosen axes of the declared shape (axes it lacks are left out).
    fn param_shape(input_shape: &[usize], axis: &LayerNormalizationAxis) -> Vec<usize> {
        let mut axes = match axis.choice() {
            AxisChoice::Last => input_shape.len().checked_sub(1).into_iter().collect(),
            AxisChoice::Listed(list) => list.to_vec(),
        };
        axes.sort_unstable();
        axes.iter()
            .filter_map(|&a| input_shape.get(a).copied())
            .collect()
    }

    /// Training mode (`backward` differentiates) or inference mode (`backward` passes the
    /// gradient through); the forward statistics always come from the input.
    pub fn set_training(&mut self, is_training: bool) {
        self.training = is_training;
    }

    /// Replaces gamma and beta (each with the shape of the chosen axes).
    pub fn set_weights(&mut self, gamma: Tensor, beta: Tensor) -> Result<()> {
        self.params.set(gamma, beta)
    }

    /// Checks an input and plans the move of the chosen axes to the end; also returns the
    /// sizes of the chosen axes (the parameters' shape).
    fn plan(&self, input: &Tensor) -> Result<(AxisPlan, Vec<usize>)> {
        let ndim = input.ndim();
        if ndim == 0 {
            return Err(Error::invalid_input(
                "LayerNormalization needs an input of rank >= 1",
            ));
        }
        let axes = resolve_axes(self.axis.choice(), ndim, |m| {
            Error::invalid_parameter("normalized_axis", m)
        })?;
        check_input_shape(&self.input_shape, input.shape(), &axes)?;
        if input.is_empty() {
            return Err(Error::empty_input("LayerNormalization input"));
        }
        let dims: Vec<usize> = axes.iter().map(|&a| input.shape()[a]).collect();
        if self.input_shape.is_empty() || self.params.gamma.shape() == dims.as_slice() {
            Ok((AxisPlan::new(input.shape(), &axes), dims))
        } else {
            Err(Error::shape_mismatch(
                self.params.gamma.shape().to_vec(),
                dims,
            ))
        }
    }

    /// Whether the parameters fit `dims` (a layer declared without a shape has none until
    /// its first training forward).
    fn built_for(&self, dims: &[usize]) -> bool {
        self.params.gamma.shape() == dims
    }

    fn layout(plan: &AxisPlan) -> Layout {
        Layout {
            n: plan.rows,
            s: 1,
            c: plan.len,
            g: 1,
        }
    }
}

impl Layer for LayerNormalization {
    fn forward(&mut self, input: &Tensor) -> Result<Tensor> {
        let (plan, dims) = self.plan(input)?;
        if !self.built_for(&dims) {
            self.params = ScaleShift::new(&dims);
        }
        let xp = plan.gather(input);
        let lay = Self::layout(&plan);
        let (gamma, beta) = (self.params.gamma_slice(), self.params.beta_slice());
        let y = if self.training {
            let (y, saved, _) =
                engine::forward_train(slice_of(&xp), lay, gamma, beta, self.epsilon, LN_GATES);
            self.cache = Cache::Train {
                saved,
                shape: input.shape().to_vec(),
            };
            y
        } else {
            self.cache = Cache::PassThrough;
            engine::forward_infer(slice_of(&xp), lay, gamma, beta, self.epsilon, LN_GATES)
        };
        let out = plan.scatter(y);
        self.plan = Some(plan);
        Ok(out)
    }

    fn predict(&self, input: &Tensor) -> Result<Tensor> {
        let (plan, dims) = self.plan(input)?;
        let xp = plan.gather(input);
        let y = if self.built_for(&dims) {
            engine::forward_infer(
                slice_of(&xp),
                Self::layout(&plan),
                self.params.gamma_slice(),
                self.params.beta_slice(),
                self.epsilon,
                LN_GATES,
            )
        } else {
            // Not built yet: the parameters it would be built with.
            let fresh = ScaleShift::new(&dims);
            engine::forward_infer(
                slice_of(&xp),
                Self::layout(&plan),
                fresh.gamma_slice(),
                fresh.beta_slice(),
                self.epsilon,
                LN_GATES,
            )
        };
        Ok(plan.scatter(y))
    }

    fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor> {
        let Some(saved) = self.cache.saved(NAME, grad_output)? else {
            return Ok(grad_output.clone());
        };
        let plan = self
            .plan
            .as_ref()
            .expect("a training forward leaves its plan");
        let gp = plan.gather(grad_output);
        let (dx, dgamma, dbeta) =
            engine::backward(slice_of(&gp), saved, self.params.gamma_slice(), LN_GATES);
        let dx = plan.scatter(dx);
        self.params.store_grads(dgamma, dbeta);
        Ok(dx)
    }

    affine_layer_basics!(NAME);

    fn get_weights(&self) -> LayerWeight<'_> {
        LayerWeight::LayerNormalization(LayerNormalizationLayerWeight {
            gamma: Cow::Borrowed(&self.params.gamma),
            beta: Cow::Borrowed(&self.params.beta),
        })
    }

    fn set_training_if_mode_dependent(&mut self, is_training: bool) {
        self.set_training(is_training);
    }

    fn apply_weights(&mut self, weights: &LayerWeight<'_>) -> Result<()> {
        match weights {
            LayerWeight::LayerNormalization(w) => w
                .apply_to_layer(self)
                .map_err(|e| structure_mismatch(NAME, e)),
            _ => Err(wrong_weights(NAME)),
        }
    }
}

impl ApplyWeights<LayerNormalization> for LayerNormalizationLayerWeight<'_> {
    fn apply_to_layer(&self, layer: &mut LayerNormalization) -> Result<()> {
        layer.set_weights(
            self.gamma.clone().into_owned(),
            self.beta.clone().into_owned(),
        )
    }
}
