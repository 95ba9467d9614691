//! Keras's `Bidirectional` wrapper: one recurrent layer reads the sequence forwards, a copy
//! of it reads it backwards, and their outputs merge.

use super::time_loop::{fused_views, Recurrent};
use crate::error::{Error, IoError, Result};
use crate::neural_network::layers::layer_weight::LayerWeight;
use crate::neural_network::layers::TrainingParameters;
use crate::neural_network::traits::{Layer, Mask, ParamGrad};
use crate::neural_network::{Tensor, TensorView};
use ndarray::{concatenate, s, Axis, Slice};
use std::borrow::Cow;

/// A recurrent layer `Bidirectional` can wrap (SimpleRNN, LSTM, GRU).
pub trait RecurrentLayer: Layer {
    #[doc(hidden)]
    fn into_engine(self) -> Recurrent;
}

/// How the forward and backward outputs combine (Keras's `merge_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MergeMode {
    /// Side by side on the last axis (`2 * units` features), Keras's default.
    #[default]
    Concat,
    Sum,
    Mul,
    /// The mean of the two.
    Ave,
}

/// Runs `layer` forwards and a fresh copy of it (same configuration, its own weights,
/// `go_backwards` flipped) backwards over the same input. With `return_sequences`, the
/// backward outputs are put back in input order before merging, as in Keras.
///
/// Weights: the forward layer's then the backward layer's. The original's `LayerWeight` has
/// no Bidirectional variant, so `get_weights` returns the wrapped cell's variant with each
/// array the forward and backward arrays side by side on the columns (`[.., 2 * gates *
/// units]`); `apply_weights` splits them back.
#[derive(Debug)]
pub struct Bidirectional {
    forward: Recurrent,
    backward: Recurrent,
    merge_mode: MergeMode,
    /// The two outputs of the last training forward pass (time-aligned), for `Mul`.
    cache: Option<(Tensor, Tensor)>,
}

impl Bidirectional {
    /// Wraps `layer`; the backward copy draws its weights from the global seed stream (or
    /// entropy), `with_random_state` fixes both.
    pub fn new(layer: impl RecurrentLayer, merge_mode: MergeMode) -> Result<Self> {
        let mut forward = layer.into_engine();
        // Keras's Bidirectional sets zero_output_for_mask to return_sequences on both halves.
        forward.zero_output_for_mask = forward.return_sequences;
        let backward = forward.reversed_twin(None)?;
        Ok(Self {
            forward,
            backward,
            merge_mode,
            cache: None,
        })
    }

    /// Re-draws both halves' weights from `random_state` (each from its own stream).
    pub fn with_random_state(mut self, random_state: u64) -> Self {
        self.forward.reseed(random_state);
        self.backward
            .reseed(random_state ^ 0x5DEE_CE66_D1CE_4E5B_u64.rotate_left(7));
        self
    }

    pub fn merge_mode(&self) -> MergeMode {
        self.merge_mode
    }

    /// The upstream gradient split between the halves (the backward half's in its processing
    /// order), after checking its shape; consumes the forward cache.
    fn half_gradients(&mut self, grad_output: &Tensor) -> Result<(Tensor, Tensor)> {
        let Some((f, b)) = self.cache.take() else {
            return Err(Error::forward_pass_not_run("Bidirectional"));
        };
        let merged_last = match self.merge_mode {
            MergeMode::Concat => 2 * self.forward.units,
            _ => self.forward.units,
        };
        let mut want = f.shape().to_vec();
        *want.last_mut().expect("outputs have a feature axis") = merged_last;
        if grad_output.shape() != want.as_slice() {
            return Err(Error::invalid_input(format!(
                "Bidirectional backward expects a gradient of shape {want:?}, got {:?}",
                grad_output.shape()
            )));
        }
        let (gf, gb) = match self.merge_mode {
            MergeMode::Concat => {
                let u = self.forward.units;
                let last = Axis(grad_output.ndim() - 1);
                (
                    grad_output.slice_axis(last, Slice::from(..u)).to_owned(),
                    grad_output.slice_axis(last, Slice::from(u..)).to_owned(),
                )
            }
            MergeMode::Sum => (grad_output.clone(), grad_output.clone()),
            MergeMode::Mul => (grad_output * &b, grad_output * &f),
            MergeMode::Ave => (grad_output * 0.5, grad_output * 0.5),
        };
        // The backward half saw its outputs in processing order.
        Ok((gf, self.align(gb)))
    }

    /// Puts backward outputs (processing order) back in input order when they are sequences.
    fn align(&self, t: Tensor) -> Tensor {
        if self.forward.return_sequences {
            t.slice_axis(Axis(1), Slice::new(0, None, -1))
                .as_standard_layout()
                .into_owned()
        } else {
            t
        }
    }

    fn merge(&self, f: &Tensor, b: &Tensor) -> Result<Tensor> {
        Ok(match self.merge_mode {
            MergeMode::Concat => {
                let axis = Axis(f.ndim() - 1);
                concatenate(axis, &[f.view(), b.view()])
                    .map_err(|e| Error::invalid_input(format!("Bidirectional: {e}")))?
            }
            MergeMode::Sum => f + b,
            MergeMode::Mul => f * b,
            MergeMode::Ave => (f + b) * 0.5,
        })
    }
}

impl Layer for Bidirectional {
    fn forward(&mut self, input: &Tensor) -> Result<Tensor> {
        self.forward_masked(input, None)
    }

    fn predict(&self, input: &Tensor) -> Result<Tensor> {
        self.predict_masked(input, None)
    }

    /// Both halves read Keras's mask (the backward one in its own order); as in Keras, with
    /// `return_sequences` a masked step outputs zeros in both halves.
    fn forward_masked(&mut self, input: &Tensor, mask: Option<&Mask>) -> Result<Tensor> {
        let f = self.forward.forward_masked(input, mask)?;
        let b = self.backward.forward_masked(input, mask)?;
        let b = self.align(b);
        let out = self.merge(&f, &b)?;
        self.cache = Some((f, b));
        Ok(out)
    }

    fn predict_masked(&self, input: &Tensor, mask: Option<&Mask>) -> Result<Tensor> {
        let f = self.forward.predict_masked(input, mask)?;
        let b = self.align(self.backward.predict_masked(input, mask)?);
        self.merge(&f, &b)
    }

    fn compute_mask(&self, _input: TensorView<'_>, mask: Option<&Mask>) -> Result<Option<Mask>> {
        Ok(self.forward.output_mask(mask))
    }

    fn set_training_if_mode_dependent(&mut self, is_training: bool) {
        self.forward.set_training(is_training);
        self.backward.set_training(is_training);
    }

    fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor> {
        let (gf, gb) = self.half_gradients(grad_output)?;
        let dx_f = self.forward.backward(&gf)?;
        let dx_b = self.backward.backward(&gb)?;
        Ok(dx_f + dx_b)
    }

    fn backward_params_only(&mut self, grad_output: &Tensor) -> Result<()> {
        let (gf, gb) = self.half_gradients(grad_output)?;
        self.forward.backward_params_only(&gf)?;
        self.backward.backward_params_only(&gb)
    }

    fn layer_type(&self) -> &str {
        "Bidirectional"
    }

    fn output_shape(&self) -> String {
        let width = match self.merge_mode {
            MergeMode::Concat => 2 * self.forward.units,
            _ => self.forward.units,
        };
        if self.forward.return_sequences {
            format!("(None, None, {width})")
        } else {
            format!("(None, {width})")
        }
    }

    fn param_count(&self) -> TrainingParameters {
        match (self.forward.param_count(), self.backward.param_count()) {
            (TrainingParameters::Trainable(a), TrainingParameters::Trainable(b)) => {
                TrainingParameters::Trainable(a + b)
            }
            (other, _) => other,
        }
    }

    fn uses_bias(&self) -> bool {
        self.forward.use_bias
    }

    fn parameters(&mut self) -> Vec<ParamGrad<'_>> {
        let mut p = self.forward.parameters();
        p.extend(self.backward.parameters());
        p
    }

    fn get_weights(&self) -> LayerWeight<'_> {
        let [fk, frk, fb] = fused_views(&self.forward);
        let [bk, brk, bb] = fused_views(&self.backward);
        let side_by_side = |a, b| concatenate(Axis(1), &[a, b]).expect("equal row counts");
        let (k, rk, b) = (
            side_by_side(fk, bk),
            side_by_side(frk, brk),
            side_by_side(fb, bb),
        );
        self.forward
            .cell
            .weight_enum(Cow::Owned(k), Cow::Owned(rk), Cow::Owned(b))
    }

    fn apply_weights(&mut self, weights: &LayerWeight<'_>) -> Result<()> {
        let Some([k, rk, b]) = self.forward.weight_arrays(weights) else {
            return Err(IoError::ModelStructureMismatch(format!(
                "expected {} weights for a Bidirectional({}) layer",
                self.forward.cell.name(),
                self.forward.cell.name()
            ))
            .into());
        };
        let half = |a: &ndarray::Array2<f32>, which: usize| {
            let n = a.ncols() / 2;
            a.slice(s![.., which * n..(which + 1) * n]).to_owned()
        };
        let wrap = |e: Error| -> Error {
            IoError::ModelStructureMismatch(format!("Bidirectional: {e}")).into()
        };
        if k.ncols() % 2 != 0 || rk.ncols() % 2 != 0 || b.ncols() % 2 != 0 {
            return Err(wrap(Error::invalid_input(
                "the arrays do not hold two halves".to_string(),
            )));
        }
        // Check both halves before changing either.
        let mut f = self.forward.gates.clone();
        f.replace(half(k, 0), half(rk, 0), half(b, 0))
            .map_err(wrap)?;
        let mut bw = self.backward.gates.clone();
        bw.replace(half(k, 1), half(rk, 1), half(b, 1))
            .map_err(wrap)?;
        if !self.forward.use_bias {
            f.bias.fill(0.0);
            bw.bias.fill(0.0);
        }
        self.forward.gates = f;
        self.backward.gates = bw;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::neural_network::layers::activation::Activation;
    use crate::neural_network::layers::gradient_check::check_layer_gradients;
    use crate::neural_network::layers::recurrent::{GRU, LSTM};
    use ndarray::{Array3, ArrayD};

    fn input() -> Tensor {
        Array3::from_shape_fn((2, 4, 3), |(i, j, k)| {
            ((i * 5 + j * 3 + k) as f32 * 0.41).cos()
        })
        .into_dyn()
    }

    /// Forward half = the wrapped layer; backward half = a go_backwards layer with the
    /// second half of the weights, its sequence put back in input order.
    #[test]
    fn halves_match_separate_layers() {
        for seq in [false, true] {
            for mode in [
                MergeMode::Concat,
                MergeMode::Sum,
                MergeMode::Mul,
                MergeMode::Ave,
            ] {
                let make = || {
                    LSTM::new(3, 2, Activation::Tanh)
                        .unwrap()
                        .with_return_sequences(seq)
                };
                let bi = Bidirectional::new(make(), mode)
                    .unwrap()
                    .with_random_state(4);
                let w = bi.get_weights();
                let mut fwd = make();
                let mut bwd = make().with_go_backwards(true);
                let [k, rk, b] = bi.forward.weight_arrays(&w).unwrap();
                let half = |a: &ndarray::Array2<f32>, i: usize| {
                    let n = a.ncols() / 2;
                    a.slice(s![.., i * n..(i + 1) * n]).to_owned()
                };
                fwd.set_weights(half(k, 0), half(rk, 0), half(b, 0))
                    .unwrap();
                bwd.set_weights(half(k, 1), half(rk, 1), half(b, 1))
                    .unwrap();
                let x = input();
                let f = fwd.predict(&x).unwrap();
                let mut r = bwd.predict(&x).unwrap();
                if seq {
                    r = r.slice_axis(Axis(1), Slice::new(0, None, -1)).to_owned();
                }
                let got = bi.predict(&x).unwrap();
                let want: ArrayD<f32> = match mode {
                    MergeMode::Concat => {
                        concatenate(Axis(f.ndim() - 1), &[f.view(), r.view()]).unwrap()
                    }
                    MergeMode::Sum => &f + &r,
                    MergeMode::Mul => &f * &r,
                    MergeMode::Ave => (&f + &r) * 0.5,
                };
                assert_eq!(got, want, "seq={seq} {mode:?}");
            }
        }
    }

    #[test]
    fn gradients_match_central_differences() {
        for (seq, mode) in [
            (true, MergeMode::Concat),
            (false, MergeMode::Mul),
            (true, MergeMode::Ave),
        ] {
            let gru = GRU::new(2, 2, Activation::Tanh)
                .unwrap()
                .with_reset_after(true)
                .with_return_sequences(seq);
            let mut bi = Bidirectional::new(gru, mode).unwrap().with_random_state(7);
            let x = Array3::from_shape_fn((2, 3, 2), |(i, j, k)| {
                ((i * 5 + j * 2 + k) as f32 * 0.7).sin()
            })
            .into_dyn();
            let upstream = |shape: &[usize]| {
                ArrayD::from_shape_fn(shape, |i| {
                    0.5 + 0.25 * (ndarray::Dimension::slice(&i).iter().sum::<usize>() % 3) as f32
                })
            };
            let grads =
                check_layer_gradients(&mut bi, &x, upstream, 1e-2, |num| 2e-3 + 1e-2 * num.abs());
            assert_eq!(grads.len(), 6, "{mode:?}");
        }
    }

    /// As a first layer (no input gradient) both halves store the same weight gradients.
    #[test]
    fn params_only_backward_stores_the_same_gradients() {
        let grads = |first: bool| {
            let lstm = LSTM::new(3, 4, Activation::Tanh)
                .unwrap()
                .with_return_sequences(true);
            let mut bi = Bidirectional::new(lstm, MergeMode::Mul)
                .unwrap()
                .with_random_state(2);
            let out = bi.forward(&input()).unwrap();
            let g = out.mapv(|v| 0.3 - v);
            if first {
                bi.backward_params_only(&g).unwrap();
            } else {
                bi.backward(&g).unwrap();
            }
            let grads: Vec<Vec<f32>> = bi.parameters().iter().map(|p| p.grad.to_vec()).collect();
            grads
        };
        let want = grads(false);
        assert_eq!(want.len(), 6);
        assert_eq!(grads(true), want);
    }

    #[test]
    fn without_bias_both_halves_drop_it() {
        let make = |s| {
            let gru = GRU::new(3, 2, Activation::Tanh)
                .unwrap()
                .with_reset_after(true)
                .with_use_bias(false)
                .with_return_sequences(true);
            Bidirectional::new(gru, MergeMode::Concat)
                .unwrap()
                .with_random_state(s)
        };
        let a = make(1);
        assert!(!a.uses_bias());
        assert_eq!(
            a.param_count(),
            TrainingParameters::Trainable(2 * (3 * 6 + 2 * 6))
        );
        // A non-zero bias in the weights is not taken up.
        let w = a.get_weights();
        let [k, rk, b] = a.forward.weight_arrays(&w).unwrap();
        assert_eq!(b.shape(), &[2, 12]);
        let mut b2 = make(2);
        let noisy = a.forward.cell.weight_enum(
            Cow::Owned(k.clone()),
            Cow::Owned(rk.clone()),
            Cow::Owned(b.mapv(|_| 0.5)),
        );
        b2.apply_weights(&noisy).unwrap();
        let x = input();
        assert_eq!(a.predict(&x).unwrap(), b2.predict(&x).unwrap());
        // Each half equals a bias-free GRU with its half of the kernels.
        let half = |m: &ndarray::Array2<f32>, i: usize| {
            let n = m.ncols() / 2;
            m.slice(s![.., i * n..(i + 1) * n]).to_owned()
        };
        let mut fwd = GRU::new(3, 2, Activation::Tanh)
            .unwrap()
            .with_reset_after(true)
            .with_use_bias(false)
            .with_return_sequences(true);
        fwd.set_weights(half(k, 0), half(rk, 0), ndarray::Array2::zeros((2, 6)))
            .unwrap();
        let got = a.predict(&x).unwrap();
        assert_eq!(
            got.slice_axis(Axis(2), Slice::from(..2)).to_owned(),
            fwd.predict(&x).unwrap()
        );
        let mut trained = make(3);
        let out = trained.forward(&x).unwrap();
        trained.backward(&Tensor::ones(out.raw_dim())).unwrap();
        assert_eq!(trained.parameters().len(), 4);
    }

    #[test]
    fn weights_round_trip_and_shapes() {
        let make = |s| {
            Bidirectional::new(GRU::new(3, 2, Activation::Tanh).unwrap(), MergeMode::Concat)
                .unwrap()
                .with_random_state(s)
        };
        let a = make(1);
        let mut b = make(2);
        let x = input();
        assert_ne!(a.predict(&x).unwrap(), b.predict(&x).unwrap());
        b.apply_weights(&a.get_weights()).unwrap();
        assert_eq!(a.predict(&x).unwrap(), b.predict(&x).unwrap());
        assert_eq!(a.predict(&x).unwrap().shape(), &[2, 4]);
        assert_eq!(
            a.param_count(),
            TrainingParameters::Trainable(2 * 3 * (3 * 2 + 2 * 2 + 2))
        );
        let lstm = LSTM::new(3, 2, Activation::Tanh).unwrap();
        assert!(b.apply_weights(&lstm.get_weights()).is_err());
        let mut fresh = make(3);
        assert!(fresh.backward(&Tensor::zeros(vec![2, 4])).is_err());
    }
}
