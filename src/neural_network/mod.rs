//! Neural networks: f32 tensors in Keras's channels-last layout, layers behind one [`traits::Layer`]
//! trait, losses, optimizers and the [`sequential::Sequential`] model. The Rust API is the
//! original RustyML 0.15's.

/// Every activation, input and gradient: a dynamic-rank f32 array, batch axis first.
pub type Tensor = ndarray::ArrayD<f32>;
/// A borrowed [`Tensor`].
pub type TensorView<'a> = ndarray::ArrayViewD<'a, f32>;

pub mod error;
pub mod functional;
pub mod layers;
pub mod traits;

pub use error::NnError;
pub mod keras;
pub mod losses;
pub mod optimizers;
pub mod regularizers;
pub mod sequential;
#[cfg(test)]
pub(crate) mod test_support;
