//! `Concatenate(axis)`: inputs joined along one axis (counted with the batch axis, as Keras
//! counts it; negative from the end); the other axes must agree.

use super::{check_batches, check_count, per_sample_shapes, MergeLayer};
use crate::error::{Error, Result};
use crate::neural_network::Tensor;
use ndarray::{Axis, Slice};

pub struct Concatenate {
    axis: i64,
    /// Each input's size along the joined axis (for splitting the gradient).
    widths: Vec<usize>,
    /// The joined axis of the full (batched) tensors, fixed by the first call.
    resolved: Option<usize>,
}

impl Concatenate {
    /// `axis` as Keras takes it (default -1); the batch axis itself is refused when shapes
    /// are known.
    pub fn new(axis: i64) -> Self {
        Self {
            axis,
            widths: Vec::new(),
            resolved: None,
        }
    }

    pub fn axis(&self) -> i64 {
        self.axis
    }

    /// The axis of the batched tensor for per-sample rank `rank`.
    fn full_axis(&self, rank: usize) -> Result<usize> {
        let full = rank as i64 + 1;
        let a = if self.axis < 0 {
            self.axis + full
        } else {
            self.axis
        };
        if a <= 0 || a >= full {
            return Err(Error::invalid_input(format!(
                "Concatenate: axis={} is out of range for inputs of rank {full} (the batch \
                 axis 0 cannot be joined)",
                self.axis
            )));
        }
        Ok(a as usize)
    }
}

impl MergeLayer for Concatenate {
    fn layer_type(&self) -> &str {
        "Concatenate"
    }

    fn output_shape(&self, inputs: &[Vec<usize>]) -> Result<Vec<usize>> {
        check_count("Concatenate", inputs.len())?;
        let rank = inputs[0].len();
        if inputs.iter().any(|s| s.len() != rank) {
            return Err(Error::invalid_input(format!(
                "Concatenate: inputs must have the same rank, got per-sample shapes {inputs:?}"
            )));
        }
        let a = self.full_axis(rank)? - 1;
        let mut out = inputs[0].clone();
        out[a] = 0;
        for s in inputs {
            let mismatch = s
                .iter()
                .zip(&inputs[0])
                .enumerate()
                .any(|(i, (x, y))| i != a && x != y);
            if mismatch {
                return Err(Error::invalid_input(format!(
                    "Concatenate(axis={}): inputs must match on every axis except the joined \
                     one, got per-sample shapes {inputs:?}",
                    self.axis
                )));
            }
            out[a] += s[a];
        }
        Ok(out)
    }

    fn predict(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        check_batches("Concatenate", inputs)?;
        self.output_shape(&per_sample_shapes(inputs))?;
        let axis = self.full_axis(inputs[0].ndim() - 1)?;
        let views: Vec<_> = inputs.iter().map(|t| t.view()).collect();
        ndarray::concatenate(Axis(axis), &views)
            .map_err(|e| Error::invalid_input(format!("Concatenate: {e}")))
    }

    fn forward(&mut self, inputs: &[&Tensor]) -> Result<Tensor> {
        let out = self.predict(inputs)?;
        let axis = self.full_axis(inputs[0].ndim() - 1)?;
        self.widths = inputs.iter().map(|t| t.shape()[axis]).collect();
        self.resolved = Some(axis);
        Ok(out)
    }

    fn backward(&mut self, grad_output: &Tensor) -> Result<Vec<Tensor>> {
        let axis = self
            .resolved
            .ok_or_else(|| Error::invalid_input("Concatenate: backward before forward"))?;
        let total: usize = self.widths.iter().sum();
        if grad_output.ndim() <= axis || grad_output.shape()[axis] != total {
            return Err(Error::invalid_input(format!(
                "Concatenate: gradient of shape {:?} does not match the joined output",
                grad_output.shape()
            )));
        }
        let mut start = 0;
        Ok(self
            .widths
            .iter()
            .map(|&w| {
                let part = grad_output
                    .slice_axis(Axis(axis), Slice::from(start..start + w))
                    .as_standard_layout()
                    .into_owned();
                start += w;
                part
            })
            .collect())
    }
}
