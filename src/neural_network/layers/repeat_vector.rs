//! The `RepeatVector` layer: turns `[batch, features]` into `[batch, n, features]` by
//! repeating each sample `n` times (the bridge from an encoder state to a decoder sequence).

use super::layer_util::{
    forward_cache, no_parameters, require_non_empty, require_shape, seen_shape,
};
use crate::error::{Error, Result};
use crate::neural_network::traits::Layer;
use crate::neural_network::Tensor;
use ndarray::{Axis, Ix2};

/// Repeats every rank-2 sample along a new step axis; the gradient sums over that axis.
#[derive(Debug)]
pub struct RepeatVector {
    n: usize,
    /// The output shape of the last training pass.
    output: Option<[usize; 3]>,
}

impl RepeatVector {
    /// `n` must be >= 1 (else `InvalidParameter`).
    pub fn new(n: usize) -> Result<Self> {
        if n == 0 {
            return Err(Error::invalid_parameter("n", "must be >= 1"));
        }
        Ok(Self { n, output: None })
    }

    fn transform(&self, input: &Tensor) -> Result<Tensor> {
        let x = input.view().into_dimensionality::<Ix2>().map_err(|_| {
            Error::invalid_input(format!(
                "RepeatVector expects rank 2 input [batch, features], got shape {:?}",
                input.shape()
            ))
        })?;
        require_non_empty(input)?;
        let (batch, features) = x.dim();
        crate::neural_network::layers::size_guard::check_f32_alloc(
            "RepeatVector",
            "output",
            &[batch, self.n, features],
        )?;
        let out = x
            .insert_axis(Axis(1))
            .broadcast((batch, self.n, features))
            .expect("a unit axis broadcasts to any extent")
            .to_owned();
        Ok(out.into_dyn())
    }
}

impl Layer for RepeatVector {
    fn forward(&mut self, input: &Tensor) -> Result<Tensor> {
        let out = self.transform(input)?;
        self.output = Some([out.shape()[0], out.shape()[1], out.shape()[2]]);
        Ok(out)
    }

    fn predict(&self, input: &Tensor) -> Result<Tensor> {
        self.transform(input)
    }

    fn backward(&mut self, grad_output: &Tensor) -> Result<Tensor> {
        let shape = forward_cache(&self.output, "RepeatVector")?;
        require_shape(shape, grad_output.shape())?;
        // Every step read the same input, so its gradient is the step-axis sum (fixed order).
        Ok(grad_output.sum_axis(Axis(1)))
    }

    fn layer_type(&self) -> &str {
        "RepeatVector"
    }

    fn output_shape(&self) -> String {
        seen_shape(self.output.as_ref().map(|s| &s[..]))
    }

    no_parameters!();
}
