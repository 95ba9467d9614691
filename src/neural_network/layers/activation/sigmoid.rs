//! The `Sigmoid` layer: the logistic function `f(x) = 1 / (1 + e^-x)`.

parameterless_activation_layer! {
    /// the logistic function `f(x) = 1 / (1 + e^-x)`.
    Sigmoid => Sigmoid
}
