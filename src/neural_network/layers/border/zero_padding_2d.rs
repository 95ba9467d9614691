//! `ZeroPadding2D`: adds zeros around the spatial axes of a channels-last 2D input.

use super::window::Mode;
use super::{border_layer, Border2D};

border_layer!(
    /// Pads the 2 spatial axes of `[batch, ..spatial, channels]` with zeros; the backward
    /// pass crops the gradient back to the input's extent.
    ZeroPadding2D,
    Border2D,
    Mode::Pad,
    padding
);
