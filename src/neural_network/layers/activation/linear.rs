//! The `Linear` layer: the identity map, `f(x) = x`; its gradient passes through unchanged.

parameterless_activation_layer! {
    /// the identity map, `f(x) = x`; its gradient passes through unchanged.
    Linear => Linear
}
