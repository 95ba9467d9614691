//! The `TimeDistributed` wrapper: applies one inner layer (one set of weights) to every slice
//! of its input along axis 1. The `(batch, time, ...)` input is read as `(batch * time, ...)`
//! (a free reshape of a C-order tensor), passed through the inner layer as one batch, and the
//! output read back as `(batch, time, ...)`; the inner layer's parameter gradients are
//! therefore the sums over every slice, as Keras's.

use super::layer_util::{forward_cache, require_batched, require_shape, seen_shape, to_c_order};
use super::layer_weight::LayerWeight;
use super::TrainingParameters;
use crate::error::{Error, Result};
use crate::neural_network::traits::{Layer, ParamGrad, RandomStream};
use crate::neural_network::Tensor;
use ndarray::IxDyn;

/// Applies `layer` to each time step of `(batch, time, ...)` inputs.
pub struct TimeDistributed {
    layer: Box<dyn Layer>,
    /// Input and output shapes of the last training pass.
    shapes: Option<(Vec<usize>, Vec<usize>)>,
}

impl std::fmt::Debug for TimeDistributed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimeDistributed")
            .field("layer", &self.layer.layer_type())
            .finish()
    }
}

/// `(batch, time, rest...)` -> `(batch * time, rest...)`, or the error for an input of rank < 3.
fn fold_time(input: &Tensor) -> Result<(Tensor, usize, usize)> {
    require_batched(input)?;
    if input.ndim() < 3 {
        return Err(Error::invalid_input(format!(
            "TimeDistributed: inputs must have at least 3 axes (batch, time, features...), got shape {:?}",
            input.shape()
        )));
    }
    let (b, t) = (input.shape()[0], input.shape()[1]);
    let mut inner = vec![b * t];
    inner.extend_from_slice(&input.shape()[2..]);
    let folded = to_c_order(input)
        .into_shape_with_order(IxDyn(&inner))
        .expect("same element count");
    Ok((folded, b, t))
}

/// `(batch * time, rest...)` -> `(batch, time, rest...)`.
fn unfold_time(output: Tensor, b: usize, t: usize) -> Result<Tensor> {
    if output.ndim() == 0 || output.shape()[0] != b * t {
        return Err(Error::invalid_input(format!(
            "TimeDistributed: the wrapped layer returned shape {:?} for {} samples; it must keep the batch axis",
            output.shape(),
            b * t
        )));
    }
    let mut shape = vec![b, t];
    shape.extend_from_slice(&output.shape()[1..]);
    Ok(to_c_order(&output)
        .into_shape_with_order(IxDyn(&shape))
        .expect("same element count"))
}

impl TimeDistributed {
    /// Wraps `layer`, which sees inputs of shape `(batch * time, ...)`.
    pub fn new(layer: Box<dyn Layer>) -> Self {
        Self {
            layer,
            shapes: None,
        }
    }

    /// The wrapped layer.
    pub fn layer(&self) -> &dyn Layer {
        self.layer.as_ref()
    }

    fn grad_folded(&self, grad_output: &Tensor) -> Result<(Tensor, Vec<usize>)> {
        let (in_shape, out_shape) = forward_cache(&self.shapes, "TimeDistributed")?;
        require_shape(out_shape, grad_output.shape())?;
        let mut folded = vec![out_shape[0] * out_shape[1]];
        folded.extend_from_slice(&out_shape[2..]);
        let g = to_c_order(grad_output)
            .into_shape_with_order(IxDyn(&folded))
            .expect("shape checked");
        Ok((g, in_shape.clone()))
    }
}

impl Layer for TimeDistributed {
    fn forward(&mut self, input: &Tensor) -> Result<Tensor> {
        let (folded, b, t) = fold_time(input)?;
        let out = unfold_time(self.layer.forward_owned(folded)?, b, t)?;
        self.shapes = Some((input.shape().to_vec(), out.shape().to_vec()));
        Ok(out)
    }

    fn predict(&self, input: &Tensor) -> Result<Tensor> {
        let (folded, b, t) = fold_time(input)?;
        unfold_time(self.layer.predict(&folded)?, b, t)
    }

    fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor> {
        let (g, in_shape) = self.grad_folded(grad_output)?;
        let dx = self.layer.backward(&g)?;
        to_c_order(&dx)
            .into_shape_with_order(IxDyn(&in_shape))
            .map_err(|_| Error::shape_mismatch(in_shape.clone(), dx.shape()))
    }

    fn backward_params_only(&mut self, grad_output: &Tensor) -> Result<()> {
        let (g, _) = self.grad_folded(grad_output)?;
        self.layer.backward_params_only(&g)
    }

    fn layer_type(&self) -> &str {
        "TimeDistributed"
    }

    fn output_shape(&self) -> String {
        seen_shape(self.shapes.as_ref().map(|(_, out)| out.as_slice()))
    }

    fn param_count(&self) -> TrainingParameters {
        self.layer.param_count()
    }

    fn parameters(&mut self) -> Vec<ParamGrad<'_>> {
        self.layer.parameters()
    }

    fn get_weights(&self) -> LayerWeight<'_> {
        self.layer.get_weights()
    }

    fn uses_bias(&self) -> bool {
        self.layer.uses_bias()
    }

    fn set_training_if_mode_dependent(&mut self, is_training: bool) {
        self.layer.set_training_if_mode_dependent(is_training)
    }

    fn random_stream(&self) -> Option<RandomStream> {
        self.layer.random_stream()
    }

    fn set_random_stream(&mut self, stream: &RandomStream) {
        self.layer.set_random_stream(stream)
    }

    fn apply_weights(&mut self, weights: &LayerWeight<'_>) -> Result<()> {
        self.layer.apply_weights(weights)
    }

    // Keras 3 runs the inner layer's `call`, not its `__call__`: its weights' penalties
    // count, its activity regularizer is never applied
    fn regularize(&mut self, grad_scale: f32, weights: bool, _activity: bool) -> f32 {
        self.layer.regularize(grad_scale, weights, false)
    }

    fn weight_penalty(&self) -> f32 {
        self.layer.weight_penalty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::neural_network::layers::{Activation, Dense};
    use ndarray::{ArrayD, IxDyn};

    fn wave(n: usize, phase: f32) -> Vec<f32> {
        (0..n).map(|i| ((i as f32) * 0.57 + phase).sin()).collect()
    }

    fn dense() -> Dense {
        let mut d = Dense::new(3, 2, Activation::Tanh).unwrap();
        let w = d.get_weights().into_owned();
        let arrays: Vec<ArrayD<f32>> = w
            .named_arrays()
            .iter()
            .enumerate()
            .map(|(k, (_, a))| {
                ArrayD::from_shape_vec(a.raw_dim(), wave(a.len(), k as f32 + 0.3)).unwrap()
            })
            .collect();
        d.apply_weights(&w.with_arrays(arrays).unwrap()).unwrap();
        d
    }

    /// Every time step through the inner layer on its own equals the wrapped pass.
    #[test]
    fn each_time_step_goes_through_the_same_layer() {
        let (b, t) = (2, 4);
        let x = ArrayD::from_shape_vec(IxDyn(&[b, t, 3]), wave(b * t * 3, 0.0)).unwrap();
        let td = TimeDistributed::new(Box::new(dense()));
        let y = td.predict(&x).unwrap();
        assert_eq!(y.shape(), &[b, t, 2]);
        let inner = dense();
        for s in 0..t {
            let slice = x.index_axis(ndarray::Axis(1), s).to_owned();
            let want = inner.predict(&slice).unwrap();
            // the same dot products (length 3) in one batch or per step: at most a few ulps
            for (a, b) in y.index_axis(ndarray::Axis(1), s).iter().zip(want.iter()) {
                assert!((a - b).abs() <= 1e-6, "step {s}: {a} vs {b}");
            }
        }
    }

    /// Input and weight gradients of `L = sum(w * y)` against central differences in f64 of
    /// the f32 forward pass (h = 1e-2 keeps the f32 rounding of L, ~1e-7 * |L|, far below the
    /// difference; the truncation error of tanh is O(h^2) ~ 1e-4 relative).
    #[test]
    fn gradients_match_finite_differences() {
        let (b, t) = (2, 3);
        let x = ArrayD::from_shape_vec(IxDyn(&[b, t, 3]), wave(b * t * 3, 0.5)).unwrap();
        let w = ArrayD::from_shape_vec(IxDyn(&[b, t, 2]), wave(b * t * 2, 1.7)).unwrap();
        let mut td = TimeDistributed::new(Box::new(dense()));
        td.forward(&x).unwrap();
        let dx = td.backward(&w).unwrap();
        let loss = |td: &TimeDistributed, x: &Tensor| -> f64 {
            td.predict(x)
                .unwrap()
                .iter()
                .zip(w.iter())
                .map(|(&a, &b)| a as f64 * b as f64)
                .sum()
        };
        let h = 1e-2f32;
        for i in 0..x.len() {
            let mut p = x.clone();
            p.as_slice_mut().unwrap()[i] += h;
            let up = loss(&td, &p);
            p.as_slice_mut().unwrap()[i] -= 2.0 * h;
            let num = (up - loss(&td, &p)) / (2.0 * h as f64);
            let got = dx.as_slice().unwrap()[i] as f64;
            assert!(
                (got - num).abs() <= 2e-3 * (1.0 + num.abs()),
                "dx[{i}]: {got} vs {num}"
            );
        }
        // weight gradients: summed over every time step
        let grads: Vec<Vec<f32>> = td.parameters().iter().map(|p| p.grad.to_vec()).collect();
        let base = td.get_weights().into_owned();
        let arrays: Vec<ArrayD<f32>> = base.named_arrays().into_iter().map(|(_, a)| a).collect();
        for (k, grad) in grads.iter().enumerate() {
            for (j, &got) in grad.iter().enumerate() {
                let eval = |delta: f32| {
                    let mut a = arrays.clone();
                    a[k].as_slice_mut().unwrap()[j] += delta;
                    let mut probe = TimeDistributed::new(Box::new(dense()));
                    probe.apply_weights(&base.with_arrays(a).unwrap()).unwrap();
                    loss(&probe, &x)
                };
                let num = (eval(h) - eval(-h)) / (2.0 * h as f64);
                let got = got as f64;
                assert!(
                    (got - num).abs() <= 2e-3 * (1.0 + num.abs()),
                    "param {k}[{j}]: {got} vs {num}"
                );
            }
        }
    }

    #[test]
    fn refuses_rank_2_inputs_and_backward_before_forward() {
        let mut td = TimeDistributed::new(Box::new(dense()));
        let e = td.predict(&ArrayD::zeros(IxDyn(&[4, 3]))).unwrap_err();
        assert!(e.to_string().contains("at least 3 axes"), "{e}");
        assert!(td.backward(&ArrayD::zeros(IxDyn(&[1, 2, 2]))).is_err());
    }
}
