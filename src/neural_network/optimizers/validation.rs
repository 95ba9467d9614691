//! Hyper-parameter guards shared by every optimizer.

use crate::error::{Error, RustymlResult};

/// A learning rate, epsilon or clip threshold: finite and > 0.
pub(crate) fn positive(name: &str, value: f32) -> RustymlResult<f32> {
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
pub(crate) fn non_negative(name: &str, value: f32) -> RustymlResult<f32> {
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
pub(crate) fn unit_interval(name: &str, value: f32) -> RustymlResult<f32> {
    if (0.0..1.0).contains(&value) {
        Ok(value)
    } else {
        Err(Error::invalid_parameter(
            name,
            format!("must be in [0, 1), got {value}"),
        ))
    }
}
