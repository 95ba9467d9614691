//! Recurrent layers (SimpleRNN, LSTM, GRU) with Keras's gate order.
