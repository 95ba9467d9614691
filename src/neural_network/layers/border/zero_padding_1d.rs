//! `ZeroPadding1D`: adds zeros around the spatial axes of a channels-last 1D input.

use super::window::Mode;
use super::{border_layer, Border1D};

border_layer!(
    /// Pads the 1 spatial axes of `[batch, ..spatial, channels]` with zeros; the backward
    /// pass crops the gradient back to the input's extent.
    ZeroPadding1D,
    Border1D,
    Mode::Pad,
    padding
);
