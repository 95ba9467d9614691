//! DBSCAN: density-based clustering, label for label as scikit-learn.
//!
//! A point is a core point when at least `min_samples` points (itself included) lie within
//! `eps` of it. Clusters grow by depth-first search from core points taken in index order, so
//! clusters are numbered by their first core point; a border point (within `eps` of a core
//! point but not core itself) joins the first cluster that reaches it, which is the
//! lowest-numbered cluster among its core neighbours. Everything else is noise (`-1`).
//!
//! The neighbourhood queries are exact ([`radius::radius_neighbourhoods`]: a cell grid up to
//! three features, product screening for euclidean metrics above, a plain scan otherwise) and
//! run in parallel behind [`crate::math::distance::SCAN_F64`]; only core points' lists are
//! kept, except with sample weights, where a point's core status needs its whole list. A
//! precomputed distance matrix is read row by row
//! ([`radius::precomputed_neighbourhoods`]), a sparse one entry by stored entry
//! ([`radius::graph_neighbourhoods`]).

use crate::error::{Error, Result};
use crate::machine_learning::validation::{
    check_features, require_data, require_nonzero, require_positive,
};
use crate::math::distance::{self, DistanceCalculationMetric, Metric};
use crate::math::given_distances::GivenGraph;
use crate::math::radius;
use crate::persistence::Persist;
use ndarray::{Array1, Array2, ArrayRef2, ArrayView1, ArrayView2, Axis};
use serde::{Deserialize, Serialize};

/// Density-based spatial clustering of applications with noise.
#[allow(clippy::upper_case_acronyms)]
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DBSCAN {
    /// Neighbourhood radius (a point at exactly `eps` is a neighbour).
    pub eps: f64,
    /// Points within `eps` (itself included) that make a point a core point.
    pub min_samples: usize,
    pub metric: Metric,
    labels: Option<Array1<isize>>,
    core_sample_indices: Option<Array1<usize>>,
    components: Option<Array2<f64>>,
}

impl Default for DBSCAN {
    /// eps 0.5, min_samples 5, euclidean (the original's and scikit-learn's defaults).
    fn default() -> Self {
        Self::builder(0.5, 5)
    }
}

impl DBSCAN {
    /// Euclidean DBSCAN with radius `eps` and `min_samples`; unvalidated (checked at `fit`).
    pub fn builder(eps: f64, min_samples: usize) -> Self {
        Self {
            eps,
            min_samples,
            metric: Metric::Euclidean,
            labels: None,
            core_sample_indices: None,
            components: None,
        }
    }

    /// Euclidean, manhattan or minkowski (`p >= 1`); see [`Metric::parse`] for names.
    pub fn with_engine_metric(mut self, metric: Metric) -> Self {
        self.metric = metric;
        self
    }

    crate::accessors::fitted_getters! {
        self once labels;
        /// Cluster of each training sample, `-1` for noise (`labels_`).
        labels -> &labels: Array1<isize>,
        /// Copies of the core samples (`components_`).
        components -> &components: Array2<f64>,
    }

    /// Indices of the core samples, ascending (`core_sample_indices_`).
    pub fn core_sample_indices(&self) -> Option<&[usize]> {
        self.core_sample_indices.as_ref().and_then(|c| c.as_slice())
    }

    /// The one check of DBSCAN's hyper-parameters, for every door.
    pub fn check_params(&self) -> Result<()> {
        require_positive("eps", self.eps)?;
        require_nonzero("min_samples", self.min_samples)?;
        self.metric.check_params()
    }

    /// Cluster `x` (`n_samples x n_features`) with scikit-learn's checks and messages.
    pub fn fit_checked(&mut self, x: &ArrayRef2<f64>) -> Result<&mut Self> {
        self.fit_with(x, Points::Features, None)
    }

    /// scikit-learn's `fit` in full: `x` holds the points' features (the engine's metric) or,
    /// with [`Points::Distances`], a precomputed `n x n` distance matrix; with
    /// `sample_weight` (one finite weight per point, negative ones allowed) a point is core
    /// when the weights of its neighbourhood, itself included, sum to at least
    /// `min_samples`. The sums run in index order, so integer weights give exact decisions.
    /// `components_` are the core points' rows of `x`.
    pub fn fit_with(
        &mut self,
        x: &ArrayRef2<f64>,
        points: Points,
        sample_weight: Option<ArrayView1<f64>>,
    ) -> Result<&mut Self> {
        let x = x.view();
        self.check_params()?;
        check_features(&x, "X")?;
        Self::check_weights(x.nrows(), sample_weight)?;
        let store_min = self.store_min(sample_weight);
        let neighbourhoods = match points {
            Points::Features => radius::radius_neighbourhoods(x, self.eps, self.metric, store_min)?,
            Points::Distances => radius::precomputed_neighbourhoods(x, self.eps, store_min)?,
        };
        let (core, labels) = self.clusters(&neighbourhoods, sample_weight);
        self.set_fitted(Some(x), core, labels);
        Ok(self)
    }

    /// scikit-learn's `fit` on a sparse distance graph (`metric="precomputed"` with a sparse
    /// matrix): a point's neighbours are its row's stored entries at most `eps`, one per
    /// entry ([`radius::graph_neighbourhoods`]; an entry not stored is no neighbour, so the
    /// caller stores the diagonal, as scikit-learn does before its search). Weights as in
    /// [`fit_with`](Self::fit_with). Leaves `components_` unset: the core points' rows of a
    /// graph are sparse, the caller's to take.
    pub fn fit_graph(
        &mut self,
        graph: &GivenGraph,
        sample_weight: Option<ArrayView1<f64>>,
    ) -> Result<&mut Self> {
        self.check_params()?;
        Self::check_weights(graph.rows(), sample_weight)?;
        let neighbourhoods =
            radius::graph_neighbourhoods(graph, self.eps, self.store_min(sample_weight))?;
        let (core, labels) = self.clusters(&neighbourhoods, sample_weight);
        self.set_fitted(None, core, labels);
        Ok(self)
    }

    /// [`fit_with`](Self::fit_with) on features at `eps` and at `inner_eps` (`0 <=
    /// inner_eps <= eps`), from one neighbourhood search: the lists at `eps` filtered down
    /// to `inner_eps` ([`radius::Neighbourhoods::within`]) are the ones a search at
    /// `inner_eps` finds. Keeps the fit at `eps`; returns whether the fit at `inner_eps`
    /// has the same core samples and labels. With weights that are not negative, every
    /// radius in between then gives that fit too (more neighbours only add core points and
    /// join clusters), which is what the scikit-learn door asks of a radius it knows only
    /// to rounding.
    pub fn fit_band(
        &mut self,
        x: &ArrayRef2<f64>,
        inner_eps: f64,
        sample_weight: Option<ArrayView1<f64>>,
    ) -> Result<bool> {
        let x = x.view();
        self.check_params()?;
        check_features(&x, "X")?;
        if !(inner_eps.is_finite() && (0.0..=self.eps).contains(&inner_eps)) {
            return Err(Error::invalid_parameter(
                "inner_eps",
                format!("must lie in [0, eps = {}], got {inner_eps}", self.eps),
            ));
        }
        Self::check_weights(x.nrows(), sample_weight)?;
        let store_min = self.store_min(sample_weight);
        let outer = radius::radius_neighbourhoods(x, self.eps, self.metric, store_min)?;
        let inner = outer.within(x, inner_eps, self.metric, store_min)?;
        let (core, labels) = self.clusters(&outer, sample_weight);
        let (inner_core, inner_labels) = self.clusters(&inner, sample_weight);
        let agree = core == inner_core && labels == inner_labels;
        self.set_fitted(Some(x), core, labels);
        Ok(agree)
    }

    fn check_weights(n: usize, sample_weight: Option<ArrayView1<f64>>) -> Result<()> {
        if let Some(w) = sample_weight {
            crate::validation::check_n_samples(n, w.len())?;
            if !w.iter().all(|v| v.is_finite()) {
                return Err(Error::non_finite("sample_weight holds NaN or infinity"));
            }
        }
        Ok(())
    }

    /// Weighted core points depend on every neighbour's weight: keep every list then.
    fn store_min(&self, sample_weight: Option<ArrayView1<f64>>) -> usize {
        if sample_weight.is_some() {
            0
        } else {
            self.min_samples
        }
    }

    /// The core samples (ascending) and labels from the neighbourhoods.
    fn clusters(
        &self,
        neighbourhoods: &radius::Neighbourhoods,
        sample_weight: Option<ArrayView1<f64>>,
    ) -> (Vec<usize>, Vec<isize>) {
        let is_core: Vec<bool> = match sample_weight {
            None => neighbourhoods
                .counts()
                .iter()
                .map(|&c| c >= self.min_samples)
                .collect(),
            Some(w) => (0..neighbourhoods.len())
                .map(|i| {
                    let mass: f64 = neighbourhoods
                        .neighbours(i)
                        .iter()
                        .map(|&j| w[j as usize])
                        .sum();
                    mass >= self.min_samples as f64
                })
                .collect(),
        };
        let labels = expand_clusters(neighbourhoods, &is_core);
        let core: Vec<usize> = (0..is_core.len()).filter(|&i| is_core[i]).collect();
        (core, labels)
    }

    /// The fitted state: the core samples, the labels and, from the points' features `x`
    /// when given, the core points' rows as `components` (a graph fit has none).
    fn set_fitted(&mut self, x: Option<ArrayView2<f64>>, core: Vec<usize>, labels: Vec<isize>) {
        self.components = x.map(|x| x.select(Axis(0), &core));
        self.core_sample_indices = Some(Array1::from(core));
        self.labels = Some(Array1::from(labels));
    }
}

/// What the rows of the matrix given to [`DBSCAN::fit_with`] are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Points {
    /// Each row a point's features; neighbours by the engine's metric.
    Features,
    /// Row `i` the distances from point `i` to every point (scikit-learn's
    /// `metric="precomputed"`).
    Distances,
}

crate::machine_learning::path_persistence!(DBSCAN);
crate::machine_learning::clustering::fit_predict_labels!(DBSCAN);

impl Persist for DBSCAN {
    const MODEL_NAME: &'static str = "DBSCAN";
}

/// The original RustyML API: validated constructor, getters, `predict` against the core
/// samples, its error kinds.
impl DBSCAN {
    /// Radius `eps` (finite, > 0) and `min_samples` (>= 1), euclidean; else `InvalidParameter`.
    pub fn new(eps: f64, min_samples: usize) -> Result<Self> {
        let model = Self::builder(eps, min_samples);
        model.check_params()?;
        Ok(model)
    }

    /// Euclidean, manhattan or minkowski (`p >= 1`, finite; else `InvalidParameter`).
    pub fn with_metric(mut self, metric: DistanceCalculationMetric) -> Result<Self> {
        self.metric = metric.to_metric();
        self.check_params()?;
        Ok(self)
    }

    crate::accessors::field_getters! {
        get_epsilon -> eps: f64,
        get_min_samples -> min_samples: usize,
    }

    /// The metric in the original's terms (the Python-only squared euclidean reads as
    /// euclidean: it induces the same order of distances).
    pub fn get_metric(&self) -> DistanceCalculationMetric {
        match self.metric {
            Metric::Manhattan => DistanceCalculationMetric::Manhattan,
            // never built for DBSCAN (Metric::parse does not produce it)
            Metric::Chebyshev => DistanceCalculationMetric::Minkowski(f64::INFINITY),
            Metric::Minkowski(p) => DistanceCalculationMetric::Minkowski(p),
            Metric::Euclidean | Metric::SquaredEuclidean => DistanceCalculationMetric::Euclidean,
            // never built for DBSCAN either (only the neighbour search takes it); the
            // original crate has no cosine metric
            Metric::Cosine => DistanceCalculationMetric::Euclidean,
        }
    }

    crate::accessors::fitted_getters! {
        self once labels;
        get_labels -> &labels: Array1<isize>,
        get_core_sample_indices -> &core_sample_indices: Array1<usize>,
    }

    /// Cluster `data`; empty -> `EmptyInput`, NaN/inf -> `NonFinite`.
    pub fn fit(&mut self, data: &ArrayRef2<f64>) -> Result<&mut Self> {
        require_data(&data.view(), "DBSCAN data")?;
        self.fit_checked(data)
    }

    /// Label of the nearest core sample when it lies within `eps` (inclusive), else `-1`.
    /// An empty `new_data` of the fitted width gives an empty result.
    pub fn predict(&self, new_data: &ArrayRef2<f64>) -> Result<Array1<isize>> {
        let (Some(labels), Some(core), Some(components)) = (
            self.labels.as_ref(),
            self.core_sample_indices.as_ref(),
            self.components.as_ref(),
        ) else {
            return Err(Error::NotFitted("DBSCAN"));
        };
        let x = new_data.view();
        if x.ncols() != components.ncols() {
            return Err(Error::dimension_mismatch(components.ncols(), x.ncols()));
        }
        if x.nrows() == 0 {
            return Ok(Array1::zeros(0));
        }
        require_data(&x, "DBSCAN input")?;
        if components.nrows() == 0 {
            return Ok(Array1::from_elem(x.nrows(), -1));
        }
        // Row blocks bound the distance matrix to BLOCK x n_core.
        const BLOCK: usize = 1024;
        let mut out = Vec::with_capacity(x.nrows());
        for start in (0..x.nrows()).step_by(BLOCK) {
            let block = x.slice(ndarray::s![start..(start + BLOCK).min(x.nrows()), ..]);
            let d = distance::pairwise(block, components.view(), self.metric)?;
            for row in d.outer_iter() {
                let (best, dist) =
                    row.iter()
                        .enumerate()
                        .fold(
                            (0, f64::INFINITY),
                            |acc, (j, &v)| if v < acc.1 { (j, v) } else { acc },
                        );
                out.push(if dist <= self.eps {
                    labels[core[best]]
                } else {
                    -1
                });
            }
        }
        Ok(Array1::from(out))
    }
}

crate::machine_learning::data_traits!(
    DBSCAN:
    Fit where Send + Sync,
    Predict -> Array1<isize> where Send + Sync,
);

/// scikit-learn's `dbscan_inner`: a depth-first search from each unlabelled core point in
/// index order; border points are labelled but not expanded.
///
/// The labels depend only on the neighbourhoods as sets (a cluster is everything reachable
/// from its first core point; a border point goes to the first cluster that reaches it), not
/// on the visiting order, so points are labelled when first seen and only core points enter
/// the stack, each once.
fn expand_clusters(neighbourhoods: &radius::Neighbourhoods, is_core: &[bool]) -> Vec<isize> {
    let n = is_core.len();
    let mut labels = vec![-1isize; n];
    let mut stack: Vec<u32> = Vec::new();
    let mut label = 0isize;
    for start in 0..n {
        if labels[start] != -1 || !is_core[start] {
            continue;
        }
        labels[start] = label;
        stack.push(start as u32);
        while let Some(i) = stack.pop() {
            for &v in neighbourhoods.neighbours(i as usize) {
                let v_us = v as usize;
                if labels[v_us] == -1 {
                    labels[v_us] = label;
                    if is_core[v_us] {
                        stack.push(v);
                    }
                }
            }
        }
        label += 1;
    }
    labels
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn hand_worked_clusters_border_points_and_noise() {
        // eps = 1, min_samples = 3. x = 1 has {0, 1, 2} and x = 11 has {10, 11, 12}: the only
        // cores. 0 and 2 are border points of cluster 0 (opened by index 1), 10 and 12 of
        // cluster 1 (opened by index 4); 30 is noise.
        let x = array![[30.0], [1.0], [0.0], [2.0], [11.0], [10.0], [12.0]];
        let mut db = DBSCAN::builder(1.0, 3);
        let labels = db.fit_predict(&x).unwrap();
        assert_eq!(labels.to_vec(), vec![-1, 0, 0, 0, 1, 1, 1]);
        assert_eq!(db.core_sample_indices().unwrap(), &[1, 4]);
        assert_eq!(db.components().unwrap(), &array![[1.0], [11.0]]);
    }

    #[test]
    fn a_border_point_joins_the_first_numbered_cluster() {
        // eps = 1, min_samples = 4. x = 2 has {1, 2, 2.1, 2.2} and x = 0 has
        // {-0.2, -0.1, 0, 1}: the only cores (2.1, 2.2, -0.1, -0.2 see three points each).
        // x = 1 (index 0) sees {0, 1, 2}: a border point of both. The core at index 1 (x = 2)
        // opens cluster 0 and takes it; the core at x = 0 (index 4) opens cluster 1.
        let x = array![[1.0], [2.0], [2.1], [2.2], [0.0], [-0.1], [-0.2]];
        let mut db = DBSCAN::builder(1.0, 4);
        let labels = db.fit_predict(&x).unwrap();
        assert_eq!(labels.to_vec(), vec![0, 0, 0, 0, 1, 1, 1]);
        assert_eq!(db.core_sample_indices().unwrap(), &[1, 4]);
    }

    #[test]
    fn metrics_change_the_neighbourhoods() {
        // (0,0) and (1,1): euclidean distance sqrt(2) ~ 1.414, manhattan 2.
        let x = array![[0.0, 0.0], [1.0, 1.0]];
        let labels = |metric| {
            DBSCAN::builder(1.5, 2)
                .with_engine_metric(metric)
                .fit_predict(&x)
                .unwrap()
                .to_vec()
        };
        assert_eq!(labels(Metric::Euclidean), vec![0, 0]);
        assert_eq!(labels(Metric::Manhattan), vec![-1, -1]);
        assert_eq!(labels(Metric::Minkowski(1.0)), vec![-1, -1]);
        // minkowski p = 4: (1 + 1)^(1/4) ~ 1.19
        assert_eq!(labels(Metric::Minkowski(4.0)), vec![0, 0]);
    }

    #[test]
    fn min_samples_one_makes_every_point_core() {
        let x = array![[0.0], [5.0], [10.0]];
        let labels = DBSCAN::builder(1.0, 1).fit_predict(&x).unwrap();
        assert_eq!(labels.to_vec(), vec![0, 1, 2]);
    }

    #[test]
    fn weights_decide_core_points_by_their_neighbourhoods_mass() {
        // Points at 0, 1, 2 and 10; eps 1.5, min_samples 3. By hand: point 1's neighbourhood
        // {0, 1, 2} weighs 3 (core), points 0 and 2 weigh 2 (border), point 3 weighs 3 alone.
        let x = array![[0.0], [1.0], [2.0], [10.0]];
        let mut db = DBSCAN::builder(1.5, 3);
        db.fit_with(
            &x,
            Points::Features,
            Some(array![1.0, 1.0, 1.0, 3.0].view()),
        )
        .unwrap();
        assert_eq!(db.labels().unwrap(), &array![0, 0, 0, 1]);
        assert_eq!(db.core_sample_indices().unwrap(), &[1, 3]);
        assert_eq!(db.components().unwrap(), &array![[1.0], [10.0]]);
        // A negative weight inhibits its neighbours: point 1's neighbourhood now weighs 1.
        db.fit_with(
            &x,
            Points::Features,
            Some(array![1.0, -1.0, 1.0, 3.0].view()),
        )
        .unwrap();
        assert_eq!(db.labels().unwrap(), &array![-1, -1, -1, 0]);
        // Unit weights are the unweighted fit.
        let ones = Array1::ones(4);
        db.fit_with(&x, Points::Features, Some(ones.view()))
            .unwrap();
        let weighted = db.labels().unwrap().clone();
        db.fit_checked(&x).unwrap();
        assert_eq!(&weighted, db.labels().unwrap());
        // A weight per sample, finite.
        assert!(db
            .fit_with(&x, Points::Features, Some(array![1.0, 1.0].view()))
            .is_err());
        assert!(db
            .fit_with(
                &x,
                Points::Features,
                Some(array![1.0, f64::NAN, 1.0, 1.0].view())
            )
            .is_err());
    }

    #[test]
    fn a_graph_of_every_distance_clusters_as_the_dense_matrix_and_absent_entries_are_no_neighbours()
    {
        let x = Array2::from_shape_fn((200, 2), |(i, j)| {
            ((i * 41 + j * 7) % 47) as f64 / 15.0 + (i % 4) as f64 * 6.0
        });
        let n = x.nrows();
        let d = Array2::from_shape_fn((n, n), |(i, j)| {
            (x[[i, 0]] - x[[j, 0]]).abs() + (x[[i, 1]] - x[[j, 1]]).abs()
        });
        let weights = Array1::from_shape_fn(n, |i| (i % 3) as f64);
        let flat: Vec<f64> = d.iter().copied().collect();
        let columns: Vec<usize> = (0..n * n).map(|e| e % n).collect();
        let pointers: Vec<usize> = (0..=n).map(|i| i * n).collect();
        let graph = GivenGraph::new(&flat, &columns, &pointers).unwrap();
        for w in [None, Some(weights.view())] {
            let mut dense = DBSCAN::builder(0.7, 4);
            dense.fit_with(&d, Points::Distances, w).unwrap();
            let mut sparse = DBSCAN::builder(0.7, 4);
            sparse.fit_graph(&graph, w).unwrap();
            assert_eq!(dense.labels(), sparse.labels());
            assert_eq!(dense.core_sample_indices(), sparse.core_sample_indices());
            assert!(sparse.components().is_none());
        }
        // Three points in a chain 0 - 1 - 2, each pair stored both ways but no diagonal:
        // with min_samples 2 only point 1 (two neighbours) is core, and it takes the others
        // as border points. Storing the diagonal makes every point core.
        let data = [1.0, 1.0, 1.0, 1.0];
        let indices = [1, 0, 2, 1];
        let indptr = [0, 1, 3, 4];
        let mut chain = DBSCAN::builder(1.0, 2);
        chain
            .fit_graph(&GivenGraph::new(&data, &indices, &indptr).unwrap(), None)
            .unwrap();
        assert_eq!(chain.core_sample_indices(), Some(&[1][..]));
        assert_eq!(chain.labels().unwrap().to_vec(), vec![0, 0, 0]);
        let data = [0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0];
        let indices = [0, 1, 0, 1, 2, 1, 2];
        let indptr = [0, 2, 5, 7];
        chain
            .fit_graph(&GivenGraph::new(&data, &indices, &indptr).unwrap(), None)
            .unwrap();
        assert_eq!(chain.core_sample_indices(), Some(&[0, 1, 2][..]));
        // A failed fit leaves the model as it was.
        let before = chain.labels().cloned();
        let wrong_weights = Array1::zeros(2);
        assert!(chain
            .fit_graph(
                &GivenGraph::new(&data, &indices, &indptr).unwrap(),
                Some(wrong_weights.view())
            )
            .is_err());
        assert_eq!(chain.labels().cloned(), before);
    }

    #[test]
    fn precomputed_distances_give_the_features_clusters() {
        let x = Array2::from_shape_fn((240, 2), |(i, j)| {
            ((i * 37 + j * 11) % 53) as f64 / 20.0 + (i % 3) as f64 * 8.0
        });
        let n = x.nrows();
        let d = Array2::from_shape_fn((n, n), |(i, j)| {
            (x[[i, 0]] - x[[j, 0]]).abs() + (x[[i, 1]] - x[[j, 1]]).abs()
        });
        let mut by_features = DBSCAN::builder(0.6, 4).with_engine_metric(Metric::Manhattan);
        by_features.fit_checked(&x).unwrap();
        let mut by_distances = DBSCAN::builder(0.6, 4);
        by_distances.fit_with(&d, Points::Distances, None).unwrap();
        assert_eq!(by_features.labels(), by_distances.labels());
        assert_eq!(
            by_features.core_sample_indices(),
            by_distances.core_sample_indices()
        );
        assert!(by_distances
            .fit_with(&Array2::zeros((3, 2)), Points::Distances, None)
            .is_err());
    }

    #[test]
    fn gates_never_change_labels() {
        // 2-D (grid) and 5-D (product screening) data with several groups.
        for d in [2, 5] {
            let x = Array2::from_shape_fn((900, d), |(i, j)| {
                ((i * 37 + j * 11) % 53) as f64 / 20.0 + (i % 3) as f64 * 8.0
            });
            let (s, p) = crate::gate::serial_and_parallel(&crate::math::distance::SCAN_F64, || {
                let mut db = DBSCAN::builder(0.6, 4);
                db.fit(&x).unwrap();
                (
                    db.labels().unwrap().clone(),
                    db.core_sample_indices().unwrap().to_vec(),
                )
            });
            assert_eq!(s, p);
        }
    }

    #[test]
    fn a_band_fit_is_the_fit_at_eps_and_tells_whether_the_inner_radius_agrees() {
        // two groups on a line at spacing 1: at eps 1 they chain, below 1 every point is
        // alone; a band that holds no pair distance changes nothing
        let x = Array2::from_shape_fn((12, 2), |(i, j)| {
            if j == 0 {
                (i % 6) as f64 + (i / 6) as f64 * 100.0
            } else {
                0.5
            }
        });
        for (inner, agrees) in [(0.999, false), (1.0, true), (0.0, false)] {
            for weights in [None, Some(Array1::from_elem(12, 1.0))] {
                let mut band = DBSCAN::builder(1.0, 3);
                let agree = band.fit_band(&x, inner, weights.as_ref().map(|w| w.view()));
                let mut plain = DBSCAN::builder(1.0, 3);
                plain
                    .fit_with(&x, Points::Features, weights.as_ref().map(|w| w.view()))
                    .unwrap();
                assert_eq!(agree.unwrap(), agrees, "inner={inner}");
                assert_eq!(band.labels(), plain.labels());
                assert_eq!(band.core_sample_indices(), plain.core_sample_indices());
                assert_eq!(band.components(), plain.components());
            }
        }
        // a band inside the gap between pair distances (1 and 2 here) agrees
        let mut wide = DBSCAN::builder(1.9, 3);
        assert!(wide.fit_band(&x, 1.1, None).unwrap());
        // and where it does, the fit at the inner radius is the same
        let mut inner = DBSCAN::builder(1.1, 3);
        inner.fit(&x).unwrap();
        assert_eq!(wide.labels(), inner.labels());
        // the inner radius must lie in [0, eps]
        for bad in [-0.1, 1.95, f64::NAN] {
            assert!(DBSCAN::builder(1.9, 3).fit_band(&x, bad, None).is_err());
        }
    }

    #[test]
    fn bad_input_is_refused_before_work() {
        let x = array![[0.0, 1.0], [1.0, 0.0]];
        assert!(DBSCAN::builder(0.0, 5).fit(&x).is_err());
        assert!(DBSCAN::builder(-1.0, 5).fit(&x).is_err());
        assert!(DBSCAN::builder(f64::NAN, 5).fit(&x).is_err());
        assert!(DBSCAN::builder(0.5, 0).fit(&x).is_err());
        assert!(DBSCAN::builder(0.5, 2)
            .with_engine_metric(Metric::Minkowski(0.5))
            .fit(&x)
            .is_err());
        assert!(DBSCAN::builder(0.5, 2)
            .fit(&array![[0.0, f64::NAN]])
            .is_err());
        assert!(DBSCAN::builder(0.5, 2)
            .fit(&Array2::<f64>::zeros((0, 2)))
            .is_err());
        assert!(Metric::parse("cosine", 2.0).is_err());
        assert!(DBSCAN::builder(0.5, 2).labels().is_none());
    }

    #[test]
    fn save_and_load_round_trip() {
        let x = array![[0.0], [0.5], [9.0]];
        let mut db = DBSCAN::builder(1.0, 2);
        db.fit(&x).unwrap();
        let back = DBSCAN::from_bytes(&db.to_bytes().unwrap()).unwrap();
        assert_eq!(back.labels(), db.labels());
        assert_eq!(back.core_sample_indices(), db.core_sample_indices());
    }

    #[test]
    fn original_predict_takes_the_nearest_core_within_eps() {
        // Cores 0 and 1 (min_samples 1 makes every point core), clusters 0 and 1 (eps 1.5
        // keeps them apart). Query 0.6 is nearer core 0; 3.9 is 1.9 from core 1: noise.
        let x = array![[0.0, 0.0], [2.0, 0.0]];
        let mut db = DBSCAN::new(1.5, 1).unwrap();
        assert_eq!(db.fit_predict(&x).unwrap().to_vec(), vec![0, 1]);
        let q = array![[0.6, 0.0], [3.9, 0.0], [3.5, 0.0]];
        assert_eq!(db.predict(&q).unwrap().to_vec(), vec![0, -1, 1]);
        assert_eq!(db.predict(&Array2::<f64>::zeros((0, 2))).unwrap().len(), 0);
        assert!(matches!(
            db.predict(&array![[0.0, 0.0, 0.0]]),
            Err(Error::DimensionMismatch { .. })
        ));
        assert!(matches!(
            DBSCAN::new(0.0, 1),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            DBSCAN::new(1.0, 1)
                .unwrap()
                .with_metric(DistanceCalculationMetric::Minkowski(0.5)),
            Err(Error::InvalidParameter { .. })
        ));
        assert_eq!(db.get_core_sample_indices().unwrap().to_vec(), vec![0, 1]);
    }
}
