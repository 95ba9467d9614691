//! Depthwise and separable convolutions: one implementation behind `DepthwiseConv1D/2D` and
//! `SeparableConv1D/2D`, generic over the kernel's array dimension (`Ix3` for one spatial
//! axis, `Ix4` for two). The per-rank files only add the original's constructors and name the
//! weight containers.
//!
//! - `rank.rs`: [`ConvRank`], what differs between the ranks (names, weight containers);
//! - `engine.rs`: the direct depthwise engine (forward, input and kernel gradients);
//! - `stage.rs`: [`DepthwiseStage`], the depthwise stage both layers share (window, kernel,
//!   cached input and geometry), running the engine; the layers' shared builders;
//! - `depthwise_conv.rs`: [`DepthwiseConv`], the stage with its bias and activation;
//! - `separable_conv.rs`: [`SeparableConv`], the stage then a pointwise (1x1) stage on the
//!   shared im2col/GEMM engine;
//! - `depthwise_conv_1d.rs` ... `separable_conv_2d.rs`: the original's per-rank types.

// the rooms below name the padding modes `super::PaddingType`
use super::PaddingType;

mod depthwise_conv;
pub mod depthwise_conv_1d;
pub mod depthwise_conv_2d;
pub mod engine;
mod rank;
mod separable_conv;
pub mod separable_conv_1d;
pub mod separable_conv_2d;
mod stage;
#[cfg(test)]
mod tests;

pub use depthwise_conv::DepthwiseConv;
pub use depthwise_conv_1d::*;
pub use depthwise_conv_2d::*;
pub use rank::ConvRank;
pub use separable_conv::SeparableConv;
pub use separable_conv_1d::*;
pub use separable_conv_2d::*;
pub use stage::DepthwiseStage;
