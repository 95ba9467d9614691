//! `Cropping3D`: trims the ends of the spatial axes of a channels-last 3D input.

use super::window::Mode;
use super::{border_layer, Border3D};

border_layer!(
    /// Removes `(before, after)` positions from each of the 3 spatial axes of
    /// `[batch, ..spatial, channels]`; the backward pass writes the gradient back with zeros
    /// where positions were removed. At least 1 position must remain on each axis.
    Cropping3D,
    Border3D,
    Mode::Crop,
    cropping
);
