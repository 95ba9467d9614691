//! Numerical kernels shared by every model: deterministic reductions, distances, the
//! matrix-product adapter and small dense linear algebra.

pub mod distance;
pub mod kernels;
pub mod linalg;
pub mod matmul;
pub mod reduction;
