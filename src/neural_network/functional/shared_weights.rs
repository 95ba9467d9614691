//! A layer called on several tensors: its calls' gradients summed into one update, and the
//! updated weights copied to every call's instance.

use crate::error::{Error, Result};
use crate::neural_network::layers::layer_weight::LayerWeight;
use crate::neural_network::layers::TrainingParameters;
use crate::neural_network::traits::{Layer, ParamGrad};
use crate::neural_network::Tensor;

/// The first call's instance seen through the summed gradients of all calls: what the
/// optimizer updates for a shared layer (optimizers read only `parameters`).
pub(super) struct SummedGradients {
    pub(super) owner: Box<dyn Layer>,
    pub(super) grads: Vec<Vec<f32>>,
}

/// The sum, call by call in call order, of every instance's parameter gradients.
pub(super) fn sum_gradients(calls: &mut [Box<dyn Layer>]) -> Vec<Vec<f32>> {
    let mut sum: Vec<Vec<f32>> = calls[0]
        .parameters()
        .iter()
        .map(|p| p.grad.to_vec())
        .collect();
    for call in calls[1..].iter_mut() {
        for (acc, p) in sum.iter_mut().zip(call.parameters()) {
            for (a, &g) in acc.iter_mut().zip(p.grad) {
                *a += g;
            }
        }
    }
    sum
}

/// Copies the first instance's trainable values into the other calls' instances.
pub(super) fn copy_values_from_first(calls: &mut [Box<dyn Layer>]) {
    let values: Vec<Vec<f32>> = calls[0]
        .parameters()
        .iter()
        .map(|p| p.value.to_vec())
        .collect();
    for call in calls[1..].iter_mut() {
        for (p, v) in call.parameters().into_iter().zip(&values) {
            p.value.copy_from_slice(v);
        }
    }
}

/// Copies the first instance's whole weight set (moving statistics included) into the other
/// calls' instances: after building and after `set_weights`.
pub(super) fn copy_weights_from_first(calls: &mut [Box<dyn Layer>]) -> Result<()> {
    let weights = calls[0].get_weights().into_owned();
    for call in calls[1..].iter_mut() {
        call.apply_weights(&weights)?;
    }
    Ok(())
}

fn not_callable() -> Error {
    Error::invalid_input("a shared layer's gradient view only takes optimizer updates")
}

impl Layer for SummedGradients {
    fn forward(&mut self, _input: &Tensor) -> Result<Tensor> {
        Err(not_callable())
    }
    fn predict(&self, _input: &Tensor) -> Result<Tensor> {
        Err(not_callable())
    }
    fn backward(&mut self, _grad_output: &Tensor) -> Result<Tensor> {
        Err(not_callable())
    }
    fn layer_type(&self) -> &str {
        self.owner.layer_type()
    }
    fn param_count(&self) -> TrainingParameters {
        self.owner.param_count()
    }
    fn parameters(&mut self) -> Vec<ParamGrad<'_>> {
        self.owner
            .parameters()
            .into_iter()
            .zip(&self.grads)
            .map(|(p, g)| ParamGrad {
                value: p.value,
                grad: g,
                decays: p.decays,
            })
            .collect()
    }
    fn get_weights(&self) -> LayerWeight<'_> {
        self.owner.get_weights()
    }
}
