//! The `Reshape` layer: gives every sample a new shape with the same element count, keeping
//! the C-order element sequence (the batch axis is untouched).

use super::layer_util::{
    batch_free_shape, forward_cache, no_parameters, require_batched, require_shape, to_c_order,
};
use crate::error::{Error, Result};
use crate::neural_network::traits::Layer;
use crate::neural_network::Tensor;
use ndarray::IxDyn;

/// Reshapes `[batch, ...]` to `[batch, target...]`; at most one target entry may be -1, which
/// takes the extent that makes the element count match (Keras semantics).
#[derive(Debug)]
pub struct Reshape {
    target_shape: Vec<isize>,
    /// Input and output shapes of the last training pass.
    shapes: Option<(Vec<usize>, Vec<usize>)>,
}

impl Reshape {
    /// Every entry must be >= 1 or -1, with at most one -1 (else `InvalidParameter`). An empty
    /// target gives a rank-1 output `[batch]`.
    pub fn new(target_shape: Vec<isize>) -> Result<Self> {
        if let Some(&bad) = target_shape.iter().find(|&&d| d == 0 || d < -1) {
            return Err(Error::invalid_parameter(
                "target_shape",
                format!("entries must be >= 1 or -1, got {bad} in {target_shape:?}"),
            ));
        }
        if target_shape.iter().filter(|&&d| d == -1).count() > 1 {
            return Err(Error::invalid_parameter(
                "target_shape",
                format!("at most one entry may be -1, got {target_shape:?}"),
            ));
        }
        Ok(Self {
            target_shape,
            shapes: None,
        })
    }

    /// The output shape for an input of `shape`, with the -1 entry resolved.
    fn resolve(&self, shape: &[usize]) -> Result<Vec<usize>> {
        let per_sample: usize = shape[1..].iter().product();
        // checked: a target whose sizes overflow cannot match a real input
        let known = self
            .target_shape
            .iter()
            .filter(|&&d| d > 0)
            .try_fold(1usize, |a, &d| a.checked_mul(d as usize))
            .ok_or_else(|| {
                Error::invalid_input(format!(
                    "cannot reshape {shape:?} to (batch, {:?}): the target's sizes overflow, far more than the input's {per_sample} elements per sample",
                    self.target_shape
                ))
            })?;
        let inferred = if self.target_shape.contains(&-1) {
            if !per_sample.is_multiple_of(known) {
                return Err(Error::invalid_input(format!(
                    "cannot reshape {shape:?} to (batch, {:?}): {per_sample} elements per sample \
                     are not a multiple of {known}",
                    self.target_shape
                )));
            }
            per_sample / known
        } else {
            0
        };
        let out: Vec<usize> = std::iter::once(shape[0])
            .chain(
                self.target_shape
                    .iter()
                    .map(|&d| if d == -1 { inferred } else { d as usize }),
            )
            .collect();
        if crate::neural_network::layers::size_guard::checked_product(&out[1..]) != Some(per_sample)
        {
            return Err(Error::shape_mismatch(out, shape));
        }
        Ok(out)
    }

    fn transform(&self, input: &Tensor) -> Result<(Tensor, Vec<usize>)> {
        require_batched(input)?;
        let out_shape = self.resolve(input.shape())?;
        let out = to_c_order(input)
            .into_shape_with_order(IxDyn(&out_shape))
            .expect("element count checked");
        Ok((out, out_shape))
    }
}

impl Layer for Reshape {
    fn forward(&mut self, input: &Tensor) -> Result<Tensor> {
        let (out, out_shape) = self.transform(input)?;
        self.shapes = Some((input.shape().to_vec(), out_shape));
        Ok(out)
    }

    fn predict(&self, input: &Tensor) -> Result<Tensor> {
        Ok(self.transform(input)?.0)
    }

    fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor> {
        let (in_shape, out_shape) = forward_cache(&self.shapes, "Reshape")?;
        require_shape(out_shape, grad_output.shape())?;
        Ok(to_c_order(grad_output)
            .into_shape_with_order(IxDyn(in_shape))
            .expect("element count checked in forward"))
    }

    fn layer_type(&self) -> &str {
        "Reshape"
    }

    /// Known before any pass unless the target holds a -1.
    fn output_shape(&self) -> String {
        if let Some((_, out_shape)) = &self.shapes {
            return batch_free_shape(out_shape);
        }
        if self.target_shape.contains(&-1) {
            return "Unknown".to_string();
        }
        let mut shape = vec![0];
        shape.extend(self.target_shape.iter().map(|&d| d as usize));
        batch_free_shape(&shape)
    }

    no_parameters!();
}
