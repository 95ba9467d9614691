//! The original crate's decomposition category: `PCA` and `KernelPCA` at their original paths
//! (`decomposition::pca::PCA`, `decomposition::kernel_pca::KernelPCA`).

pub use super::kernel_pca::{EigenSolver, KernelPCA};
pub use super::pca::{SVDSolver, PCA};
pub use super::types::{Gamma, KernelType};

pub mod pca {
    pub use crate::machine_learning::pca::*;
}

pub mod kernel_pca {
    pub use crate::machine_learning::kernel_pca::*;
}
