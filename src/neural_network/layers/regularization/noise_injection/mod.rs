//! Noise injection layers, one per file.

pub mod gaussian_dropout;
pub mod gaussian_noise;

pub use gaussian_dropout::GaussianDropout;
pub use gaussian_noise::GaussianNoise;
