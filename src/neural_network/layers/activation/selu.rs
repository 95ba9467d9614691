//! The `SELU` layer: `scale * x` above 0, `scale * alpha * (e^x - 1)` at 0 and below (Klambauer et al.).

parameterless_activation_layer! {
    /// `scale * x` above 0, `scale * alpha * (e^x - 1)` at 0 and below (Klambauer et al.).
    SELU => SELU
}
