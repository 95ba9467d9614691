//! The original crate's `machine_learning::tree` module (the decision tree, re-exported below)
//! and the flat tree shared by [`DecisionTree`](super::DecisionTree) and
//! [`IsolationForest`](super::IsolationForest) with its gated traversal kernel.
//!
//! A tree is a `Vec<FlatNode>`: node 0 is the root, an internal node's children sit side by side
//! (`left`, `left + 1`), and a leaf carries a model-specific payload (a leaf number and one
//! value). Traversal sends a sample left when `x[feature] <= threshold`, as scikit-learn does.
//!
//! Prediction walks every sample down its tree(s) independently, so the parallel path (rayon
//! over sample chunks, behind [`TRAVERSAL_MIN_VISITS`]) gives the same bits as the serial one.

use crate::declare_gate;
use ndarray::{ArrayView1, ArrayView2};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

declare_gate! {
    /// Tree prediction (DecisionTree, IsolationForest) and IsolationForest tree building.
    /// Work = total node visits: samples x expected depth (x trees for a forest).
    pub TRAVERSAL_MIN_VISITS: tree::traversal_min_visits = 262_144, "total node visits"
}

/// `feature` of a leaf.
pub(crate) const LEAF: u32 = u32::MAX;

/// One node of a flat tree (16 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct FlatNode {
    /// Internal: split threshold (`x[feature] <= threshold` goes left). Leaf: payload value.
    pub threshold: f64,
    /// Internal: split feature. Leaf: [`LEAF`].
    pub feature: u32,
    /// Internal: index of the left child (the right child is `left + 1`). Leaf: leaf number.
    pub left: u32,
}

impl FlatNode {
    /// A placeholder, overwritten once the node is decided.
    pub const EMPTY: FlatNode = FlatNode {
        threshold: 0.0,
        feature: LEAF,
        left: 0,
    };

    pub fn leaf(leaf_number: u32, value: f64) -> Self {
        FlatNode {
            threshold: value,
            feature: LEAF,
            left: leaf_number,
        }
    }

    pub fn split(feature: usize, threshold: f64, left: usize) -> Self {
        FlatNode {
            threshold,
            feature: feature as u32,
            left: left as u32,
        }
    }

    #[inline]
    pub fn is_leaf(&self) -> bool {
        self.feature == LEAF
    }
}

/// The leaf `row` falls into. `nodes` must be a well-formed tree whose features are all
/// `< row.len()`.
#[inline]
pub(crate) fn find_leaf<'a>(nodes: &'a [FlatNode], row: &ArrayView1<f64>) -> &'a FlatNode {
    let mut node = &nodes[0];
    while !node.is_leaf() {
        let next = if row[node.feature as usize] <= node.threshold {
            node.left
        } else {
            node.left + 1
        };
        node = &nodes[next as usize];
    }
    node
}

/// Rows per rayon task of a traversal.
const ROWS_PER_TASK: usize = 64;

/// `f(row)` for every row of `x`, in row order: the traversal kernel. Forks over sample
/// chunks when `visits` (the estimated total node visits) reaches [`TRAVERSAL_MIN_VISITS`].
/// Each row is computed on its own, so both paths give identical results.
pub(crate) fn map_rows<T, F>(x: ArrayView2<f64>, visits: usize, f: F) -> Vec<T>
where
    T: Send,
    F: Fn(&ArrayView1<f64>) -> T + Sync,
{
    let n = x.nrows();
    if n > ROWS_PER_TASK && TRAVERSAL_MIN_VISITS.allows_parallel(visits) {
        (0..n)
            .into_par_iter()
            .with_min_len(ROWS_PER_TASK)
            .map(|i| f(&x.row(i)))
            .collect()
    } else {
        (0..n).map(|i| f(&x.row(i))).collect()
    }
}

/// Check that a deserialised tree is well formed for `n_features` inputs and `n_leaves_max`
/// leaf slots: children in bounds and after their parent (so traversal terminates), split
/// features in range. Guards `load` against corrupt files turning into panics or endless loops.
pub(crate) fn validate_nodes(nodes: &[FlatNode], n_features: usize) -> bool {
    if nodes.is_empty() {
        return false;
    }
    nodes.iter().enumerate().all(|(i, node)| {
        node.is_leaf()
            || ((node.feature as usize) < n_features
                && (node.left as usize) > i
                && (node.left as usize)
                    .checked_add(1)
                    .is_some_and(|r| r < nodes.len()))
    })
}

/// Average path length of an unsuccessful binary-search-tree lookup among `n` points:
/// `c(n) = 2 H(n - 1) - 2 (n - 1) / n` with `H(i) ~ ln(i) + Euler's constant`; `c(2) = 1`,
/// `c(n <= 1) = 0` (Liu et al., as in scikit-learn).
pub(crate) fn average_path_length(n: usize) -> f64 {
    match n {
        0 | 1 => 0.0,
        2 => 1.0,
        _ => {
            let m = (n - 1) as f64;
            2.0 * (m.ln() + 0.577_215_664_901_532_9) - 2.0 * m / n as f64
        }
    }
}

// The original crate's `machine_learning::tree` module: the decision tree and its node types.
pub use super::decision_tree;
pub use decision_tree::{Algorithm, DecisionTree, DecisionTreeParams, Node, NodeType};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::serial_and_parallel;
    use ndarray::Array2;

    /// x0 <= 0.5 ? (x1 <= 2 ? leaf 0 : leaf 1) : leaf 2
    fn small_tree() -> Vec<FlatNode> {
        vec![
            FlatNode::split(0, 0.5, 1),
            FlatNode::split(1, 2.0, 3),
            FlatNode::leaf(2, 30.0),
            FlatNode::leaf(0, 10.0),
            FlatNode::leaf(1, 20.0),
        ]
    }

    #[test]
    fn traversal_follows_less_or_equal_to_the_left() {
        let tree = small_tree();
        let x = ndarray::array![[0.5, 2.0], [0.5, 2.1], [0.6, -1.0], [-3.0, -3.0]];
        let got: Vec<f64> = map_rows(x.view(), 0, |r| find_leaf(&tree, r).threshold);
        assert_eq!(got, vec![10.0, 20.0, 30.0, 10.0]);
        assert!(validate_nodes(&tree, 2));
        assert!(!validate_nodes(&tree, 1));
        let mut looped = tree.clone();
        looped[1].left = 0;
        assert!(!validate_nodes(&looped, 2));
    }

    #[test]
    fn traversal_gate_serial_and_parallel_agree_bitwise() {
        let tree = small_tree();
        let x = Array2::from_shape_fn((5_000, 2), |(i, j)| {
            ((i * 7 + j * 3) % 13) as f64 / 4.0 - 1.0
        });
        let (s, p) = serial_and_parallel(&TRAVERSAL_MIN_VISITS, || {
            map_rows(x.view(), x.nrows() * 2, |r| {
                find_leaf(&tree, r).threshold * r[0]
            })
        });
        assert_eq!(
            s.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            p.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
    }

    #[test]
    fn average_path_length_matches_hand_values() {
        assert_eq!(average_path_length(1), 0.0);
        assert_eq!(average_path_length(2), 1.0);
        // c(3) = 2 (ln 2 + gamma) - 4/3
        let want = 2.0 * (2f64.ln() + 0.5772156649015329) - 4.0 / 3.0;
        assert!((average_path_length(3) - want).abs() < 1e-15);
        // c(256) ~ 10.2448 (the value behind the usual 2^(-E[h]/c(256)) score)
        assert!((average_path_length(256) - 10.244_770_920_119_917).abs() < 1e-9);
    }
}
