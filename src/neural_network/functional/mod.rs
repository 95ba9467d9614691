//! Graph models (Keras's functional API): layers as nodes, tensors as edges, several inputs
//! and outputs, layers called on more than one tensor (shared weights).
//!
//! A [`GraphModel`] runs its nodes in topological order; training runs them backwards in
//! the reverse order, adding up the gradients of a tensor that feeds several layers (in a
//! fixed order, so the same seed gives the same bits at any thread count). A layer called on
//! k tensors keeps one instance per call (each caches its own input for the backward pass)
//! whose weights are kept equal: the gradients of the calls are summed, the first instance is
//! updated with the sum and its weights copied to the others. The layers, optimizers and
//! losses are the ones [`crate::neural_network::sequential::Sequential`] uses; merge layers
//! ([`crate::neural_network::layers::merge`]) join branches. Models are built from Keras's
//! functional config by [`crate::neural_network::keras::functional_model_from_config`].

mod graph;
mod shared_weights;
mod training;

pub use graph::{GraphLayer, GraphModel, Node};
pub use training::StepResult;

#[cfg(test)]
mod tests;
