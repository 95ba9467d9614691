//! Decision trees: CART (gini), ID3 (information gain) and C4.5 (gain ratio) classifiers, and
//! variance-reduction (MSE) regression trees, grown by one engine for both front doors (the
//! original RustyML API and the scikit-learn-facing Python door), which differ only in the
//! engine options their constructors set.
//!
//! Rooms: `criterion` (impurity measures), `splitter` (best split at a node), `builder`
//! (grows the flat tree from presorted features), `flat_tree` (the fitted arrays and their
//! traversal), `estimator` (the type, its checks, fit and predict) and `original` (the 0.15
//! methods and the [`Node`] view).
//!
//! Reproducibility: each feature's scan is independent and the best split is picked
//! afterwards in a fixed order (largest score, ties to the lowest feature rank, then the
//! lowest threshold), so the serial and the parallel path grow the same tree bit for bit.

// The scikit-learn-style setters are the Python layer's entry points.
#![cfg_attr(not(feature = "python"), allow(dead_code))]

mod builder;
mod criterion;
mod estimator;
mod flat_tree;
mod original;
mod splitter;
#[cfg(test)]
mod tests;

use crate::declare_gate;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

pub use estimator::DecisionTree;
pub use original::{DecisionTreeParams, Node, NodeType};

declare_gate! {
    /// DecisionTree split search and partition at one node (and the initial sort), and the
    /// scikit-learn tree replica's scan of a node's features where its sums are order-free
    /// (`sklearn_tree`): parallel over features. Work = node samples x features.
    pub SORT_SCAN_MIN_ELEMS: tree::sort_scan_min_elems = 8_192, "node_samples * features"
}

/// How a classification tree scores splits. Regression trees always use variance reduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Algorithm {
    /// ID3: information gain (entropy); binary threshold splits, or multi-way splits on
    /// categorical features (original API).
    ID3,
    /// C4.5: each feature's threshold by information gain, features compared by gain ratio
    /// among those whose gain is at least the average (Quinlan's heuristic).
    C45,
    /// CART: gini impurity (variance for regression), binary splits only.
    CART,
}

impl Algorithm {
    /// `"cart"`, `"id3"` or `"c45"` (also `"c4.5"`).
    pub fn parse(name: &str) -> Result<Self> {
        match name.to_ascii_lowercase().as_str() {
            "cart" => Ok(Algorithm::CART),
            "id3" => Ok(Algorithm::ID3),
            "c45" | "c4.5" => Ok(Algorithm::C45),
            _ => Err(Error::invalid_input(format!(
                "unknown algorithm {name:?}; expected one of 'cart', 'id3', 'c45'"
            ))),
        }
    }

    /// The canonical name.
    pub fn name(&self) -> &'static str {
        match self {
            Algorithm::CART => "cart",
            Algorithm::ID3 => "id3",
            Algorithm::C45 => "c45",
        }
    }
}
