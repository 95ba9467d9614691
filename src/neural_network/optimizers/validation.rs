//! Hyper-parameter guards shared by every optimizer.

use super::rules::GradientClip;
use crate::error::{Error, Result};

/// A learning rate, epsilon or clip threshold: finite and > 0.
pub(crate) fn positive(name: &str, value: f32) -> Result<f32> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(Error::invalid_parameter(
            name,
            format!("must be finite and > 0, got {value}"),
        ))
    }
}

/// A momentum or weight decay: finite and >= 0.
pub(crate) fn non_negative(name: &str, value: f32) -> Result<f32> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(Error::invalid_parameter(
            name,
            format!("must be finite and >= 0, got {value}"),
        ))
    }
}

/// A decay rate (beta1, beta2, rho): in [0, 1).
pub(crate) fn unit_interval(name: &str, value: f32) -> Result<f32> {
    if (0.0..1.0).contains(&value) {
        Ok(value)
    } else {
        Err(Error::invalid_parameter(
            name,
            format!("must be in [0, 1), got {value}"),
        ))
    }
}

/// A learning rate set after construction: finite and >= 0 (0 freezes the parameters, as a
/// warm-up schedule's first step does).
pub(crate) fn learning_rate(value: f32) -> Result<f32> {
    non_negative("learning_rate", value)
}

/// The learning rate Adam's, AdamW's, SGD's, RMSprop's and AdaGrad's constructors take:
/// finite and > 0.
pub(crate) fn constructor_learning_rate(value: f32) -> Result<f32> {
    positive("learning_rate", value)
}

/// A per-variable clip bound: finite and > 0.
pub(crate) fn gradient_clip(clip: GradientClip) -> Result<GradientClip> {
    match clip {
        GradientClip::Norm(b) => positive("clipnorm", b).map(GradientClip::Norm),
        GradientClip::Value(b) => positive("clipvalue", b).map(GradientClip::Value),
    }
}
