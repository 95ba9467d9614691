//! `Cropping2D`: trims the ends of the spatial axes of a channels-last 2D input.

use super::window::Mode;
use super::{border_layer, Border2D};

border_layer!(
    /// Removes `(before, after)` positions from each of the 2 spatial axes of
    /// `[batch, ..spatial, channels]`; the backward pass writes the gradient back with zeros
    /// where positions were removed. At least 1 position must remain on each axis.
    Cropping2D,
    Border2D,
    Mode::Crop,
    cropping
);
