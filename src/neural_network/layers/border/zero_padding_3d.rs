//! `ZeroPadding3D`: adds zeros around the spatial axes of a channels-last 3D input.

use super::window::Mode;
use super::{border_layer, Border3D};

border_layer!(
    /// Pads the 3 spatial axes of `[batch, ..spatial, channels]` with zeros; the backward
    /// pass crops the gradient back to the input's extent.
    ZeroPadding3D,
    Border3D,
    Mode::Pad,
    padding
);
