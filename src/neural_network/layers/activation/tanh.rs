//! The `Tanh` layer: the hyperbolic tangent.

parameterless_activation_layer! {
    /// the hyperbolic tangent.
    Tanh => Tanh
}
