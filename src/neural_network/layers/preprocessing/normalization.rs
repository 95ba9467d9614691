//! The `Normalization` layer: Keras 3's preprocessing normalisation,
//! `(x - mean) / max(sqrt(variance), 1e-7)` (or its inverse, `mean + x * max(sqrt(variance),
//! 1e-7)`), with one mean and variance per index of the kept axes (`axis`), broadcast over the
//! others. The statistics come from the constructor (Keras's `mean=`/`variance=`: then the
//! layer lists no weights, as Keras's) or from [`adapt_statistics`] over a data set (Keras's
//! `adapt`: they are the non-trainable weights `mean`, `variance` and `count`). The gradient
//! flows through to the input, so the layer can sit inside a trained model.

use crate::error::{Error, IoError, Result};
use crate::math::reduction::{column_moments, Moments};
use crate::neural_network::layers::activation::{lanes_f32, CHEAP_MAP_F32};
use crate::neural_network::layers::layer_util::{
    batch_free_shape, require_batched, shape_kept_grad, to_c_order,
};
use crate::neural_network::layers::layer_weight::{LayerWeight, NormalizationLayerWeight};
use crate::neural_network::layers::TrainingParameters;
use crate::neural_network::traits::Layer;
use crate::neural_network::Tensor;
use ndarray::{ArrayD, ArrayView2, ArrayViewD, IxDyn};
use std::borrow::Cow;

/// Keras's `backend.epsilon()`: the floor of the standard deviation a value is divided by.
pub const NORMALIZATION_EPSILON: f32 = 1e-7;

/// Keras's `axis` (an empty list stands for `axis=None`: one scalar mean and variance) as
/// sorted, distinct axes of a tensor of `rank` axes, batch axis 0, which is never kept.
pub fn normalization_keep_axes(axis: &[i64], rank: usize) -> Result<Vec<usize>> {
    let mut keep = Vec::with_capacity(axis.len());
    for &a in axis {
        let r = if a < 0 { a + rank as i64 } else { a };
        if r < 0 || r >= rank as i64 {
            return Err(Error::invalid_parameter(
                "axis",
                format!(
                    "Normalization: axis {a} is out of range for inputs of rank {rank} (every axis must be in [-{rank}, {rank}))"
                ),
            ));
        }
        if r == 0 {
            return Err(Error::invalid_parameter(
                "axis",
                format!(
                    "Normalization: axis {a} is the batch axis of inputs of rank {rank}; statistics are kept per feature, not per sample (use axis=None for one scalar mean and variance)"
                ),
            ));
        }
        keep.push(r as usize);
    }
    keep.sort_unstable();
    if keep.windows(2).any(|w| w[0] == w[1]) {
        return Err(Error::invalid_parameter(
            "axis",
            format!("Normalization: axis {axis:?} names an axis twice"),
        ));
    }
    Ok(keep)
}

/// Mean and population variance of every index of the kept axes over all the others, the
/// statistics Keras's `Normalization.adapt` stores: over the concatenation of `batches` (each
/// `(batch, ...)`, the same shape on the kept axes). `axis` as Keras gives it (empty: one
/// scalar pair). Computed in f64 with the crate's deterministic blocked moments (the same bits
/// at any thread count), batches merged by Chan's pairwise formula, rounded to f32 at the end.
/// Returns arrays of the kept axes' shape.
pub fn adapt_statistics(
    batches: &[ArrayViewD<'_, f64>],
    axis: &[i64],
) -> Result<(ArrayD<f32>, ArrayD<f32>)> {
    let first = batches.first().ok_or_else(|| {
        Error::empty_input("Normalization.adapt: no data (an empty list of batches)")
    })?;
    let rank = first.ndim();
    if rank == 0 {
        return Err(Error::invalid_input(
            "Normalization.adapt: data must have a batch axis, got a scalar",
        ));
    }
    let keep = normalization_keep_axes(axis, rank)?;
    let keep_shape: Vec<usize> = keep.iter().map(|&a| first.shape()[a]).collect();
    let width: usize = keep_shape.iter().product();
    // reduced axes first, kept axes last: rows are observations, columns kept positions
    let order: Vec<usize> = (0..rank)
        .filter(|a| !keep.contains(a))
        .chain(keep.iter().copied())
        .collect();
    let mut total = vec![Moments::default(); width];
    for (b, batch) in batches.iter().enumerate() {
        if batch.ndim() != rank {
            return Err(Error::invalid_input(format!(
                "Normalization.adapt: batch {b} has rank {}, the first batch rank {rank}",
                batch.ndim()
            )));
        }
        let shape: Vec<usize> = keep.iter().map(|&a| batch.shape()[a]).collect();
        if shape != keep_shape {
            return Err(Error::invalid_input(format!(
                "Normalization.adapt: batch {b} has shape {:?}, whose kept axes {keep:?} measure {shape:?} where the first batch's measure {keep_shape:?}",
                batch.shape()
            )));
        }
        if batch.is_empty() {
            continue;
        }
        if batch.iter().any(|v| !v.is_finite()) {
            return Err(Error::invalid_input(format!(
                "Normalization.adapt: batch {b} holds NaN or infinity"
            )));
        }
        let rows = batch.len() / width;
        let permuted = batch.view().permuted_axes(IxDyn(&order));
        let part = match permuted.as_slice() {
            Some(s) => column_moments(
                ArrayView2::from_shape((rows, width), s).expect("element count matches"),
            ),
            None => {
                let owned = permuted.as_standard_layout();
                column_moments(
                    ArrayView2::from_shape((rows, width), owned.as_slice().expect("C order"))
                        .expect("element count matches"),
                )
            }
        };
        total = total
            .into_iter()
            .zip(part)
            .map(|(a, p)| a.merge(p))
            .collect();
    }
    if total.first().is_some_and(|m| m.count == 0) {
        return Err(Error::empty_input(
            "Normalization.adapt: the data holds no sample",
        ));
    }
    let mean: Vec<f32> = total.iter().map(|m| m.mean as f32).collect();
    let var: Vec<f32> = total.iter().map(|m| m.variance() as f32).collect();
    Ok((
        ArrayD::from_shape_vec(IxDyn(&keep_shape), mean).expect("one per kept position"),
        ArrayD::from_shape_vec(IxDyn(&keep_shape), var).expect("one per kept position"),
    ))
}

/// Normalises with one mean and variance per index of the kept axes (see the module docs).
#[derive(Debug, Clone)]
pub struct Normalization {
    /// Per-sample input shape (no batch axis).
    sample_shape: Vec<usize>,
    /// Kept axes, batch axis 0, sorted.
    keep: Vec<usize>,
    mean: ArrayD<f32>,
    variance: ArrayD<f32>,
    /// Keras's `count` weight (Keras's `adapt` leaves it at 0; kept for its weight list).
    count: ArrayD<f32>,
    /// Built without statistics: they are weights (Keras's adapt-able layer); with fixed
    /// statistics the layer lists none.
    adaptable: bool,
    invert: bool,
    /// One sample's worth of the broadcast mean and of `max(sqrt(variance), eps)`.
    mean_lane: Vec<f32>,
    std_lane: Vec<f32>,
    /// The input shape of the last training pass.
    shape: Option<Vec<usize>>,
}

impl Normalization {
    /// For inputs of `input_shape` (batch axis included, its size ignored), statistics per
    /// index of `axis` (Keras's numbering; empty: one scalar pair), mean 0 and variance 1
    /// until set by weights (Keras's initial values).
    pub fn new(input_shape: &[usize], axis: &[i64], invert: bool) -> Result<Self> {
        if input_shape.len() < 2 && !axis.is_empty() {
            return Err(Error::invalid_parameter(
                "axis",
                format!(
                    "Normalization: inputs of shape {input_shape:?} have only the batch axis; use axis=None for one scalar mean and variance"
                ),
            ));
        }
        let keep = normalization_keep_axes(axis, input_shape.len().max(1))?;
        let keep_shape: Vec<usize> = keep.iter().map(|&a| input_shape[a]).collect();
        let mut layer = Self {
            sample_shape: input_shape.get(1..).unwrap_or(&[]).to_vec(),
            keep,
            mean: ArrayD::zeros(IxDyn(&keep_shape)),
            variance: ArrayD::ones(IxDyn(&keep_shape)),
            count: ArrayD::zeros(IxDyn(&[])),
            adaptable: true,
            invert,
            mean_lane: Vec::new(),
            std_lane: Vec::new(),
            shape: None,
        };
        layer.refresh_lanes();
        Ok(layer)
    }

    /// Fixed statistics (Keras's `mean=`, `variance=`): broadcast to the kept axes' shape as
    /// NumPy broadcasts (a scalar, or trailing dimensions matching or 1); the layer then lists
    /// no weights.
    pub fn with_statistics(mut self, mean: ArrayD<f32>, variance: ArrayD<f32>) -> Result<Self> {
        if mean.shape() != variance.shape() {
            return Err(Error::invalid_parameter(
                "variance",
                format!(
                    "Normalization: mean and variance must have the same shape, got {:?} and {:?}",
                    mean.shape(),
                    variance.shape()
                ),
            ));
        }
        if mean.ndim() > self.keep.len() {
            return Err(Error::invalid_parameter(
                "mean",
                format!(
                    "Normalization: mean of shape {:?} has more axes than the {} kept by axis",
                    mean.shape(),
                    self.keep.len()
                ),
            ));
        }
        let target = self.mean.raw_dim();
        let target_shape = self.mean.shape().to_vec();
        let broadcast = |a: &ArrayD<f32>, name: &str| {
            a.broadcast(target.clone())
                .map(|v| v.as_standard_layout().into_owned())
                .ok_or_else(|| {
                    Error::invalid_parameter(
                        name,
                        format!(
                            "Normalization: {name} of shape {:?} does not broadcast to the kept axes' shape {:?}",
                            a.shape(),
                            target_shape
                        ),
                    )
                })
        };
        let (mean, variance) = (broadcast(&mean, "mean")?, broadcast(&variance, "variance")?);
        check_statistics(&mean, &variance)?;
        self.mean = mean;
        self.variance = variance;
        self.adaptable = false;
        self.refresh_lanes();
        Ok(self)
    }

    /// Computes the statistics of `data` (`(batch, ...)` with this layer's per-sample shape
    /// on the kept axes) as Keras's `adapt` does, and stores them.
    pub fn adapt(&mut self, data: &Tensor) -> Result<()> {
        let axis: Vec<i64> = self.keep.iter().map(|&a| a as i64).collect();
        if data.ndim() != self.sample_shape.len() + 1 {
            return Err(Error::invalid_input(format!(
                "Normalization.adapt: data of shape {:?} does not have the layer's rank {}",
                data.shape(),
                self.sample_shape.len() + 1
            )));
        }
        let data64 = data.mapv(f64::from);
        let (mean, variance) = adapt_statistics(&[data64.view()], &axis)?;
        if mean.shape() != self.mean.shape() {
            return Err(Error::shape_mismatch(self.mean.shape(), mean.shape()));
        }
        self.mean = mean;
        self.variance = variance;
        self.refresh_lanes();
        Ok(())
    }

    pub fn mean(&self) -> &ArrayD<f32> {
        &self.mean
    }

    pub fn variance(&self) -> &ArrayD<f32> {
        &self.variance
    }

    pub fn invert(&self) -> bool {
        self.invert
    }

    /// The broadcast mean and floored standard deviation of one sample, from the statistics.
    fn refresh_lanes(&mut self) {
        let per_sample: usize = self.sample_shape.iter().product();
        // strides of the kept axes inside the statistics array (C order)
        let keep_dims: Vec<usize> = self.mean.shape().to_vec();
        let mut keep_strides = vec![1usize; keep_dims.len()];
        for k in (0..keep_dims.len().saturating_sub(1)).rev() {
            keep_strides[k] = keep_strides[k + 1] * keep_dims[k + 1];
        }
        let mean = self.mean.as_standard_layout();
        let var = self.variance.as_standard_layout();
        let (mean, var) = (
            mean.as_slice().expect("C order"),
            var.as_slice().expect("C order"),
        );
        self.mean_lane = Vec::with_capacity(per_sample);
        self.std_lane = Vec::with_capacity(per_sample);
        let mut idx = vec![0usize; self.sample_shape.len()];
        for _ in 0..per_sample {
            let s: usize = self
                .keep
                .iter()
                .zip(&keep_strides)
                .map(|(&a, &st)| idx[a - 1] * st)
                .sum();
            self.mean_lane.push(mean[s]);
            self.std_lane.push(var[s].sqrt().max(NORMALIZATION_EPSILON));
            // next C-order multi-index
            for d in (0..idx.len()).rev() {
                idx[d] += 1;
                if idx[d] < self.sample_shape[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
    }

    fn check_input(&self, input: &Tensor) -> Result<()> {
        require_batched(input)?;
        if input.shape()[1..] != self.sample_shape[..] {
            let mut expected = vec![input.shape()[0]];
            expected.extend_from_slice(&self.sample_shape);
            return Err(Error::shape_mismatch(expected, input.shape()));
        }
        Ok(())
    }

    fn apply(&self, input: &Tensor) -> Result<Tensor> {
        self.check_input(input)?;
        let mut out = to_c_order(input);
        let (mean, std) = (&self.mean_lane, &self.std_lane);
        let lane = mean.len().max(1);
        let slice = out.as_slice_mut().expect("C order");
        if self.invert {
            lanes_f32(&CHEAP_MAP_F32, slice, lane, |l| {
                l.iter_mut()
                    .zip(mean.iter().zip(std))
                    .for_each(|(v, (&m, &s))| *v = m + *v * s)
            });
        } else {
            lanes_f32(&CHEAP_MAP_F32, slice, lane, |l| {
                l.iter_mut()
                    .zip(mean.iter().zip(std))
                    .for_each(|(v, (&m, &s))| *v = (*v - m) / s)
            });
        }
        Ok(out)
    }
}

/// Statistics must be finite and a variance non-negative (its square root is taken).
fn check_statistics(mean: &ArrayD<f32>, variance: &ArrayD<f32>) -> Result<()> {
    if let Some(v) = mean.iter().find(|v| !v.is_finite()) {
        return Err(Error::invalid_parameter(
            "mean",
            format!("Normalization: mean holds {v}; statistics must be finite"),
        ));
    }
    if let Some(v) = variance.iter().find(|v| !v.is_finite() || **v < 0.0) {
        return Err(Error::invalid_parameter(
            "variance",
            format!("Normalization: variance holds {v}; a variance must be finite and >= 0"),
        ));
    }
    Ok(())
}

impl Layer for Normalization {
    fn forward(&mut self, input: &Tensor) -> Result<Tensor> {
        let out = self.apply(input)?;
        self.shape = Some(input.shape().to_vec());
        Ok(out)
    }

    fn predict(&self, input: &Tensor) -> Result<Tensor> {
        self.apply(input)
    }

    /// `dL/dx = dL/dy / std` (`* std` when inverting); the statistics are not trained.
    fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor> {
        let mut grad = shape_kept_grad(&self.shape, "Normalization", grad_output)?;
        let std = &self.std_lane;
        let lane = std.len().max(1);
        let slice = grad.as_slice_mut().expect("C order");
        if self.invert {
            lanes_f32(&CHEAP_MAP_F32, slice, lane, |l| {
                l.iter_mut().zip(std).for_each(|(g, &s)| *g *= s)
            });
        } else {
            lanes_f32(&CHEAP_MAP_F32, slice, lane, |l| {
                l.iter_mut().zip(std).for_each(|(g, &s)| *g /= s)
            });
        }
        Ok(grad)
    }

    fn layer_type(&self) -> &str {
        "Normalization"
    }

    fn output_shape(&self) -> String {
        let mut shape = vec![0];
        shape.extend_from_slice(&self.sample_shape);
        batch_free_shape(&shape)
    }

    fn param_count(&self) -> TrainingParameters {
        if self.adaptable {
            TrainingParameters::NonTrainable(2 * self.mean.len() + 1)
        } else {
            TrainingParameters::NoTrainable
        }
    }

    fn get_weights(&self) -> LayerWeight<'_> {
        if !self.adaptable {
            return LayerWeight::Empty;
        }
        LayerWeight::Normalization(NormalizationLayerWeight {
            mean: Cow::Borrowed(&self.mean),
            variance: Cow::Borrowed(&self.variance),
            count: Cow::Borrowed(&self.count),
        })
    }

    fn apply_weights(&mut self, weights: &LayerWeight<'_>) -> Result<()> {
        match (weights, self.adaptable) {
            (LayerWeight::Normalization(w), true) => {
                for (name, given, own) in [
                    ("mean", w.mean.as_ref(), &self.mean),
                    ("variance", w.variance.as_ref(), &self.variance),
                    ("count", w.count.as_ref(), &self.count),
                ] {
                    if given.shape() != own.shape() {
                        return Err(IoError::ModelStructureMismatch(format!(
                            "Normalization {name} has shape {:?}, the file's {:?}",
                            own.shape(),
                            given.shape()
                        ))
                        .into());
                    }
                }
                check_statistics(w.mean.as_ref(), w.variance.as_ref())?;
                self.mean = w.mean.as_ref().clone();
                self.variance = w.variance.as_ref().clone();
                self.count = w.count.as_ref().clone();
                self.refresh_lanes();
                Ok(())
            }
            (LayerWeight::Empty, false) => Ok(()),
            _ => Err(IoError::ModelStructureMismatch(format!(
                "a Normalization {} weights, the file's layer {}",
                if self.adaptable {
                    "built without mean/variance has"
                } else {
                    "built with fixed mean/variance has no"
                },
                if matches!(weights, LayerWeight::Empty) {
                    "has none"
                } else {
                    "has others"
                }
            ))
            .into()),
        }
    }
}

#[cfg(test)]
mod tests;
