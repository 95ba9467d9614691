//! Decision trees: CART (gini), ID3 (information gain) and C4.5 (gain ratio) classifiers, and
//! variance-reduction (MSE) regression trees.
//!
//! Fitting sorts every feature once, then grows the tree depth first on a flat node array.
//! Each node holds a contiguous segment of every feature's sorted sample list; the split
//! search scans those segments (thresholds at midpoints between consecutive distinct values),
//! and the chosen split partitions every segment stably, so children stay sorted without
//! re-sorting. Both passes run over features in parallel behind [`SORT_SCAN_MIN_ELEMS`]; each
//! feature's scan is independent and the best split is picked afterwards in a fixed order
//! (largest improvement, ties to the lowest feature rank, then the lowest threshold), so the
//! serial and the parallel path grow the same tree bit for bit.

// The scikit-learn-style setters are the Python layer's entry points.
#![cfg_attr(not(feature = "python"), allow(dead_code))]

use super::tree::{find_leaf, map_rows, validate_nodes, FlatNode};
use crate::declare_gate;
use crate::error::{Error, Result};
use crate::machine_learning::linear_model::require_xy;
use crate::machine_learning::validation::{check_n_features, check_xy, encode_classes};
use crate::machine_learning::TreeError;
use crate::persistence::Persist;
use ndarray::{Array1, Array2, ArrayBase, ArrayView1, ArrayView2, Data, Ix1, Ix2};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
// The original keys categorical children with ahash's map; this crate builds without ahash,
// so std's `HashMap` (the same interface) stands in.
use std::collections::HashMap as AHashMap;

declare_gate! {
    /// DecisionTree split search and partition at one node (and the initial sort): parallel
    /// over features. Work = node samples x features.
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Criterion {
    Gini,
    Entropy,
    GainRatio,
    Mse,
}

/// A decision tree classifier or regressor with scikit-learn-like hyper-parameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DecisionTree {
    pub(crate) algorithm: Algorithm,
    pub(crate) is_classifier: bool,
    /// Deepest level a node may sit at (the root is depth 0); `None` grows until leaves are
    /// pure or too small.
    pub(crate) max_depth: Option<usize>,
    /// A node needs at least this many samples to be split (>= 2).
    pub(crate) min_samples_split: usize,
    /// Each child must keep at least this many samples (>= 1).
    pub(crate) min_samples_leaf: usize,
    /// Seed of the feature order that breaks ties between equally good splits. `None` keeps
    /// the natural order (the lowest feature index wins), so fits are always reproducible.
    pub(crate) random_state: Option<u64>,
    /// Original API: see [`DecisionTreeParams::min_impurity_decrease`].
    min_impurity_decrease: f64,
    /// Original API: features split multi-way by category (ID3 and C4.5).
    categorical_features: Vec<usize>,
    /// scikit-learn's conventions and the flat tree (the Python layer).
    sklearn: bool,
    /// The original API's fitted tree, its width and class count.
    root: Option<Node>,
    n_features_in: usize,
    n_classes: Option<usize>,
    fitted: Option<Fitted>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "FittedUnchecked")]
struct Fitted {
    nodes: Vec<FlatNode>,
    /// Per leaf: class probabilities (classifier) or the mean (regressor).
    values: Vec<f64>,
    n_outputs: usize,
    classes: Option<Array1<f64>>,
    n_features: usize,
    depth: usize,
    n_leaves: usize,
    /// Leaf depth averaged over training samples: the traversal work estimate per sample.
    mean_depth: f64,
    feature_importances: Array1<f64>,
    /// What scikit-learn's door needs to rebuild scikit-learn's tree and to check that
    /// scikit-learn would have grown the same one; not persisted.
    #[serde(skip)]
    report: Option<SplitReport>,
}

/// Per flat node, the statistics a scikit-learn `Tree` holds and the margins of each split
/// decision (see [`DecisionTree::split_report`]).
#[derive(Debug, Clone, Default)]
struct SplitReport {
    /// `REPORT_COLUMNS` values per node.
    nodes: Vec<f64>,
    /// Per node: class counts (classifier) or `[sum, sum of squares, min, max]` of the
    /// targets (regressor).
    targets: Vec<f64>,
    target_width: usize,
}

/// Columns of [`DecisionTree::split_report`]'s node table.
const REPORT_COLUMNS: usize = 9;

#[derive(Deserialize)]
struct FittedUnchecked {
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

impl TryFrom<FittedUnchecked> for Fitted {
    type Error = String;
    fn try_from(f: FittedUnchecked) -> std::result::Result<Self, String> {
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
        Ok(Fitted {
            nodes: f.nodes,
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
        Ok(Self {
            sklearn: false,
            ..Self::with_defaults(algorithm, is_classifier)
        })
    }

    /// The Python layer's tree (scikit-learn's conventions, the flat tree); parameters are
    /// checked at `fit`.
    #[doc(hidden)]
    pub fn with_defaults(algorithm: Algorithm, is_classifier: bool) -> Self {
        let p = DecisionTreeParams::default();
        Self {
            algorithm,
            is_classifier,
            max_depth: p.max_depth,
            min_samples_split: p.min_samples_split,
            min_samples_leaf: p.min_samples_leaf,
            random_state: p.random_state,
            min_impurity_decrease: p.min_impurity_decrease,
            categorical_features: Vec::new(),
            sklearn: true,
            root: None,
            n_features_in: 0,
            n_classes: None,
            fitted: None,
        }
    }

    pub fn with_max_depth(mut self, max_depth: usize) -> Self {
        self.max_depth = Some(max_depth);
        self
    }

    /// At least 2 (`InvalidParameter` otherwise).
    pub fn with_min_samples_split(mut self, v: usize) -> Result<Self> {
        if v < 2 {
            return Err(Error::invalid_parameter(
                "min_samples_split",
                format!("must be at least 2, got {v}"),
            ));
        }
        self.min_samples_split = v;
        Ok(self)
    }

    /// At least 1 (`InvalidParameter` otherwise).
    pub fn with_min_samples_leaf(mut self, v: usize) -> Result<Self> {
        crate::machine_learning::validation::require_nonzero("min_samples_leaf", v)?;
        self.min_samples_leaf = v;
        Ok(self)
    }

    /// Finite and `>= 0` (`InvalidParameter` otherwise).
    pub fn with_min_impurity_decrease(mut self, v: f64) -> Result<Self> {
        if !(v.is_finite() && v >= 0.0) {
            return Err(Error::invalid_parameter(
                "min_impurity_decrease",
                format!("must be finite and >= 0, got {v}"),
            ));
        }
        self.min_impurity_decrease = v;
        Ok(self)
    }

    pub fn with_random_state(mut self, seed: u64) -> Self {
        self.random_state = Some(seed);
        self
    }

    #[doc(hidden)]
    pub fn set_max_depth(mut self, max_depth: Option<usize>) -> Self {
        self.max_depth = max_depth;
        self
    }

    pub(crate) fn set_min_samples_split(mut self, min_samples_split: usize) -> Self {
        self.min_samples_split = min_samples_split;
        self
    }

    pub(crate) fn set_min_samples_leaf(mut self, min_samples_leaf: usize) -> Self {
        self.min_samples_leaf = min_samples_leaf;
        self
    }

    pub(crate) fn set_random_state(mut self, random_state: Option<u64>) -> Self {
        self.random_state = random_state;
        self
    }

    #[inline]
    pub fn get_algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// Features seen in the last fit (0 before).
    pub fn get_n_features(&self) -> usize {
        match &self.fitted {
            Some(f) if self.sklearn => f.n_features,
            _ => self.n_features_in,
        }
    }

    /// `max label + 1` of a fitted classifier.
    pub fn get_n_classes(&self) -> Option<usize> {
        self.n_classes
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

    pub fn get_root(&self) -> Option<&Node> {
        self.root.as_ref()
    }

    #[inline]
    pub fn get_is_classifier(&self) -> bool {
        self.is_classifier
    }

    pub fn get_categorical_features(&self) -> &[usize] {
        &self.categorical_features
    }

    /// Features to split multi-way by category (used by ID3 and C4.5; CART ignores them).
    pub fn set_categorical_features(&mut self, features: Vec<usize>) -> &mut Self {
        self.categorical_features = features;
        self
    }

    /// Sorted class labels (`classes_`); `None` before fit or for a regressor.
    pub fn classes(&self) -> Option<&Array1<f64>> {
        self.fitted.as_ref().and_then(|f| f.classes.as_ref())
    }

    /// Depth of the fitted tree (`get_depth()`: 0 for a single leaf).
    pub fn depth(&self) -> Option<usize> {
        self.fitted.as_ref().map(|f| f.depth)
    }

    /// Number of leaves (`get_n_leaves()`).
    pub fn n_leaves(&self) -> Option<usize> {
        self.fitted.as_ref().map(|f| f.n_leaves)
    }

    /// Number of nodes, internal and leaves (`tree_.node_count`).
    pub fn node_count(&self) -> Option<usize> {
        self.fitted.as_ref().map(|f| f.nodes.len())
    }

    /// Features seen during fit (`n_features_in_`).
    pub fn n_features(&self) -> Option<usize> {
        self.fitted.as_ref().map(|f| f.n_features)
    }

    /// Impurity-decrease importances, normalised to sum to 1 (all zero for a single leaf).
    pub fn feature_importances(&self) -> Option<&Array1<f64>> {
        self.fitted.as_ref().map(|f| &f.feature_importances)
    }

    /// The last fit's nodes in flat order as `(table, targets)`: `table` has one row per node,
    /// `[feature, threshold, left, n_samples, impurity, proxy, runner_up, low, high]`
    /// (`feature` and `left` are -1 for a leaf; `impurity` is the node's gini, entropy in
    /// nats, or variance; `proxy` is the chosen split's score and `runner_up` the best score
    /// of any other legal split of the node, both on the engine's scale, `-inf` when there
    /// is none, NaN for a leaf or a gain-ratio tree; `low` / `high` are the feature values on
    /// either side of the threshold). `targets` holds per node the class counts
    /// (classifier) or `[sum, sum of squares, min, max]` of the targets. `None` before a fit
    /// or after loading one.
    pub fn split_report(&self) -> Option<(Array2<f64>, Array2<f64>)> {
        let report = self.fitted.as_ref()?.report.as_ref()?;
        let n_nodes = report.nodes.len() / REPORT_COLUMNS;
        let table = Array2::from_shape_vec((n_nodes, REPORT_COLUMNS), report.nodes.clone()).ok()?;
        let targets =
            Array2::from_shape_vec((n_nodes, report.target_width), report.targets.clone()).ok()?;
        Some((table, targets))
    }

    fn criterion(&self) -> Criterion {
        match (self.is_classifier, self.algorithm) {
            (false, _) => Criterion::Mse,
            (true, Algorithm::CART) => Criterion::Gini,
            (true, Algorithm::ID3) => Criterion::Entropy,
            (true, Algorithm::C45) => Criterion::GainRatio,
        }
    }

    fn check_params(&self) -> Result<()> {
        if self.min_samples_split < 2 {
            return Err(Error::invalid_input(format!(
                "min_samples_split must be at least 2, got {}",
                self.min_samples_split
            )));
        }
        if self.min_samples_leaf < 1 {
            return Err(Error::invalid_input(
                "min_samples_leaf must be at least 1, got 0",
            ));
        }
        if self.max_depth == Some(0) {
            return Err(Error::invalid_input(
                "max_depth must be at least 1 (or None), got 0",
            ));
        }
        Ok(())
    }

    /// Fit to `x` (`n_samples x n_features`) and `y` (class labels for a classifier, targets
    /// for a regressor).
    pub fn fit<S1, S2>(
        &mut self,
        x: &ArrayBase<S1, Ix2>,
        y: &ArrayBase<S2, Ix1>,
    ) -> Result<&mut Self>
    where
        S1: Data<Elem = f64>,
        S2: Data<Elem = f64>,
    {
        let (x, y) = (x.view(), y.view());
        if !self.sklearn {
            return self.fit_boxed(x, y);
        }
        self.check_params()?;
        check_xy(&x, &y)?;
        let (n, d) = x.dim();
        if n >= u32::MAX as usize || d >= u32::MAX as usize {
            return Err(Error::invalid_input(format!(
                "DecisionTree supports fewer than 2^32 - 1 samples and features, got {n} x {d}"
            )));
        }
        let (classes, codes, values);
        let target = if self.is_classifier {
            let (c, k) = encode_classes(&y);
            classes = Some(c);
            codes = k;
            Target::Classes {
                codes: &codes,
                n_classes: classes.as_ref().map_or(0, |c| c.len()),
            }
        } else {
            classes = None;
            values = y.to_vec();
            Target::Values(&values)
        };
        let mut order: Vec<usize> = (0..d).collect();
        if let Some(seed) = self.random_state {
            order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
        }
        let builder = Builder::new(x, target, self.criterion(), order, self);
        let fitted = builder.build(classes);
        self.fitted = Some(fitted);
        Ok(self)
    }

    fn fitted_for(&self, x: &ArrayView2<f64>) -> Result<&Fitted> {
        let fitted = self
            .fitted
            .as_ref()
            .ok_or_else(|| Error::not_fitted("DecisionTree"))?;
        check_n_features(x, fitted.n_features, "DecisionTree")?;
        Ok(fitted)
    }

    /// Leaf reached by every sample, the traversal kernel behind every prediction.
    fn leaves<'a>(fitted: &'a Fitted, x: ArrayView2<f64>) -> Vec<&'a FlatNode> {
        let visits = x
            .nrows()
            .saturating_mul(fitted.mean_depth.ceil().max(1.0) as usize);
        map_rows(x, visits, |row| find_leaf(&fitted.nodes, row))
    }

    /// The original API's fit: the recursive tree of [`Node`]s.
    ///
    /// Errors: empty `x` -> `EmptyInput`; NaN/inf -> `NonFinite`; length mismatch ->
    /// `DimensionMismatch`; `min_samples_leaf > min_samples_split` -> `InvalidParameter`;
    /// fewer samples than `min_samples_split`, or classifier labels that are not
    /// non-negative integers -> `InvalidInput`.
    fn fit_boxed(&mut self, x: ArrayView2<f64>, y: ArrayView1<f64>) -> Result<&mut Self> {
        require_xy(&x, &y)?;
        let (n, d) = x.dim();
        if self.min_samples_leaf > self.min_samples_split {
            return Err(Error::invalid_parameter(
                "min_samples_leaf",
                format!(
                    "({}) must not exceed min_samples_split ({})",
                    self.min_samples_leaf, self.min_samples_split
                ),
            ));
        }
        if n < self.min_samples_split {
            return Err(Error::invalid_input(format!(
                "{n} samples are fewer than min_samples_split = {}",
                self.min_samples_split
            )));
        }
        let n_classes = if self.is_classifier {
            if let Some(bad) = y.iter().find(|&&v| v < 0.0 || v.fract() != 0.0) {
                return Err(Error::invalid_input(format!(
                    "class labels must be non-negative integers, found {bad}"
                )));
            }
            Some(y.iter().fold(0.0f64, |m, &v| m.max(v)) as usize + 1)
        } else {
            None
        };
        let mut order: Vec<usize> = (0..d).collect();
        // Ties go to the lowest feature unless a seed (own or global) shuffles the order.
        if self.random_state.is_some() || crate::random::global_seed_is_set() {
            order.shuffle(&mut crate::random::rng_from(self.random_state));
        }
        let mut categorical = vec![false; d];
        if self.algorithm != Algorithm::CART {
            for &f in self.categorical_features.iter().filter(|&&f| f < d) {
                categorical[f] = true;
            }
        }
        let y = y.to_vec();
        let grower = Grower {
            x,
            y: &y,
            n_classes,
            algorithm: self.algorithm,
            params: self.get_parameters(),
            categorical,
            order,
            n_total: n as f64,
        };
        self.root = Some(grower.grow((0..n).collect(), 0));
        self.n_features_in = d;
        self.n_classes = n_classes;
        Ok(self)
    }

    fn root_for(&self, width: usize) -> Result<&Node> {
        let root = self
            .root
            .as_ref()
            .ok_or_else(|| Error::not_fitted("DecisionTree"))?;
        if width != self.n_features_in {
            return Err(Error::dimension_mismatch(self.n_features_in, width));
        }
        Ok(root)
    }

    /// The prediction for one sample (unfitted -> `NotFitted`; wrong length ->
    /// `DimensionMismatch`).
    pub fn predict_one(&self, x: &[f64]) -> Result<f64> {
        match &self.root_for(x.len())?.leaf_for(x)?.node_type {
            NodeType::Leaf { value, .. } => Ok(*value),
            NodeType::Internal { .. } => {
                Err(TreeError::CorruptStructure("walk ended inside").into())
            }
        }
    }

    /// The class fractions of the leaf one sample reaches (regressor ->
    /// `Tree(NotClassificationTree)`, checked first).
    pub fn predict_proba_one(&self, x: &[f64]) -> Result<Vec<f64>> {
        if !self.is_classifier {
            return Err(TreeError::NotClassificationTree.into());
        }
        match &self.root_for(x.len())?.leaf_for(x)?.node_type {
            NodeType::Leaf {
                probabilities: Some(p),
                ..
            } => Ok(p.clone()),
            _ => Err(TreeError::CorruptStructure("classifier leaf without probabilities").into()),
        }
    }

    /// Rows of `x` as slices, after the original API's input checks.
    fn checked_rows<S: Data<Elem = f64>>(&self, x: &ArrayBase<S, Ix2>) -> Result<Array2<f64>> {
        let x = x.view();
        if self.root.is_none() {
            return Err(Error::not_fitted("DecisionTree"));
        }
        crate::machine_learning::validation::require_data_width(&x, self.n_features_in, "x")?;
        Ok(x.as_standard_layout().into_owned())
    }

    /// Fit, then predict the training data.
    pub fn fit_predict<S1, S2>(
        &mut self,
        x_train: &ArrayBase<S1, Ix2>,
        y_train: &ArrayBase<S2, Ix1>,
    ) -> Result<Array1<f64>>
    where
        S1: Data<Elem = f64>,
        S2: Data<Elem = f64>,
    {
        self.fit(x_train, y_train)?;
        self.predict(x_train)
    }

    /// A readable outline of the fitted tree (unfitted -> `NotFitted`).
    pub fn generate_tree_structure(&self) -> Result<String> {
        let root = self
            .root
            .as_ref()
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

    /// Write the model to `path` (postcard).
    pub fn save_to_path(&self, path: &str) -> Result<()> {
        self.save(path)
    }

    /// Read a model written by [`save_to_path`](Self::save_to_path).
    pub fn load_from_path(path: &str) -> Result<Self> {
        Self::load(path)
    }

    /// Predicted class labels (classifier) or values (regressor).
    pub fn predict<S: Data<Elem = f64>>(&self, x: &ArrayBase<S, Ix2>) -> Result<Array1<f64>> {
        if !self.sklearn {
            let rows = self.checked_rows(x)?;
            return rows
                .rows()
                .into_iter()
                .map(|r| self.predict_one(r.as_slice().expect("standard layout")))
                .collect();
        }
        let x = x.view();
        let fitted = self.fitted_for(&x)?;
        Ok(Self::leaves(fitted, x)
            .into_iter()
            .map(|leaf| leaf.threshold)
            .collect())
    }

    /// Class probabilities (`n_samples x n_classes`, columns in `classes()` order): the class
    /// fractions of the training samples in each leaf. Classifiers only.
    pub fn predict_proba<S: Data<Elem = f64>>(&self, x: &ArrayBase<S, Ix2>) -> Result<Array2<f64>> {
        if !self.sklearn {
            if !self.is_classifier {
                return Err(TreeError::NotClassificationTree.into());
            }
            let rows = self.checked_rows(x)?;
            let k = self.n_classes.unwrap_or(0);
            let mut out = Array2::zeros((rows.nrows(), k));
            for (mut o, r) in out.rows_mut().into_iter().zip(rows.rows()) {
                let p = self.predict_proba_one(r.as_slice().expect("standard layout"))?;
                o.assign(&ndarray::ArrayView1::from(&p[..]));
            }
            return Ok(out);
        }
        if !self.is_classifier {
            return Err(Error::invalid_input(
                "predict_proba is only available for classifiers (is_classifier=true)",
            ));
        }
        let x = x.view();
        let fitted = self.fitted_for(&x)?;
        let k = fitted.n_outputs;
        let leaves = Self::leaves(fitted, x);
        let mut out = Array2::zeros((x.nrows(), k));
        for (mut row, leaf) in out.rows_mut().into_iter().zip(leaves) {
            let start = leaf.left as usize * k;
            row.assign(&ndarray::ArrayView1::from(&fitted.values[start..start + k]));
        }
        Ok(out)
    }

    /// Mean accuracy (classifier) or R² (regressor) on `x` against `y`.
    pub fn score<S1, S2>(&self, x: &ArrayBase<S1, Ix2>, y: &ArrayBase<S2, Ix1>) -> Result<f64>
    where
        S1: Data<Elem = f64>,
        S2: Data<Elem = f64>,
    {
        let pred = self.predict(x)?;
        if pred.len() != y.len() {
            return Err(Error::invalid_input(format!(
                "X and y have inconsistent numbers of samples: {} and {}",
                pred.len(),
                y.len()
            )));
        }
        if self.is_classifier {
            let hits = pred.iter().zip(y.iter()).filter(|(p, t)| p == t).count();
            Ok(hits as f64 / y.len() as f64)
        } else {
            crate::metrics::checked::r2_score(y.view(), pred.view())
        }
    }
}

impl Persist for DecisionTree {
    const MODEL_NAME: &'static str = "DecisionTree";
}

crate::machine_learning::linear_model::supervised_traits!(DecisionTree, f64, Array1<f64>);

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
    /// A prediction: the value (class index for a classifier, mean for a regressor), the
    /// class, and the class fractions of the training samples that reached it.
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

    /// The leaf `row` reaches.
    fn leaf_for(&self, row: &[f64]) -> Result<&Node> {
        let mut node = self;
        loop {
            match &node.node_type {
                NodeType::Leaf { .. } => return Ok(node),
                NodeType::Internal {
                    feature_index,
                    threshold,
                    categories,
                } => {
                    let v = row[*feature_index];
                    let next = match (categories, &node.children) {
                        (Some(_), Some(children)) => {
                            children.get(&category_key(v)).or(node.left.as_ref())
                        }
                        _ if v <= *threshold => node.left.as_ref(),
                        _ => node.right.as_ref(),
                    };
                    node =
                        next.ok_or(TreeError::CorruptStructure("internal node without a child"))?;
                }
            }
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
                threshold,
                categories: Some(categories),
            } => {
                let _ = threshold;
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

/// The key of a categorical value in a node's `children` (its shortest decimal form).
fn category_key(v: f64) -> String {
    format!("{v}")
}

/// Grows the original API's tree, recursively, on sample index lists.
struct Grower<'a> {
    x: ArrayView2<'a, f64>,
    /// Class index (classifier) or target value (regressor) per sample.
    y: &'a [f64],
    n_classes: Option<usize>,
    algorithm: Algorithm,
    params: DecisionTreeParams,
    /// Per feature: split it multi-way (ID3 / C4.5 only).
    categorical: Vec<bool>,
    /// Features in tie-break priority order.
    order: Vec<usize>,
    n_total: f64,
}

/// Running statistics of one side of a split: class counts, or target sum and sum of
/// squares.
#[derive(Clone)]
struct SideStats {
    counts: Vec<usize>,
    sum: f64,
    sum_sq: f64,
    n: usize,
}

impl SideStats {
    fn new(n_classes: Option<usize>) -> Self {
        Self {
            counts: vec![0; n_classes.unwrap_or(0)],
            sum: 0.0,
            sum_sq: 0.0,
            n: 0,
        }
    }

    fn add(&mut self, y: f64, sign: i64, classifier: bool) {
        if classifier {
            let c = &mut self.counts[y as usize];
            *c = (*c as i64 + sign) as usize;
        } else {
            self.sum += sign as f64 * y;
            self.sum_sq += sign as f64 * y * y;
        }
        self.n = (self.n as i64 + sign) as usize;
    }
}

impl Grower<'_> {
    /// Impurity of a sample set: gini (CART) or entropy (ID3, C4.5) of the class counts,
    /// variance for a regressor.
    fn impurity(&self, idx: &[usize]) -> f64 {
        if self.n_classes.is_none() {
            // Two passes: exactly zero for a constant target, so such a node stays a leaf.
            let n = idx.len() as f64;
            let mean = idx.iter().map(|&i| self.y[i]).sum::<f64>() / n;
            return idx.iter().map(|&i| (self.y[i] - mean).powi(2)).sum::<f64>() / n;
        }
        let mut stats = SideStats::new(self.n_classes);
        for &i in idx {
            stats.add(self.y[i], 1, self.n_classes.is_some());
        }
        self.impurity_of(&stats)
    }

    fn impurity_of(&self, s: &SideStats) -> f64 {
        let n = s.n as f64;
        if self.n_classes.is_none() {
            return (s.sum_sq / n - (s.sum / n).powi(2)).max(0.0);
        }
        let fractions = s.counts.iter().filter(|&&c| c > 0).map(|&c| c as f64 / n);
        if self.algorithm == Algorithm::CART {
            1.0 - fractions.map(|p| p * p).sum::<f64>()
        } else {
            -fractions.map(|p| p * p.log2()).sum::<f64>()
        }
    }

    /// Split score: the impurity decrease, or for a C4.5 classifier the gain ratio (the
    /// decrease over the entropy of the part sizes).
    fn score(&self, decrease: f64, sizes: impl Iterator<Item = usize>, n: usize) -> f64 {
        if self.algorithm != Algorithm::C45 || self.n_classes.is_none() {
            return decrease;
        }
        let split_info: f64 = -sizes
            .map(|m| m as f64 / n as f64)
            .map(|w| w * w.log2())
            .sum::<f64>();
        if split_info > 0.0 {
            decrease / split_info
        } else {
            0.0
        }
    }

    fn leaf(&self, idx: &[usize]) -> Node {
        let n = idx.len() as f64;
        match self.n_classes {
            Some(k) => {
                let mut counts = vec![0usize; k];
                for &i in idx {
                    counts[self.y[i] as usize] += 1;
                }
                // Majority class, ties to the lowest index.
                let class =
                    (0..k).fold(0, |best, c| if counts[c] > counts[best] { c } else { best });
                let probabilities = counts.iter().map(|&c| c as f64 / n).collect();
                Node::new_leaf(class as f64, Some(class), Some(probabilities))
            }
            None => Node::new_leaf(idx.iter().map(|&i| self.y[i]).sum::<f64>() / n, None, None),
        }
    }

    fn grow(&self, idx: Vec<usize>, depth: usize) -> Node {
        let n = idx.len();
        let parent = self.impurity(&idx);
        let p = &self.params;
        if parent <= 0.0 || n < p.min_samples_split || p.max_depth.is_some_and(|m| depth >= m) {
            return self.leaf(&idx);
        }
        // The best split over the features in `order`; the first best wins ties.
        let mut best: Option<Best> = None;
        for &f in &self.order {
            if let Some(c) = self.best_on_feature(&idx, f, parent) {
                if best.as_ref().is_none_or(|b| c.score > b.score) {
                    best = Some(c);
                }
            }
        }
        let Some(best) = best else {
            return self.leaf(&idx);
        };
        // scikit-learn's rule: the decrease weighted by the node's share of the samples.
        let weighted = n as f64 / self.n_total * best.decrease;
        if weighted + 1e-12 < p.min_impurity_decrease {
            return self.leaf(&idx);
        }
        let f = best.feature;
        match best.threshold {
            Some(t) => {
                let (left, right): (Vec<usize>, Vec<usize>) =
                    idx.iter().partition(|&&i| self.x[[i, f]] <= t);
                let mut node = Node::new_internal(f, t);
                node.left = Some(Box::new(self.grow(left, depth + 1)));
                node.right = Some(Box::new(self.grow(right, depth + 1)));
                node
            }
            None => {
                let parts = self.categories(&idx, f);
                let keys: Vec<String> = parts
                    .iter()
                    .map(|q| category_key(self.x[[q[0], f]]))
                    .collect();
                let mut node = Node::new_categorical(f, keys.clone());
                // Unseen categories fall back to this node's majority.
                node.left = Some(Box::new(self.leaf(&idx)));
                let children = keys
                    .into_iter()
                    .zip(parts)
                    .map(|(k, q)| (k, Box::new(self.grow(q, depth + 1))))
                    .collect();
                node.children = Some(children);
                node
            }
        }
    }

    /// The samples of `idx` grouped by their value of feature `f`, in increasing order.
    fn categories(&self, idx: &[usize], f: usize) -> Vec<Vec<usize>> {
        let mut sorted = idx.to_vec();
        sorted.sort_by(|&a, &b| self.x[[a, f]].total_cmp(&self.x[[b, f]]));
        let mut parts: Vec<Vec<usize>> = Vec::new();
        for i in sorted {
            match parts.last_mut() {
                Some(q) if self.x[[q[0], f]] == self.x[[i, f]] => q.push(i),
                _ => parts.push(vec![i]),
            }
        }
        parts
    }

    /// The best split of `idx` on feature `f`: the multi-way split by category, or the best
    /// midpoint threshold between consecutive distinct values that leaves at least
    /// `min_samples_leaf` samples on each side (one sorted scan with running statistics).
    fn best_on_feature(&self, idx: &[usize], f: usize, parent: f64) -> Option<Best> {
        let n = idx.len();
        if self.categorical[f] {
            let parts = self.categories(idx, f);
            if parts.len() < 2 {
                return None;
            }
            let children: f64 = parts
                .iter()
                .map(|q| q.len() as f64 / n as f64 * self.impurity(q))
                .sum();
            let decrease = parent - children;
            return Some(Best {
                score: self.score(decrease, parts.iter().map(Vec::len), n),
                decrease,
                feature: f,
                threshold: None,
            });
        }
        let classifier = self.n_classes.is_some();
        let mut sorted = idx.to_vec();
        sorted.sort_by(|&a, &b| self.x[[a, f]].total_cmp(&self.x[[b, f]]));
        let mut left = SideStats::new(self.n_classes);
        let mut right = SideStats::new(self.n_classes);
        for &i in &sorted {
            right.add(self.y[i], 1, classifier);
        }
        let leaf = self.params.min_samples_leaf.max(1);
        let mut best: Option<Best> = None;
        for cut in 1..n {
            let moved = sorted[cut - 1];
            left.add(self.y[moved], 1, classifier);
            right.add(self.y[moved], -1, classifier);
            let (lo, hi) = (self.x[[moved, f]], self.x[[sorted[cut], f]]);
            if cut < leaf || n - cut < leaf || lo >= hi {
                continue;
            }
            let children = cut as f64 / n as f64 * self.impurity_of(&left)
                + (n - cut) as f64 / n as f64 * self.impurity_of(&right);
            let decrease = parent - children;
            let score = self.score(decrease, [cut, n - cut].into_iter(), n);
            if best.as_ref().is_none_or(|b| score > b.score) {
                best = Some(Best {
                    score,
                    decrease,
                    feature: f,
                    threshold: Some(midpoint(lo, hi)),
                });
            }
        }
        best
    }
}

/// A chosen split: its score, impurity decrease, feature, and threshold (`None` for a
/// categorical split).
struct Best {
    score: f64,
    decrease: f64,
    feature: usize,
    threshold: Option<f64>,
}

/// The training target as the split search sees it.
enum Target<'a> {
    Classes { codes: &'a [u32], n_classes: usize },
    Values(&'a [f64]),
}

/// Statistics of the samples at one node.
struct NodeStats {
    /// Class counts (classifier) or empty.
    counts: Vec<u32>,
    /// Sum of targets, of their squares, and their range (regressor).
    sum: f64,
    sum_sq: f64,
    min: f64,
    max: f64,
    mean: f64,
    impurity: f64,
    pure: bool,
}

/// The best split found on one feature.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    /// A quantity that increases with the impurity decrease, comparable across features of
    /// one node.
    proxy: f64,
    /// The best score of any other legal split on this feature (`-inf` when none).
    runner_up: f64,
    n_left: usize,
    threshold: f64,
    /// The feature values on either side of the threshold.
    low: f64,
    high: f64,
}

/// One feature's sorted sample indices and values.
type SegmentMut<'s> = (&'s mut [u32], &'s mut [f64]);

thread_local! {
    /// The right half of a segment being partitioned, reused across nodes by each thread.
    static RIGHT_SCRATCH: std::cell::RefCell<(Vec<u32>, Vec<f64>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

/// Threshold between two consecutive distinct sorted values: their midpoint, or the lower
/// value when the midpoint rounds onto the upper one (or overflows), so `x <= threshold`
/// always separates them.
#[inline]
fn midpoint(a: f64, b: f64) -> f64 {
    let t = a / 2.0 + b / 2.0;
    if t == b || !t.is_finite() {
        a
    } else {
        t
    }
}

struct Builder<'a> {
    x: ArrayView2<'a, f64>,
    n: usize,
    d: usize,
    target: Target<'a>,
    criterion: Criterion,
    /// Features in tie-break priority order.
    order: Vec<usize>,
    max_depth: usize,
    min_split: usize,
    min_leaf: usize,
    /// `xlogx[c] = c ln c` for the entropy criteria.
    xlogx: Vec<f64>,
    /// Feature `f`'s sample indices (and values), sorted by value within each node segment:
    /// `idx[f * n .. (f + 1) * n]`.
    idx: Vec<u32>,
    val: Vec<f64>,
    goes_left: Vec<bool>,
}

impl<'a> Builder<'a> {
    fn new(
        x: ArrayView2<'a, f64>,
        target: Target<'a>,
        criterion: Criterion,
        order: Vec<usize>,
        params: &DecisionTree,
    ) -> Self {
        let (n, d) = x.dim();
        let xlogx = if matches!(criterion, Criterion::Entropy | Criterion::GainRatio) {
            (0..=n)
                .map(|c| {
                    if c == 0 {
                        0.0
                    } else {
                        c as f64 * (c as f64).ln()
                    }
                })
                .collect()
        } else {
            Vec::new()
        };
        Self {
            x,
            n,
            d,
            target,
            criterion,
            order,
            max_depth: params.max_depth.unwrap_or(usize::MAX),
            min_split: params.min_samples_split,
            min_leaf: params.min_samples_leaf,
            xlogx,
            idx: vec![0; n * d],
            val: vec![0.0; n * d],
            goes_left: vec![false; n],
        }
    }

    /// Sort every feature's samples by (value, index).
    fn presort(&mut self) {
        let (n, x) = (self.n, self.x);
        let sort_feature = |(f, (ic, vc)): (usize, (&mut [u32], &mut [f64]))| {
            let mut pairs: Vec<(f64, u32)> = x
                .column(f)
                .iter()
                .enumerate()
                .map(|(i, &v)| (v, i as u32))
                .collect();
            pairs.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            for (k, (v, i)) in pairs.into_iter().enumerate() {
                ic[k] = i;
                vc[k] = v;
            }
        };
        if SORT_SCAN_MIN_ELEMS.allows_parallel(n * self.d) {
            self.idx
                .par_chunks_mut(n)
                .zip(self.val.par_chunks_mut(n))
                .enumerate()
                .for_each(sort_feature);
        } else {
            self.idx
                .chunks_mut(n)
                .zip(self.val.chunks_mut(n))
                .enumerate()
                .for_each(sort_feature);
        }
    }

    fn node_stats(&self, s: usize, e: usize) -> NodeStats {
        // Any feature's segment holds the node's samples; feature 0's order is as good as any.
        let members = &self.idx[s..e];
        let n = (e - s) as f64;
        match self.target {
            Target::Classes { codes, n_classes } => {
                let mut counts = vec![0u32; n_classes];
                for &i in members {
                    counts[codes[i as usize] as usize] += 1;
                }
                let impurity = match self.criterion {
                    Criterion::Gini => {
                        1.0 - counts
                            .iter()
                            .map(|&c| (c as f64 / n) * (c as f64 / n))
                            .sum::<f64>()
                    }
                    _ => {
                        // H = ln n - sum(c ln c) / n
                        let sum_clogc: f64 = counts.iter().map(|&c| self.xlogx[c as usize]).sum();
                        ((self.xlogx[e - s] - sum_clogc) / n).max(0.0)
                    }
                };
                let pure = counts.iter().any(|&c| c as usize == e - s);
                NodeStats {
                    counts,
                    sum: 0.0,
                    sum_sq: 0.0,
                    min: 0.0,
                    max: 0.0,
                    mean: 0.0,
                    impurity,
                    pure,
                }
            }
            Target::Values(y) => {
                let sum: f64 = members.iter().map(|&i| y[i as usize]).sum();
                let mean = sum / n;
                let impurity = members
                    .iter()
                    .map(|&i| (y[i as usize] - mean) * (y[i as usize] - mean))
                    .sum::<f64>()
                    / n;
                let (mut sum_sq, mut min, mut max) = (0.0, f64::INFINITY, f64::NEG_INFINITY);
                for &i in members {
                    let v = y[i as usize];
                    sum_sq += v * v;
                    min = min.min(v);
                    max = max.max(v);
                }
                NodeStats {
                    counts: Vec::new(),
                    sum,
                    sum_sq,
                    min,
                    max,
                    mean,
                    impurity,
                    pure: impurity <= f64::EPSILON,
                }
            }
        }
    }

    /// Best split of feature `f` over the node segment `s..e`.
    fn scan_feature(&self, f: usize, s: usize, e: usize, stats: &NodeStats) -> Option<Candidate> {
        let base = f * self.n;
        let vals = &self.val[base + s..base + e];
        let idx = &self.idx[base + s..base + e];
        let n = e - s;
        let min_leaf = self.min_leaf;
        if vals[0] == vals[n - 1] {
            return None; // constant on this node
        }
        let mut best: Option<Candidate> = None;
        // Consider a split after position i (left = 0..=i) when it is legal.
        let mut consider = |i: usize, proxy: f64| match &mut best {
            Some(b) if proxy <= b.proxy => b.runner_up = b.runner_up.max(proxy),
            _ => {
                let runner_up = best.map_or(f64::NEG_INFINITY, |b| b.proxy.max(b.runner_up));
                best = Some(Candidate {
                    proxy,
                    runner_up,
                    n_left: i + 1,
                    threshold: midpoint(vals[i], vals[i + 1]),
                    low: vals[i],
                    high: vals[i + 1],
                });
            }
        };
        let first = min_leaf - 1; // the smallest legal i
        let last = n - min_leaf; // one past the largest legal i
        if first >= last {
            return None;
        }
        match (&self.target, self.criterion) {
            (Target::Classes { codes, .. }, Criterion::Gini) => {
                let mut left = vec![0u64; stats.counts.len()];
                let mut right: Vec<u64> = stats.counts.iter().map(|&c| c as u64).collect();
                let mut sq_l: u64 = 0;
                let mut sq_r: u64 = right.iter().map(|c| c * c).sum();
                for i in 0..last {
                    let c = codes[idx[i] as usize] as usize;
                    sq_l += 2 * left[c] + 1;
                    sq_r -= 2 * right[c] - 1;
                    left[c] += 1;
                    right[c] -= 1;
                    if i >= first && vals[i] < vals[i + 1] {
                        let (nl, nr) = ((i + 1) as f64, (n - i - 1) as f64);
                        consider(i, sq_l as f64 / nl + sq_r as f64 / nr);
                    }
                }
            }
            (Target::Classes { codes, .. }, _) => {
                let xlogx = &self.xlogx;
                let mut left = vec![0usize; stats.counts.len()];
                let mut right: Vec<usize> = stats.counts.iter().map(|&c| c as usize).collect();
                let mut s_l = 0.0;
                let mut s_r: f64 = right.iter().map(|&c| xlogx[c]).sum();
                for i in 0..last {
                    let c = codes[idx[i] as usize] as usize;
                    s_l += xlogx[left[c] + 1] - xlogx[left[c]];
                    s_r -= xlogx[right[c]] - xlogx[right[c] - 1];
                    left[c] += 1;
                    right[c] -= 1;
                    if i >= first && vals[i] < vals[i + 1] {
                        // n * (weighted child entropy) = nl ln nl - s_l + nr ln nr - s_r
                        consider(i, (s_l - xlogx[i + 1]) + (s_r - xlogx[n - i - 1]));
                    }
                }
            }
            (Target::Values(y), _) => {
                let mut sum_l = 0.0;
                for i in 0..last {
                    sum_l += y[idx[i] as usize];
                    if i >= first && vals[i] < vals[i + 1] {
                        let sum_r = stats.sum - sum_l;
                        let (nl, nr) = ((i + 1) as f64, (n - i - 1) as f64);
                        consider(i, sum_l * sum_l / nl + sum_r * sum_r / nr);
                    }
                }
            }
        }
        best
    }

    /// The node's best split as `(feature, candidate)`, or `None` when no legal split exists.
    fn best_split(&self, s: usize, e: usize, stats: &NodeStats) -> Option<(usize, Candidate)> {
        let scan = |f: usize| self.scan_feature(f, s, e, stats);
        let per_feature: Vec<Option<Candidate>> =
            if SORT_SCAN_MIN_ELEMS.allows_parallel((e - s) * self.d) {
                (0..self.d).into_par_iter().map(scan).collect()
            } else {
                (0..self.d).map(scan).collect()
            };
        let ranked = self
            .order
            .iter()
            .filter_map(|&f| per_feature[f].map(|c| (f, c)));
        if self.criterion == Criterion::GainRatio {
            let n = (e - s) as f64;
            let xlogx = &self.xlogx;
            // gain = H(parent) - weighted child entropy; split info = entropy of the (nl, nr) split.
            let scored: Vec<(usize, Candidate, f64, f64)> = ranked
                .map(|(f, c)| {
                    let gain = stats.impurity + c.proxy / n;
                    let split_info = (xlogx[e - s] - xlogx[c.n_left] - xlogx[e - s - c.n_left]) / n;
                    (f, c, gain, gain / split_info)
                })
                .collect();
            if scored.is_empty() {
                return None;
            }
            let average = scored.iter().map(|t| t.2).sum::<f64>() / scored.len() as f64;
            // The tolerance only absorbs rounding: when every gain is equal the computed mean
            // can land an ulp above them all. Gains are at most ln(n_classes) nats, so 1e-12
            // is far below any real difference between two of them.
            let mut best: Option<(usize, Candidate, f64)> = None;
            for (f, c, gain, ratio) in scored {
                if gain >= average - 1e-12 && best.is_none_or(|b| ratio > b.2) {
                    best = Some((f, c, ratio));
                }
            }
            best.map(|(f, mut c, _)| {
                c.runner_up = f64::NAN;
                (f, c)
            })
        } else {
            // The runner-up of the chosen split: the best other split of its feature, or
            // the best split of any other feature.
            let mut others = f64::NEG_INFINITY;
            let best = ranked.fold(
                None,
                |best: Option<(usize, Candidate)>, (f, c)| match best {
                    Some(b) if c.proxy <= b.1.proxy => {
                        others = others.max(c.proxy);
                        Some(b)
                    }
                    _ => {
                        if let Some(b) = best {
                            others = others.max(b.1.proxy);
                        }
                        Some((f, c))
                    }
                },
            );
            best.map(|(f, mut c)| {
                c.runner_up = c.runner_up.max(others);
                (f, c)
            })
        }
    }

    /// Split the segment `s..e` of every feature stably into the first `n_left` samples of
    /// `chosen` (left) and the rest (right).
    fn partition(&mut self, s: usize, e: usize, chosen: usize, n_left: usize) {
        let n = self.n;
        let chosen_seg = &self.idx[chosen * n + s..chosen * n + e];
        for (k, &i) in chosen_seg.iter().enumerate() {
            self.goes_left[i as usize] = k < n_left;
        }
        let goes_left = &self.goes_left;
        let split = |(f, (ic, vc)): (usize, SegmentMut)| {
            if f == chosen {
                return; // already ordered: its first n_left samples are the left child
            }
            RIGHT_SCRATCH.with_borrow_mut(|(si, sv)| {
                si.clear();
                sv.clear();
                let mut w = s;
                for k in s..e {
                    let (i, v) = (ic[k], vc[k]);
                    if goes_left[i as usize] {
                        ic[w] = i;
                        vc[w] = v;
                        w += 1;
                    } else {
                        si.push(i);
                        sv.push(v);
                    }
                }
                ic[w..e].copy_from_slice(si);
                vc[w..e].copy_from_slice(sv);
            });
        };
        if SORT_SCAN_MIN_ELEMS.allows_parallel((e - s) * self.d) {
            self.idx
                .par_chunks_mut(n)
                .zip(self.val.par_chunks_mut(n))
                .enumerate()
                .for_each(split);
        } else {
            self.idx
                .chunks_mut(n)
                .zip(self.val.chunks_mut(n))
                .enumerate()
                .for_each(split);
        }
    }

    fn build(mut self, classes: Option<Array1<f64>>) -> Fitted {
        self.presort();
        let n_outputs = match self.target {
            Target::Classes { n_classes, .. } => n_classes,
            Target::Values(_) => 1,
        };
        let mut nodes = vec![FlatNode::EMPTY];
        // Per node: samples and impurity, for the importances.
        let mut info = vec![(0usize, 0.0f64)];
        let mut values = Vec::new();
        let target_width = match self.target {
            Target::Classes { n_classes, .. } => n_classes,
            Target::Values(_) => 4,
        };
        let mut report = SplitReport {
            nodes: vec![f64::NAN; REPORT_COLUMNS],
            targets: vec![0.0; target_width],
            target_width,
        };
        let (mut depth_max, mut n_leaves, mut depth_sum) = (0usize, 0usize, 0usize);
        let mut stack = vec![(0usize, 0usize, self.n, 0usize)];
        while let Some((id, s, e, depth)) = stack.pop() {
            let stats = self.node_stats(s, e);
            let size = e - s;
            info[id] = (size, stats.impurity);
            let splittable = depth < self.max_depth
                && size >= self.min_split
                && size >= 2 * self.min_leaf
                && !stats.pure;
            let split = if splittable {
                self.best_split(s, e, &stats)
            } else {
                None
            };
            let targets = &mut report.targets[id * target_width..(id + 1) * target_width];
            if stats.counts.is_empty() {
                targets.copy_from_slice(&[stats.sum, stats.sum_sq, stats.min, stats.max]);
            } else {
                for (t, &c) in targets.iter_mut().zip(&stats.counts) {
                    *t = c as f64;
                }
            }
            let row = &mut report.nodes[id * REPORT_COLUMNS..(id + 1) * REPORT_COLUMNS];
            row[..5].copy_from_slice(&[-1.0, f64::NAN, -1.0, size as f64, stats.impurity]);
            if let Some((feature, cand)) = split {
                row[0] = feature as f64;
                row[1] = cand.threshold;
                row[2] = nodes.len() as f64;
                row[5..].copy_from_slice(&[cand.proxy, cand.runner_up, cand.low, cand.high]);
            }
            match split {
                Some((feature, cand)) => {
                    self.partition(s, e, feature, cand.n_left);
                    let left = nodes.len();
                    nodes.extend([FlatNode::EMPTY, FlatNode::EMPTY]);
                    info.extend([(0, 0.0), (0, 0.0)]);
                    report.nodes.extend([f64::NAN; 2 * REPORT_COLUMNS]);
                    report
                        .targets
                        .extend(std::iter::repeat_n(0.0, 2 * target_width));
                    nodes[id] = FlatNode::split(feature, cand.threshold, left);
                    stack.push((left + 1, s + cand.n_left, e, depth + 1));
                    stack.push((left, s, s + cand.n_left, depth + 1));
                }
                None => {
                    let prediction = if let Some(classes) = &classes {
                        // argmax, ties to the lowest class (as NumPy's argmax)
                        let best = stats.counts.iter().enumerate().fold(0, |b, (k, &c)| {
                            if c > stats.counts[b] {
                                k
                            } else {
                                b
                            }
                        });
                        values.extend(stats.counts.iter().map(|&c| c as f64 / size as f64));
                        classes[best]
                    } else {
                        values.push(stats.mean);
                        stats.mean
                    };
                    nodes[id] = FlatNode::leaf(n_leaves as u32, prediction);
                    n_leaves += 1;
                    depth_max = depth_max.max(depth);
                    depth_sum += depth * size;
                }
            }
        }
        let mut importances = Array1::<f64>::zeros(self.d);
        for (node, &(size, impurity)) in nodes.iter().zip(&info) {
            if !node.is_leaf() {
                let (l, r) = (info[node.left as usize], info[node.left as usize + 1]);
                let decrease = size as f64 * impurity - l.0 as f64 * l.1 - r.0 as f64 * r.1;
                importances[node.feature as usize] += decrease.max(0.0);
            }
        }
        let total = importances.sum();
        if total > 0.0 {
            importances /= total;
        }
        Fitted {
            nodes,
            values,
            n_outputs,
            classes,
            n_features: self.d,
            depth: depth_max,
            n_leaves,
            mean_depth: depth_sum as f64 / self.n as f64,
            feature_importances: importances,
            report: Some(report),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::serial_and_parallel;
    use ndarray::{array, Array2};

    fn root(tree: &DecisionTree) -> FlatNode {
        tree.fitted.as_ref().unwrap().nodes[0]
    }

    /// 20 samples, classes 0 (0..10) and 1 (10..20). Binary features:
    /// A splits {8 zeros, 2 ones} | {2 zeros, 8 ones}: gain 0.1927 nats, split info ln 2,
    ///   ratio 0.278, gini decrease 0.18;
    /// B splits {4 zeros} | {6 zeros, 10 ones}: gain 0.1638, split info 0.5004, ratio 0.327,
    ///   gini decrease 0.125;
    /// C splits {5, 5} | {5, 5}: no gain.
    fn criteria_data(with_c: bool) -> (Array2<f64>, Array1<f64>) {
        let a = |i: usize| {
            if (i < 8) || (10..12).contains(&i) {
                0.0
            } else {
                1.0
            }
        };
        let b = |i: usize| if i < 4 { 0.0 } else { 1.0 };
        let c = |i: usize| if i % 10 < 5 { 0.0 } else { 1.0 };
        let d = if with_c { 3 } else { 2 };
        let x = Array2::from_shape_fn((20, d), |(i, j)| [a(i), b(i), c(i)][j]);
        let y = Array1::from_shape_fn(20, |i| if i < 10 { 0.0 } else { 1.0 });
        (x, y)
    }

    #[test]
    fn criteria_pick_the_hand_derived_root_split() {
        let stump = |alg| {
            let (x, y) = criteria_data(true);
            let mut t = DecisionTree::with_defaults(alg, true).set_max_depth(Some(1));
            t.fit(&x, &y).unwrap();
            t
        };
        // CART and ID3 take the largest decrease (A); C4.5 the best ratio among gains at
        // least the average (0.1188 with C): B.
        assert_eq!(root(&stump(Algorithm::CART)).feature, 0);
        assert_eq!(root(&stump(Algorithm::ID3)).feature, 0);
        assert_eq!(root(&stump(Algorithm::C45)).feature, 1);
        assert_eq!(root(&stump(Algorithm::CART)).threshold, 0.5);
        // Without C the average gain (0.178) excludes B: C4.5 falls back to A.
        let (x, y) = criteria_data(false);
        let mut t = DecisionTree::with_defaults(Algorithm::C45, true).set_max_depth(Some(1));
        t.fit(&x, &y).unwrap();
        assert_eq!(root(&t).feature, 0);
        // A stump on A: leaves {8 zeros, 2 ones} and {2 zeros, 8 ones}.
        let cart = stump(Algorithm::CART);
        let p = cart
            .predict_proba(&array![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
            .unwrap();
        assert_eq!(p, array![[0.8, 0.2], [0.2, 0.8]]);
        assert_eq!(cart.feature_importances().unwrap(), &array![1.0, 0.0, 0.0]);
        assert_eq!(
            (cart.depth(), cart.n_leaves(), cart.node_count()),
            (Some(1), Some(2), Some(3))
        );
    }

    #[test]
    fn separable_and_xor_data_are_fitted_exactly() {
        let mut t = DecisionTree::with_defaults(Algorithm::CART, true);
        t.fit(
            &array![[1.0], [2.0], [3.0], [4.0]],
            &array![0.0, 0.0, 1.0, 1.0],
        )
        .unwrap();
        assert_eq!(root(&t).threshold, 2.5);
        assert_eq!(
            t.predict(&array![[2.5], [2.6], [-9.0]]).unwrap(),
            array![0.0, 1.0, 0.0]
        );
        assert_eq!(t.classes().unwrap(), &array![0.0, 1.0]);
        // XOR: the root split gains nothing, yet the tree must go on (as scikit-learn does).
        let x = array![[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]];
        let y = array![5.0, 7.0, 7.0, 5.0];
        for alg in [Algorithm::CART, Algorithm::ID3, Algorithm::C45] {
            let mut t = DecisionTree::with_defaults(alg, true);
            t.fit(&x, &y).unwrap();
            assert_eq!(t.predict(&x).unwrap(), y, "{alg:?}");
            assert_eq!((t.depth(), t.n_leaves()), (Some(2), Some(4)));
            assert_eq!(t.score(&x, &y).unwrap(), 1.0);
        }
    }

    #[test]
    fn regression_tree_splits_on_variance_and_respects_min_samples_leaf() {
        let x = array![[1.0], [2.0], [3.0], [4.0], [5.0], [6.0]];
        let mut t = DecisionTree::with_defaults(Algorithm::CART, false);
        t.fit(&x, &array![1.0, 1.0, 1.0, 5.0, 5.0, 5.0]).unwrap();
        assert_eq!(root(&t).threshold, 3.5);
        assert_eq!(
            t.predict(&array![[0.0], [3.5], [3.6]]).unwrap(),
            array![1.0, 1.0, 5.0]
        );
        assert!(t.predict_proba(&x).is_err());
        assert!(t.classes().is_none());
        // y = 0 0 0 0 10 with two samples per leaf at least: the cut after 2 leaves
        // 0 + 10^2/3 = 33.3 as proxy, after 3 leaves 0 + 10^2/2 = 50, so it cuts at 3.5 and
        // the right leaf {0, 10} (mean 5) is too small to split again.
        let x = array![[1.0], [2.0], [3.0], [4.0], [5.0]];
        let mut t = DecisionTree::with_defaults(Algorithm::CART, false).set_min_samples_leaf(2);
        t.fit(&x, &array![0.0, 0.0, 0.0, 0.0, 10.0]).unwrap();
        assert_eq!(root(&t).threshold, 3.5);
        assert_eq!(t.predict(&x).unwrap(), array![0.0, 0.0, 0.0, 5.0, 5.0]);
        assert_eq!(t.n_leaves(), Some(2));
        // max_depth caps the tree; min_samples_split=6 keeps a 5-sample root whole.
        let mut t = DecisionTree::with_defaults(Algorithm::CART, false).set_min_samples_split(6);
        t.fit(&x, &array![0.0, 1.0, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!((t.depth(), t.n_leaves()), (Some(0), Some(1)));
        assert_eq!(t.predict(&x).unwrap(), Array1::from_elem(5, 2.0));
    }

    #[test]
    fn midpoints_never_fall_on_the_upper_value() {
        let a = 1.0f64;
        let b = f64::from_bits(a.to_bits() + 1);
        assert_eq!(midpoint(a, b), a);
        assert_eq!(
            midpoint(f64::MAX / 2.0 * 1.5, f64::MAX),
            f64::MAX / 2.0 * 1.5 / 2.0 + f64::MAX / 2.0
        );
        assert_eq!(midpoint(-f64::MAX, f64::MAX), 0.0);
        assert_eq!(midpoint(2.0, 3.0), 2.5);
    }

    /// splitmix64 of (i, j, seed) mapped to [0, 1): distinct rows, no pattern a tree could use.
    fn hash01(i: usize, j: usize, seed: usize) -> f64 {
        let mut z = (i as u64) << 32 ^ (j as u64) << 16 ^ seed as u64;
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) as f64 / 2f64.powi(64)
    }

    fn noisy(n: usize, d: usize, seed: usize) -> (Array2<f64>, Array1<f64>, Array1<f64>) {
        let x = Array2::from_shape_fn((n, d), |(i, j)| {
            (hash01(i, j, seed) * 4.0 - 2.0) * (j + 1) as f64
        });
        let score =
            |i: usize| x[[i, 0]] + 0.5 * x[[i, 1]] - x[[i, 2]] * 0.3 + ((i * 13) % 7) as f64 * 0.2;
        let yc = Array1::from_shape_fn(n, |i| (score(i) * 1.3).rem_euclid(3.0).floor());
        let yr = Array1::from_shape_fn(n, |i| score(i) * 2.0 + (i % 5) as f64);
        (x, yc, yr)
    }

    fn tree_bits(t: &DecisionTree) -> Vec<(u32, u64, u32)> {
        t.fitted
            .as_ref()
            .unwrap()
            .nodes
            .iter()
            .map(|n| (n.feature, n.threshold.to_bits(), n.left))
            .collect()
    }

    #[test]
    fn split_search_gate_serial_and_parallel_grow_the_same_tree() {
        let (x, yc, yr) = noisy(700, 9, 1);
        for (alg, classify) in [
            (Algorithm::CART, true),
            (Algorithm::ID3, true),
            (Algorithm::C45, true),
            (Algorithm::CART, false),
        ] {
            let y = if classify { &yc } else { &yr };
            let (s, p) = serial_and_parallel(&SORT_SCAN_MIN_ELEMS, || {
                let mut t = DecisionTree::with_defaults(alg, classify).set_random_state(Some(3));
                t.fit(&x, y).unwrap();
                let importances = t.feature_importances().unwrap().mapv(f64::to_bits);
                (
                    tree_bits(&t),
                    importances,
                    t.predict(&x).unwrap().mapv(f64::to_bits),
                )
            });
            assert_eq!(s, p, "{alg:?} classifier={classify}");
            assert!(s.0.len() > 50, "a tree worth comparing");
        }
    }

    #[test]
    fn traversal_gate_serial_and_parallel_predict_the_same() {
        let (x, yc, _) = noisy(2_000, 6, 2);
        let mut t = DecisionTree::with_defaults(Algorithm::CART, true);
        t.fit(&x, &yc).unwrap();
        let (s, p) = serial_and_parallel(&super::super::tree::TRAVERSAL_MIN_VISITS, || {
            (
                t.predict(&x).unwrap().mapv(f64::to_bits),
                t.predict_proba(&x).unwrap().mapv(f64::to_bits),
            )
        });
        assert_eq!(s, p);
        // grown to purity on distinct points: the training set is memorised
        assert_eq!(t.score(&x, &yc).unwrap(), 1.0);
    }

    #[test]
    fn proba_rows_are_leaf_class_fractions() {
        let (x, yc, _) = noisy(300, 4, 3);
        let mut t = DecisionTree::with_defaults(Algorithm::ID3, true)
            .set_max_depth(Some(3))
            .set_min_samples_leaf(5);
        t.fit(&x, &yc).unwrap();
        let p = t.predict_proba(&x).unwrap();
        let pred = t.predict(&x).unwrap();
        for (row, &label) in p.rows().into_iter().zip(pred.iter()) {
            assert!((row.sum() - 1.0).abs() < 1e-12);
            let argmax = row
                .iter()
                .enumerate()
                .fold(0, |b, (k, &v)| if v > row[b] { k } else { b });
            assert_eq!(t.classes().unwrap()[argmax], label);
        }
        assert!(t.depth().unwrap() <= 3);
        let imp = t.feature_importances().unwrap();
        assert!((imp.sum() - 1.0).abs() < 1e-12 && imp.iter().all(|&v| v >= 0.0));
    }

    #[test]
    fn split_report_holds_counts_and_the_runner_up_of_each_split() {
        // Hand-derived: labels 0,0,1,1 on x0 = 0,1,2,3 (a perfect split after position 1)
        // and x1 = 0,2,1,3 (best split after position 0 or 2: one error either side).
        let x = array![[0.0, 0.0], [1.0, 2.0], [2.0, 1.0], [3.0, 3.0]];
        let y = array![0.0, 0.0, 1.0, 1.0];
        let mut t = DecisionTree::with_defaults(Algorithm::CART, true);
        t.fit(&x, &y).unwrap();
        let (table, targets) = t.split_report().unwrap();
        assert_eq!(table.nrows(), 3);
        let root = table.row(0);
        assert_eq!((root[0], root[1], root[2], root[3]), (0.0, 1.5, 1.0, 4.0));
        // gini score sum(c^2)/n per child: perfect split 4/2 + 4/2 = 4; the runner-up,
        // x1 after position 0 (or x0 after position 0): 1/1 + (1 + 4)/3 = 8/3
        assert_eq!(root[5], 4.0);
        assert!((root[6] - 8.0 / 3.0).abs() < 1e-15);
        assert_eq!((root[7], root[8]), (1.0, 2.0));
        assert_eq!(targets.row(0).to_vec(), vec![2.0, 2.0]);
        assert_eq!(targets.row(1).to_vec(), vec![2.0, 0.0]);
        assert!(table.row(1)[5].is_nan() && table.row(1)[0] == -1.0);
        // two identical columns: the runner-up equals the chosen score (a tie)
        let xx = Array2::from_shape_fn((4, 2), |(i, _)| x[[i, 0]]);
        t.fit(&xx, &y).unwrap();
        let (table, _) = t.split_report().unwrap();
        assert_eq!(table.row(0)[5], table.row(0)[6]);
        // a regressor reports sum, sum of squares, min and max per node
        let mut r = DecisionTree::with_defaults(Algorithm::CART, false);
        r.fit(&x, &array![1.0, 2.0, 3.0, 5.0]).unwrap();
        let (_, targets) = r.split_report().unwrap();
        assert_eq!(targets.row(0).to_vec(), vec![11.0, 39.0, 1.0, 5.0]);
    }

    #[test]
    fn random_state_only_breaks_ties() {
        // Two identical columns: every split ties between them.
        let (x0, yc, _) = noisy(200, 3, 4);
        let x = Array2::from_shape_fn((200, 2), |(i, _)| x0[[i, 0]]);
        let mut natural = DecisionTree::with_defaults(Algorithm::CART, true);
        natural.fit(&x, &yc).unwrap();
        assert_eq!(root(&natural).feature, 0);
        let mut roots = std::collections::BTreeSet::new();
        for seed in 0..16 {
            let mut a =
                DecisionTree::with_defaults(Algorithm::CART, true).set_random_state(Some(seed));
            a.fit(&x, &yc).unwrap();
            let mut b =
                DecisionTree::with_defaults(Algorithm::CART, true).set_random_state(Some(seed));
            b.fit(&x, &yc).unwrap();
            assert_eq!(tree_bits(&a), tree_bits(&b));
            assert_eq!(a.predict(&x).unwrap(), natural.predict(&x).unwrap());
            roots.insert(root(&a).feature);
        }
        assert_eq!(roots.into_iter().collect::<Vec<_>>(), vec![0, 1]);
    }

    #[test]
    fn bad_input_is_refused_before_work() {
        let x = array![[1.0, 2.0], [3.0, 4.0]];
        let y = array![0.0, 1.0];
        assert!(matches!(
            DecisionTree::with_defaults(Algorithm::CART, true).predict(&x),
            Err(Error::NotFitted(_))
        ));
        assert!(DecisionTree::with_defaults(Algorithm::CART, true)
            .set_min_samples_split(1)
            .fit(&x, &y)
            .is_err());
        assert!(DecisionTree::with_defaults(Algorithm::CART, true)
            .set_min_samples_leaf(0)
            .fit(&x, &y)
            .is_err());
        assert!(DecisionTree::with_defaults(Algorithm::CART, true)
            .set_max_depth(Some(0))
            .fit(&x, &y)
            .is_err());
        assert!(DecisionTree::with_defaults(Algorithm::CART, true)
            .fit(&x, &array![0.0])
            .is_err());
        assert!(DecisionTree::with_defaults(Algorithm::CART, true)
            .fit(&array![[1.0, f64::INFINITY]], &array![0.0])
            .is_err());
        assert!(DecisionTree::with_defaults(Algorithm::CART, true)
            .fit(&Array2::<f64>::zeros((0, 2)), &Array1::zeros(0))
            .is_err());
        assert!(DecisionTree::with_defaults(Algorithm::CART, true)
            .fit(&x, &array![0.0, f64::NAN])
            .is_err());
        assert!(Algorithm::parse("c5.0").is_err());
        assert_eq!(Algorithm::parse("C4.5").unwrap(), Algorithm::C45);
        let mut t = DecisionTree::with_defaults(Algorithm::CART, true);
        t.fit(&x, &y).unwrap();
        assert!(t.predict(&array![[1.0, 2.0, 3.0]]).is_err());
        assert!(t.predict(&array![[f64::NAN, 2.0]]).is_err());
    }

    #[test]
    fn save_and_load_round_trip_and_refuse_corrupt_trees() {
        let (x, yc, _) = noisy(150, 4, 5);
        let mut t = DecisionTree::with_defaults(Algorithm::C45, true).set_max_depth(Some(4));
        t.fit(&x, &yc).unwrap();
        let back = DecisionTree::from_bytes(&t.to_bytes().unwrap()).unwrap();
        assert_eq!(
            back.predict_proba(&x).unwrap(),
            t.predict_proba(&x).unwrap()
        );
        assert_eq!(back.algorithm, Algorithm::C45);
        let mut broken = t.clone();
        broken.fitted.as_mut().unwrap().nodes[0].left = 0; // a cycle
        assert!(DecisionTree::from_bytes(&broken.to_bytes().unwrap()).is_err());
    }

    /// Original API: a category-XOR pattern (category 1 is class 1, categories 0 and 2 are
    /// class 0) needs one multi-way split; unseen categories fall back to the node majority.
    #[test]
    fn original_api_categorical_split_and_fallback() {
        let x = array![[0.0], [0.0], [1.0], [1.0], [2.0], [2.0]];
        let y = array![0.0, 0.0, 1.0, 1.0, 0.0, 0.0];
        let mut t = DecisionTree::new(Algorithm::ID3, true).unwrap();
        t.set_categorical_features(vec![0]);
        t.fit(&x, &y).unwrap();
        assert!(t
            .get_root()
            .unwrap()
            .children
            .as_ref()
            .is_some_and(|c| c.len() == 3));
        assert_eq!(t.predict(&x).unwrap(), y);
        assert_eq!(t.predict_one(&[7.0]).unwrap(), 0.0);
        assert!(t
            .generate_tree_structure()
            .unwrap()
            .contains("Decision Tree Structure"));
    }

    /// Hand-derived: y = [0, 0, 10, 10, 100 x4] on x = 1..8. The root split at 4.5 lowers the
    /// variance by 2256.25; the left child {0, 0, 10, 10} (variance 25, pure halves) would
    /// lower it by 25, i.e. 12.5 once weighted by 4/8 < 20, so it stays a leaf (mean 5).
    #[test]
    fn original_api_min_impurity_decrease_is_node_weighted() {
        let x = array![[1.0], [2.0], [3.0], [4.0], [5.0], [6.0], [7.0], [8.0]];
        let y = array![0.0, 0.0, 10.0, 10.0, 100.0, 100.0, 100.0, 100.0];
        let mut t = DecisionTree::new(Algorithm::CART, false)
            .unwrap()
            .with_min_impurity_decrease(20.0)
            .unwrap();
        t.fit(&x, &y).unwrap();
        assert_eq!(
            t.predict(&array![[1.0], [4.0], [8.0]]).unwrap(),
            array![5.0, 5.0, 100.0]
        );
        assert!(matches!(
            t.predict_proba(&x),
            Err(Error::Tree(TreeError::NotClassificationTree))
        ));
        assert!(matches!(
            DecisionTree::new(Algorithm::C45, false),
            Err(Error::InvalidInput(_))
        ));
    }

    /// The leaf {2 of class 0, 1 of class 1} reports exactly [2/3, 1/3].
    #[test]
    fn original_api_probabilities_are_leaf_fractions() {
        let x = array![[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]];
        let y = array![1.0, 1.0, 1.0, 0.0, 0.0, 1.0];
        let mut t = DecisionTree::new(Algorithm::CART, true)
            .unwrap()
            .with_max_depth(1);
        t.fit(&x, &y).unwrap();
        let p = t.predict_proba_one(&[4.0]).unwrap();
        assert!((p[0] - 2.0 / 3.0).abs() < 1e-15 && (p[1] - 1.0 / 3.0).abs() < 1e-15);
        assert!(matches!(
            t.predict_one(&[1.0, 2.0]),
            Err(Error::DimensionMismatch {
                expected: 1,
                found: 2
            })
        ));
    }
}
