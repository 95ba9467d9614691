//! The `Permute` layer: reorders the axes after the batch axis.

use super::layer_util::{
    forward_cache, no_parameters, require_non_empty, require_shape, seen_shape,
};
use crate::error::{Error, Result};
use crate::neural_network::traits::Layer;
use crate::neural_network::Tensor;
use ndarray::IxDyn;

/// Output axis `k` (1-based after the batch axis) is input axis `dims[k - 1]`, as in Keras.
#[derive(Debug)]
pub struct Permute {
    /// The full axis order, batch axis first: `[0, dims...]`.
    order: Vec<usize>,
    /// Its inverse, which `backward` applies.
    inverse: Vec<usize>,
    /// Input and output shapes of the last training pass.
    shapes: Option<(Vec<usize>, Vec<usize>)>,
}

impl Permute {
    /// `dims` must be a permutation of `1..=dims.len()` (else `InvalidParameter`).
    pub fn new(dims: Vec<usize>) -> Result<Self> {
        let n = dims.len();
        let mut seen = vec![false; n + 1];
        for &d in &dims {
            if d == 0 || d > n || seen[d] {
                return Err(Error::invalid_parameter(
                    "dims",
                    format!("must be a permutation of 1..={n}, got {dims:?}"),
                ));
            }
            seen[d] = true;
        }
        if n == 0 {
            return Err(Error::invalid_parameter(
                "dims",
                "must name at least 1 axis",
            ));
        }
        let order: Vec<usize> = std::iter::once(0).chain(dims).collect();
        let mut inverse = vec![0; n + 1];
        for (k, &axis) in order.iter().enumerate() {
            inverse[axis] = k;
        }
        Ok(Self {
            order,
            inverse,
            shapes: None,
        })
    }

    fn transform(&self, input: &Tensor) -> Result<Tensor> {
        if input.ndim() != self.order.len() {
            return Err(Error::invalid_input(format!(
                "Permute with {} axes after the batch axis expects rank {} input, got shape {:?}",
                self.order.len() - 1,
                self.order.len(),
                input.shape()
            )));
        }
        require_non_empty(input)?;
        Ok(input
            .view()
            .permuted_axes(IxDyn(&self.order))
            .as_standard_layout()
            .into_owned())
    }
}

impl Layer for Permute {
    fn forward(&mut self, input: &Tensor) -> Result<Tensor> {
        let out = self.transform(input)?;
        self.shapes = Some((input.shape().to_vec(), out.shape().to_vec()));
        Ok(out)
    }

    fn predict(&self, input: &Tensor) -> Result<Tensor> {
        self.transform(input)
    }

    fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor> {
        let (_, out_shape) = forward_cache(&self.shapes, "Permute")?;
        require_shape(out_shape, grad_output.shape())?;
        Ok(grad_output
            .view()
            .permuted_axes(IxDyn(&self.inverse))
            .as_standard_layout()
            .into_owned())
    }

    fn layer_type(&self) -> &str {
        "Permute"
    }

    fn output_shape(&self) -> String {
        seen_shape(self.shapes.as_ref().map(|(_, out)| out.as_slice()))
    }

    no_parameters!();
}
