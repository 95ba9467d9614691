//! Border layers: zero padding and cropping in 1D, 2D and 3D (channels-last), one file per
//! layer, all thin wrappers over one N-d window routine ([`window`]): padding writes the input
//! into a zero tensor and crops the gradient, cropping reads a window and pads the gradient.

pub mod cropping_1d;
pub mod cropping_2d;
pub mod cropping_3d;
mod window;

#[cfg(test)]
mod tests;
pub mod zero_padding_1d;
pub mod zero_padding_2d;
pub mod zero_padding_3d;

pub use cropping_1d::Cropping1D;
pub use cropping_2d::Cropping2D;
pub use cropping_3d::Cropping3D;
pub use zero_padding_1d::ZeroPadding1D;
pub use zero_padding_2d::ZeroPadding2D;
pub use zero_padding_3d::ZeroPadding3D;

/// Declares a border amount type: `(before, after)` per spatial axis.
macro_rules! border_type {
    ($(#[$meta:meta])* $name:ident, $n:literal) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $name([(usize, usize); $n]);

        impl $name {
            pub(crate) fn amounts(&self) -> &[(usize, usize)] {
                &self.0
            }
        }

        /// The same amount at both ends of every spatial axis.
        impl From<usize> for $name {
            fn from(amount: usize) -> Self {
                Self([(amount, amount); $n])
            }
        }
    };
}

border_type!(
    /// Border of a 1D layer: `(before, after)` on the step axis.
    Border1D,
    1
);
border_type!(
    /// Border of a 2D layer: `(before, after)` on the row and column axes.
    Border2D,
    2
);
border_type!(
    /// Border of a 3D layer: `(before, after)` on each of the 3 spatial axes.
    Border3D,
    3
);

/// `(before, after)` on the step axis.
impl From<(usize, usize)> for Border1D {
    fn from(ends: (usize, usize)) -> Self {
        Self([ends])
    }
}

/// One symmetric amount per axis (Keras's `(symmetric_height, symmetric_width)`).
impl From<(usize, usize)> for Border2D {
    fn from((rows, cols): (usize, usize)) -> Self {
        Self([(rows, rows), (cols, cols)])
    }
}

/// `((top, bottom), (left, right))`.
impl From<((usize, usize), (usize, usize))> for Border2D {
    fn from((rows, cols): ((usize, usize), (usize, usize))) -> Self {
        Self([rows, cols])
    }
}

/// One symmetric amount per axis.
impl From<(usize, usize, usize)> for Border3D {
    fn from((a, b, c): (usize, usize, usize)) -> Self {
        Self([(a, a), (b, b), (c, c)])
    }
}

/// `(before, after)` per axis.
impl From<((usize, usize), (usize, usize), (usize, usize))> for Border3D {
    fn from((a, b, c): ((usize, usize), (usize, usize), (usize, usize))) -> Self {
        Self([a, b, c])
    }
}

/// Declares one border layer: a named wrapper over [`window::BorderCore`].
macro_rules! border_layer {
    ($(#[$meta:meta])* $name:ident, $border:ty, $mode:expr, $arg:ident) => {
        $(#[$meta])*
        #[derive(Debug)]
        pub struct $name(super::window::BorderCore);

        impl $name {
            #[doc = concat!("Builds the layer; `", stringify!($arg), "` is an amount, one per axis, or `(before, after)` per axis.")]
            pub fn new($arg: impl Into<$border>) -> Self {
                let border: $border = $arg.into();
                Self(super::window::BorderCore::new(
                    stringify!($name),
                    $mode,
                    border.amounts().to_vec(),
                ))
            }
        }

        $crate::neural_network::layers::layer_util::weightless_core_layer!($name);
    };
}
use border_layer;
