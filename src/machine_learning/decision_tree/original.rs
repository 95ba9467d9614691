//! The original RustyML 0.15 API over the shared engine: its constructor and setters (which
//! check their value at once), getters, one-sample predictions, and the recursive [`Node`]
//! tree, which is now a view built from the flat tree (and, for files saved in that form,
//! converted back into one).

use super::estimator::{DecisionTree, EngineOptions};
use super::flat_tree::{FlatTree, MultiwaySplit, MULTIWAY};
use super::Algorithm;
use crate::error::{Error, Result};
use crate::machine_learning::fitted_state;
use crate::machine_learning::tree::FlatNode;
use crate::machine_learning::TreeError;
use ndarray::{Array1, ArrayView1};
use serde::{Deserialize, Serialize};
// The original keys categorical children with ahash's map; this crate builds without ahash,
// so std's `HashMap` (the same interface) stands in.
use std::collections::HashMap as AHashMap;

/// Growth limits of [`DecisionTree`] (the original crate's parameter bundle).
#[derive(Debug, Copy, Clone, PartialEq, Deserialize, Serialize)]
pub struct DecisionTreeParams {
    /// Deepest level a node may sit at (the root is depth 0); `None`: no limit.
    pub max_depth: Option<usize>,
    /// A node needs at least this many samples to be split (>= 2).
    pub min_samples_split: usize,
    /// A numeric split must leave at least this many samples on each side (>= 1).
    pub min_samples_leaf: usize,
    /// A split must decrease the impurity, weighted by the node's share of the samples
    /// (`n_t / n`, scikit-learn's rule), by at least this much.
    pub min_impurity_decrease: f64,
    /// Seed of the feature order that breaks ties between equally good splits.
    pub random_state: Option<u64>,
}

impl Default for DecisionTreeParams {
    fn default() -> Self {
        Self {
            max_depth: None,
            min_samples_split: 2,
            min_samples_leaf: 1,
            min_impurity_decrease: 0.0,
            random_state: None,
        }
    }
}

/// What a [`Node`] does.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub enum NodeType {
    /// A split: numeric (`x[feature_index] <= threshold` goes `left`, else `right`), or
    /// categorical (`categories` listed, one child per category in `children`, `left` the
    /// fallback leaf for a category not seen in training).
    Internal {
        feature_index: usize,
        threshold: f64,
        categories: Option<Vec<String>>,
    },
    /// A prediction: the value (class for a classifier, mean for a regressor), the class
    /// index, and the class fractions of the training samples that reached it.
    Leaf {
        value: f64,
        class: Option<usize>,
        probabilities: Option<Vec<f64>>,
    },
}

/// A node of the original API's tree.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Node {
    pub node_type: NodeType,
    pub left: Option<Box<Node>>,
    pub right: Option<Box<Node>>,
    pub children: Option<AHashMap<String, Box<Node>>>,
}

impl Node {
    pub fn new_leaf(value: f64, class: Option<usize>, probabilities: Option<Vec<f64>>) -> Self {
        Self {
            node_type: NodeType::Leaf {
                value,
                class,
                probabilities,
            },
            left: None,
            right: None,
            children: None,
        }
    }

    pub fn new_internal(feature_index: usize, threshold: f64) -> Self {
        Self {
            node_type: NodeType::Internal {
                feature_index,
                threshold,
                categories: None,
            },
            left: None,
            right: None,
            children: None,
        }
    }

    pub fn new_categorical(feature_index: usize, categories: Vec<String>) -> Self {
        Self {
            node_type: NodeType::Internal {
                feature_index,
                threshold: 0.0,
                categories: Some(categories),
            },
            left: None,
            right: None,
            children: Some(AHashMap::new()),
        }
    }

    fn describe(&self, depth: usize, out: &mut String) {
        let pad = "  ".repeat(depth);
        match &self.node_type {
            NodeType::Leaf {
                value,
                probabilities,
                ..
            } => {
                out.push_str(&format!("{pad}Leaf: value = {value}"));
                if let Some(p) = probabilities {
                    out.push_str(&format!(", probabilities = {p:?}"));
                }
                out.push('\n');
            }
            NodeType::Internal {
                feature_index,
                categories: Some(categories),
                ..
            } => {
                out.push_str(&format!("{pad}Feature {feature_index} (categorical)\n"));
                let children = self.children.as_ref();
                for c in categories {
                    if let Some(child) = children.and_then(|m| m.get(c)) {
                        out.push_str(&format!("{pad}  = {c}:\n"));
                        child.describe(depth + 2, out);
                    }
                }
                if let Some(fallback) = &self.left {
                    out.push_str(&format!("{pad}  other:\n"));
                    fallback.describe(depth + 2, out);
                }
            }
            NodeType::Internal {
                feature_index,
                threshold,
                ..
            } => {
                out.push_str(&format!("{pad}Feature {feature_index} <= {threshold}\n"));
                for child in [&self.left, &self.right].into_iter().flatten() {
                    child.describe(depth + 1, out);
                }
            }
        }
    }
}

/// The key of a categorical value in a node's `children` (its shortest decimal form, which
/// parses back to the same bits).
fn category_key(v: f64) -> String {
    format!("{v}")
}

fn corrupt(what: &str) -> String {
    format!("corrupt DecisionTree: {what}")
}

impl FlatTree {
    /// The [`Node`] view of the subtree at flat node `id`.
    pub(super) fn to_node(&self, id: usize) -> Node {
        let node = &self.nodes[id];
        if node.is_leaf() {
            let value = node.threshold;
            return match &self.classes {
                Some(classes) => Node::new_leaf(
                    value,
                    classes.iter().position(|&c| c == value),
                    Some(self.leaf_values(node).to_vec()),
                ),
                None => Node::new_leaf(value, None, None),
            };
        }
        if node.feature == MULTIWAY {
            let split = &self.multiway[node.left as usize];
            let keys: Vec<String> = split.categories.iter().map(|&c| category_key(c)).collect();
            let mut out = Node::new_categorical(split.feature as usize, keys.clone());
            out.left = Some(Box::new(self.to_node(split.first as usize)));
            out.children = Some(
                keys.into_iter()
                    .enumerate()
                    .map(|(k, key)| (key, Box::new(self.to_node(split.first as usize + 1 + k))))
                    .collect(),
            );
            return out;
        }
        let mut out = Node::new_internal(node.feature as usize, node.threshold);
        out.left = Some(Box::new(self.to_node(node.left as usize)));
        out.right = Some(Box::new(self.to_node(node.left as usize + 1)));
        out
    }

    /// The flat tree of a [`Node`] tree saved by the original API. Node sizes are not in
    /// that form, so the importances are zero and the traversal estimate is the depth.
    pub(super) fn from_node(
        root: &Node,
        n_features: usize,
        n_classes: Option<usize>,
    ) -> std::result::Result<Self, String> {
        let mut t = FlatTree {
            nodes: vec![FlatNode::EMPTY],
            multiway: Vec::new(),
            values: Vec::new(),
            n_outputs: n_classes.unwrap_or(1),
            classes: n_classes.map(|k| Array1::from_iter((0..k).map(|c| c as f64))),
            n_features,
            depth: 0,
            n_leaves: 0,
            mean_depth: 0.0,
            feature_importances: Array1::zeros(n_features),
            report: None,
        };
        let mut stack = vec![(root, 0usize, 0usize)];
        while let Some((node, id, depth)) = stack.pop() {
            match &node.node_type {
                NodeType::Leaf {
                    value,
                    probabilities,
                    ..
                } => {
                    match (n_classes, probabilities) {
                        (Some(k), Some(p)) if p.len() == k => t.values.extend(p),
                        (None, _) => t.values.push(*value),
                        _ => return Err(corrupt("leaf probabilities do not match the classes")),
                    }
                    t.nodes[id] = FlatNode::leaf(t.n_leaves as u32, *value);
                    t.n_leaves += 1;
                    t.depth = t.depth.max(depth);
                }
                NodeType::Internal { feature_index, .. } if *feature_index >= n_features => {
                    return Err(corrupt("split feature out of range"));
                }
                NodeType::Internal {
                    feature_index,
                    threshold,
                    categories: None,
                } => {
                    let (Some(l), Some(r)) = (&node.left, &node.right) else {
                        return Err(corrupt("split without two children"));
                    };
                    let left = t.nodes.len();
                    t.nodes.extend([FlatNode::EMPTY; 2]);
                    t.nodes[id] = FlatNode::split(*feature_index, *threshold, left);
                    stack.push((r, left + 1, depth + 1));
                    stack.push((l, left, depth + 1));
                }
                NodeType::Internal {
                    feature_index,
                    categories: Some(keys),
                    ..
                } => {
                    let Some(fallback) = &node.left else {
                        return Err(corrupt("categorical split without a fallback"));
                    };
                    // A listed category without a child took the fallback: leave it out.
                    let children = node.children.as_ref();
                    let mut parts = Vec::new();
                    for key in keys {
                        if let Some(child) = children.and_then(|m| m.get(key)) {
                            let v: f64 = key.parse().map_err(|_| corrupt("category key"))?;
                            parts.push((v, child));
                        }
                    }
                    let first = t.nodes.len();
                    t.nodes
                        .extend(std::iter::repeat_n(FlatNode::EMPTY, parts.len() + 1));
                    t.nodes[id] = FlatNode {
                        threshold: 0.0,
                        feature: MULTIWAY,
                        left: t.multiway.len() as u32,
                    };
                    stack.push((fallback, first, depth + 1));
                    for (k, (_, child)) in parts.iter().enumerate() {
                        stack.push((child, first + 1 + k, depth + 1));
                    }
                    t.multiway.push(MultiwaySplit {
                        feature: *feature_index as u32,
                        categories: parts.iter().map(|p| p.0).collect(),
                        first: first as u32,
                    });
                }
            }
        }
        if t.nodes.len() >= u32::MAX as usize - 1 {
            return Err(corrupt("too many nodes"));
        }
        t.mean_depth = t.depth as f64;
        Ok(t)
    }
}

impl DecisionTree {
    /// A tree grown to purity with [`DecisionTreeParams::default`]. ID3 and C4.5 classify
    /// only: a regressor with them is `InvalidInput`.
    pub fn new(algorithm: Algorithm, is_classifier: bool) -> Result<Self> {
        if !is_classifier && algorithm != Algorithm::CART {
            return Err(Error::invalid_input(format!(
                "{} builds classification trees only; use CART for regression",
                algorithm.name()
            )));
        }
        Ok(Self::with_options(
            algorithm,
            is_classifier,
            EngineOptions::ORIGINAL,
        ))
    }

    crate::accessors::builder_setters! {
        with_max_depth(max_depth: Some(usize)),
        with_random_state(random_state: Some(u64)),
    }

    crate::accessors::checked_setters! {
        /// At least 2 (`InvalidParameter` otherwise).
        with_min_samples_split(min_samples_split: usize),
        /// At least 1 (`InvalidParameter` otherwise).
        with_min_samples_leaf(min_samples_leaf: usize),
        /// Finite and `>= 0` (`InvalidParameter` otherwise).
        with_min_impurity_decrease(min_impurity_decrease: f64),
    }

    crate::accessors::field_getters! {
        get_algorithm -> algorithm: Algorithm,
        get_is_classifier -> is_classifier: bool,
    }

    /// Features seen in the last fit (0 before).
    pub fn get_n_features(&self) -> usize {
        self.fitted.as_ref().map_or(0, |f| f.n_features)
    }

    /// Number of classes of a fitted classifier (`max label + 1` in the original API).
    pub fn get_n_classes(&self) -> Option<usize> {
        self.classes().map(|c| c.len())
    }

    pub fn get_parameters(&self) -> DecisionTreeParams {
        DecisionTreeParams {
            max_depth: self.max_depth,
            min_samples_split: self.min_samples_split,
            min_samples_leaf: self.min_samples_leaf,
            min_impurity_decrease: self.min_impurity_decrease,
            random_state: self.random_state,
        }
    }

    /// The fitted tree as [`Node`]s (built on first request).
    pub fn get_root(&self) -> Option<&Node> {
        let fitted = self.fitted.as_ref()?;
        Some(self.node_view.get_or_init(|| fitted.to_node(0)))
    }

    pub fn get_categorical_features(&self) -> &[usize] {
        &self.categorical_features
    }

    /// Features to split multi-way by category (used by ID3 and C4.5; CART ignores them).
    pub fn set_categorical_features(&mut self, features: Vec<usize>) -> &mut Self {
        self.categorical_features = features;
        self
    }

    /// The fitted tree for one sample (unfitted -> `NotFitted`; wrong length ->
    /// `DimensionMismatch`).
    fn fitted_for_one(&self, x: &[f64]) -> Result<&FlatTree> {
        let fitted = fitted_state(&self.fitted, "DecisionTree")?;
        if x.len() != fitted.n_features {
            return Err(Error::dimension_mismatch(fitted.n_features, x.len()));
        }
        Ok(fitted)
    }

    /// The prediction for one sample (unfitted -> `NotFitted`; wrong length ->
    /// `DimensionMismatch`).
    pub fn predict_one(&self, x: &[f64]) -> Result<f64> {
        let fitted = self.fitted_for_one(x)?;
        Ok(fitted.leaf_of(&ArrayView1::from(x)).threshold)
    }

    /// The class fractions of the leaf one sample reaches (regressor ->
    /// `Tree(NotClassificationTree)`, checked first).
    pub fn predict_proba_one(&self, x: &[f64]) -> Result<Vec<f64>> {
        if !self.is_classifier {
            return Err(TreeError::NotClassificationTree.into());
        }
        let fitted = self.fitted_for_one(x)?;
        Ok(fitted
            .leaf_values(fitted.leaf_of(&ArrayView1::from(x)))
            .to_vec())
    }

    /// A readable outline of the fitted tree (unfitted -> `NotFitted`).
    pub fn generate_tree_structure(&self) -> Result<String> {
        let root = self
            .get_root()
            .ok_or_else(|| Error::not_fitted("DecisionTree"))?;
        let mut out = format!(
            "Decision Tree Structure ({}, {}):\n",
            self.algorithm.name(),
            if self.is_classifier {
                "classifier"
            } else {
                "regressor"
            }
        );
        root.describe(0, &mut out);
        Ok(out)
    }
}

crate::machine_learning::linear_model::supervised_conveniences!(DecisionTree: fit_predict);
crate::machine_learning::path_persistence!(DecisionTree);
