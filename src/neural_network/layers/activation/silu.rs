//! The `SiLU` layer (Keras's `Activation("silu")`, alias `"swish"`): `f(x) = x σ(x)`.

parameterless_activation_layer! {
    /// `f(x) = x σ(x)`; its backward pass reads the input, not the output.
    SiLU => SiLU
}
