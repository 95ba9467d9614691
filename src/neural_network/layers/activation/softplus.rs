//! The `Softplus` layer: `f(x) = ln(1 + e^x)`.

parameterless_activation_layer! {
    /// `f(x) = ln(1 + e^x)`.
    Softplus => Softplus
}
