//! Numerical kernels shared by every model: deterministic reductions, distances, the
//! matrix-product adapter and small dense linear algebra.

pub mod distance;
#[cfg(any(feature = "machine_learning", feature = "utils"))]
pub mod elementwise;
pub mod given_distances;
pub mod k_nearest;
#[cfg(any(feature = "machine_learning", feature = "utils"))]
pub mod kernels;
pub mod labels;
pub mod lbfgsb;
pub mod linalg;
pub mod losses;
pub mod matmul;
pub mod optimize;
pub mod radius;
pub mod reduction;

/// Test points on a lattice of 101 values per feature: entry `(i, j)` is
/// `((37 i + 11 j + seed) mod 101) / divisor - offset`, well spread, with repeated values.
#[cfg(test)]
pub(crate) fn lattice_points(
    n: usize,
    d: usize,
    seed: usize,
    divisor: f64,
    offset: f64,
) -> ndarray::Array2<f64> {
    ndarray::Array2::from_shape_fn((n, d), |(i, j)| {
        (((i * 37 + j * 11 + seed) % 101) as f64) / divisor - offset
    })
}

/// The bit patterns of a sequence of floats: equal patterns mean bit-for-bit equal results.
#[cfg(test)]
pub(crate) fn bits<'a>(values: impl IntoIterator<Item = &'a f64>) -> Vec<u64> {
    values.into_iter().map(|v| v.to_bits()).collect()
}

pub use distance::{
    manhattan_distance_row, minkowski_distance_row, squared_euclidean_distance_row,
    DistanceCalculationMetric,
};
