//! The `Mish` layer (Keras's `Activation("mish")`): `f(x) = x tanh(softplus(x))`.

parameterless_activation_layer! {
    /// `f(x) = x tanh(ln(1 + e^x))`; its backward pass reads the input, not the output.
    Mish => Mish
}
