//! `Cropping1D`: trims the ends of the spatial axes of a channels-last 1D input.

use super::window::Mode;
use super::{border_layer, Border1D};

border_layer!(
    /// Removes `(before, after)` positions from each of the 1 spatial axes of
    /// `[batch, ..spatial, channels]`; the backward pass writes the gradient back with zeros
    /// where positions were removed. At least 1 position must remain on each axis.
    Cropping1D,
    Border1D,
    Mode::Crop,
    cropping
);
