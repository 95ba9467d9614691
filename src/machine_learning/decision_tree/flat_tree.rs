//! The fitted tree: the flat node array (shared layout with IsolationForest, see
//! [`crate::machine_learning::tree`]), the leaves' values, a side table for the original
//! API's multi-way categorical splits, and the traversal every prediction goes through.

use crate::machine_learning::tree::{find_leaf, map_rows, validate_nodes, FlatNode};
use ndarray::{Array1, ArrayView1, ArrayView2};
use serde::{Deserialize, Serialize};

/// `feature` of a node split multi-way; its `left` indexes [`FlatTree::multiway`].
pub(super) const MULTIWAY: u32 = u32::MAX - 1;

/// A multi-way split on a categorical feature.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct MultiwaySplit {
    pub feature: u32,
    /// The category (feature value) of each child, in increasing order.
    pub categories: Vec<f64>,
    /// Node `first` is the fallback leaf for a value seen in no child; child `k` is node
    /// `first + 1 + k`.
    pub first: u32,
}

/// The fitted state. Serialised in the same layout as before multi-way splits existed, so
/// saved scikit-learn-door trees keep loading; a tree with multi-way splits is saved through
/// its [`Node`](super::Node) view instead (see the estimator).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "FlatTreeUnchecked")]
pub(super) struct FlatTree {
    pub nodes: Vec<FlatNode>,
    #[serde(skip)]
    pub multiway: Vec<MultiwaySplit>,
    /// Per leaf: class probabilities (classifier) or the mean (regressor).
    pub values: Vec<f64>,
    pub n_outputs: usize,
    pub classes: Option<Array1<f64>>,
    pub n_features: usize,
    pub depth: usize,
    pub n_leaves: usize,
    /// Leaf depth averaged over training samples: the traversal work estimate per sample.
    pub mean_depth: f64,
    pub feature_importances: Array1<f64>,
    /// What scikit-learn's door needs to rebuild scikit-learn's tree and to check that
    /// scikit-learn would have grown the same one; not persisted.
    #[serde(skip)]
    pub report: Option<SplitReport>,
}

/// Per flat node, the statistics a scikit-learn `Tree` holds and the margins of each split
/// decision (see [`DecisionTree::split_report`](super::DecisionTree::split_report)).
#[derive(Debug, Clone, Default)]
pub(super) struct SplitReport {
    /// `REPORT_COLUMNS` values per node.
    pub nodes: Vec<f64>,
    /// Per node: class counts (classifier) or `[sum, sum of squares, min, max]` of the
    /// targets (regressor).
    pub targets: Vec<f64>,
    pub target_width: usize,
}

/// Columns of the split report's node table.
pub(super) const REPORT_COLUMNS: usize = 9;

#[derive(Deserialize)]
struct FlatTreeUnchecked {
    nodes: Vec<FlatNode>,
    values: Vec<f64>,
    n_outputs: usize,
    classes: Option<Array1<f64>>,
    n_features: usize,
    depth: usize,
    n_leaves: usize,
    mean_depth: f64,
    feature_importances: Array1<f64>,
}

impl TryFrom<FlatTreeUnchecked> for FlatTree {
    type Error = String;
    fn try_from(f: FlatTreeUnchecked) -> std::result::Result<Self, String> {
        let leaves_ok = f.n_outputs >= 1
            && f.values.len() == f.n_leaves * f.n_outputs
            && f.nodes
                .iter()
                .filter(|n| n.is_leaf())
                .all(|n| (n.left as usize) < f.n_leaves)
            && f.classes.as_ref().is_none_or(|c| c.len() == f.n_outputs);
        if !(validate_nodes(&f.nodes, f.n_features) && leaves_ok) {
            return Err("corrupt DecisionTree: malformed node array".into());
        }
        Ok(FlatTree {
            nodes: f.nodes,
            multiway: Vec::new(),
            values: f.values,
            n_outputs: f.n_outputs,
            classes: f.classes,
            n_features: f.n_features,
            depth: f.depth,
            n_leaves: f.n_leaves,
            mean_depth: f.mean_depth,
            feature_importances: f.feature_importances,
            report: None,
        })
    }
}

impl FlatTree {
    /// The leaf `row` reaches. A value of a multi-way split's feature that matches none of
    /// its categories (bit for bit, as the original's decimal keys did) takes the fallback.
    #[inline]
    pub fn leaf_of(&self, row: &ArrayView1<f64>) -> &FlatNode {
        if self.multiway.is_empty() {
            return find_leaf(&self.nodes, row);
        }
        let mut node = &self.nodes[0];
        while !node.is_leaf() {
            let next = if node.feature == MULTIWAY {
                let split = &self.multiway[node.left as usize];
                let v = row[split.feature as usize].to_bits();
                let k = split.categories.iter().position(|c| c.to_bits() == v);
                split.first as usize + k.map_or(0, |k| k + 1)
            } else if row[node.feature as usize] <= node.threshold {
                node.left as usize
            } else {
                node.left as usize + 1
            };
            node = &self.nodes[next];
        }
        node
    }

    /// Leaf reached by every sample, the traversal kernel behind every prediction.
    pub fn leaves(&self, x: ArrayView2<f64>) -> Vec<&FlatNode> {
        let visits = x
            .nrows()
            .saturating_mul(self.mean_depth.ceil().max(1.0) as usize);
        map_rows(x, visits, |row| self.leaf_of(row))
    }

    /// A leaf's values: its class fractions, or its mean.
    pub fn leaf_values(&self, leaf: &FlatNode) -> &[f64] {
        let start = leaf.left as usize * self.n_outputs;
        &self.values[start..start + self.n_outputs]
    }
}
