//! The estimator: hyper-parameters, the engine options its front door sets, one fit (all
//! checks in [`DecisionTree::check_fit`], before any work) and one prediction path, both over
//! the flat tree. The original API's methods live in `original`, the scikit-learn door's
//! setters here beside the checks that guard them.

use super::builder::{Builder, Growth};
use super::criterion::Criterion;
use super::flat_tree::{FlatTree, REPORT_COLUMNS};
use super::original::Node;
use super::splitter::{SplitSearch, Target};
use super::{Algorithm, DecisionTreeParams};
use crate::error::{Error, Result};
use crate::machine_learning::fitted_state;
use crate::machine_learning::linear_model::require_xy;
use crate::machine_learning::validation::{
    check_n_features, check_xy, encode_classes, require_at_least, require_data_width,
    require_non_negative, require_nonzero,
};
use crate::machine_learning::TreeError;
use crate::persistence::Persist;
use ndarray::{Array1, Array2, ArrayRef1, ArrayRef2, ArrayView1, ArrayView2};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// How class labels become classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LabelPolicy {
    /// Any finite values; the classes are the sorted distinct labels (scikit-learn).
    Sorted,
    /// Non-negative integers used as class indices, `max + 1` classes (the original API).
    Indices,
}

/// Which public API's parameter and input checks, error kinds and tie-break seeding apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Conventions {
    /// RustyML 0.15: `InvalidParameter` / `EmptyInput` / `NonFinite` errors, ties shuffled
    /// by the own or the global seed.
    Original,
    /// scikit-learn's: `InvalidInput` errors, ties shuffled by the own seed only.
    ScikitLearn,
}

/// The engine's options, set by the constructor of each front door.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EngineOptions {
    pub labels: LabelPolicy,
    pub search: SplitSearch,
    pub conventions: Conventions,
}

impl EngineOptions {
    pub(crate) const ORIGINAL: Self = Self {
        labels: LabelPolicy::Indices,
        search: SplitSearch::Decrease,
        conventions: Conventions::Original,
    };
    pub(crate) const SCIKIT_LEARN: Self = Self {
        labels: LabelPolicy::Sorted,
        search: SplitSearch::Proxy,
        conventions: Conventions::ScikitLearn,
    };
}

/// A decision tree classifier or regressor with scikit-learn-like hyper-parameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "SavedTree", into = "SavedTree")]
pub struct DecisionTree {
    pub(crate) algorithm: Algorithm,
    pub(crate) is_classifier: bool,
    /// Deepest level a node may sit at (the root is depth 0); `None` grows until leaves are
    /// pure or too small.
    pub(crate) max_depth: Option<usize>,
    /// A node needs at least this many samples to be split (>= 2).
    pub(crate) min_samples_split: usize,
    /// Each child of a threshold split must keep at least this many samples (>= 1).
    pub(crate) min_samples_leaf: usize,
    /// Seed of the feature order that breaks ties between equally good splits. `None` keeps
    /// the natural order (the lowest feature index wins), so fits are always reproducible.
    pub(crate) random_state: Option<u64>,
    /// See [`DecisionTreeParams::min_impurity_decrease`] ([`SplitSearch::Decrease`] only).
    pub(super) min_impurity_decrease: f64,
    /// Features split multi-way by category (ID3 and C4.5 with [`SplitSearch::Decrease`]).
    pub(super) categorical_features: Vec<usize>,
    pub(super) options: EngineOptions,
    pub(super) fitted: Option<FlatTree>,
    /// The recursive view of the fitted tree, built on first request.
    pub(super) node_view: OnceLock<Node>,
}

/// The saved layout (postcard is positional, so this is the format): the scikit-learn door's
/// trees as their flat arrays, the original API's as their [`Node`] view, as RustyML saved
/// them before the two shared one engine, so files from either era load in both.
#[derive(Serialize, Deserialize)]
struct SavedTree {
    algorithm: Algorithm,
    is_classifier: bool,
    max_depth: Option<usize>,
    min_samples_split: usize,
    min_samples_leaf: usize,
    random_state: Option<u64>,
    min_impurity_decrease: f64,
    categorical_features: Vec<usize>,
    /// The scikit-learn door's options (else the original API's).
    scikit_learn: bool,
    root: Option<Node>,
    n_features_in: usize,
    n_classes: Option<usize>,
    fitted: Option<FlatTree>,
}

impl From<DecisionTree> for SavedTree {
    fn from(t: DecisionTree) -> Self {
        let scikit_learn = t.options == EngineOptions::SCIKIT_LEARN;
        let as_nodes = !scikit_learn || t.fitted.as_ref().is_some_and(|f| !f.multiway.is_empty());
        let (root, n_features_in, n_classes, fitted) = match t.fitted {
            Some(f) if as_nodes => (
                Some(f.to_node(0)),
                f.n_features,
                f.classes.as_ref().map(|c| c.len()),
                None,
            ),
            fitted => (None, 0, None, fitted),
        };
        SavedTree {
            algorithm: t.algorithm,
            is_classifier: t.is_classifier,
            max_depth: t.max_depth,
            min_samples_split: t.min_samples_split,
            min_samples_leaf: t.min_samples_leaf,
            random_state: t.random_state,
            min_impurity_decrease: t.min_impurity_decrease,
            categorical_features: t.categorical_features,
            scikit_learn,
            root,
            n_features_in,
            n_classes,
            fitted,
        }
    }
}

impl TryFrom<SavedTree> for DecisionTree {
    type Error = String;
    fn try_from(s: SavedTree) -> std::result::Result<Self, String> {
        let fitted = match (s.fitted, &s.root) {
            (Some(f), _) => Some(f),
            (None, Some(root)) => Some(FlatTree::from_node(root, s.n_features_in, s.n_classes)?),
            (None, None) => None,
        };
        Ok(DecisionTree {
            algorithm: s.algorithm,
            is_classifier: s.is_classifier,
            max_depth: s.max_depth,
            min_samples_split: s.min_samples_split,
            min_samples_leaf: s.min_samples_leaf,
            random_state: s.random_state,
            min_impurity_decrease: s.min_impurity_decrease,
            categorical_features: s.categorical_features,
            options: if s.scikit_learn {
                EngineOptions::SCIKIT_LEARN
            } else {
                EngineOptions::ORIGINAL
            },
            fitted,
            node_view: OnceLock::new(),
        })
    }
}

impl DecisionTree {
    /// A tree with [`DecisionTreeParams::default`] and the given engine options.
    pub(super) fn with_options(
        algorithm: Algorithm,
        is_classifier: bool,
        options: EngineOptions,
    ) -> Self {
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
            options,
            fitted: None,
            node_view: OnceLock::new(),
        }
    }

    /// The Python layer's tree (scikit-learn's conventions); parameters are checked at `fit`.
    #[doc(hidden)]
    pub fn with_defaults(algorithm: Algorithm, is_classifier: bool) -> Self {
        Self::with_options(algorithm, is_classifier, EngineOptions::SCIKIT_LEARN)
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

    /// Sorted class labels (`classes_`); `None` before fit or for a regressor.
    pub fn classes(&self) -> Option<&Array1<f64>> {
        self.fitted.as_ref().and_then(|f| f.classes.as_ref())
    }

    crate::accessors::fitted_getters! {
        fitted;
        /// Depth of the fitted tree (`get_depth()`: 0 for a single leaf).
        depth -> depth: usize,
        /// Number of leaves (`get_n_leaves()`).
        n_leaves -> n_leaves: usize,
        /// Features seen during fit (`n_features_in_`).
        n_features -> n_features: usize,
        /// Impurity-decrease importances, normalised to sum to 1 (all zero for a single leaf,
        /// or for a tree loaded from its node view, which does not keep the node sizes).
        feature_importances -> &feature_importances: Array1<f64>,
    }

    /// Number of nodes, internal and leaves (`tree_.node_count`).
    pub fn node_count(&self) -> Option<usize> {
        self.fitted.as_ref().map(|f| f.nodes.len())
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

    /// The one check of the tree's hyper-parameters, for every door. A depth of 0 is
    /// scikit-learn's error but the original's single leaf.
    pub fn check_params(&self) -> Result<()> {
        require_at_least("min_samples_split", self.min_samples_split, 2)?;
        require_nonzero("min_samples_leaf", self.min_samples_leaf)?;
        require_non_negative("min_impurity_decrease", self.min_impurity_decrease)?;
        if self.options.conventions == Conventions::ScikitLearn && self.max_depth == Some(0) {
            return Err(Error::invalid_parameter(
                "max_depth",
                "must be at least 1 (or None), got 0",
            ));
        }
        Ok(())
    }

    /// Every check a fit makes, before any work, in the order (and with the error kinds) of
    /// the tree's conventions.
    fn check_fit(&self, x: &ArrayView2<f64>, y: &ArrayView1<f64>) -> Result<()> {
        match self.options.conventions {
            Conventions::ScikitLearn => {
                self.check_params()?;
                check_xy(x, y)?;
            }
            Conventions::Original => {
                require_xy(x, y)?;
                self.check_params()?;
                // a relation of two settings, checked once both are final
                if self.min_samples_leaf > self.min_samples_split {
                    return Err(Error::invalid_parameter(
                        "min_samples_leaf",
                        format!(
                            "({}) must not exceed min_samples_split ({})",
                            self.min_samples_leaf, self.min_samples_split
                        ),
                    ));
                }
                if x.nrows() < self.min_samples_split {
                    return Err(Error::invalid_input(format!(
                        "{} samples are fewer than min_samples_split = {}",
                        x.nrows(),
                        self.min_samples_split
                    )));
                }
            }
        }
        let (n, d) = x.dim();
        if n >= u32::MAX as usize || d >= u32::MAX as usize {
            return Err(Error::invalid_input(format!(
                "DecisionTree supports fewer than 2^32 - 1 samples and features, got {n} x {d}"
            )));
        }
        if self.is_classifier && self.options.labels == LabelPolicy::Indices {
            if let Some(bad) = y
                .iter()
                .find(|&&v| v < 0.0 || v.fract() != 0.0 || v >= u32::MAX as f64)
            {
                return Err(Error::invalid_input(format!(
                    "class labels must be non-negative integers, found {bad}"
                )));
            }
        }
        Ok(())
    }

    /// Features in tie-break priority order: natural, or shuffled by the seed.
    fn feature_order(&self, d: usize) -> Vec<usize> {
        let mut order: Vec<usize> = (0..d).collect();
        match self.options.conventions {
            Conventions::ScikitLearn => {
                if let Some(seed) = self.random_state {
                    order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
                }
            }
            Conventions::Original => {
                if self.random_state.is_some() || crate::random::global_seed_is_set() {
                    order.shuffle(&mut crate::random::rng_from(self.random_state));
                }
            }
        }
        order
    }

    /// Fit to `x` (`n_samples x n_features`) and `y` (class labels for a classifier, targets
    /// for a regressor).
    pub fn fit(&mut self, x: &ArrayRef2<f64>, y: &ArrayRef1<f64>) -> Result<&mut Self> {
        let (x, y) = (x.view(), y.view());
        self.check_fit(&x, &y)?;
        let d = x.ncols();
        let (classes, codes, values);
        let target = match (self.is_classifier, self.options.labels) {
            (true, LabelPolicy::Sorted) => {
                let (c, k) = encode_classes(&y);
                classes = Some(c);
                codes = k;
                Target::Classes {
                    codes: &codes,
                    n_classes: classes.as_ref().map_or(0, |c| c.len()),
                }
            }
            (true, LabelPolicy::Indices) => {
                let k = y.iter().fold(0.0f64, |m, &v| m.max(v)) as usize + 1;
                classes = Some(Array1::from_iter((0..k).map(|c| c as f64)));
                codes = y.iter().map(|&v| v as u32).collect();
                Target::Classes {
                    codes: &codes,
                    n_classes: k,
                }
            }
            (false, _) => {
                classes = None;
                values = y.to_vec();
                Target::Values(&values)
            }
        };
        let mut categorical = vec![false; d];
        if self.options.search == SplitSearch::Decrease && self.algorithm != Algorithm::CART {
            for &f in self.categorical_features.iter().filter(|&&f| f < d) {
                categorical[f] = true;
            }
        }
        let growth = Growth {
            search: self.options.search,
            order: self.feature_order(d),
            categorical,
            max_depth: self.max_depth.unwrap_or(usize::MAX),
            min_split: self.min_samples_split,
            min_leaf: self.min_samples_leaf,
            min_impurity_decrease: self.min_impurity_decrease,
        };
        let fitted = Builder::new(x, target, self.criterion(), growth).build(classes);
        self.fitted = Some(fitted);
        self.node_view = OnceLock::new();
        Ok(self)
    }

    /// The fitted tree, after the prediction input checks of the tree's conventions.
    pub(super) fn fitted_for(&self, x: &ArrayView2<f64>) -> Result<&FlatTree> {
        let fitted = fitted_state(&self.fitted, "DecisionTree")?;
        match self.options.conventions {
            Conventions::ScikitLearn => check_n_features(x, fitted.n_features, "DecisionTree")?,
            Conventions::Original => require_data_width(x, fitted.n_features, "x")?,
        }
        Ok(fitted)
    }

    /// Predicted class labels (classifier) or values (regressor).
    pub fn predict(&self, x: &ArrayRef2<f64>) -> Result<Array1<f64>> {
        let x = x.view();
        let fitted = self.fitted_for(&x)?;
        Ok(fitted
            .leaves(x)
            .into_iter()
            .map(|leaf| leaf.threshold)
            .collect())
    }

    /// Class probabilities (`n_samples x n_classes`, columns in `classes()` order): the class
    /// fractions of the training samples in each leaf. Classifiers only.
    pub fn predict_proba(&self, x: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        if !self.is_classifier {
            return Err(match self.options.conventions {
                Conventions::Original => TreeError::NotClassificationTree.into(),
                Conventions::ScikitLearn => Error::invalid_input(
                    "predict_proba is only available for classifiers (is_classifier=true)",
                ),
            });
        }
        let x = x.view();
        let fitted = self.fitted_for(&x)?;
        let leaves = fitted.leaves(x);
        let mut out = Array2::zeros((x.nrows(), fitted.n_outputs));
        for (mut row, leaf) in out.rows_mut().into_iter().zip(leaves) {
            row.assign(&ArrayView1::from(fitted.leaf_values(leaf)));
        }
        Ok(out)
    }

    /// Mean accuracy (classifier) or R² (regressor) on `x` against `y`.
    pub fn score(&self, x: &ArrayRef2<f64>, y: &ArrayRef1<f64>) -> Result<f64> {
        let pred = self.predict(x)?;
        crate::validation::check_n_samples(pred.len(), y.len())?;
        if self.is_classifier {
            crate::machine_learning::logistic_regression::accuracy(pred.view(), y.view())
        } else {
            crate::metrics::checked::r2_score(y.view(), pred.view())
        }
    }
}

impl Persist for DecisionTree {
    const MODEL_NAME: &'static str = "DecisionTree";
}

crate::machine_learning::linear_model::supervised_traits!(DecisionTree, f64, Array1<f64>);
