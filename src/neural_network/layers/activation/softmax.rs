//! The `Softmax` layer: `exp(x_i) / sum_j exp(x_j)` over the last axis (input of rank >= 2).

parameterless_activation_layer! {
    /// `exp(x_i) / sum_j exp(x_j)` over the last axis (input of rank >= 2).
    Softmax => Softmax
}
