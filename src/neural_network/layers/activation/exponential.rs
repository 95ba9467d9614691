//! The `Exponential` layer: `f(x) = e^x`, its own derivative.

parameterless_activation_layer! {
    /// `f(x) = e^x`, its own derivative.
    Exponential => Exponential
}
