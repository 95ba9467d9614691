//! Numerical kernels shared by every model: deterministic reductions, distances, the
//! matrix-product adapter and small dense linear algebra.

pub mod distance;
#[cfg(any(feature = "machine_learning", feature = "utils"))]
pub mod elementwise;
pub mod k_nearest;
#[cfg(any(feature = "machine_learning", feature = "utils"))]
pub mod kernels;
pub mod labels;
pub mod linalg;
pub mod losses;
pub mod matmul;
pub mod optimize;
pub mod radius;
pub mod reduction;

pub use distance::{
    manhattan_distance_row, minkowski_distance_row, squared_euclidean_distance_row,
    DistanceCalculationMetric,
};
