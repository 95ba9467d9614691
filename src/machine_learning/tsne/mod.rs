//! t-distributed stochastic neighbour embedding, following scikit-learn's `TSNE`.
//!
//! * Affinities: per point, a binary search for the Gaussian precision that matches the
//!   perplexity (100 steps, entropy tolerance 1e-5), over all other points (`exact`) or over
//!   the `min(n - 1, floor(3 * perplexity + 1))` nearest neighbours (`barnes_hut`), found by
//!   the crate's k-nearest engine ([`crate::math::k_nearest`]: row-chunks of `X Xᵀ`, exact
//!   where the product form cancels). `P = (P_cond + P_condᵀ) / sum`.
//!   Or from given squared distances ([`TSNE::fit_transform_given`]: all pairs, or each
//!   point's nearest neighbours, in any order within a row): the same search and `P` below
//!   the distances, so given euclidean distances are the euclidean fit, bit for bit.
//! * Gradient: exact O(n²), or Barnes-Hut with a 2^d-ary space tree (quadtree in 2-D,
//!   octree in 3-D) summarising far cells by their centre of mass when
//!   `width² / distance² < angle²`.
//! * Optimisation: scikit-learn's schedule: 250 iterations with `P * early_exaggeration` and
//!   momentum 0.5, then momentum 0.8 up to `max_iter`; per-parameter gains (+0.2 / *0.8,
//!   floor 0.01); progress checked every 50 iterations (KL divergence, gradient norm).
//!   `learning_rate="auto"` is `max(n / early_exaggeration / 4, 50)`; the PCA initialisation
//!   is scaled to a first-column standard deviation of 1e-4.
//!
//! Per-point work (binary searches, gradient rows) forks onto rayon behind
//! [`SCAN_F64`](crate::math::distance::SCAN_F64); each point is computed by the same serial
//! code either way, and global sums go through the blocked reductions, so serial and
//! parallel runs are bitwise identical. Everything runs in f64 (scikit-learn's Barnes-Hut
//! runs in f32).
//!
//! Layout: [`affinities`] (perplexity searches, dense and nearest-neighbour `P`),
//! [`space_tree`] (the Barnes-Hut tree), [`gradient`] (the KL objective, exact and Barnes-Hut),
//! [`descent`] (scikit-learn's gradient descent), [`estimator`] (`TSNE`, scikit-learn's face)
//! and [`original`] (the original RustyML API over the same estimator).

mod affinities;
mod descent;
mod estimator;
mod gradient;
mod original;
mod space_tree;

pub use affinities::{
    binary_search_work, conditional_probabilities, conditional_probabilities_rows,
    joint_probabilities_exact, joint_probabilities_given, joint_probabilities_given_neighbours,
    joint_probabilities_knn, nearest_neighbours, SparseP, BINARY_SEARCH_COST,
};
pub use estimator::{GivenDistances, LearningRate, TsneInit, TsneMethod, TSNE};
pub use gradient::{
    barnes_hut_gradient, barnes_hut_work, exact_gradient, exact_work, TREE_VISIT_COST,
};
pub use original::{Init, TSNEMethod};

use crate::math::distance::SCAN_F64;
use rayon::prelude::*;

const MACHINE_EPSILON: f64 = f64::EPSILON;

/// Run `f(i)` for every point, in parallel when `work` reaches [`SCAN_F64`]. Each point is
/// computed by the same serial code on either path, so results are identical.
fn per_point<T: Send>(n: usize, work: usize, f: impl Fn(usize) -> T + Sync + Send) -> Vec<T> {
    if SCAN_F64.allows_parallel(work) {
        (0..n).into_par_iter().map(f).collect()
    } else {
        (0..n).map(f).collect()
    }
}

#[cfg(test)]
mod test_data {
    use super::estimator::standard_normal_pair;
    use ndarray::Array2;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// `groups` tight clusters of `per` points in `d` dimensions (deterministic jitter).
    pub(super) fn blobs(groups: usize, per: usize, d: usize) -> (Array2<f64>, Vec<usize>) {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut x = Array2::<f64>::zeros((groups * per, d));
        let mut labels = Vec::new();
        for g in 0..groups {
            for k in 0..per {
                let i = g * per + k;
                for j in 0..d {
                    let center = if j == g % d {
                        10.0 * (1 + g / d) as f64
                    } else {
                        0.0
                    };
                    x[[i, j]] = center + standard_normal_pair(&mut rng).0;
                }
                labels.push(g);
            }
        }
        (x, labels)
    }
}
