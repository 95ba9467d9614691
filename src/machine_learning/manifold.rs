//! The original crate's manifold category: `TSNE` at its original path
//! (`manifold::t_sne::TSNE`).

pub use super::tsne::{Init, TSNEMethod, TSNE};

pub mod t_sne {
    pub use crate::machine_learning::tsne::*;
}
