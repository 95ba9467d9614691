//! The `Softsign` layer: `f(x) = x / (1 + |x|)`.

parameterless_activation_layer! {
    /// `f(x) = x / (1 + |x|)`.
    Softsign => Softsign
}
