//! Small checks and formatters shared by the parameter-light layers (activations, reshaping
//! layers, embedding, dropout and noise), so each layer file holds only its own logic.

use crate::error::{Error, Result};
use crate::neural_network::Tensor;

/// `(None, 3, 4)`: the shape after the batch axis, as `summary()` prints it (`(None,)` for a
/// rank-1 tensor).
pub(crate) fn batch_free_shape(shape: &[usize]) -> String {
    tuple_text(
        std::iter::once("None".to_string()).chain(shape.iter().skip(1).map(usize::to_string)),
    )
}

/// `(2, 3, 4)`: a whole configured shape, batch axis included.
pub(crate) fn full_shape(shape: &[usize]) -> String {
    tuple_text(shape.iter().map(usize::to_string))
}

/// Python's tuple spelling, so a 1-tuple keeps its trailing comma.
fn tuple_text(items: impl Iterator<Item = String>) -> String {
    let items: Vec<String> = items.collect();
    if items.len() == 1 {
        format!("({},)", items[0])
    } else {
        format!("({})", items.join(", "))
    }
}

/// A tensor with no element has nothing to transform.
pub(crate) fn require_non_empty(input: &Tensor) -> Result<()> {
    if input.is_empty() {
        return Err(Error::empty_input(format!(
            "input tensor of shape {:?} has no element",
            input.shape()
        )));
    }
    Ok(())
}

/// A rank-0 tensor has no batch axis; an empty one has nothing to transform.
pub(crate) fn require_batched(input: &Tensor) -> Result<()> {
    if input.ndim() == 0 {
        return Err(Error::invalid_input(
            "input must have a batch axis, got a rank-0 tensor",
        ));
    }
    require_non_empty(input)
}

/// An upstream gradient must have the shape of the output it belongs to.
pub(crate) fn require_shape(expected: &[usize], found: &[usize]) -> Result<()> {
    if expected != found {
        return Err(Error::shape_mismatch(expected, found));
    }
    Ok(())
}

/// What `forward` cached for `backward`, or `ForwardPassNotRun(layer)` when no forward pass has
/// run.
pub(crate) fn forward_cache<'a, T>(cache: &'a Option<T>, layer: &'static str) -> Result<&'a T> {
    cache
        .as_ref()
        .ok_or_else(|| Error::forward_pass_not_run(layer))
}

/// The upstream gradient of a shape-keeping layer, as a C-order copy to transform in place,
/// once it is checked against the shape the forward pass saw (`shape`).
pub(crate) fn shape_kept_grad(
    shape: &Option<Vec<usize>>,
    layer: &'static str,
    grad_output: &Tensor,
) -> Result<Tensor> {
    require_shape(forward_cache(shape, layer)?, grad_output.shape())?;
    Ok(to_c_order(grad_output))
}

/// `summary()` text of a layer that learns its output shape from its input: the shape a
/// forward pass saw, batch axis free, or `Unknown` before one.
pub(crate) fn seen_shape(shape: Option<&[usize]>) -> String {
    shape.map_or_else(|| "Unknown".to_string(), batch_free_shape)
}

/// An owned C-order copy: every layer hands out C-order tensors, so the next layer can read
/// them as one contiguous slice.
pub(crate) fn to_c_order(t: &Tensor) -> Tensor {
    t.as_standard_layout().into_owned()
}

/// Inside a `Layer` impl of a layer macro whose struct wraps a generic core (the field `core`,
/// or the one named) with the same three passes: `forward`, `predict` and `backward`
/// forwarded to it.
macro_rules! core_passes {
    () => {
        $crate::neural_network::layers::layer_util::core_passes!(core);
    };
    ($field:tt) => {
        fn forward(
            &mut self,
            input: &$crate::neural_network::Tensor,
        ) -> $crate::error::Result<$crate::neural_network::Tensor> {
            self.$field.forward(input)
        }

        fn predict(
            &self,
            input: &$crate::neural_network::Tensor,
        ) -> $crate::error::Result<$crate::neural_network::Tensor> {
            self.$field.predict(input)
        }

        fn backward(
            &mut self,
            grad_output: &$crate::neural_network::Tensor,
        ) -> $crate::error::Result<$crate::neural_network::Tensor> {
            self.$field.backward(grad_output)
        }
    };
}
pub(crate) use core_passes;

/// Inside a `Layer` impl: `param_count` and `get_weights` of a layer without parameters.
macro_rules! no_parameters {
    () => {
        fn param_count(&self) -> $crate::neural_network::layers::TrainingParameters {
            $crate::neural_network::layers::TrainingParameters::NoTrainable
        }

        fn get_weights(&self) -> $crate::neural_network::layers::layer_weight::LayerWeight<'_> {
            $crate::neural_network::layers::layer_weight::LayerWeight::Empty
        }
    };
}
pub(crate) use no_parameters;

/// `Layer` for a weightless layer `struct $name(core)` whose core has the three passes and
/// `output_shape` (the border and up-sampling layers).
macro_rules! weightless_core_layer {
    ($name:ident) => {
        impl $crate::neural_network::traits::Layer for $name {
            $crate::neural_network::layers::layer_util::core_passes!(0);

            fn layer_type(&self) -> &str {
                stringify!($name)
            }
            fn output_shape(&self) -> String {
                self.0.output_shape()
            }
            $crate::neural_network::layers::layer_util::no_parameters!();
        }
    };
}
pub(crate) use weightless_core_layer;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_print_as_python_tuples() {
        assert_eq!(batch_free_shape(&[2, 3, 4]), "(None, 3, 4)");
        assert_eq!(batch_free_shape(&[7]), "(None,)");
        assert_eq!(full_shape(&[32, 128]), "(32, 128)");
        assert_eq!(full_shape(&[5]), "(5,)");
    }
}
