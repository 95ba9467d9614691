//! The `PReLU` layer: a leaky ReLU whose slopes are trained, one per position of a sample
//! (batch axis removed), or one per group of positions along `shared_axes` (Keras semantics).

use super::{zip_f32, CHEAP_MAP_F32, MAP_TASK};
use crate::error::{Error, IoError, Result};
use crate::neural_network::layers::layer_util::{
    forward_cache, full_shape, require_non_empty, require_shape, to_c_order,
};
use crate::neural_network::layers::layer_weight::{LayerWeight, PReLULayerWeight};
use crate::neural_network::layers::TrainingParameters;
use crate::neural_network::traits::{ApplyWeights, Layer, ParamGrad};
use crate::neural_network::{NnError, Tensor};
use ndarray::{ArrayD, Axis, IxDyn};
use rayon::prelude::*;
use std::borrow::Cow;

/// `f(x) = x` for `x >= 0`, `alpha * x` below. The derivative is 1 above 0, `alpha` below 0
/// and 0 at exactly 0 (Keras's choice, so a zero slope gives exactly ReLU's gradient).
#[derive(Debug)]
pub struct PReLU {
    /// The configured input shape, batch axis included.
    input_shape: Vec<usize>,
    /// The starting slope, kept so `with_shared_axes` can refill a resized slope array.
    initial_alpha: f32,
    /// Sorted axes (of the input, so >= 1) along which one slope is shared.
    shared_axes: Vec<usize>,
    /// Slopes, C order, shape `input_shape[1..]` with every shared axis at extent 1.
    alpha: ArrayD<f32>,
    alpha_grad: Option<ArrayD<f32>>,
    /// The last training input, which both gradients read.
    input: Option<Tensor>,
    /// The shape of the last training input, for `summary()`.
    last_shape: Option<Vec<usize>>,
}

impl PReLU {
    /// `input_shape` includes the batch axis: rank >= 2 and no zero extent (else
    /// `InvalidInput`); `alpha` must be finite (else `InvalidParameter`). A zero or negative
    /// starting slope is allowed.
    pub fn new(input_shape: Vec<usize>, alpha: f32) -> Result<Self> {
        if input_shape.len() < 2 {
            return Err(Error::invalid_input(format!(
                "PReLU input_shape needs a batch axis and at least 1 more axis, got {input_shape:?}"
            )));
        }
        if input_shape.contains(&0) {
            return Err(Error::invalid_input(format!(
                "PReLU input_shape has a zero extent: {input_shape:?}"
            )));
        }
        if !alpha.is_finite() {
            return Err(Error::invalid_parameter(
                "alpha",
                format!("must be finite, got {alpha}"),
            ));
        }
        let slope_shape = input_shape[1..].to_vec();
        Ok(Self {
            input_shape,
            initial_alpha: alpha,
            shared_axes: Vec::new(),
            alpha: ArrayD::from_elem(IxDyn(&slope_shape), alpha),
            alpha_grad: None,
            input: None,
            last_shape: None,
        })
    }

    /// Shares one slope along each listed input axis (1-based after the batch axis, like
    /// Keras: `[1, 2]` on `[batch, h, w, c]` gives one slope per channel). Axis 0, an axis >=
    /// the rank, or a repeated axis -> `InvalidParameter`. The slopes restart from the
    /// starting value, and a stored gradient is dropped.
    pub fn with_shared_axes(mut self, shared_axes: Vec<usize>) -> Result<Self> {
        let rank = self.input_shape.len();
        let mut axes = shared_axes.clone();
        axes.sort_unstable();
        for (k, &axis) in axes.iter().enumerate() {
            if axis == 0 || axis >= rank {
                return Err(Error::invalid_parameter(
                    "shared_axes",
                    format!("axis {axis} is not in 1..{rank} (axis 0 is the batch axis)"),
                ));
            }
            if k > 0 && axes[k - 1] == axis {
                return Err(Error::invalid_parameter(
                    "shared_axes",
                    format!("axis {axis} is listed twice in {shared_axes:?}"),
                ));
            }
        }
        let slope_shape: Vec<usize> = (1..rank)
            .map(|a| {
                if axes.contains(&a) {
                    1
                } else {
                    self.input_shape[a]
                }
            })
            .collect();
        self.alpha = ArrayD::from_elem(IxDyn(&slope_shape), self.initial_alpha);
        self.shared_axes = axes;
        self.alpha_grad = None;
        Ok(self)
    }

    /// Replaces the slopes; the shape must be the layer's slope shape exactly (shared axes at
    /// extent 1), else `NnError::WeightShape { name: "alpha", .. }`.
    pub fn set_weights(&mut self, alpha: ArrayD<f32>) -> Result<()> {
        if alpha.shape() != self.alpha.shape() {
            return Err(NnError::WeightShape {
                name: "alpha".to_string(),
                expected: self.alpha.shape().to_vec(),
                found: alpha.shape().to_vec(),
            }
            .into());
        }
        // `parameters()` hands the slopes out as one slice, so they are kept in C order.
        self.alpha = to_c_order(&alpha);
        Ok(())
    }

    /// Rank must match the configured shape and every unshared axis after the batch axis must
    /// keep its extent; shared axes and the batch axis may vary.
    fn check_input(&self, input: &Tensor) -> Result<()> {
        require_non_empty(input)?;
        if input.ndim() != self.input_shape.len() {
            return Err(Error::invalid_input(format!(
                "PReLU expects rank {} input (configured {:?}), got shape {:?}",
                self.input_shape.len(),
                self.input_shape,
                input.shape()
            )));
        }
        for axis in 1..input.ndim() {
            if !self.shared_axes.contains(&axis) && input.shape()[axis] != self.input_shape[axis] {
                return Err(Error::invalid_input(format!(
                    "PReLU axis {axis} must have extent {} (configured {:?}), got shape {:?}",
                    self.input_shape[axis],
                    self.input_shape,
                    input.shape()
                )));
            }
        }
        Ok(())
    }

    /// The slopes broadcast to one sample of `shape`, in C order: element `i` of a sample
    /// uses slope `i` of this array.
    fn sample_slopes(&self, shape: &[usize]) -> Vec<f32> {
        let view = self
            .alpha
            .broadcast(IxDyn(&shape[1..]))
            .expect("checked: every unshared axis matches the slope array");
        view.iter().copied().collect()
    }

    fn transform(&self, input: &Tensor) -> Result<Tensor> {
        self.check_input(input)?;
        let slopes = self.sample_slopes(input.shape());
        let mut out = to_c_order(input);
        let s = out.as_slice_mut().expect("C order");
        per_sample_zip(s, &slopes, |x, a| if x >= 0.0 { x } else { a * x });
        Ok(out)
    }
}

/// `d[i] = f(d[i], period[i % period.len()])` over a batch of samples laid end to end, in
/// parallel behind [`CHEAP_MAP_F32`] (each element on its own, so the path never changes a
/// bit).
fn per_sample_zip(dst: &mut [f32], period: &[f32], f: impl Fn(f32, f32) -> f32 + Sync + Send) {
    let n = period.len();
    if CHEAP_MAP_F32.allows_parallel(dst.len()) {
        dst.par_chunks_mut(n)
            .with_min_len((MAP_TASK / n).max(1))
            .for_each(|sample| {
                // A large sample splits again, so a batch of 1 still spreads over the pool.
                zip_f32(&CHEAP_MAP_F32, sample, period, &f);
            });
    } else {
        dst.chunks_mut(n).for_each(|sample| {
            sample
                .iter_mut()
                .zip(period)
                .for_each(|(d, &p)| *d = f(*d, p))
        });
    }
}

impl Layer for PReLU {
    fn forward(&mut self, input: &Tensor) -> Result<Tensor> {
        let out = self.transform(input)?;
        self.input = Some(to_c_order(input));
        self.last_shape = Some(input.shape().to_vec());
        Ok(out)
    }

    fn predict(&self, input: &Tensor) -> Result<Tensor> {
        self.transform(input)
    }

    fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor> {
        let input = forward_cache(&self.input, "PReLU")?;
        require_shape(input.shape(), grad_output.shape())?;
        let x = input.as_slice().expect("cached in C order");

        // Slope gradient: g * x wherever x < 0, summed over the batch and the shared axes.
        // Per-element terms first, then fixed-order sums, so the result is thread-count free.
        let mut terms = to_c_order(grad_output);
        zip_f32(
            &CHEAP_MAP_F32,
            terms.as_slice_mut().expect("C order"),
            x,
            |g, x| if x < 0.0 { g * x } else { 0.0 },
        );
        let mut alpha_grad = terms.sum_axis(Axis(0));
        for &axis in self.shared_axes.iter().rev() {
            alpha_grad = alpha_grad
                .sum_axis(Axis(axis - 1))
                .insert_axis(Axis(axis - 1));
        }
        self.alpha_grad = Some(to_c_order(&alpha_grad));

        // Input gradient: g times 1 above 0, alpha below 0, 0 at exactly 0.
        let slopes = self.sample_slopes(input.shape());
        let mut factor = input.clone();
        per_sample_zip(factor.as_slice_mut().expect("C order"), &slopes, |x, a| {
            if x > 0.0 {
                1.0
            } else if x < 0.0 {
                a
            } else {
                0.0
            }
        });
        let mut grad = to_c_order(grad_output);
        zip_f32(
            &CHEAP_MAP_F32,
            grad.as_slice_mut().expect("C order"),
            factor.as_slice().expect("C order"),
            |g, d| g * d,
        );
        Ok(grad)
    }

    fn layer_type(&self) -> &str {
        "PReLU"
    }

    fn output_shape(&self) -> String {
        full_shape(self.last_shape.as_deref().unwrap_or(&self.input_shape))
    }

    fn param_count(&self) -> TrainingParameters {
        TrainingParameters::Trainable(self.alpha.len())
    }

    fn parameters(&mut self) -> Vec<ParamGrad<'_>> {
        match &self.alpha_grad {
            Some(grad) => vec![ParamGrad::no_decay(
                self.alpha.as_slice_mut().expect("slopes kept in C order"),
                grad.as_slice().expect("gradient kept in C order"),
            )],
            None => Vec::new(),
        }
    }

    fn get_weights(&self) -> LayerWeight<'_> {
        LayerWeight::PReLU(PReLULayerWeight {
            alpha: Cow::Borrowed(&self.alpha),
        })
    }

    fn apply_weights(&mut self, weights: &LayerWeight<'_>) -> Result<()> {
        match weights {
            LayerWeight::PReLU(w) => w.apply_to_layer(self),
            _ => Err(IoError::ModelStructureMismatch(
                "layer `PReLU` expects PReLU weights".to_string(),
            )
            .into()),
        }
    }
}

impl ApplyWeights<PReLU> for PReLULayerWeight<'_> {
    fn apply_to_layer(&self, layer: &mut PReLU) -> Result<()> {
        layer.set_weights(self.alpha.clone().into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::serial_and_parallel;

    fn tensor(shape: &[usize], data: Vec<f32>) -> Tensor {
        Tensor::from_shape_vec(IxDyn(shape), data).unwrap()
    }

    /// 1 slope per channel of a [2, 2, 3, 2] input, probes clear of the kink at 0.
    fn layer_and_input() -> (PReLU, Tensor) {
        let mut layer = PReLU::new(vec![2, 2, 3, 2], 0.0)
            .unwrap()
            .with_shared_axes(vec![1, 2])
            .unwrap();
        layer
            .set_weights(tensor(&[1, 1, 2], vec![0.3, -0.45]))
            .unwrap();
        let x = tensor(
            &[2, 2, 3, 2],
            (0..24).map(|k| 0.17 * k as f32 - 2.05).collect(),
        );
        (layer, x)
    }

    #[test]
    fn forward_matches_hand_values() {
        let (layer, x) = layer_and_input();
        let y = layer.predict(&x).unwrap();
        for (k, (&xv, &yv)) in x.iter().zip(y.iter()).enumerate() {
            let slope = if k % 2 == 0 { 0.3 } else { -0.45 };
            let want = if xv >= 0.0 { xv } else { slope * xv };
            assert_eq!(yv, want, "element {k}");
        }
    }

    #[test]
    fn gradients_match_central_differences() {
        let (mut layer, x) = layer_and_input();
        let w = tensor(
            x.shape(),
            (0..24).map(|k| ((k * 7 % 11) as f32 - 5.0) * 0.1).collect(),
        );
        let loss = |layer: &PReLU, x: &Tensor| (&layer.predict(x).unwrap() * &w).sum();
        layer.forward(&x).unwrap();
        let dx = layer.backward(&w).unwrap();
        let da = layer.alpha_grad.clone().unwrap();
        let eps = 1e-3f32;
        for i in 0..x.len() {
            let mut xp = x.clone();
            xp.as_slice_mut().unwrap()[i] += eps;
            let mut xm = x.clone();
            xm.as_slice_mut().unwrap()[i] -= eps;
            let numeric = (loss(&layer, &xp) - loss(&layer, &xm)) / (2.0 * eps);
            assert!((dx.as_slice().unwrap()[i] - numeric).abs() < 2e-3, "x[{i}]");
        }
        for j in 0..2 {
            let shifted = |delta: f32| {
                let mut probe = PReLU::new(vec![2, 2, 3, 2], 0.0)
                    .unwrap()
                    .with_shared_axes(vec![1, 2])
                    .unwrap();
                let mut a = layer.alpha.clone();
                a.as_slice_mut().unwrap()[j] += delta;
                probe.set_weights(a).unwrap();
                loss(&probe, &x)
            };
            let numeric = (shifted(eps) - shifted(-eps)) / (2.0 * eps);
            assert!(
                (da.as_slice().unwrap()[j] - numeric).abs() < 2e-3,
                "alpha[{j}]"
            );
        }
    }

    #[test]
    fn cheap_map_gate_never_changes_a_bit() {
        let rows = 2 * MAP_TASK / 5 + 3;
        let shape = [3, rows, 5];
        let n: usize = shape.iter().product();
        let x = tensor(&shape, (0..n).map(|k| (k % 13) as f32 - 6.0).collect());
        let g = x.mapv(|v| v * 0.25 + 0.5);
        let (s, p) = serial_and_parallel(&CHEAP_MAP_F32, || {
            let mut layer = PReLU::new(shape.to_vec(), 0.2)
                .unwrap()
                .with_shared_axes(vec![1])
                .unwrap();
            let y = layer.forward(&x).unwrap();
            let d = layer.backward(&g).unwrap();
            (y, d, layer.alpha_grad.unwrap())
        });
        let bits = |t: &Tensor| t.mapv(f32::to_bits);
        assert_eq!(bits(&s.0), bits(&p.0));
        assert_eq!(bits(&s.1), bits(&p.1));
        assert_eq!(bits(&s.2), bits(&p.2));
    }
}
