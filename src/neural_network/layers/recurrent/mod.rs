//! Recurrent layers (SimpleRNN, LSTM, GRU, and the Bidirectional wrapper) with Keras's gate
//! order, initialisation and options. One engine (`engine.rs`) runs every cell.

pub mod bidirectional;
pub(crate) mod engine;
pub mod gate;
pub mod gru;
pub mod lstm;
pub mod simple_rnn;

pub use bidirectional::*;
pub use gru::*;
pub use lstm::*;
pub use simple_rnn::*;
