//! The public builders and the `Layer` implementation every recurrent layer (`SimpleRNN`,
//! `LSTM`, `GRU`) shares over its time loop.

/// Declares a recurrent layer over its time loop (`Recurrent`, in the field `core`) with
/// `$cell`: the struct, `new(input_dim, units, activation)` (`units == 0` or `input_dim == 0`
/// is an `InvalidParameter`), `set_weights` (the fused kernel, recurrent kernel and bias),
/// the builders every recurrent layer shares and `impl Layer`. Each part takes its own docs.
macro_rules! recurrent_layer {
    (
        $(#[$doc:meta])*
        $ty:ident: $cell:expr,
        $(#[$new_doc:meta])*
        new,
        $(#[$set_weights_doc:meta])*
        set_weights $(,)?
    ) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $ty {
            core: $crate::neural_network::layers::recurrent::time_loop::Recurrent,
        }

        impl $ty {
            $(#[$new_doc])*
            pub fn new(
                input_dim: usize,
                units: usize,
                activation: impl Into<$crate::neural_network::layers::activation::Activation>,
            ) -> $crate::error::Result<Self> {
                Ok(Self {
                    core: $crate::neural_network::layers::recurrent::time_loop::Recurrent::new(
                        $cell,
                        input_dim,
                        units,
                        activation.into(),
                        None,
                    )?,
                })
            }

            $(#[$set_weights_doc])*
            pub fn set_weights(
                &mut self,
                kernel: ndarray::Array2<f32>,
                recurrent_kernel: ndarray::Array2<f32>,
                bias: ndarray::Array2<f32>,
            ) -> $crate::error::Result<()> {
                self.core.set_weights(kernel, recurrent_kernel, bias)
            }

            /// Re-draws the kernels from `random_state`: equal seeds give equal layers.
            pub fn with_random_state(mut self, random_state: u64) -> Self {
                self.core.reseed(random_state);
                self
            }

            /// Keras's `return_sequences`: output every step's state `[batch, timesteps,
            /// units]` instead of the last one `[batch, units]` (the default).
            pub fn with_return_sequences(mut self, return_sequences: bool) -> Self {
                self.core.return_sequences = return_sequences;
                self
            }

            /// Keras's `go_backwards`: read the sequence from its last step to its first
            /// (with `return_sequences`, the outputs stay in processing order, as in Keras).
            pub fn with_go_backwards(mut self, go_backwards: bool) -> Self {
                self.core.go_backwards = go_backwards;
                self
            }

            /// The gate nonlinearity (Keras's `recurrent_activation`, sigmoid by default).
            pub fn with_recurrent_activation(
                mut self,
                activation: impl Into<$crate::neural_network::layers::activation::Activation>,
            ) -> $crate::error::Result<Self> {
                self.core.set_recurrent_activation(activation.into())?;
                Ok(self)
            }

            /// Keras's `use_bias` (default true): without it the layer has no bias term (kept
            /// as a zero array in `get_weights`, never trained, not counted); the bias restarts
            /// at its initial value either way, so call it before `set_weights`.
            pub fn with_use_bias(mut self, use_bias: bool) -> Self {
                self.core.set_use_bias(use_bias);
                self
            }

            /// Whether the layer has a bias term (see `with_use_bias`).
            pub fn use_bias(&self) -> bool {
                self.core.use_bias
            }

            /// Whether the layer outputs every step (see `with_return_sequences`).
            pub fn return_sequences(&self) -> bool {
                self.core.return_sequences
            }

            /// Keras's `dropout` and `recurrent_dropout` (each in [0, 1), else
            /// `InvalidParameter` naming it): while training, one mask per batch for the
            /// inputs and one for the recurrent state, applied at every step and scaled by
            /// `1 / (1 - rate)`; with recurrent dropout, one mask per gate for each (Keras 3's
            /// cells). The masks come from the layer's own stream (`with_random_state`).
            pub fn with_dropout(
                mut self,
                dropout: f32,
                recurrent_dropout: f32,
            ) -> $crate::error::Result<Self> {
                self.core.set_dropout(dropout, recurrent_dropout)?;
                Ok(self)
            }

            /// Keras's `zero_output_for_mask`: a masked step outputs zeros instead of the
            /// state it carries over.
            pub fn with_zero_output_for_mask(mut self, zero_output_for_mask: bool) -> Self {
                self.core.zero_output_for_mask = zero_output_for_mask;
                self
            }
        }

        impl $crate::neural_network::traits::Layer for $ty {
            $crate::neural_network::layers::layer_util::core_passes!();

            fn backward_params_only(
                &mut self,
                grad_output: &$crate::neural_network::Tensor,
            ) -> $crate::error::Result<()> {
                self.core.backward_params_only(grad_output)
            }

            fn forward_masked(
                &mut self,
                input: &$crate::neural_network::Tensor,
                mask: Option<&$crate::neural_network::traits::Mask>,
            ) -> $crate::error::Result<$crate::neural_network::Tensor> {
                self.core.forward_masked(input, mask)
            }

            fn predict_masked(
                &self,
                input: &$crate::neural_network::Tensor,
                mask: Option<&$crate::neural_network::traits::Mask>,
            ) -> $crate::error::Result<$crate::neural_network::Tensor> {
                self.core.predict_masked(input, mask)
            }

            fn compute_mask(
                &self,
                _input: $crate::neural_network::TensorView<'_>,
                mask: Option<&$crate::neural_network::traits::Mask>,
            ) -> $crate::error::Result<Option<$crate::neural_network::traits::Mask>> {
                Ok(self.core.output_mask(mask))
            }

            fn set_training_if_mode_dependent(&mut self, is_training: bool) {
                self.core.set_training(is_training);
            }

            fn random_stream(&self) -> Option<$crate::neural_network::traits::RandomStream> {
                self.core.random_stream()
            }

            fn set_random_stream(&mut self, stream: &$crate::neural_network::traits::RandomStream) {
                self.core.set_random_stream(stream)
            }

            fn layer_type(&self) -> &str {
                stringify!($ty)
            }
            fn output_shape(&self) -> String {
                self.core.output_shape()
            }
            fn param_count(&self) -> $crate::neural_network::layers::TrainingParameters {
                self.core.param_count()
            }
            fn uses_bias(&self) -> bool {
                self.core.use_bias
            }
            fn parameters(&mut self) -> Vec<$crate::neural_network::traits::ParamGrad<'_>> {
                self.core.parameters()
            }
            fn get_weights(&self) -> $crate::neural_network::layers::layer_weight::LayerWeight<'_> {
                self.core.get_weights()
            }
            fn apply_weights(
                &mut self,
                weights: &$crate::neural_network::layers::layer_weight::LayerWeight<'_>,
            ) -> $crate::error::Result<()> {
                self.core.apply_weights(weights)
            }
        }

        impl $crate::neural_network::layers::recurrent::bidirectional::RecurrentLayer for $ty {
            fn into_engine(
                self,
            ) -> $crate::neural_network::layers::recurrent::time_loop::Recurrent {
                self.core
            }
        }
    };
}
pub(crate) use recurrent_layer;
