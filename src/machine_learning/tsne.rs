//! t-distributed stochastic neighbour embedding, following scikit-learn's `TSNE`.
//!
//! * Affinities: per point, a binary search for the Gaussian precision that matches the
//!   perplexity (100 steps, entropy tolerance 1e-5), over all other points (`exact`) or over
//!   the `min(n - 1, floor(3 * perplexity + 1))` nearest neighbours (`barnes_hut`), found by
//!   the crate's k-nearest engine ([`crate::math::k_nearest`]: row-chunks of `X Xᵀ`, exact
//!   where the product form cancels). `P = (P_cond + P_condᵀ) / sum`.
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

use crate::error::{Result, RustymlError};
use crate::machine_learning::pca::{NComponents, PCA};
use crate::machine_learning::validation::{check_features, require_data, require_positive};
use crate::math::distance::{Metric, SCAN_F64};
use crate::math::k_nearest::{KNearest, Queries};
use crate::math::reduction;
use crate::persistence::Persist;
use ndarray::{Array1, Array2, ArrayBase, ArrayView1, ArrayView2, Data, Ix2};
use rand::Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Iterations with early exaggeration (scikit-learn's `_EXPLORATION_MAX_ITER`).
const EXPLORATION_ITER: usize = 250;
/// Progress is checked every this many iterations (scikit-learn's `_N_ITER_CHECK`).
const ITER_CHECK: usize = 50;
const MACHINE_EPSILON: f64 = f64::EPSILON;
/// Floor of the Barnes-Hut KL terms (scikit-learn's `FLOAT32_TINY`).
const FLOAT32_TINY: f64 = f32::MIN_POSITIVE as f64;
const PERPLEXITY_TOLERANCE: f64 = 1e-5;
const BINARY_SEARCH_STEPS: usize = 100;
const MAX_TREE_DEPTH: usize = 64;

/// Gradient algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TsneMethod {
    /// O(n log n) Barnes-Hut approximation on nearest-neighbour affinities (`n_components <= 3`).
    BarnesHut,
    /// O(n²) exact gradient on all pairs.
    Exact,
}

impl TsneMethod {
    /// `"barnes_hut"` or `"exact"`.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "barnes_hut" => Ok(Self::BarnesHut),
            "exact" => Ok(Self::Exact),
            other => Err(RustymlError::invalid(format!(
                "unknown method {other:?}; expected 'barnes_hut' or 'exact'"
            ))),
        }
    }
}

/// Initial embedding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TsneInit {
    /// First principal components, scaled to a first-column standard deviation of 1e-4.
    Pca,
    /// Gaussian noise with standard deviation 1e-4.
    Random,
}

impl TsneInit {
    /// `"pca"` or `"random"`.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "pca" => Ok(Self::Pca),
            "random" => Ok(Self::Random),
            other => Err(RustymlError::invalid(format!(
                "unknown init {other:?}; expected 'pca' or 'random'"
            ))),
        }
    }
}

/// Gradient-descent step size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum LearningRate {
    /// `max(n_samples / early_exaggeration / 4, 50)`.
    Auto,
    Fixed(f64),
}

/// t-SNE embedding (`fit_transform`, `embedding_`, `kl_divergence_`, `n_iter_`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TSNE {
    pub n_components: usize,
    pub perplexity: f64,
    pub early_exaggeration: f64,
    pub learning_rate: LearningRate,
    /// Total iterations, at least 250 (the exaggeration phase).
    pub max_iter: usize,
    /// Stop after this many iterations without a lower KL divergence (checked every 50).
    pub n_iter_without_progress: usize,
    /// Stop when the gradient norm falls to this.
    pub min_grad_norm: f64,
    pub method: TsneMethod,
    pub init: TsneInit,
    /// Barnes-Hut opening angle (theta), in `[0, 1]`.
    pub angle: f64,
    pub random_state: Option<u64>,
    /// The original's schedule: fewer than 250 iterations allowed (the exaggeration phase is
    /// cut short) and the final embedding centered on its column means.
    #[serde(default)]
    original_schedule: bool,
    embedding: Option<Array2<f64>>,
    kl_divergence: f64,
    n_iter: usize,
    learning_rate_used: f64,
}

impl Default for TSNE {
    /// The original's defaults: `new(2, 30.0, 200.0, 1000)`.
    fn default() -> Self {
        Self::new(2, 30.0, 200.0, 1000).expect("valid defaults")
    }
}

impl TSNE {
    /// scikit-learn's defaults: perplexity 30, early exaggeration 12, automatic learning rate,
    /// 1000 iterations, Barnes-Hut with angle 0.5, PCA initialisation.
    /// Unvalidated (checked at `fit`).
    pub fn builder(n_components: usize) -> Self {
        Self {
            n_components,
            perplexity: 30.0,
            early_exaggeration: 12.0,
            learning_rate: LearningRate::Auto,
            max_iter: 1000,
            n_iter_without_progress: 300,
            min_grad_norm: 1e-7,
            method: TsneMethod::BarnesHut,
            init: TsneInit::Pca,
            angle: 0.5,
            random_state: None,
            original_schedule: false,
            embedding: None,
            kl_divergence: f64::NAN,
            n_iter: 0,
            learning_rate_used: f64::NAN,
        }
    }

    pub fn with_perplexity(mut self, perplexity: f64) -> Self {
        self.perplexity = perplexity;
        self
    }

    pub fn with_early_exaggeration(mut self, early_exaggeration: f64) -> Self {
        self.early_exaggeration = early_exaggeration;
        self
    }

    pub fn with_learning_rate(mut self, learning_rate: LearningRate) -> Self {
        self.learning_rate = learning_rate;
        self
    }

    pub fn with_max_iter(mut self, max_iter: usize) -> Self {
        self.max_iter = max_iter;
        self
    }

    pub fn with_n_iter_without_progress(mut self, n: usize) -> Self {
        self.n_iter_without_progress = n;
        self
    }

    pub fn with_min_grad_norm(mut self, min_grad_norm: f64) -> Self {
        self.min_grad_norm = min_grad_norm;
        self
    }

    pub fn with_tsne_method(mut self, method: TsneMethod) -> Self {
        self.method = method;
        self
    }

    pub fn with_tsne_init(mut self, init: TsneInit) -> Self {
        self.init = init;
        self
    }

    pub fn with_angle(mut self, angle: f64) -> Self {
        self.angle = angle;
        self
    }

    pub fn with_seed(mut self, random_state: Option<u64>) -> Self {
        self.random_state = random_state;
        self
    }

    /// The embedding of the training data (`embedding_`).
    pub fn embedding(&self) -> Option<&Array2<f64>> {
        self.embedding.as_ref()
    }

    /// KL divergence after optimisation (`kl_divergence_`).
    pub fn kl_divergence(&self) -> Option<f64> {
        self.embedding.as_ref().map(|_| self.kl_divergence)
    }

    /// Index of the last iteration run (`n_iter_`, as scikit-learn counts it).
    pub fn n_iter(&self) -> Option<usize> {
        self.embedding.as_ref().map(|_| self.n_iter)
    }

    /// The learning rate actually used (`learning_rate_`).
    pub fn learning_rate_used(&self) -> Option<f64> {
        self.embedding.as_ref().map(|_| self.learning_rate_used)
    }

    fn check_params(&self, n: usize, d: usize) -> Result<()> {
        if n < 2 {
            return Err(RustymlError::invalid(format!(
                "t-SNE needs at least 2 samples, got n_samples = {n}"
            )));
        }
        if self.n_components == 0 {
            return Err(RustymlError::invalid("n_components must be at least 1"));
        }
        if self.method == TsneMethod::BarnesHut && self.n_components > 3 {
            return Err(RustymlError::invalid(format!(
                "n_components={} is too large for method='barnes_hut' (at most 3: it relies on a quadtree or octree); use method='exact'",
                self.n_components
            )));
        }
        if !(self.perplexity.is_finite() && self.perplexity > 0.0) {
            return Err(RustymlError::invalid(format!(
                "perplexity must be a finite number > 0, got {}",
                self.perplexity
            )));
        }
        if self.perplexity >= n as f64 {
            return Err(RustymlError::invalid(format!(
                "perplexity ({}) must be less than n_samples ({n})",
                self.perplexity
            )));
        }
        if !(self.early_exaggeration.is_finite() && self.early_exaggeration >= 1.0) {
            return Err(RustymlError::invalid(format!(
                "early_exaggeration must be a finite number >= 1, got {}",
                self.early_exaggeration
            )));
        }
        if let LearningRate::Fixed(lr) = self.learning_rate {
            if !(lr.is_finite() && lr > 0.0) {
                return Err(RustymlError::invalid(format!(
                    "learning_rate must be 'auto' or a finite number > 0, got {lr}"
                )));
            }
        }
        if self.max_iter < EXPLORATION_ITER && !self.original_schedule {
            return Err(RustymlError::invalid(format!(
                "max_iter must be at least {EXPLORATION_ITER} (the early-exaggeration phase), got {}",
                self.max_iter
            )));
        }
        if !(self.angle.is_finite() && (0.0..=1.0).contains(&self.angle)) {
            return Err(RustymlError::invalid(format!(
                "angle must lie in [0, 1], got {}",
                self.angle
            )));
        }
        if !(self.min_grad_norm.is_finite() && self.min_grad_norm >= 0.0) {
            return Err(RustymlError::invalid(format!(
                "min_grad_norm must be a finite number >= 0, got {}",
                self.min_grad_norm
            )));
        }
        if self.n_iter_without_progress == 0 {
            return Err(RustymlError::invalid(
                "n_iter_without_progress must be at least 1",
            ));
        }
        if self.init == TsneInit::Pca && self.n_components > n.min(d) {
            return Err(RustymlError::invalid(format!(
                "init='pca' needs n_components ({}) <= min(n_samples, n_features), got n_samples = {n} \
                 and n_features = {d}; use init='random'",
                self.n_components
            )));
        }
        Ok(())
    }

    /// Fit the embedding of `x`.
    pub fn fit<S: Data<Elem = f64>>(&mut self, x: &ArrayBase<S, Ix2>) -> Result<&mut Self> {
        self.fit_transform_checked(x)?;
        Ok(self)
    }

    /// Fit and return the embedding (`n_samples x n_components`), scikit-learn's checks.
    pub fn fit_transform_checked<S: Data<Elem = f64>>(
        &mut self,
        x: &ArrayBase<S, Ix2>,
    ) -> Result<Array2<f64>> {
        let x = x.view();
        check_features(&x, "X")?;
        Metric::Euclidean.check_range(&x, "X")?;
        let (n, d) = x.dim();
        self.check_params(n, d)?;
        let learning_rate = match self.learning_rate {
            LearningRate::Auto => (n as f64 / self.early_exaggeration / 4.0).max(50.0),
            LearningRate::Fixed(lr) => lr,
        };
        let mut affinities = match self.method {
            TsneMethod::Exact => Affinities::Dense(joint_probabilities_exact(x, self.perplexity)?),
            TsneMethod::BarnesHut => {
                let k = (n - 1).min((3.0 * self.perplexity + 1.0) as usize);
                Affinities::Sparse(joint_probabilities_knn(x, self.perplexity, k)?)
            }
        };
        let init = self.initial_embedding(x)?;
        let objective = Objective { angle: self.angle };

        affinities.scale(self.early_exaggeration);
        let mut state = Descent::new(init);
        let explore = Schedule {
            start: 0,
            max_iter: EXPLORATION_ITER.min(self.max_iter),
            momentum: 0.5,
            learning_rate,
            n_iter_without_progress: EXPLORATION_ITER,
            min_grad_norm: self.min_grad_norm,
        };
        let (mut error, mut last) = state.run(&objective, &affinities, &explore);
        affinities.scale(1.0 / self.early_exaggeration);
        if self.max_iter > EXPLORATION_ITER {
            let main = Schedule {
                start: last + 1,
                max_iter: self.max_iter,
                momentum: 0.8,
                n_iter_without_progress: self.n_iter_without_progress,
                ..explore
            };
            (error, last) = state.run(&objective, &affinities, &main);
        }
        if !state.y.iter().all(|v| v.is_finite())
            || Metric::Euclidean
                .check_range(&state.y.view(), "embedding")
                .is_err()
        {
            // Finite data and parameters, yet the steps overflowed (or reached values whose
            // squared distances do: the Student-t affinities are then meaningless): the step
            // size or the exaggerated attraction is too large for f64.
            return Err(RustymlError::invalid(format!(
                "TSNE: the gradient descent overflowed (non-finite or overflowing embedding); \
                 learning_rate ({learning_rate:e}) or early_exaggeration ({:e}) is too large",
                self.early_exaggeration
            )));
        }
        if self.original_schedule {
            // The embedding is only defined up to a translation; the original returns it
            // centered.
            let mean = state.y.mean_axis(ndarray::Axis(0)).expect("n >= 2");
            state.y -= &mean;
        }

        self.kl_divergence = error;
        self.n_iter = last;
        self.learning_rate_used = learning_rate;
        self.embedding = Some(state.y.clone());
        Ok(state.y)
    }

    fn initial_embedding(&self, x: ArrayView2<f64>) -> Result<Array2<f64>> {
        let (n, c) = (x.nrows(), self.n_components);
        match self.init {
            TsneInit::Pca => {
                let mut y = PCA::builder(NComponents::Count(c)).fit_transform_checked(&x)?;
                let std = reduction::moments(y.column(0)).variance().sqrt();
                if !(std.is_finite() && std > 0.0) {
                    return Err(RustymlError::invalid(
                        "init='pca' failed: the data have no variance along the first principal component (constant X?); use init='random'",
                    ));
                }
                y.mapv_inplace(|v| v / std * 1e-4);
                Ok(y)
            }
            TsneInit::Random => {
                let mut rng = crate::random::rng_from(self.random_state);
                let mut values = Vec::with_capacity(n * c);
                while values.len() < n * c {
                    let (a, b) = standard_normal_pair(&mut rng);
                    values.push(a);
                    values.push(b);
                }
                values.truncate(n * c);
                Ok(Array2::from_shape_vec((n, c), values)
                    .expect("length n * c")
                    .mapv(|v| v * 1e-4))
            }
        }
    }
}

/// Two independent standard normal draws (Box-Muller).
fn standard_normal_pair(rng: &mut impl Rng) -> (f64, f64) {
    // 1 - U lies in (0, 1], so the log is finite.
    let u1: f64 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random::<f64>();
    let r = (-2.0 * u1.ln()).sqrt();
    let t = std::f64::consts::TAU * u2;
    (r * t.cos(), r * t.sin())
}

impl Persist for TSNE {
    const MODEL_NAME: &'static str = "TSNE";
}

/// The original's initial embedding choice.
#[allow(clippy::upper_case_acronyms)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Init {
    #[default]
    PCA,
    Random,
}

/// The original's gradient method.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum TSNEMethod {
    /// Barnes-Hut with opening angle `angle` in `[0, 1)`.
    BarnesHut {
        angle: f64,
    },
    Exact,
}

impl Default for TSNEMethod {
    fn default() -> Self {
        TSNEMethod::BarnesHut { angle: 0.5 }
    }
}

/// The original RustyML API: validated constructor and setters, getters, and `fit_transform`
/// on `&self` (the model keeps no embedding).
impl TSNE {
    /// `n_components` and `n_iter` >= 1, `perplexity` and `learning_rate` finite and > 0 (else
    /// `InvalidParameter`); PCA initialisation, early exaggeration 12, Barnes-Hut (angle 0.5)
    /// up to 3 components and exact above.
    pub fn new(
        n_components: usize,
        perplexity: f64,
        learning_rate: f64,
        n_iter: usize,
    ) -> Result<Self> {
        crate::machine_learning::validation::require_nonzero("n_components", n_components)?;
        crate::machine_learning::validation::require_nonzero("n_iter", n_iter)?;
        require_positive("perplexity", perplexity)?;
        require_positive("learning_rate", learning_rate)?;
        let mut model = Self::builder(n_components)
            .with_perplexity(perplexity)
            .with_learning_rate(LearningRate::Fixed(learning_rate))
            .with_max_iter(n_iter);
        if n_components > 3 {
            model.method = TsneMethod::Exact;
        }
        model.original_schedule = true;
        Ok(model)
    }

    pub fn with_random_state(mut self, seed: u64) -> Self {
        self.random_state = Some(seed);
        self
    }

    pub fn with_init(mut self, init: Init) -> Self {
        self.init = match init {
            Init::PCA => TsneInit::Pca,
            Init::Random => TsneInit::Random,
        };
        self
    }

    /// Barnes-Hut needs `angle` in `[0, 1)` and at most 3 components (else
    /// `InvalidParameter`).
    pub fn with_method(mut self, method: TSNEMethod) -> Result<Self> {
        match method {
            TSNEMethod::BarnesHut { angle } => {
                if !(angle.is_finite() && (0.0..1.0).contains(&angle)) {
                    return Err(RustymlError::invalid_parameter(
                        "angle",
                        format!("must lie in [0, 1), got {angle}"),
                    ));
                }
                if self.n_components > 3 {
                    return Err(RustymlError::invalid_parameter(
                        "method",
                        format!(
                            "Barnes-Hut supports at most 3 components, got {}",
                            self.n_components
                        ),
                    ));
                }
                self.method = TsneMethod::BarnesHut;
                self.angle = angle;
            }
            TSNEMethod::Exact => self.method = TsneMethod::Exact,
        }
        Ok(self)
    }

    pub fn get_n_components(&self) -> usize {
        self.n_components
    }

    pub fn get_perplexity(&self) -> f64 {
        self.perplexity
    }

    /// The fixed learning rate (`NaN` for scikit-learn's `Auto`, resolved only at fit).
    pub fn get_learning_rate(&self) -> f64 {
        match self.learning_rate {
            LearningRate::Fixed(lr) => lr,
            LearningRate::Auto => f64::NAN,
        }
    }

    pub fn get_n_iter(&self) -> usize {
        self.max_iter
    }

    pub fn get_random_state(&self) -> Option<u64> {
        self.random_state
    }

    pub fn get_init(&self) -> Init {
        match self.init {
            TsneInit::Pca => Init::PCA,
            TsneInit::Random => Init::Random,
        }
    }

    pub fn get_method(&self) -> TSNEMethod {
        match self.method {
            TsneMethod::BarnesHut => TSNEMethod::BarnesHut { angle: self.angle },
            TsneMethod::Exact => TSNEMethod::Exact,
        }
    }

    pub fn get_min_grad_norm(&self) -> f64 {
        self.min_grad_norm
    }

    /// Embed `x`; empty -> `EmptyInput`, NaN/inf -> `NonFinite`, fewer than 2 samples ->
    /// `InvalidInput`, `perplexity >= n_samples` -> `InvalidParameter`.
    pub fn fit_transform<S: Data<Elem = f64>>(&self, x: &ArrayBase<S, Ix2>) -> Result<Array2<f64>> {
        require_data(&x.view(), "TSNE data")?;
        Metric::Euclidean.check_range(&x.view(), "TSNE data")?;
        let n = x.nrows();
        if n < 2 {
            return Err(RustymlError::invalid_input(format!(
                "t-SNE needs at least 2 samples, got n_samples = {n}"
            )));
        }
        if self.perplexity >= n as f64 {
            return Err(RustymlError::invalid_parameter(
                "perplexity",
                format!("{} must be less than n_samples ({n})", self.perplexity),
            ));
        }
        // The fitted state of this run is dropped with the copy.
        let mut run = self.clone();
        run.embedding = None;
        run.fit_transform_checked(x)
    }
}

impl<'a, S: Data<Elem = f64>> crate::traits::FitTransform<&'a ArrayBase<S, Ix2>> for TSNE {
    type Output = Array2<f64>;
    fn fit_transform(&mut self, x: &'a ArrayBase<S, Ix2>) -> Result<Array2<f64>> {
        TSNE::fit_transform(self, x)
    }
}

// ---------------------------------------------------------------------------------------------
// Affinities

/// Symmetric joint probabilities: dense (`exact`) or CSR over nearest neighbours (`barnes_hut`).
#[derive(Debug, Clone)]
pub(crate) enum Affinities {
    Dense(Array2<f64>),
    Sparse(SparseP),
}

impl Affinities {
    fn scale(&mut self, factor: f64) {
        match self {
            Affinities::Dense(p) => p.mapv_inplace(|v| v * factor),
            Affinities::Sparse(p) => p.values.iter_mut().for_each(|v| *v *= factor),
        }
    }
}

/// Compressed sparse rows of a symmetric `n x n` matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct SparseP {
    /// Row `i` holds `indices[indptr[i]..indptr[i + 1]]` (ascending) and the matching values.
    pub indptr: Vec<usize>,
    pub indices: Vec<usize>,
    pub values: Vec<f64>,
}

impl SparseP {
    /// Column indices and values of row `i`.
    pub fn row(&self, i: usize) -> (&[usize], &[f64]) {
        let r = self.indptr[i]..self.indptr[i + 1];
        (&self.indices[r.clone()], &self.values[r])
    }
}

/// Cost of one distance in one binary search, in [`SCAN_F64`] units (one cheap scanned
/// element, ~1.6 ns in the calibration's manhattan scan): every pass of the search takes an
/// `exp` of each distance and a search runs tens of passes; measured serially at ~150-280 ns
/// per distance (`cargo bench --bench parallel_gates -- t-SNE`).
pub const BINARY_SEARCH_COST: usize = 128;

/// Cost of one Barnes-Hut cell visit or one attractive-force term, in [`SCAN_F64`] units: a
/// distance, a division and a few multiply-adds; measured serially at ~2-10 ns per estimated
/// visit.
pub const TREE_VISIT_COST: usize = 4;

/// [`SCAN_F64`] work of the binary searches of `n` points over `m` distances each.
pub fn binary_search_work(n: usize, m: usize) -> usize {
    n.saturating_mul(m).saturating_mul(BINARY_SEARCH_COST)
}

/// [`SCAN_F64`] work of one Barnes-Hut gradient: `nnz` attractive terms plus, per point, about
/// `8 log2(n)` cells per child slot (`2^c`) visited for the repulsive forces.
pub fn barnes_hut_work(n: usize, nnz: usize, c: usize) -> usize {
    let visits = 8 * (usize::BITS - n.leading_zeros()) as usize * (1usize << c.min(3));
    nnz.saturating_add(n.saturating_mul(visits))
        .saturating_mul(TREE_VISIT_COST)
}

/// [`SCAN_F64`] work of one pass of the exact gradient: `n²` pairs of `c` coordinates plus the
/// Student-t weight (a division, about two scan elements).
pub fn exact_work(n: usize, c: usize) -> usize {
    n.saturating_mul(n).saturating_mul(c + 2)
}

/// Run `f(i)` for every point, in parallel when `work` reaches [`SCAN_F64`]. Each point is
/// computed by the same serial code on either path, so results are identical.
fn per_point<T: Send>(n: usize, work: usize, f: impl Fn(usize) -> T + Sync + Send) -> Vec<T> {
    if SCAN_F64.allows_parallel(work) {
        (0..n).into_par_iter().map(f).collect()
    } else {
        (0..n).map(f).collect()
    }
}

/// Conditional probabilities `p_{j|i}` over the squared distances `dist` of point `i` (entry
/// `skip`, the point itself, gets 0) whose perplexity matches `perplexity`: scikit-learn's
/// `_binary_search_perplexity`.
pub fn conditional_probabilities(dist: &[f64], skip: Option<usize>, perplexity: f64) -> Vec<f64> {
    let desired_entropy = perplexity.ln();
    let mut p = vec![0.0; dist.len()];
    let (mut beta, mut beta_min, mut beta_max) = (1.0f64, f64::NEG_INFINITY, f64::INFINITY);
    for _ in 0..BINARY_SEARCH_STEPS {
        let mut sum_p = 0.0;
        for (j, (pj, &dj)) in p.iter_mut().zip(dist).enumerate() {
            if Some(j) != skip {
                *pj = (-dj * beta).exp();
                sum_p += *pj;
            }
        }
        if sum_p == 0.0 {
            sum_p = 1e-8;
        }
        let mut sum_dist_p = 0.0;
        for (pj, &dj) in p.iter_mut().zip(dist) {
            *pj /= sum_p;
            sum_dist_p += dj * *pj;
        }
        let entropy = sum_p.ln() + beta * sum_dist_p;
        let diff = entropy - desired_entropy;
        if diff.abs() <= PERPLEXITY_TOLERANCE {
            break;
        }
        if diff > 0.0 {
            beta_min = beta;
            beta = if beta_max == f64::INFINITY {
                beta * 2.0
            } else {
                (beta + beta_max) / 2.0
            };
        } else {
            beta_max = beta;
            beta = if beta_min == f64::NEG_INFINITY {
                beta / 2.0
            } else {
                (beta + beta_min) / 2.0
            };
        }
    }
    p
}

/// Dense symmetric `P` over all pairs (method `exact`): `max((P_cond + P_condᵀ) / sum, eps)`
/// off the diagonal, 0 on it.
pub fn joint_probabilities_exact(x: ArrayView2<f64>, perplexity: f64) -> Result<Array2<f64>> {
    let n = x.nrows();
    let dist = crate::math::distance::pairwise_squared_euclidean(x, x)?;
    let rows = per_point(n, binary_search_work(n, n), |i| {
        let row = dist.row(i);
        let owned;
        let slice = match row.as_slice() {
            Some(s) => s,
            None => {
                owned = row.to_vec();
                &owned
            }
        };
        conditional_probabilities(slice, Some(i), perplexity)
    });
    let mut cond = Array2::<f64>::zeros((n, n));
    for (i, r) in rows.into_iter().enumerate() {
        cond.row_mut(i).assign(&Array1::from(r));
    }
    let mut p = &cond + &cond.t();
    let total = reduction::sum(ArrayView1::from(
        p.as_slice().expect("fresh array is contiguous"),
    ))
    .max(MACHINE_EPSILON);
    for ((i, j), v) in p.indexed_iter_mut() {
        *v = if i == j {
            0.0
        } else {
            (*v / total).max(MACHINE_EPSILON)
        };
    }
    Ok(p)
}

/// The `k` nearest neighbours of every row of `x` among the others (squared euclidean,
/// ascending, ties by index; row-major `n x k` indices and squared distances), from the
/// crate's k-nearest engine ([`k_nearest`](crate::math::k_nearest)): row-chunks of `x xᵀ`
/// through [`tiled_product_capped`](crate::math::matmul::tiled_product_capped), exact where the product form cancels.
pub fn nearest_neighbours(x: ArrayView2<f64>, k: usize) -> Result<(Vec<usize>, Vec<f64>)> {
    if k == 0 {
        return Ok((Vec::new(), Vec::new()));
    }
    let (distances, indices) = KNearest::new(x, Metric::SquaredEuclidean).search(
        Queries::Reference {
            include_self: false,
        },
        k,
    )?;
    Ok((
        indices.into_iter().collect(),
        distances.into_iter().collect(),
    ))
}

/// Conditional probabilities of `n = rows.len() / k` points, each over its `k` neighbour
/// distances (row-major `n x k`), one binary search per point ([`conditional_probabilities`]),
/// in parallel behind [`SCAN_F64`].
pub fn conditional_probabilities_rows(rows: &[f64], k: usize, perplexity: f64) -> Vec<f64> {
    if k == 0 {
        return Vec::new();
    }
    let n = rows.len() / k;
    per_point(n, binary_search_work(n, k), |i| {
        conditional_probabilities(&rows[i * k..(i + 1) * k], None, perplexity)
    })
    .concat()
}

/// Sparse symmetric `P` over the `k` nearest neighbours (method `barnes_hut`):
/// `(P_cond + P_condᵀ) / sum`.
pub fn joint_probabilities_knn(x: ArrayView2<f64>, perplexity: f64, k: usize) -> Result<SparseP> {
    let n = x.nrows();
    let (neighbours, distances) = nearest_neighbours(x, k)?;
    let cond = conditional_probabilities_rows(&distances, k, perplexity);
    let cond: Vec<&[f64]> = cond.chunks(k.max(1)).collect();
    // Symmetrise: row i holds p_{j|i} at its neighbours and p_{i|j} where i is j's neighbour.
    let mut rows: Vec<Vec<(usize, f64)>> = (0..n).map(|_| Vec::with_capacity(2 * k)).collect();
    for (i, &probs) in cond.iter().enumerate() {
        for (&j, &p) in neighbours[i * k..(i + 1) * k].iter().zip(probs) {
            rows[i].push((j, p));
            rows[j].push((i, p));
        }
    }
    let mut indptr = Vec::with_capacity(n + 1);
    let mut indices = Vec::new();
    let mut values = Vec::new();
    indptr.push(0);
    for mut row in rows {
        row.sort_by_key(|e| e.0);
        for (j, p) in row {
            if indices.len() > *indptr.last().expect("starts at 0") && indices.last() == Some(&j) {
                // The same pair seen from both ends: p_{j|i} + p_{i|j} (two terms, so the sum
                // does not depend on their order).
                *values.last_mut().expect("non-empty") += p;
            } else {
                indices.push(j);
                values.push(p);
            }
        }
        indptr.push(indices.len());
    }
    let total = reduction::sum(ArrayView1::from(&values[..])).max(MACHINE_EPSILON);
    values.iter_mut().for_each(|v| *v /= total);
    Ok(SparseP {
        indptr,
        indices,
        values,
    })
}

// ---------------------------------------------------------------------------------------------
// Space-partitioning tree (quadtree in 2-D, octree in 3-D, binary in 1-D)

#[derive(Debug, Clone)]
struct Cell {
    center_of_mass: [f64; 3],
    count: usize,
    squared_max_width: f64,
    /// Children occupy `nodes[first_child..first_child + n_children]`; none for a leaf.
    first_child: usize,
    n_children: usize,
    /// Leaf points are `order[start..end]`.
    start: usize,
    end: usize,
}

/// A 2^d-ary tree over the rows of `y` (`d <= 3`): cells split at their centre until they
/// hold one point, only identical points, or reach [`MAX_TREE_DEPTH`].
pub(crate) struct SpaceTree {
    cells: Vec<Cell>,
    order: Vec<usize>,
    /// The points, padded to three coordinates (contiguous, for the hot loops).
    pts: Vec<[f64; 3]>,
    dim: usize,
}

/// Upper bound of the traversal stack: at most 7 siblings wait per level below the root.
const TRAVERSAL_STACK: usize = 7 * MAX_TREE_DEPTH + 8;

impl SpaceTree {
    pub(crate) fn build(y: ArrayView2<f64>) -> Self {
        let (n, dim) = y.dim();
        assert!(
            (1..=3).contains(&dim),
            "space tree supports 1 to 3 dimensions"
        );
        let pts: Vec<[f64; 3]> = y
            .outer_iter()
            .map(|row| {
                let mut p = [0.0f64; 3];
                for (dst, &src) in p.iter_mut().zip(row.iter()) {
                    *dst = src;
                }
                p
            })
            .collect();
        let mut lo = [0.0f64; 3];
        let mut hi = [0.0f64; 3];
        for ax in 0..dim {
            lo[ax] = pts.iter().map(|p| p[ax]).fold(f64::INFINITY, f64::min);
            hi[ax] = pts.iter().map(|p| p[ax]).fold(f64::NEG_INFINITY, f64::max);
        }
        let mut tree = SpaceTree {
            cells: Vec::with_capacity(2 * n),
            order: (0..n).collect(),
            pts,
            dim,
        };
        let mut scratch = vec![0usize; n];
        tree.cells.push(tree.make_cell(0, n));
        // (cell index, bounds, depth)
        let mut stack = vec![(0usize, lo, hi, 0usize)];
        while let Some((cell, lo, hi, depth)) = stack.pop() {
            let (start, end) = (tree.cells[cell].start, tree.cells[cell].end);
            if end - start <= 1 || depth >= MAX_TREE_DEPTH || tree.all_identical(start, end) {
                continue;
            }
            let mut mid = [0.0f64; 3];
            for ax in 0..dim {
                mid[ax] = lo[ax] + (hi[ax] - lo[ax]) * 0.5;
            }
            let pts = &tree.pts;
            let orthant = |p: usize| -> usize {
                (0..dim).fold(0, |o, ax| {
                    if pts[p][ax] >= mid[ax] {
                        o | (1 << ax)
                    } else {
                        o
                    }
                })
            };
            // Stable counting partition of order[start..end] by orthant.
            let mut counts = [0usize; 8];
            for &p in &tree.order[start..end] {
                counts[orthant(p)] += 1;
            }
            let mut offsets = [0usize; 8];
            let mut acc = start;
            for o in 0..(1 << dim) {
                offsets[o] = acc;
                acc += counts[o];
            }
            let mut cursor = offsets;
            for &p in &tree.order[start..end] {
                let o = orthant(p);
                scratch[cursor[o]] = p;
                cursor[o] += 1;
            }
            tree.order[start..end].copy_from_slice(&scratch[start..end]);
            let first = tree.cells.len();
            let mut children = 0;
            for o in 0..(1 << dim) {
                if counts[o] == 0 {
                    continue;
                }
                let (mut clo, mut chi) = (lo, hi);
                for ax in 0..dim {
                    if o & (1 << ax) != 0 {
                        clo[ax] = mid[ax];
                    } else {
                        chi[ax] = mid[ax];
                    }
                }
                let child = tree.make_cell(offsets[o], offsets[o] + counts[o]);
                let width2 = (0..dim)
                    .map(|ax| (chi[ax] - clo[ax]).powi(2))
                    .fold(0.0, f64::max);
                tree.cells.push(Cell {
                    squared_max_width: width2,
                    ..child
                });
                stack.push((first + children, clo, chi, depth + 1));
                children += 1;
            }
            tree.cells[cell].first_child = first;
            tree.cells[cell].n_children = children;
        }
        let root_width = (0..dim)
            .map(|ax| (hi[ax] - lo[ax]).powi(2))
            .fold(0.0, f64::max);
        tree.cells[0].squared_max_width = root_width;
        tree
    }

    fn make_cell(&self, start: usize, end: usize) -> Cell {
        let mut com = [0.0f64; 3];
        for &p in &self.order[start..end] {
            for (ax, c) in com.iter_mut().enumerate().take(self.dim) {
                *c += self.pts[p][ax];
            }
        }
        let count = end - start;
        for c in com.iter_mut().take(self.dim) {
            *c /= count as f64;
        }
        Cell {
            center_of_mass: com,
            count,
            squared_max_width: 0.0,
            first_child: 0,
            n_children: 0,
            start,
            end,
        }
    }

    fn all_identical(&self, start: usize, end: usize) -> bool {
        let first = self.pts[self.order[start]];
        self.order[start + 1..end]
            .iter()
            .all(|&p| self.pts[p] == first)
    }

    /// Repulsive-force terms on point `i` at `yi`: `(sum over others of w², weighted by the
    /// offset)` into `neg`, and the sum of `w` (its share of the normaliser `Z`).
    fn repulsion(&self, i: usize, kernel: &StudentT, theta2: f64, neg: &mut [f64; 3]) -> f64 {
        let yi = &self.pts[i];
        let mut sum_q = 0.0;
        let mut stack = [0usize; TRAVERSAL_STACK];
        let mut top = 1; // stack[0] = root
        while top > 0 {
            top -= 1;
            let cell = &self.cells[stack[top]];
            if cell.n_children == 0 {
                for &p in &self.order[cell.start..cell.end] {
                    if p == i {
                        continue;
                    }
                    let mut delta = [0.0f64; 3];
                    let mut d2 = 0.0;
                    for ax in 0..self.dim {
                        delta[ax] = yi[ax] - self.pts[p][ax];
                        d2 += delta[ax] * delta[ax];
                    }
                    let q = kernel.weight(d2);
                    sum_q += q;
                    for ax in 0..self.dim {
                        neg[ax] += q * q * delta[ax];
                    }
                }
                continue;
            }
            let mut delta = [0.0f64; 3];
            let mut d2 = 0.0;
            for ax in 0..self.dim {
                delta[ax] = yi[ax] - cell.center_of_mass[ax];
                d2 += delta[ax] * delta[ax];
            }
            if d2 > 0.0 && cell.squared_max_width / d2 < theta2 {
                let size = cell.count as f64;
                let q = kernel.weight(d2);
                sum_q += size * q;
                for ax in 0..self.dim {
                    neg[ax] += size * q * q * delta[ax];
                }
            } else {
                // Children pushed in reverse so they are visited in orthant order.
                for child in (cell.first_child..cell.first_child + cell.n_children).rev() {
                    stack[top] = child;
                    top += 1;
                }
            }
        }
        sum_q
    }
}

// ---------------------------------------------------------------------------------------------
// Objective and optimiser

/// Student-t weights `w(d²) = (dof / (dof + d²))^((dof + 1) / 2)`, `dof = max(n_components - 1, 1)`.
struct StudentT {
    dof: f64,
    exponent: f64,
}

impl StudentT {
    fn new(n_components: usize) -> Self {
        let dof = (n_components.saturating_sub(1)).max(1) as f64;
        Self {
            dof,
            exponent: (dof + 1.0) / 2.0,
        }
    }

    #[inline]
    fn weight(&self, d2: f64) -> f64 {
        let q = self.dof / (self.dof + d2);
        if self.dof == 1.0 {
            q
        } else {
            q.powf(self.exponent)
        }
    }

    /// Gradient factor `2 (dof + 1) / dof`.
    fn scale(&self) -> f64 {
        2.0 * (self.dof + 1.0) / self.dof
    }
}

struct Objective {
    angle: f64,
}

impl Objective {
    /// KL divergence (when `with_error`) and its gradient at `y`.
    fn evaluate(&self, p: &Affinities, y: ArrayView2<f64>, with_error: bool) -> (f64, Array2<f64>) {
        match p {
            Affinities::Dense(p) => exact_gradient(p.view(), y, with_error),
            Affinities::Sparse(p) => barnes_hut_gradient(p, y, self.angle, with_error),
        }
    }
}

#[inline]
fn squared_distance(y: ArrayView2<f64>, i: usize, j: usize) -> f64 {
    let (a, b) = (y.row(i), y.row(j));
    a.iter()
        .zip(b.iter())
        .fold(0.0, |s, (&u, &v)| s + (u - v) * (u - v))
}

/// Exact KL divergence and gradient over all pairs (scikit-learn's `_kl_divergence`).
pub fn exact_gradient(
    p: ArrayView2<f64>,
    y: ArrayView2<f64>,
    with_error: bool,
) -> (f64, Array2<f64>) {
    let (n, c) = y.dim();
    let kernel = StudentT::new(c);
    let work = exact_work(n, c);
    // Pass 1: the Student-t weights and the normaliser Z = sum over i != j.
    let weights: Vec<(Vec<f64>, f64)> = per_point(n, work, |i| {
        let row: Vec<f64> = (0..n)
            .map(|j| {
                if i == j {
                    0.0
                } else {
                    kernel.weight(squared_distance(y, i, j))
                }
            })
            .collect();
        let s = row.iter().sum::<f64>();
        (row, s)
    });
    let row_sums = Array1::from_iter(weights.iter().map(|w| w.1));
    let z = reduction::sum(row_sums.view());
    // Pass 2: gradient rows and KL terms.
    let factor = kernel.scale();
    let rows: Vec<(Vec<f64>, f64)> = per_point(n, work, |i| {
        let w = &weights[i].0;
        let mut g = vec![0.0; c];
        let mut kl = 0.0;
        for j in 0..n {
            if i == j {
                continue;
            }
            let q = (w[j] / z).max(MACHINE_EPSILON);
            let pij = p[[i, j]];
            let coeff = (pij - q) * w[j];
            for (ax, g) in g.iter_mut().enumerate() {
                *g += coeff * (y[[i, ax]] - y[[j, ax]]);
            }
            if with_error {
                kl += pij * (pij.max(MACHINE_EPSILON) / q).ln();
            }
        }
        g.iter_mut().for_each(|v| *v *= factor);
        (g, kl)
    });
    collect_gradient(rows, n, c, with_error)
}

fn collect_gradient(
    rows: Vec<(Vec<f64>, f64)>,
    n: usize,
    c: usize,
    with_error: bool,
) -> (f64, Array2<f64>) {
    let mut grad = Array2::<f64>::zeros((n, c));
    let mut terms = Array1::<f64>::zeros(n);
    for (i, (g, kl)) in rows.into_iter().enumerate() {
        grad.row_mut(i).assign(&Array1::from(g));
        terms[i] = kl;
    }
    let error = if with_error {
        reduction::sum(terms.view())
    } else {
        f64::NAN
    };
    (error, grad)
}

/// Barnes-Hut KL divergence and gradient (scikit-learn's `_kl_divergence_bh`): attractive
/// forces over the sparse `P`, repulsive forces from the space tree.
pub fn barnes_hut_gradient(
    p: &SparseP,
    y: ArrayView2<f64>,
    angle: f64,
    with_error: bool,
) -> (f64, Array2<f64>) {
    let (n, c) = y.dim();
    let kernel = StudentT::new(c);
    let tree = SpaceTree::build(y);
    let pts = &tree.pts;
    let theta2 = angle * angle;
    let work = barnes_hut_work(n, p.values.len(), c);
    let forces: Vec<([f64; 3], [f64; 3], f64)> = per_point(n, work, |i| {
        let yi = &pts[i];
        let mut neg = [0.0f64; 3];
        let sum_q = tree.repulsion(i, &kernel, theta2, &mut neg);
        let mut pos = [0.0f64; 3];
        let (cols, vals) = p.row(i);
        for (&j, &pij) in cols.iter().zip(vals) {
            let mut delta = [0.0f64; 3];
            let mut d2 = 0.0;
            for ax in 0..c {
                delta[ax] = yi[ax] - pts[j][ax];
                d2 += delta[ax] * delta[ax];
            }
            let coeff = pij * kernel.weight(d2);
            for ax in 0..c {
                pos[ax] += coeff * delta[ax];
            }
        }
        (pos, neg, sum_q)
    });
    let sums = Array1::from_iter(forces.iter().map(|f| f.2));
    let z = reduction::sum(sums.view());
    let factor = kernel.scale();
    let mut grad = Array2::<f64>::zeros((n, c));
    for (i, (pos, neg, _)) in forces.iter().enumerate() {
        for ax in 0..c {
            grad[[i, ax]] = factor * (pos[ax] - neg[ax] / z);
        }
    }
    let error = if with_error {
        let terms = per_point(n, p.values.len() * TREE_VISIT_COST, |i| {
            let (cols, vals) = p.row(i);
            cols.iter().zip(vals).fold(0.0, |acc, (&j, &pij)| {
                let q = kernel.weight(squared_distance(y, i, j)) / z;
                acc + pij * (pij.max(FLOAT32_TINY) / q.max(FLOAT32_TINY)).ln()
            })
        });
        reduction::sum(ArrayView1::from(&terms[..]))
    } else {
        f64::NAN
    };
    (error, grad)
}

struct Schedule {
    start: usize,
    max_iter: usize,
    momentum: f64,
    learning_rate: f64,
    n_iter_without_progress: usize,
    min_grad_norm: f64,
}

/// Gradient descent with momentum and per-parameter gains (scikit-learn's
/// `_gradient_descent`).
struct Descent {
    y: Array2<f64>,
    update: Array2<f64>,
    gains: Array2<f64>,
}

impl Descent {
    fn new(y: Array2<f64>) -> Self {
        let shape = y.raw_dim();
        Self {
            y,
            update: Array2::zeros(shape),
            gains: Array2::ones(shape),
        }
    }

    /// Run iterations `schedule.start..schedule.max_iter`; returns the last KL divergence
    /// computed and the index of the last iteration run.
    fn run(&mut self, objective: &Objective, p: &Affinities, schedule: &Schedule) -> (f64, usize) {
        // scikit-learn restarts `update` and `gains` with each call.
        self.update.fill(0.0);
        self.gains.fill(1.0);
        let mut error = f64::MAX;
        let mut best_error = f64::MAX;
        let mut best_iter = schedule.start;
        let mut last = schedule.start;
        for i in schedule.start..schedule.max_iter {
            last = i;
            let check = (i + 1) % ITER_CHECK == 0;
            let (err, mut grad) =
                objective.evaluate(p, self.y.view(), check || i == schedule.max_iter - 1);
            error = err;
            ndarray::Zip::from(&mut self.gains)
                .and(&self.update)
                .and(&grad)
                .for_each(|g, &u, &d| {
                    *g = if u * d < 0.0 { *g + 0.2 } else { *g * 0.8 };
                    *g = g.max(0.01);
                });
            grad *= &self.gains;
            ndarray::Zip::from(&mut self.update)
                .and(&grad)
                .for_each(|u, &d| {
                    *u = schedule.momentum * *u - schedule.learning_rate * d;
                });
            self.y += &self.update;
            if check {
                let grad_norm =
                    reduction::sq_sum(ArrayView1::from(grad.as_slice().expect("contiguous")))
                        .sqrt();
                if error < best_error {
                    best_error = error;
                    best_iter = i;
                } else if i - best_iter > schedule.n_iter_without_progress {
                    break;
                }
                if grad_norm <= schedule.min_grad_norm {
                    break;
                }
            }
        }
        (error, last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::serial_and_parallel;
    use crate::math::matmul;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// `groups` tight clusters of `per` points in `d` dimensions (deterministic jitter).
    fn blobs(groups: usize, per: usize, d: usize) -> (Array2<f64>, Vec<usize>) {
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

    fn entropy(p: &[f64]) -> f64 {
        -p.iter()
            .filter(|&&v| v > 0.0)
            .map(|&v| v * v.ln())
            .sum::<f64>()
    }

    #[test]
    fn binary_search_hits_the_perplexity() {
        let dist: Vec<f64> = (0..40)
            .map(|j| (j as f64 * 0.37).sin().abs() * 5.0 + j as f64 * 0.1)
            .collect();
        for perplexity in [2.0, 5.0, 15.0] {
            let p = conditional_probabilities(&dist, Some(3), perplexity);
            assert_eq!(p[3], 0.0);
            assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            // Oracle: perplexity = exp(Shannon entropy in nats); the search stops within 1e-5
            // of the target entropy.
            assert!(
                (entropy(&p) - perplexity.ln()).abs() <= 1e-5 + 1e-12,
                "perplexity {perplexity}"
            );
        }
    }

    #[test]
    fn nearest_neighbours_match_a_brute_force_scan_under_both_tilings() {
        let (x, _) = blobs(3, 20, 4);
        let n = x.nrows();
        let k = 7;
        let _lock = crate::gate::GATE_TEST_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        for (chunk, resident) in [(usize::MAX, usize::MAX), (4 * n, usize::MAX), (4 * n, 0)] {
            let (idx, d2) = crate::gate::with_gate(&matmul::CHUNK_ELEMS, chunk, || {
                crate::gate::with_gate(&matmul::CACHE_RESIDENT_MAX_BYTES, resident, || {
                    nearest_neighbours(x.view(), k).unwrap()
                })
            });
            for i in 0..n {
                let mut brute: Vec<(f64, usize)> = (0..n)
                    .filter(|&j| j != i)
                    .map(|j| (squared_distance(x.view(), i, j), j))
                    .collect();
                brute.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                for r in 0..k {
                    assert_eq!(idx[i * k + r], brute[r].1, "row {i} rank {r}");
                    assert!((d2[i * k + r] - brute[r].0).abs() < 1e-10 * brute[r].0.max(1.0));
                }
            }
        }
    }

    #[test]
    fn joint_probabilities_are_symmetric_and_normalised() {
        let (x, _) = blobs(2, 15, 3);
        let p = joint_probabilities_exact(x.view(), 5.0).unwrap();
        assert!((p.sum() - 1.0).abs() < 1e-9);
        for i in 0..30 {
            assert_eq!(p[[i, i]], 0.0);
            for j in 0..30 {
                assert_eq!(p[[i, j]], p[[j, i]]);
            }
        }
        let s = joint_probabilities_knn(x.view(), 5.0, 16).unwrap();
        assert!((s.values.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        let mut dense = Array2::<f64>::zeros((30, 30));
        for i in 0..30 {
            let (cols, vals) = s.row(i);
            assert!(cols.windows(2).all(|w| w[0] < w[1]));
            for (&j, &v) in cols.iter().zip(vals) {
                dense[[i, j]] = v;
            }
        }
        assert_eq!(dense, dense.t());
    }

    /// The KL divergence of a dense P at y, written out directly (test oracle).
    fn kl(p: &Array2<f64>, y: &Array2<f64>) -> f64 {
        let n = y.nrows();
        let mut z = 0.0;
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    z += 1.0 / (1.0 + squared_distance(y.view(), i, j));
                }
            }
        }
        let mut total = 0.0;
        for i in 0..n {
            for j in 0..n {
                if i != j && p[[i, j]] > 0.0 {
                    let q = 1.0 / (1.0 + squared_distance(y.view(), i, j)) / z;
                    total += p[[i, j]] * (p[[i, j]] / q).ln();
                }
            }
        }
        total
    }

    #[test]
    fn exact_gradient_matches_finite_differences_of_the_kl_divergence() {
        let (x, _) = blobs(2, 6, 3);
        let p = joint_probabilities_exact(x.view(), 3.0).unwrap();
        let y = Array2::from_shape_fn((12, 2), |(i, j)| ((i * 2 + j) as f64 * 1.1).sin());
        let (error, grad) = exact_gradient(p.view(), y.view(), true);
        assert!((error - kl(&p, &y)).abs() < 1e-12);
        let h = 1e-6;
        for i in 0..12 {
            for ax in 0..2 {
                let mut a = y.clone();
                a[[i, ax]] += h;
                let mut b = y.clone();
                b[[i, ax]] -= h;
                let numeric = (kl(&p, &a) - kl(&p, &b)) / (2.0 * h);
                // Central differences: truncation O(h²) plus rounding ~1e-16 / h.
                assert!(
                    (grad[[i, ax]] - numeric).abs() < 1e-7,
                    "{i},{ax}: {} vs {numeric}",
                    grad[[i, ax]]
                );
            }
        }
    }

    #[test]
    fn barnes_hut_with_zero_angle_is_the_exact_gradient() {
        let (x, _) = blobs(3, 10, 3);
        let sparse = joint_probabilities_knn(x.view(), 4.0, 13).unwrap();
        let mut dense = Array2::<f64>::zeros((30, 30));
        for i in 0..30 {
            let (cols, vals) = sparse.row(i);
            for (&j, &v) in cols.iter().zip(vals) {
                dense[[i, j]] = v;
            }
        }
        for c in [1usize, 2, 3] {
            let y =
                Array2::from_shape_fn((30, c), |(i, j)| ((i * 3 + j) as f64 * 0.77).cos() * 2.0);
            let (e_bh, g_bh) = barnes_hut_gradient(&sparse, y.view(), 0.0, true);
            let (_, g_exact) = exact_gradient_without_floor(&dense, &y);
            for (a, b) in g_bh.iter().zip(g_exact.iter()) {
                assert!((a - b).abs() < 1e-12 * (1.0 + b.abs()), "c={c}: {a} vs {b}");
            }
            if c == 2 {
                assert!((e_bh - kl(&dense, &y)).abs() < 1e-10);
            }
            // A real opening angle stays close to the exact forces.
            let (_, g_half) = barnes_hut_gradient(&sparse, y.view(), 0.5, false);
            let norm = g_exact.iter().map(|v| v * v).sum::<f64>().sqrt();
            let diff = g_half
                .iter()
                .zip(g_exact.iter())
                .map(|(a, b)| (a - b) * (a - b))
                .sum::<f64>()
                .sqrt();
            assert!(diff < 0.1 * norm, "c={c}: relative error {}", diff / norm);
        }
    }

    /// Oracle for the Barnes-Hut test: the exact t-SNE gradient written out from the
    /// definition (Student-t with dof = max(c - 1, 1)), without scikit-learn's eps floor on q.
    fn exact_gradient_without_floor(p: &Array2<f64>, y: &Array2<f64>) -> (f64, Array2<f64>) {
        let (n, c) = y.dim();
        let dof = (c.saturating_sub(1)).max(1) as f64;
        let w = |i: usize, j: usize| {
            (dof / (dof + squared_distance(y.view(), i, j))).powf((dof + 1.0) / 2.0)
        };
        let mut z = 0.0;
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    z += w(i, j);
                }
            }
        }
        let mut g = Array2::<f64>::zeros((n, c));
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    for ax in 0..c {
                        g[[i, ax]] += 2.0 * (dof + 1.0) / dof
                            * (p[[i, j]] - w(i, j) / z)
                            * w(i, j)
                            * (y[[i, ax]] - y[[j, ax]]);
                    }
                }
            }
        }
        (z, g)
    }

    /// Fraction of points whose nearest embedded neighbour carries the same label.
    fn one_nn_accuracy(y: &Array2<f64>, labels: &[usize]) -> f64 {
        let n = y.nrows();
        let hits = (0..n)
            .filter(|&i| {
                let nearest = (0..n)
                    .filter(|&j| j != i)
                    .min_by(|&a, &b| {
                        squared_distance(y.view(), i, a).total_cmp(&squared_distance(
                            y.view(),
                            i,
                            b,
                        ))
                    })
                    .unwrap();
                labels[nearest] == labels[i]
            })
            .count();
        hits as f64 / n as f64
    }

    #[test]
    fn separated_clusters_stay_separated_with_both_methods() {
        let (x, labels) = blobs(3, 25, 5);
        for method in [TsneMethod::BarnesHut, TsneMethod::Exact] {
            let mut tsne = TSNE::builder(2)
                .with_perplexity(10.0)
                .with_tsne_method(method)
                .with_max_iter(400);
            let y = tsne.fit_transform_checked(&x).unwrap();
            assert_eq!(y.dim(), (75, 2));
            assert_eq!(one_nn_accuracy(&y, &labels), 1.0, "{method:?}");
            assert!(
                tsne.kl_divergence().unwrap().is_finite() && tsne.kl_divergence().unwrap() >= 0.0
            );
            assert!(tsne.n_iter().unwrap() < 400);
            assert_eq!(tsne.learning_rate_used(), Some(50.0));
        }
    }

    #[test]
    fn same_seed_gives_identical_runs_and_gates_never_change_bits() {
        let (x, _) = blobs(2, 20, 3);
        for method in [TsneMethod::BarnesHut, TsneMethod::Exact] {
            let run = || {
                TSNE::builder(2)
                    .with_perplexity(8.0)
                    .with_tsne_method(method)
                    .with_tsne_init(TsneInit::Random)
                    .with_seed(Some(3))
                    .with_max_iter(300)
                    .fit_transform_checked(&x)
                    .unwrap()
            };
            let (serial, parallel) = serial_and_parallel(&SCAN_F64, run);
            let bits = |m: &Array2<f64>| m.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&serial), bits(&parallel), "{method:?}");
            assert_eq!(bits(&run()), bits(&serial));
            let other = TSNE::builder(2)
                .with_perplexity(8.0)
                .with_tsne_method(method)
                .with_tsne_init(TsneInit::Random)
                .with_seed(Some(4))
                .with_max_iter(300)
                .fit_transform_checked(&x)
                .unwrap();
            assert_ne!(bits(&other), bits(&serial));
        }
    }

    #[test]
    fn per_point_kernels_agree_bitwise_serial_and_parallel() {
        let (x, _) = blobs(3, 12, 4);
        let (s, p) = serial_and_parallel(&SCAN_F64, || {
            joint_probabilities_knn(x.view(), 5.0, 16).unwrap()
        });
        assert_eq!(s, p);
        let (s, p) = serial_and_parallel(&SCAN_F64, || {
            joint_probabilities_exact(x.view(), 5.0).unwrap()
        });
        assert_eq!(
            s.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            p.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        let sparse = joint_probabilities_knn(x.view(), 5.0, 16).unwrap();
        let y = Array2::from_shape_fn((36, 2), |(i, j)| ((i * 2 + j) as f64 * 0.9).sin());
        let (s, p) = serial_and_parallel(&SCAN_F64, || {
            barnes_hut_gradient(&sparse, y.view(), 0.5, true)
        });
        assert_eq!(s.0.to_bits(), p.0.to_bits());
        assert_eq!(
            s.1.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            p.1.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
    }

    #[test]
    fn duplicate_points_do_not_break_the_tree() {
        let mut x = Array2::<f64>::zeros((30, 2));
        for i in 0..30 {
            x[[i, 0]] = (i / 10) as f64; // three groups of ten identical points
        }
        let mut tsne = TSNE::builder(2)
            .with_perplexity(5.0)
            .with_tsne_init(TsneInit::Random)
            .with_seed(Some(0))
            .with_max_iter(250);
        let y = tsne.fit_transform_checked(&x).unwrap();
        assert!(y.iter().all(|v| v.is_finite()));
    }

    #[test]
    fn bad_input_is_refused_before_work() {
        let (x, _) = blobs(2, 5, 3);
        assert!(TSNE::builder(2).with_perplexity(10.0).fit(&x).is_err());
        assert!(TSNE::builder(2).with_perplexity(0.0).fit(&x).is_err());
        assert!(TSNE::builder(4).with_perplexity(3.0).fit(&x).is_err()); // barnes_hut, 4-D
        assert!(TSNE::builder(2)
            .with_perplexity(3.0)
            .with_max_iter(100)
            .fit(&x)
            .is_err());
        assert!(TSNE::builder(2)
            .with_perplexity(3.0)
            .with_learning_rate(LearningRate::Fixed(-1.0))
            .fit(&x)
            .is_err());
        assert!(TSNE::builder(2)
            .with_perplexity(3.0)
            .with_early_exaggeration(0.5)
            .fit(&x)
            .is_err());
        assert!(TSNE::builder(2)
            .with_perplexity(3.0)
            .with_angle(2.0)
            .fit(&x)
            .is_err());
        assert!(TSNE::builder(0).fit(&x).is_err());
        assert!(TSNE::builder(2)
            .with_perplexity(0.5)
            .fit(&ndarray::array![[1.0, 2.0]])
            .is_err());
        assert!(TSNE::builder(2)
            .with_perplexity(1.0)
            .fit(&ndarray::array![[1.0, f64::NAN], [1.0, 2.0], [3.0, 4.0]])
            .is_err());
        assert!(TSNE::builder(2).fit(&Array2::<f64>::zeros((0, 3))).is_err());
        // init='pca' with fewer features than components
        assert!(TSNE::builder(2)
            .with_perplexity(3.0)
            .fit(&Array2::from_shape_fn((10, 1), |(i, _)| i as f64))
            .is_err());
        assert!(TsneMethod::parse("fast").is_err());
        assert!(TsneInit::parse("spectral").is_err());
        assert!(TSNE::builder(2).embedding().is_none());
    }

    #[test]
    fn original_api_short_runs_centered_output_and_error_kinds() {
        let x = ndarray::Array2::from_shape_fn((8, 3), |(i, j)| {
            ((i * 3 + j) as f64).sin() + (i / 4) as f64 * 5.0
        });
        let tsne = TSNE::new(2, 3.0, 100.0, 60)
            .unwrap()
            .with_method(TSNEMethod::Exact)
            .unwrap();
        let y = tsne.fit_transform(&x).unwrap();
        assert_eq!(y.dim(), (8, 2));
        let mean = y.mean_axis(ndarray::Axis(0)).unwrap();
        assert!(mean.iter().all(|m| m.abs() < 1e-12));
        assert_eq!(
            TSNE::default().get_method(),
            TSNEMethod::BarnesHut { angle: 0.5 }
        );
        assert_eq!(
            TSNE::new(4, 3.0, 1.0, 10).unwrap().get_method(),
            TSNEMethod::Exact
        );
        assert!(matches!(
            TSNE::new(4, 3.0, 1.0, 10)
                .unwrap()
                .with_method(TSNEMethod::BarnesHut { angle: 0.5 }),
            Err(RustymlError::InvalidParameter { .. })
        ));
        assert!(matches!(
            TSNE::new(2, 0.0, 1.0, 10),
            Err(RustymlError::InvalidParameter { .. })
        ));
        assert!(matches!(
            tsne.fit_transform(&x.slice(ndarray::s![..3, ..])),
            Err(RustymlError::InvalidParameter { .. })
        ));
        assert!(matches!(
            tsne.fit_transform(&x.slice(ndarray::s![..1, ..])),
            Err(RustymlError::InvalidInput(_))
        ));
    }
}
