//! The `ReLU` layer: `f(x) = max(0, x)`; the derivative at 0 is 0.

parameterless_activation_layer! {
    /// `f(x) = max(0, x)`; the derivative at 0 is 0.
    ReLU => ReLU
}
