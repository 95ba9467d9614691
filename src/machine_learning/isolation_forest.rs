//! Isolation Forest anomaly detection (Liu, Ting and Zhou), with scikit-learn's definitions:
//! `score_samples = -2^(-E[h(x)] / c(max_samples))`, `offset_ = -0.5` for
//! `contamination = "auto"` (else the contamination percentile of the training scores),
//! `decision_function = score_samples - offset_`, `predict` = 1 (inlier) or -1 (outlier).
//!
//! Each tree draws its own seed from the master generator before any tree is built, so trees
//! grown in parallel are identical to trees grown one after another, on any thread count.

use super::tree::{
    average_path_length, find_leaf, map_rows, validate_nodes, FlatNode as Node,
    TRAVERSAL_MIN_VISITS,
};
use crate::error::{Error, Result};
use crate::machine_learning::fitted_state;
use crate::machine_learning::validation::{
    check_features, check_n_features, require_data, require_data_width, require_nonzero,
};
use crate::persistence::Persist;
use ndarray::{Array1, ArrayRef2, ArrayView2};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// Samples drawn (without replacement) to grow each tree.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum MaxSamples {
    /// `min(256, n_samples)`.
    Auto,
    /// This many samples (capped at `n_samples`).
    Count(usize),
    /// This fraction of `n_samples`, in `(0, 1]` (at least one sample).
    Fraction(f64),
}

/// Expected share of outliers, which sets `offset_`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Contamination {
    /// `offset_ = -0.5`, the original paper's threshold.
    Auto,
    /// A share in `(0, 0.5]`: `offset_` is that percentile of the training scores.
    Fraction(f64),
}

/// One fitted isolation tree in the original's recursive form (see
/// [`IsolationForest::get_trees`]).
#[derive(Debug, Clone, Deserialize, Serialize)]
pub enum IsolationTree {
    /// A leaf holding `size` training samples of the tree's subsample.
    Leaf { size: usize },
    /// `x[feature] <= threshold` goes left.
    Internal {
        feature: usize,
        threshold: f64,
        left: Box<IsolationTree>,
        right: Box<IsolationTree>,
    },
}

impl IsolationTree {
    /// The subtree rooted at flat node `id`.
    fn from_flat(nodes: &[Node], id: usize) -> Self {
        let node = &nodes[id];
        if node.is_leaf() {
            IsolationTree::Leaf {
                size: node.left as usize,
            }
        } else {
            let left = node.left as usize;
            IsolationTree::Internal {
                feature: node.feature as usize,
                threshold: node.threshold,
                left: Box::new(Self::from_flat(nodes, left)),
                right: Box::new(Self::from_flat(nodes, left + 1)),
            }
        }
    }
}

/// Isolation Forest with scikit-learn-like hyper-parameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IsolationForest {
    pub n_estimators: usize,
    pub max_samples: MaxSamples,
    pub contamination: Contamination,
    /// Seed of the master generator; `None` uses the global seed stream or entropy.
    pub random_state: Option<u64>,
    /// Depth limit of every tree; `None` is scikit-learn's `ceil(log2(samples per tree))`.
    #[serde(default)]
    pub max_depth: Option<usize>,
    /// Exponent of `-2^(-e)` when the normaliser `c(samples per tree)` is 0 (one sample per
    /// tree, so every depth is 0): scikit-learn takes 1 (score -0.5), the original 0 (-1).
    #[serde(default = "sklearn_zero_exponent")]
    zero_normaliser_exponent: f64,
    fitted: Option<Forest>,
    /// The recursive view of the fitted trees, built on first request.
    #[serde(skip)]
    tree_view: OnceLock<Vec<IsolationTree>>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "ForestUnchecked")]
struct Forest {
    /// Leaf payload: depth + c(samples in the leaf).
    trees: Vec<Vec<Node>>,
    n_features: usize,
    max_samples: usize,
    offset: f64,
    /// Sum over trees of the mean leaf depth of its subsample: visits per scored sample.
    visits_per_sample: f64,
}

#[derive(Deserialize)]
struct ForestUnchecked {
    trees: Vec<Vec<Node>>,
    n_features: usize,
    max_samples: usize,
    offset: f64,
    visits_per_sample: f64,
}

impl TryFrom<ForestUnchecked> for Forest {
    type Error = String;
    fn try_from(f: ForestUnchecked) -> std::result::Result<Self, String> {
        if f.trees.is_empty() || !f.trees.iter().all(|t| validate_nodes(t, f.n_features)) {
            return Err("corrupt IsolationForest: malformed trees".into());
        }
        Ok(Forest {
            trees: f.trees,
            n_features: f.n_features,
            max_samples: f.max_samples,
            offset: f.offset,
            visits_per_sample: f.visits_per_sample,
        })
    }
}

fn sklearn_zero_exponent() -> f64 {
    1.0
}

impl Default for IsolationForest {
    /// The original's defaults: 100 trees of 256 samples, depth 8, contamination auto.
    fn default() -> Self {
        Self::new(100, 256).expect("valid defaults")
    }
}

impl IsolationForest {
    /// `n_estimators` trees, `max_samples = Auto`, `contamination = Auto`; unvalidated
    /// (checked at `fit`).
    pub fn builder(n_estimators: usize) -> Self {
        Self {
            n_estimators,
            max_samples: MaxSamples::Auto,
            contamination: Contamination::Auto,
            random_state: None,
            max_depth: None,
            zero_normaliser_exponent: sklearn_zero_exponent(),
            fitted: None,
            tree_view: OnceLock::new(),
        }
    }

    crate::accessors::builder_setters! {
        with_max_samples(max_samples: MaxSamples),
        with_seed(random_state: Option<u64>),
        with_random_state(random_state: Some(u64)),
    }

    crate::accessors::fitted_getters! {
        fitted;
        /// Threshold subtracted from `score_samples` (`offset_`).
        offset -> offset: f64,
        /// Samples actually drawn per tree (`max_samples_`).
        max_samples_used -> max_samples: usize,
        /// Features seen during fit (`n_features_in_`).
        n_features -> n_features: usize,
    }

    /// Number of fitted trees.
    pub fn n_trees(&self) -> Option<usize> {
        self.fitted.as_ref().map(|f| f.trees.len())
    }

    /// The one check of the forest's hyper-parameters, for every door.
    pub fn check_params(&self) -> Result<()> {
        require_nonzero("n_estimators", self.n_estimators)?;
        match self.max_samples {
            MaxSamples::Count(count) => require_nonzero("max_samples", count)?,
            MaxSamples::Fraction(f) if !(f > 0.0 && f <= 1.0) => {
                return Err(Error::invalid_parameter(
                    "max_samples",
                    format!("must be a count >= 1 or a fraction in (0, 1], got {f}"),
                ))
            }
            _ => {}
        }
        if let Contamination::Fraction(c) = self.contamination {
            if !(c > 0.0 && c <= 0.5) {
                return Err(Error::invalid_parameter(
                    "contamination",
                    format!("must be 'auto' or in (0, 0.5], got {c}"),
                ));
            }
        }
        Ok(())
    }

    /// Grow the forest on `x` (`n_samples x n_features`) with scikit-learn's checks.
    pub fn fit_checked(&mut self, x: &ArrayRef2<f64>) -> Result<&mut Self> {
        let x = x.view();
        self.check_params()?;
        check_features(&x, "X")?;
        if x.ncols() >= u32::MAX as usize {
            return Err(Error::invalid_input(
                "IsolationForest supports fewer than 2^32 - 1 features",
            ));
        }
        let n = x.nrows();
        let max_samples = match self.max_samples {
            MaxSamples::Auto => n.min(256),
            MaxSamples::Count(m) => n.min(m),
            MaxSamples::Fraction(f) => ((f * n as f64) as usize).clamp(1, n),
        };
        let max_depth = self
            .max_depth
            .unwrap_or_else(|| (max_samples.max(2) as f64).log2().ceil() as usize);
        let mut master = crate::random::rng_from(self.random_state);
        let seeds: Vec<u64> = (0..self.n_estimators).map(|_| master.random()).collect();
        let grow = |&seed: &u64| grow_tree(x, max_samples, max_depth, seed);
        let work = self
            .n_estimators
            .saturating_mul(max_samples)
            .saturating_mul(max_depth);
        let grown: Vec<(Vec<Node>, f64)> = if TRAVERSAL_MIN_VISITS.allows_parallel(work) {
            seeds.par_iter().map(grow).collect()
        } else {
            seeds.iter().map(grow).collect()
        };
        let visits_per_sample = grown.iter().map(|t| t.1).sum();
        let trees = grown.into_iter().map(|t| t.0).collect();
        let mut forest = Forest {
            trees,
            n_features: x.ncols(),
            max_samples,
            offset: -0.5,
            visits_per_sample,
        };
        if let Contamination::Fraction(c) = self.contamination {
            let scores = forest.score(x, self.zero_normaliser_exponent);
            forest.offset = percentile(scores.to_vec(), 100.0 * c);
        }
        self.fitted = Some(forest);
        self.tree_view = OnceLock::new();
        Ok(self)
    }

    fn forest_for(&self, x: &ArrayView2<f64>) -> Result<&Forest> {
        let forest = fitted_state(&self.fitted, "IsolationForest")?;
        check_n_features(x, forest.n_features, "IsolationForest")?;
        Ok(forest)
    }

    /// Anomaly score of each sample, the opposite of the paper's: in `[-1, 0)`, lower is
    /// more abnormal.
    pub fn score_samples_checked(&self, x: &ArrayRef2<f64>) -> Result<Array1<f64>> {
        let x = x.view();
        Ok(self.forest_for(&x)?.score(x, self.zero_normaliser_exponent))
    }

    /// `score_samples - offset_`: negative for outliers.
    pub fn decision_function_checked(&self, x: &ArrayRef2<f64>) -> Result<Array1<f64>> {
        let x = x.view();
        let forest = self.forest_for(&x)?;
        Ok(forest.score(x, self.zero_normaliser_exponent) - forest.offset)
    }

    /// 1 for inliers, -1 for outliers (`decision_function < 0`).
    pub fn predict_checked(&self, x: &ArrayRef2<f64>) -> Result<Array1<i32>> {
        Ok(self
            .decision_function_checked(x)?
            .mapv(|v| if v < 0.0 { -1 } else { 1 }))
    }
}

/// The original RustyML API: validated constructor and setters, getters, its error kinds.
impl IsolationForest {
    /// `n_estimators` trees of `max_samples` samples each (both >= 1, else
    /// `InvalidParameter`), depth limit `ceil(log2(max_samples))`, contamination auto.
    pub fn new(n_estimators: usize, max_samples: usize) -> Result<Self> {
        let mut model =
            Self::builder(n_estimators).with_max_samples(MaxSamples::Count(max_samples));
        // the original's depth limit; max_samples 0 is refused below, before it matters
        model.max_depth = Some((max_samples.max(1) as f64).log2().ceil() as usize);
        model.zero_normaliser_exponent = 0.0;
        model.check_params()?;
        Ok(model)
    }

    pub fn with_max_depth(mut self, max_depth: usize) -> Result<Self> {
        // a depth the engine takes (new(_, 1) sets 0), but the original's setter refuses it
        require_nonzero("max_depth", max_depth)?;
        self.max_depth = Some(max_depth);
        Ok(self)
    }

    crate::accessors::checked_setters! {
        /// `Auto` or a share in `(0, 0.5]` (else `InvalidParameter`).
        with_contamination(contamination: Contamination),
    }

    crate::accessors::field_getters! {
        get_n_estimators -> n_estimators: usize,
        get_random_state -> random_state: Option<u64>,
        get_contamination -> contamination: Contamination,
    }

    /// The requested samples per tree (256 when built the scikit-learn way with `Auto`).
    pub fn get_max_samples(&self) -> usize {
        match self.max_samples {
            MaxSamples::Count(m) => m,
            _ => self.max_samples_used().unwrap_or(256),
        }
    }

    /// Samples drawn per tree: `min(max_samples, n_samples)` once fitted.
    pub fn get_sample_size(&self) -> usize {
        self.max_samples_used()
            .unwrap_or_else(|| self.get_max_samples())
    }

    pub fn get_max_depth(&self) -> usize {
        self.max_depth
            .unwrap_or_else(|| (self.get_sample_size().max(2) as f64).log2().ceil() as usize)
    }

    /// Features seen at fit (0 before).
    pub fn get_n_features(&self) -> usize {
        self.n_features().unwrap_or(0)
    }

    pub fn get_offset(&self) -> Option<f64> {
        self.offset()
    }

    /// The fitted trees as recursive [`IsolationTree`]s.
    pub fn get_trees(&self) -> Option<&Vec<IsolationTree>> {
        let forest = self.fitted.as_ref()?;
        Some(self.tree_view.get_or_init(|| {
            forest
                .trees
                .iter()
                .map(|t| IsolationTree::from_flat(t, 0))
                .collect()
        }))
    }

    /// Grow the forest; empty -> `EmptyInput`, NaN/inf -> `NonFinite`.
    pub fn fit(&mut self, x: &ArrayRef2<f64>) -> Result<&mut Self> {
        require_data(&x.view(), "IsolationForest data")?;
        self.fit_checked(x)
    }

    /// The original's input guard for scoring: `NotFitted`, then `EmptyInput`, `NonFinite`,
    /// `DimensionMismatch`.
    fn scoring_forest(&self, x: &ArrayView2<f64>) -> Result<&Forest> {
        let forest = self
            .fitted
            .as_ref()
            .ok_or(Error::NotFitted("IsolationForest"))?;
        require_data_width(x, forest.n_features, "IsolationForest input")?;
        Ok(forest)
    }

    /// Score of one sample (see [`IsolationForest::score_samples`]).
    pub fn score_sample(&self, sample: &[f64]) -> Result<f64> {
        let row = ndarray::ArrayView2::from_shape((1, sample.len()), sample)
            .expect("one row of the slice's length");
        Ok(self.score_samples(&row)?[0])
    }

    /// Anomaly score of each sample in `[-1, 0)`: lower is more abnormal.
    pub fn score_samples(&self, x: &ArrayRef2<f64>) -> Result<Array1<f64>> {
        let x = x.view();
        Ok(self
            .scoring_forest(&x)?
            .score(x, self.zero_normaliser_exponent))
    }

    /// `score_samples - offset`: negative for outliers.
    pub fn decision_function(&self, x: &ArrayRef2<f64>) -> Result<Array1<f64>> {
        let x = x.view();
        let forest = self.scoring_forest(&x)?;
        Ok(forest.score(x, self.zero_normaliser_exponent) - forest.offset)
    }

    /// 1 for inliers, -1 for outliers (decision below zero).
    pub fn predict(&self, x: &ArrayRef2<f64>) -> Result<Array1<i32>> {
        self.scoring_forest(&x.view())?;
        self.predict_checked(x)
    }

    pub fn fit_predict(&mut self, x: &ArrayRef2<f64>) -> Result<Array1<i32>> {
        self.fit(x)?;
        self.predict(x)
    }
}

crate::machine_learning::data_traits!(
    IsolationForest:
    Fit where Send + Sync,
    Predict -> Array1<i32>,
);

impl Forest {
    fn score(&self, x: ArrayView2<f64>, zero_normaliser_exponent: f64) -> Array1<f64> {
        let visits = x
            .nrows()
            .saturating_mul(self.visits_per_sample.ceil().max(1.0) as usize);
        let denominator = self.trees.len() as f64 * average_path_length(self.max_samples);
        let depths = map_rows(x, visits, |row| {
            self.trees
                .iter()
                .map(|t| find_leaf(t, row).threshold)
                .sum::<f64>()
        });
        depths
            .into_iter()
            .map(|h| {
                let exponent = if denominator != 0.0 {
                    h / denominator
                } else {
                    zero_normaliser_exponent
                };
                -(2f64.powf(-exponent))
            })
            .collect()
    }
}

crate::machine_learning::path_persistence!(IsolationForest);

impl Persist for IsolationForest {
    const MODEL_NAME: &'static str = "IsolationForest";
}

/// Grow one isolation tree on `n_sub` samples drawn without replacement with `seed`.
/// Returns the tree and its subsample's mean leaf depth.
fn grow_tree(x: ArrayView2<f64>, n_sub: usize, max_depth: usize, seed: u64) -> (Vec<Node>, f64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut samples = rand::seq::index::sample(&mut rng, x.nrows(), n_sub).into_vec();
    let d = x.ncols();
    let mut features: Vec<usize> = (0..d).collect();
    let mut nodes = vec![Node::EMPTY];
    let mut depth_sum = 0usize;
    let mut stack = vec![(0usize, 0usize, n_sub, 0usize)];
    while let Some((id, s, e, depth)) = stack.pop() {
        let members = &mut samples[s..e];
        let mut split = None;
        if depth < max_depth && members.len() > 1 {
            // Features in random order without replacement until one varies on this node: a
            // uniform draw among the non-constant features.
            for k in 0..d {
                let j = rng.random_range(k..d);
                features.swap(k, j);
                let f = features[k];
                let (lo, hi) =
                    members
                        .iter()
                        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &i| {
                            let v = x[[i, f]];
                            (lo.min(v), hi.max(v))
                        });
                if hi > lo {
                    let u: f64 = rng.random();
                    let mut t = lo + u * (hi - lo);
                    if !t.is_finite() {
                        t = lo * (1.0 - u) + hi * u; // hi - lo overflowed
                    }
                    if !(t >= lo && t < hi) {
                        t = lo; // keeps both sides non-empty, as scikit-learn does at t == hi
                    }
                    split = Some((f, t));
                    break;
                }
            }
        }
        match split {
            None => {
                // The leaf-number slot holds the leaf's sample count (read by `get_trees`).
                nodes[id] = Node::leaf(
                    members.len() as u32,
                    depth as f64 + average_path_length(members.len()),
                );
                depth_sum += depth * members.len();
            }
            Some((f, t)) => {
                // in-place partition: x[i, f] <= t to the front
                let mut m = 0;
                for k in 0..members.len() {
                    if x[[members[k], f]] <= t {
                        members.swap(m, k);
                        m += 1;
                    }
                }
                let left = nodes.len();
                nodes.extend([Node::EMPTY, Node::EMPTY]);
                nodes[id] = Node::split(f, t, left);
                stack.push((left + 1, s + m, e, depth + 1));
                stack.push((left, s, s + m, depth + 1));
            }
        }
    }
    (nodes, depth_sum as f64 / n_sub as f64)
}

/// `q`-th percentile (0..=100) with linear interpolation between order statistics (NumPy's
/// default method).
fn percentile(mut values: Vec<f64>, q: f64) -> f64 {
    values.sort_unstable_by(f64::total_cmp);
    let pos = q / 100.0 * (values.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = (lo + 1).min(values.len() - 1);
    let frac = pos - lo as f64;
    values[lo] + frac * (values[hi] - values[lo])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::serial_and_parallel;
    use ndarray::{array, Array2};

    /// A seeded forest of `n_estimators` trees expecting a `share` of outliers.
    fn forest_with_share(n_estimators: usize, share: f64, seed: u64) -> IsolationForest {
        IsolationForest::builder(n_estimators)
            .with_contamination(Contamination::Fraction(share))
            .unwrap()
            .with_seed(Some(seed))
    }

    /// `n` inliers spread over [-1, 1]^d plus `outliers` points far outside.
    fn cloud(n: usize, outliers: usize, d: usize) -> Array2<f64> {
        Array2::from_shape_fn((n + outliers, d), |(i, j)| {
            if i < n {
                (((i * 7919 + j * 104_729) % 2003) as f64 / 2003.0) * 2.0 - 1.0
            } else {
                8.0 + (i - n) as f64 * (if j % 2 == 0 { 1.0 } else { -1.5 })
            }
        })
    }

    #[test]
    fn hand_derived_scores() {
        // Two distinct points, two per tree: depth limit ceil(log2 2) = 1, every tree isolates
        // both at depth 1, h = 1 + c(1) = 1, c(2) = 1, so every score is -2^-1.
        let mut f = IsolationForest::builder(10).with_seed(Some(0));
        f.fit(&array![[0.0, 1.0], [2.0, 5.0]]).unwrap();
        assert_eq!(
            f.score_samples(&array![[0.0, 1.0], [100.0, -3.0]]).unwrap(),
            array![-0.5, -0.5]
        );
        // Identical points cannot be split: h = 0 + c(3), so the score is -2^-1 again, and
        // with offset -0.5 the decision is 0: inlier.
        let mut f = IsolationForest::builder(5).with_seed(Some(0));
        f.fit(&array![[1.0], [1.0], [1.0]]).unwrap();
        assert_eq!(f.score_samples(&array![[1.0]]).unwrap()[0], -0.5);
        assert_eq!(f.decision_function(&array![[1.0]]).unwrap()[0], 0.0);
        assert_eq!(f.predict(&array![[1.0]]).unwrap()[0], 1);
        assert_eq!(f.offset(), Some(-0.5));
    }

    #[test]
    fn outliers_score_lowest_and_contamination_sets_the_share() {
        let x = cloud(600, 6, 3);
        let mut f = forest_with_share(100, 0.01, 42);
        let labels = f.fit_predict(&x).unwrap();
        let scores = f.score_samples(&x).unwrap();
        assert!(scores.iter().all(|&s| (-1.0..0.0).contains(&s)));
        let worst_inlier = scores
            .slice(ndarray::s![..600])
            .fold(f64::INFINITY, |a, &b| a.min(b));
        assert!(scores
            .slice(ndarray::s![600..])
            .iter()
            .all(|&s| s < worst_inlier));
        // The 1% percentile of 606 scores sits at order statistic 0.01 * 605 = 6.05
        // (0-based), so the seven lowest scores fall below it: the six outliers and the most
        // isolated inlier.
        assert_eq!(labels.iter().filter(|&&l| l == -1).count(), 7);
        assert!(labels.slice(ndarray::s![600..]).iter().all(|&l| l == -1));
        let decision = f.decision_function(&x).unwrap();
        assert_eq!(decision, &scores - f.offset().unwrap());
        // 'auto' (offset -0.5) still flags points this far out. On uniform inliers it also
        // flags the corners: scikit-learn's IsolationForest flags 64 to 83 of these 606
        // points over seeds 0..3, so anything past 20% would be a different model.
        let mut auto = IsolationForest::builder(100).with_seed(Some(42));
        let labels = auto.fit_predict(&x).unwrap();
        assert!(labels.slice(ndarray::s![600..]).iter().all(|&l| l == -1));
        assert!(labels.iter().filter(|&&l| l == -1).count() < 121);
    }

    #[test]
    fn max_samples_follow_scikit_learn() {
        let x = cloud(100, 0, 2);
        let used = |m| {
            let mut f = IsolationForest::builder(3)
                .with_max_samples(m)
                .with_seed(Some(1));
            f.fit(&x).unwrap();
            f.max_samples_used().unwrap()
        };
        assert_eq!(used(MaxSamples::Auto), 100);
        assert_eq!(used(MaxSamples::Count(1000)), 100);
        assert_eq!(used(MaxSamples::Count(30)), 30);
        assert_eq!(used(MaxSamples::Fraction(0.5)), 50);
        assert_eq!(used(MaxSamples::Fraction(0.001)), 1);
    }

    #[test]
    fn seeds_make_forests_reproducible_and_gates_never_change_bits() {
        let x = cloud(3_000, 10, 4);
        let fit = |seed| {
            let mut f = forest_with_share(60, 0.05, seed);
            f.fit(&x).unwrap();
            f
        };
        let a = fit(7);
        let b = fit(7);
        assert_eq!(
            a.fitted.as_ref().unwrap().trees,
            b.fitted.as_ref().unwrap().trees
        );
        assert_ne!(
            a.fitted.as_ref().unwrap().trees,
            fit(8).fitted.as_ref().unwrap().trees
        );
        let (s, p) = serial_and_parallel(&TRAVERSAL_MIN_VISITS, || {
            let f = fit(7);
            let trees: Vec<Vec<(u32, u64, u32)>> = f
                .fitted
                .as_ref()
                .unwrap()
                .trees
                .iter()
                .map(|t| {
                    t.iter()
                        .map(|n| (n.feature, n.threshold.to_bits(), n.left))
                        .collect()
                })
                .collect();
            (
                trees,
                f.offset().unwrap().to_bits(),
                f.score_samples(&x).unwrap().mapv(f64::to_bits),
            )
        });
        assert_eq!(s, p);
        // thread count does not matter either
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let in_pool = pool.install(|| fit(7).score_samples(&x).unwrap());
        assert_eq!(in_pool.mapv(f64::to_bits), s.2);
    }

    #[test]
    fn bad_input_is_refused_before_work() {
        let x = cloud(20, 0, 2);
        assert!(matches!(
            IsolationForest::default().predict(&x),
            Err(Error::NotFitted(_))
        ));
        assert!(IsolationForest::builder(0).fit(&x).is_err());
        assert!(IsolationForest::default()
            .with_max_samples(MaxSamples::Count(0))
            .fit(&x)
            .is_err());
        assert!(IsolationForest::default()
            .with_max_samples(MaxSamples::Fraction(1.5))
            .fit(&x)
            .is_err());
        for c in [0.6, 0.0] {
            // Refused at fit on the scikit-learn path, at the setter on the original's.
            let mut f = IsolationForest::builder(10);
            f.contamination = Contamination::Fraction(c);
            assert!(f.fit_checked(&x).is_err());
            assert!(matches!(
                IsolationForest::default().with_contamination(Contamination::Fraction(c)),
                Err(Error::InvalidParameter { .. })
            ));
        }
        assert!(IsolationForest::default()
            .fit(&Array2::<f64>::zeros((0, 3)))
            .is_err());
        assert!(IsolationForest::default()
            .fit(&array![[1.0, f64::NAN]])
            .is_err());
        let mut f = IsolationForest::builder(5).with_seed(Some(0));
        f.fit(&x).unwrap();
        assert!(f.score_samples(&array![[1.0]]).is_err());
        assert!(f.decision_function(&array![[f64::INFINITY, 1.0]]).is_err());
    }

    #[test]
    fn save_and_load_round_trip() {
        let x = cloud(200, 2, 3);
        let mut f = forest_with_share(20, 0.1, 5);
        f.fit(&x).unwrap();
        let back = IsolationForest::from_bytes(&f.to_bytes().unwrap()).unwrap();
        assert_eq!(
            back.score_samples(&x).unwrap(),
            f.score_samples(&x).unwrap()
        );
        assert_eq!(back.offset(), f.offset());
    }

    #[test]
    fn original_api_depth_trees_and_error_kinds() {
        // max_depth = ceil(log2(max_samples)).
        assert_eq!(IsolationForest::new(3, 100).unwrap().get_max_depth(), 7);
        assert_eq!(IsolationForest::new(3, 1).unwrap().get_max_depth(), 0);
        assert!(matches!(
            IsolationForest::new(3, 8).unwrap().with_max_depth(0),
            Err(Error::InvalidParameter { .. })
        ));
        let x = cloud(30, 0, 2);
        let mut f = IsolationForest::new(4, 16).unwrap().with_random_state(9);
        f.fit(&x).unwrap();
        // Every tree's leaves partition its 16-sample subsample.
        fn leaf_total(t: &IsolationTree) -> usize {
            match t {
                IsolationTree::Leaf { size } => *size,
                IsolationTree::Internal { left, right, .. } => leaf_total(left) + leaf_total(right),
            }
        }
        let trees = f.get_trees().unwrap();
        assert_eq!(trees.len(), 4);
        assert!(trees.iter().all(|t| leaf_total(t) == 16));
        assert_eq!(f.get_sample_size(), 16);
        let one = f.score_sample(&[0.1, 0.2]).unwrap();
        assert_eq!(one, f.score_samples(&array![[0.1, 0.2]]).unwrap()[0]);
        assert!(matches!(
            f.score_sample(&[0.1, 0.2, 0.3]),
            Err(Error::DimensionMismatch {
                expected: 2,
                found: 3
            })
        ));
        assert!(matches!(
            f.predict(&Array2::<f64>::zeros((0, 2))),
            Err(Error::EmptyInput(_))
        ));
        // One training row: every depth and the normaliser c(1) are 0, so the score is
        // -2^0 = -1 in the original's convention and -2^-1 in scikit-learn's.
        let one_row = array![[3.0, 4.0]];
        let mut orig = IsolationForest::new(3, 10).unwrap().with_random_state(1);
        orig.fit(&one_row).unwrap();
        assert_eq!(orig.score_samples(&one_row).unwrap()[0], -1.0);
        let mut sk = IsolationForest::builder(3).with_seed(Some(1));
        sk.fit_checked(&one_row).unwrap();
        assert_eq!(sk.score_samples_checked(&one_row).unwrap()[0], -0.5);
    }
}
