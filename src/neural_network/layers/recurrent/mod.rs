//! Recurrent layers (SimpleRNN, LSTM, GRU, and the Bidirectional wrapper) with Keras's gate
//! order, initialisation and options. One engine (`engine.rs`) runs every cell.

pub mod bidirectional;
pub(crate) mod engine;
pub mod fused_gates;
pub mod gru;
pub mod lstm;
pub mod simple_rnn;

pub use bidirectional::*;
pub use gru::*;
pub use lstm::*;
pub use simple_rnn::*;

/// The original crate's path to the fused gate parameters (named apart from the crate's
/// parallel gates, [`crate::gate`]).
#[doc(hidden)]
pub use fused_gates as gate;
