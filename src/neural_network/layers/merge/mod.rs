//! Merge layers: several tensors in, one out (Keras's `Add`, `Subtract`, `Multiply`,
//! `Average`, `Maximum`, `Minimum`, `Concatenate`, `Dot`). They hold no weights; a graph
//! model ([`crate::neural_network::functional`]) feeds them the outputs of other layers.
//!
//! Each follows Keras 3's formula in the order Keras folds its inputs (`((x0 + x1) + x2)`...),
//! so float32 results round as Keras's do, and its gradient is the one JAX's differentiation
//! of that fold gives (ties of `Maximum`/`Minimum` split the gradient in halves, as
//! `jax.lax.max` does).

mod concatenate;
mod dot;
mod elementwise;

pub use concatenate::Concatenate;
pub use dot::Dot;
pub use elementwise::{ElementwiseMerge, MergeOp};

use crate::error::{Error, Result};
use crate::neural_network::Tensor;

/// A layer with several inputs and one output.
pub trait MergeLayer: Send + Sync {
    /// Keras's class name (`"Add"`, `"Concatenate"`...).
    fn layer_type(&self) -> &str;
    /// The per-sample output shape for inputs of per-sample shapes `inputs`, or an error
    /// naming the mismatch.
    fn output_shape(&self, inputs: &[Vec<usize>]) -> Result<Vec<usize>>;
    /// Inference: keeps nothing.
    fn predict(&self, inputs: &[&Tensor]) -> Result<Tensor>;
    /// Training pass: computes the output and keeps what `backward` needs.
    fn forward(&mut self, inputs: &[&Tensor]) -> Result<Tensor>;
    /// The gradient with respect to each input of the latest `forward`, in input order.
    fn backward(&mut self, grad_output: &Tensor) -> Result<Vec<Tensor>>;
}

/// Keras's rule: a merge layer takes a list of at least two tensors.
fn check_count(layer: &str, n: usize) -> Result<()> {
    if n < 2 {
        return Err(Error::invalid_input(format!(
            "a {layer} layer must be called on a list of at least 2 inputs, got {n}"
        )));
    }
    Ok(())
}

/// Every input has the same batch size (checked by each `forward`/`predict`).
fn check_batches(layer: &str, inputs: &[&Tensor]) -> Result<()> {
    check_count(layer, inputs.len())?;
    let first = inputs[0].shape().first().copied();
    if inputs
        .iter()
        .any(|t| t.ndim() == 0 || t.shape().first().copied() != first)
    {
        let shapes: Vec<_> = inputs.iter().map(|t| t.shape().to_vec()).collect();
        return Err(Error::invalid_input(format!(
            "{layer}: inputs need the same batch size, got shapes {shapes:?}"
        )));
    }
    Ok(())
}

/// The batch shapes `inputs` per sample, each checked against the shape the layer was built
/// for (`output_shape`), so a misfit at run time is an error, not a panic.
fn per_sample_shapes(inputs: &[&Tensor]) -> Vec<Vec<usize>> {
    inputs.iter().map(|t| t.shape()[1..].to_vec()).collect()
}

#[cfg(test)]
mod tests;
