//! Upsampling layers (`UpSampling1D/2D/3D`), one file per layer, all thin wrappers over one
//! separable resize engine ([`engine`]) whose passes sit behind `tuning::upsampling`.

pub(crate) mod engine;
pub mod up_sampling_1d;
pub mod up_sampling_2d;
pub mod up_sampling_3d;

pub use up_sampling_1d::UpSampling1D;
pub use up_sampling_2d::UpSampling2D;
pub use up_sampling_3d::UpSampling3D;

/// How `UpSampling2D` fills the new positions. Every mode samples at half-pixel centres and
/// renormalises the weights of taps that fall inside the input (`jax.image.resize`'s rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Interpolation {
    /// Repeat each position `factor` times (Keras's `"nearest"`).
    #[default]
    Nearest,
    /// Triangle kernel, radius 1 (Keras's `"bilinear"`, `tf.image.resize` half-pixel).
    Bilinear,
    /// Keys' cubic kernel with `a = -0.5`, radius 2.
    Bicubic,
    /// Lanczos kernel, radius 3.
    Lanczos3,
    /// Lanczos kernel, radius 5.
    Lanczos5,
}

/// Upsampling factors of the 2 spatial axes of `UpSampling2D`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Factor2D([usize; 2]);

/// Upsampling factors of the 3 spatial axes of `UpSampling3D`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Factor3D([usize; 3]);

/// The same factor on both axes.
impl From<usize> for Factor2D {
    fn from(factor: usize) -> Self {
        Self([factor; 2])
    }
}

/// `(rows, cols)`.
impl From<(usize, usize)> for Factor2D {
    fn from((rows, cols): (usize, usize)) -> Self {
        Self([rows, cols])
    }
}

/// The same factor on all 3 axes.
impl From<usize> for Factor3D {
    fn from(factor: usize) -> Self {
        Self([factor; 3])
    }
}

/// One factor per spatial axis.
impl From<(usize, usize, usize)> for Factor3D {
    fn from((a, b, c): (usize, usize, usize)) -> Self {
        Self([a, b, c])
    }
}

impl Factor2D {
    pub(crate) fn factors(&self) -> Vec<usize> {
        self.0.to_vec()
    }
}

impl Factor3D {
    pub(crate) fn factors(&self) -> Vec<usize> {
        self.0.to_vec()
    }
}

#[cfg(test)]
mod tests;
