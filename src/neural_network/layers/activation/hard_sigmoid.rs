//! The `HardSigmoid` layer: `f(x) = clip(x / 6 + 1/2, 0, 1)` (Keras 3's definition).

parameterless_activation_layer! {
    /// `f(x) = clip(x / 6 + 1/2, 0, 1)` (Keras 3's definition).
    HardSigmoid => HardSigmoid
}
