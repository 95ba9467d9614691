//! Recurrent layers (SimpleRNN, LSTM, GRU, and the Bidirectional wrapper) with Keras's gate
//! order, initialisation and options. One time loop (`time_loop.rs`) runs every cell; each
//! cell's maths sits in its own file behind the step trait of `cell.rs`.

pub mod bidirectional;
pub(crate) mod cell;
pub mod fused_gates;
pub mod gru;
pub(crate) mod gru_cell;
pub(crate) mod layer_api;
pub mod lstm;
pub(crate) mod lstm_cell;
pub mod simple_rnn;
pub(crate) mod simple_rnn_cell;
pub(crate) mod time_loop;

pub use bidirectional::*;
pub use gru::*;
pub use lstm::*;
pub use simple_rnn::*;

/// The original crate's path to the fused gate parameters (named apart from the crate's
/// parallel gates, [`crate::gate`]).
#[doc(hidden)]
pub use fused_gates as gate;
