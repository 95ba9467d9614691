//! `TSNE`, scikit-learn's face: parameters, their checks, the initial embedding and the fit
//! (affinities, exaggerated then plain descent).

use super::affinities::{
    joint_probabilities_exact, joint_probabilities_given, joint_probabilities_given_neighbours,
    joint_probabilities_knn, Affinities,
};
use super::descent::{Descent, Schedule};
use super::gradient::Objective;
use crate::error::{Error, Result};
use crate::machine_learning::pca::{NComponents, PCA};
use crate::machine_learning::validation::{
    check_features, require_at_least, require_non_negative, require_nonzero, require_positive,
};
use crate::math::distance::Metric;
use crate::math::reduction;
use crate::persistence::Persist;
use ndarray::{Array2, ArrayRef2, ArrayView1, ArrayView2};
use rand::Rng;
use serde::{Deserialize, Serialize};

/// Iterations with early exaggeration (scikit-learn's `_EXPLORATION_MAX_ITER`).
pub(super) const EXPLORATION_ITER: usize = 250;
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
            other => Err(Error::invalid_input(format!(
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
            other => Err(Error::invalid_input(format!(
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

/// Distances given in place of the data (scikit-learn's `metric="precomputed"`, or the
/// distances of another metric), squared, as the affinities read them.
#[derive(Debug, Clone, Copy)]
pub enum GivenDistances<'a> {
    /// All `n x n` squared distances (method `exact`): finite and non-negative.
    Dense(ArrayView2<'a, f64>),
    /// The `k` nearest neighbours of each of the `n` points (method `barnes_hut`): `n x k`
    /// indices of distinct other points and their squared distances, each row in any order.
    Neighbours {
        indices: ArrayView2<'a, usize>,
        distances: ArrayView2<'a, f64>,
    },
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
    pub(super) original_schedule: bool,
    pub(super) embedding: Option<Array2<f64>>,
    pub(super) kl_divergence: f64,
    pub(super) n_iter: usize,
    pub(super) learning_rate_used: f64,
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

    crate::accessors::builder_setters! {
        with_perplexity(perplexity: f64),
        with_early_exaggeration(early_exaggeration: f64),
        with_learning_rate(learning_rate: LearningRate),
        with_max_iter(max_iter: usize),
        with_min_grad_norm(min_grad_norm: f64),
        with_tsne_method(method: TsneMethod),
        with_tsne_init(init: TsneInit),
        with_angle(angle: f64),
        with_seed(random_state: Option<u64>),
        with_n_iter_without_progress(n_iter_without_progress: usize),
    }

    crate::accessors::fitted_getters! {
        self once embedding;
        /// The embedding of the training data (`embedding_`).
        embedding -> &embedding: Array2<f64>,
        /// KL divergence after optimisation (`kl_divergence_`).
        kl_divergence -> kl_divergence: f64,
        /// Index of the last iteration run (`n_iter_`, as scikit-learn counts it).
        n_iter -> n_iter: usize,
        /// The learning rate actually used (`learning_rate_`).
        learning_rate_used -> learning_rate_used: f64,
    }

    /// The one check of t-SNE's hyper-parameters, for every door.
    pub fn check_params(&self) -> Result<()> {
        require_nonzero("n_components", self.n_components)?;
        if self.method == TsneMethod::BarnesHut && self.n_components > 3 {
            return Err(Error::invalid_parameter(
                "n_components",
                format!(
                    "must be at most 3 for method='barnes_hut' (it relies on a quadtree or octree), got {}; use method='exact'",
                    self.n_components
                ),
            ));
        }
        require_positive("perplexity", self.perplexity)?;
        if !(self.early_exaggeration.is_finite() && self.early_exaggeration >= 1.0) {
            return Err(Error::invalid_parameter(
                "early_exaggeration",
                format!(
                    "must be a finite number >= 1, got {}",
                    self.early_exaggeration
                ),
            ));
        }
        if let LearningRate::Fixed(lr) = self.learning_rate {
            require_positive("learning_rate", lr)?;
        }
        // the original's schedule has no separate exploration phase to fit in
        let min_iter = if self.original_schedule {
            1
        } else {
            EXPLORATION_ITER
        };
        require_at_least("max_iter", self.max_iter, min_iter)?;
        if !(self.angle.is_finite() && (0.0..=1.0).contains(&self.angle)) {
            return Err(Error::invalid_parameter(
                "angle",
                format!("must lie in [0, 1], got {}", self.angle),
            ));
        }
        require_non_negative("min_grad_norm", self.min_grad_norm)?;
        require_nonzero("n_iter_without_progress", self.n_iter_without_progress)
    }

    /// What `n x d` data must satisfy for these parameters.
    fn check_data(&self, n: usize, d: usize) -> Result<()> {
        self.check_samples(n)?;
        if self.init == TsneInit::Pca && self.n_components > n.min(d) {
            return Err(Error::invalid_input(format!(
                "init='pca' needs n_components ({}) <= min(n_samples, n_features), got n_samples = {n} \
                 and n_features = {d}; use init='random'",
                self.n_components
            )));
        }
        Ok(())
    }

    /// What the number of samples must satisfy for these parameters.
    fn check_samples(&self, n: usize) -> Result<()> {
        if n < 2 {
            return Err(Error::invalid_input(format!(
                "t-SNE needs at least 2 samples, got n_samples = {n}"
            )));
        }
        if self.perplexity >= n as f64 {
            return Err(Error::invalid_parameter(
                "perplexity",
                format!("must be less than n_samples ({n}), got {}", self.perplexity),
            ));
        }
        Ok(())
    }

    /// Fit the embedding of `x`.
    pub fn fit(&mut self, x: &ArrayRef2<f64>) -> Result<&mut Self> {
        self.fit_transform_checked(x)?;
        Ok(self)
    }

    /// Fit and return the embedding (`n_samples x n_components`), scikit-learn's checks.
    pub fn fit_transform_checked(&mut self, x: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        self.fit_embedding(x, None)
    }

    /// Fit from a given initial embedding (`init`: `n_samples x n_components` values, row
    /// by row), as scikit-learn's `init=ndarray`; `init` and the random state are then
    /// not used.
    pub fn fit_transform_from(
        &mut self,
        x: &ArrayRef2<f64>,
        init: ArrayView1<f64>,
    ) -> Result<Array2<f64>> {
        self.fit_embedding(x, Some(init))
    }

    fn fit_embedding(
        &mut self,
        x: &ArrayRef2<f64>,
        given: Option<ArrayView1<f64>>,
    ) -> Result<Array2<f64>> {
        let x = x.view();
        check_features(&x, "X")?;
        Metric::Euclidean.check_range(&x, "X")?;
        let (n, d) = x.dim();
        self.check_params()?;
        if given.is_none() {
            self.check_data(n, d)?;
        } else {
            self.check_samples(n)?;
        }
        let init = self.given_start(n, given)?;
        let affinities = match self.method {
            TsneMethod::Exact => Affinities::Dense(joint_probabilities_exact(x, self.perplexity)?),
            TsneMethod::BarnesHut => {
                let k = (n - 1).min((3.0 * self.perplexity + 1.0) as usize);
                Affinities::Sparse(joint_probabilities_knn(x, self.perplexity, k)?)
            }
        };
        let init = match init {
            Some(init) => init,
            None => self.initial_embedding(x)?,
        };
        self.descend(affinities, init)
    }

    /// Fit from given squared distances instead of data: the full matrix for method
    /// `exact`, the nearest neighbours for `barnes_hut` (scikit-learn takes
    /// `min(n - 1, floor(3 * perplexity + 1))` of them). The start is `init` (`n_samples x
    /// n_components` values, row by row) or, without one, the random start of
    /// `init = Random` (`Pca` needs the data: refused). Everything below the distances is
    /// the fit of [`fit_transform_checked`](Self::fit_transform_checked): the same
    /// distances give the same embedding, bit for bit.
    pub fn fit_transform_given(
        &mut self,
        distances: GivenDistances<'_>,
        init: Option<ArrayView1<f64>>,
    ) -> Result<Array2<f64>> {
        self.check_params()?;
        let n = match (distances, self.method) {
            (GivenDistances::Dense(d2), TsneMethod::Exact) => d2.nrows(),
            (GivenDistances::Neighbours { indices, .. }, TsneMethod::BarnesHut) => indices.nrows(),
            (GivenDistances::Dense(_), TsneMethod::BarnesHut) => {
                return Err(Error::invalid_input(
                    "method='barnes_hut' reads the nearest neighbours' distances, not the full \
                     matrix (method='exact')",
                ))
            }
            (GivenDistances::Neighbours { .. }, TsneMethod::Exact) => {
                return Err(Error::invalid_input(
                    "method='exact' reads all pairs' distances, not the nearest neighbours' \
                     (method='barnes_hut')",
                ))
            }
        };
        self.check_samples(n)?;
        if init.is_none() && self.init == TsneInit::Pca {
            return Err(Error::invalid_input(
                "init='pca' needs the data, not their distances; use init='random' or give \
                 the start",
            ));
        }
        let start = self.given_start(n, init)?;
        let affinities = match distances {
            GivenDistances::Dense(d2) => {
                Affinities::Dense(joint_probabilities_given(d2, self.perplexity)?)
            }
            GivenDistances::Neighbours { indices, distances } => Affinities::Sparse(
                joint_probabilities_given_neighbours(indices, distances, self.perplexity)?,
            ),
        };
        let start = match start {
            Some(start) => start,
            None => self.random_start(n),
        };
        self.descend(affinities, start)
    }

    /// A given start as an `n x n_components` matrix, checked.
    fn given_start(&self, n: usize, given: Option<ArrayView1<f64>>) -> Result<Option<Array2<f64>>> {
        let Some(values) = given else {
            return Ok(None);
        };
        if values.len() != n * self.n_components || !values.iter().all(|v| v.is_finite()) {
            return Err(Error::invalid_input(format!(
                "init must hold n_samples x n_components = {n} x {} finite values, got {}",
                self.n_components,
                values.len()
            )));
        }
        Ok(Some(
            Array2::from_shape_vec((n, self.n_components), values.to_vec())
                .expect("length checked"),
        ))
    }

    /// The descent from `init` on the affinities `P`: exaggerated, then plain.
    fn descend(&mut self, mut affinities: Affinities, init: Array2<f64>) -> Result<Array2<f64>> {
        let n = init.nrows();
        let learning_rate = match self.learning_rate {
            LearningRate::Auto => (n as f64 / self.early_exaggeration / 4.0).max(50.0),
            LearningRate::Fixed(lr) => lr,
        };
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
        // scikit-learn always starts the second phase (its `it < 250 or remaining > 0`
        // holds after any exploration): where no iteration is left it reports the
        // iteration after the last and its untouched error, the largest float
        if !self.original_schedule || self.max_iter > EXPLORATION_ITER {
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
            return Err(Error::invalid_input(format!(
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
        let c = self.n_components;
        match self.init {
            TsneInit::Pca => {
                let mut y = PCA::builder(NComponents::Count(c)).fit_transform_checked(&x)?;
                let std = reduction::moments(y.column(0)).variance().sqrt();
                if !(std.is_finite() && std > 0.0) {
                    return Err(Error::invalid_input(
                        "init='pca' failed: the data have no variance along the first principal component (constant X?); use init='random'",
                    ));
                }
                y.mapv_inplace(|v| v / std * 1e-4);
                Ok(y)
            }
            TsneInit::Random => Ok(self.random_start(x.nrows())),
        }
    }

    /// Gaussian noise with standard deviation 1e-4, drawn from `random_state`.
    fn random_start(&self, n: usize) -> Array2<f64> {
        let c = self.n_components;
        let mut rng = crate::random::rng_from(self.random_state);
        let mut values = Vec::with_capacity(n * c);
        while values.len() < n * c {
            let (a, b) = standard_normal_pair(&mut rng);
            values.push(a);
            values.push(b);
        }
        values.truncate(n * c);
        Array2::from_shape_vec((n, c), values)
            .expect("length n * c")
            .mapv(|v| v * 1e-4)
    }
}

/// Two independent standard normal draws (Box-Muller).
pub(super) fn standard_normal_pair(rng: &mut impl Rng) -> (f64, f64) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::serial_and_parallel;
    use crate::machine_learning::tsne::gradient::squared_distance;
    use crate::machine_learning::tsne::test_data::blobs;
    use crate::math::distance::SCAN_F64;

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
            let run = |seed| {
                TSNE::builder(2)
                    .with_perplexity(8.0)
                    .with_tsne_method(method)
                    .with_tsne_init(TsneInit::Random)
                    .with_seed(Some(seed))
                    .with_max_iter(300)
                    .fit_transform_checked(&x)
                    .unwrap()
            };
            let (serial, parallel) = serial_and_parallel(&SCAN_F64, || run(3));
            let bits = |m: &Array2<f64>| m.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&serial), bits(&parallel), "{method:?}");
            assert_eq!(bits(&run(3)), bits(&serial));
            assert_ne!(bits(&run(4)), bits(&serial));
        }
    }

    #[test]
    fn a_given_start_is_the_random_start_it_equals() {
        // The random start, handed back as a given one, is the same run bit for bit; a
        // start of another length is refused before any work.
        let (x, _) = blobs(2, 15, 4);
        let mut drawn = TSNE::builder(2)
            .with_perplexity(5.0)
            .with_tsne_init(TsneInit::Random)
            .with_seed(Some(7));
        let start = drawn.initial_embedding(x.view()).unwrap();
        let from_draw = drawn.fit_transform_checked(&x).unwrap();
        let mut given = TSNE::builder(2).with_perplexity(5.0);
        let flat = ndarray::Array1::from_iter(start.iter().copied());
        let from_given = given.fit_transform_from(&x, flat.view()).unwrap();
        assert_eq!(from_draw, from_given);
        assert_eq!(drawn.n_iter(), given.n_iter());
        let short = ndarray::Array1::<f64>::zeros(x.nrows() * 2 - 1);
        assert!(TSNE::builder(2)
            .with_perplexity(5.0)
            .fit_transform_from(&x, short.view())
            .is_err());
    }

    #[test]
    fn the_second_phase_always_starts_as_in_scikit_learn() {
        // 250 iterations are all exaggerated: the plain phase runs none, and reports the
        // iteration after the last with its untouched error, as scikit-learn does.
        let (x, _) = blobs(2, 10, 3);
        let mut tsne = TSNE::builder(2).with_perplexity(4.0).with_max_iter(250);
        tsne.fit(&x).unwrap();
        assert_eq!(tsne.n_iter(), Some(250));
        assert_eq!(tsne.kl_divergence(), Some(f64::MAX));
        let mut longer = TSNE::builder(2).with_perplexity(4.0).with_max_iter(300);
        longer.fit(&x).unwrap();
        assert_eq!(longer.n_iter(), Some(299));
        assert!(longer.kl_divergence().unwrap() < 10.0);
    }

    #[test]
    fn bad_input_is_refused_before_work() {
        let (x, _) = blobs(2, 5, 3);
        let refused_on_x = [
            TSNE::builder(2).with_perplexity(10.0),
            TSNE::builder(2).with_perplexity(0.0),
            TSNE::builder(4).with_perplexity(3.0), // barnes_hut, 4-D
            TSNE::builder(2).with_perplexity(3.0).with_max_iter(100),
            TSNE::builder(2)
                .with_perplexity(3.0)
                .with_learning_rate(LearningRate::Fixed(-1.0)),
            TSNE::builder(2)
                .with_perplexity(3.0)
                .with_early_exaggeration(0.5),
            TSNE::builder(2).with_perplexity(3.0).with_angle(2.0),
            TSNE::builder(0),
        ];
        for (case, mut tsne) in refused_on_x.into_iter().enumerate() {
            assert!(tsne.fit(&x).is_err(), "case {case}");
        }
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
    fn given_euclidean_distances_are_the_euclidean_fit_bit_for_bit() {
        let (x, _) = blobs(2, 15, 3);
        let n = x.nrows();
        let d2 = crate::math::distance::pairwise_squared_euclidean(x.view(), x.view()).unwrap();
        let bits = |m: &Array2<f64>| m.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        for method in [TsneMethod::BarnesHut, TsneMethod::Exact] {
            let build = || {
                TSNE::builder(2)
                    .with_perplexity(5.0)
                    .with_tsne_method(method)
                    .with_tsne_init(TsneInit::Random)
                    .with_seed(Some(3))
                    .with_max_iter(300)
            };
            let mut from_x = build();
            let y = from_x.fit_transform_checked(&x).unwrap();
            let k = (n - 1).min(16);
            let (idx, dist) =
                crate::machine_learning::tsne::nearest_neighbours(x.view(), k).unwrap();
            let indices = Array2::from_shape_vec((n, k), idx).unwrap();
            let distances = Array2::from_shape_vec((n, k), dist).unwrap();
            let given = match method {
                TsneMethod::Exact => GivenDistances::Dense(d2.view()),
                TsneMethod::BarnesHut => GivenDistances::Neighbours {
                    indices: indices.view(),
                    distances: distances.view(),
                },
            };
            // the random start drawn from the seed, and the same start given
            let mut drawn = build();
            assert_eq!(
                bits(&drawn.fit_transform_given(given, None).unwrap()),
                bits(&y)
            );
            assert_eq!(drawn.n_iter(), from_x.n_iter());
            assert_eq!(drawn.kl_divergence(), from_x.kl_divergence());
            let start = build().random_start(n);
            let flat = ndarray::Array1::from_iter(start.iter().copied());
            let mut started = build().with_seed(Some(99));
            let z = started
                .fit_transform_given(given, Some(flat.view()))
                .unwrap();
            assert_eq!(bits(&z), bits(&y), "{method:?}");
            // the other method's form is refused, and so is a PCA start without data
            let other = build().with_tsne_method(match method {
                TsneMethod::Exact => TsneMethod::BarnesHut,
                TsneMethod::BarnesHut => TsneMethod::Exact,
            });
            assert!(other.clone().fit_transform_given(given, None).is_err());
            assert!(build()
                .with_tsne_init(TsneInit::Pca)
                .fit_transform_given(given, None)
                .unwrap_err()
                .to_string()
                .contains("pca"));
            // and parameters are checked against the given distances' sample count
            assert!(build()
                .with_perplexity(40.0)
                .fit_transform_given(given, None)
                .is_err());
        }
    }
}
