//! k-nearest-neighbours classification by brute force.
//!
//! The neighbours come from the crate's k-nearest engine ([`crate::math::k_nearest`]):
//! euclidean distances through row-chunks of the product, finished exactly where the product
//! form cancels, other metrics by scanning rows; query rows in parallel behind
//! `tuning::reduction::scan_f64`, each selected on its own, so the result does not depend on
//! the gate or the thread count. Equal distances keep the lower training index first.

use crate::error::{Error, Result};
use crate::machine_learning::fitted_state;
use crate::machine_learning::validation::{
    check_n_features, check_xy, encode_classes, require_data, require_data_width, require_nonzero,
};
use crate::math::distance::{self, DistanceCalculationMetric, Metric};
use crate::math::k_nearest::{KNearest, Queries};
use crate::persistence::Persist;
use ndarray::{Array1, Array2, ArrayBase, ArrayRef1, ArrayRef2, Data, Ix1, Ix2};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::hash::Hash;

/// How neighbours vote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Weights {
    /// One vote each.
    #[default]
    Uniform,
    /// Votes weighted by inverse distance; neighbours at distance 0, if any, take all the
    /// weight (as in scikit-learn).
    Distance,
}

impl Weights {
    /// `"uniform"` or `"distance"`.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "uniform" => Ok(Weights::Uniform),
            "distance" => Ok(Weights::Distance),
            _ => Err(Error::invalid_input(format!(
                "unknown weights {name:?}; expected 'uniform' or 'distance'"
            ))),
        }
    }

    /// The canonical name.
    pub fn name(&self) -> &'static str {
        match self {
            Weights::Uniform => "uniform",
            Weights::Distance => "distance",
        }
    }
}

/// The original's name for the voting rule.
pub type WeightingStrategy = Weights;

/// Brute-force k-nearest-neighbours classifier over `f64` class labels (scikit-learn's
/// conventions: sorted classes, checks at `fit`); the engine behind [`KNN`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KnnClassifier {
    pub n_neighbors: usize,
    pub weights: Weights,
    pub metric: Metric,
    fitted: Option<Fitted>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "FittedUnchecked")]
struct Fitted {
    x: Array2<f64>,
    sq_norms: Array1<f64>,
    codes: Vec<u32>,
    classes: Array1<f64>,
}

#[derive(Deserialize)]
struct FittedUnchecked {
    x: Array2<f64>,
    sq_norms: Array1<f64>,
    codes: Vec<u32>,
    classes: Array1<f64>,
}

impl TryFrom<FittedUnchecked> for Fitted {
    type Error = String;
    fn try_from(f: FittedUnchecked) -> std::result::Result<Self, String> {
        let n = f.x.nrows();
        if n == 0
            || f.sq_norms.len() != n
            || f.codes.len() != n
            || f.codes.iter().any(|&c| c as usize >= f.classes.len())
        {
            return Err("corrupt KNN: inconsistent training data".into());
        }
        Ok(Fitted {
            x: f.x,
            sq_norms: f.sq_norms,
            codes: f.codes,
            classes: f.classes,
        })
    }
}

impl Default for KnnClassifier {
    fn default() -> Self {
        Self::new(5)
    }
}

impl KnnClassifier {
    /// `n_neighbors` neighbours, uniform weights, euclidean metric.
    pub fn new(n_neighbors: usize) -> Self {
        Self {
            n_neighbors,
            weights: Weights::Uniform,
            metric: Metric::Euclidean,
            fitted: None,
        }
    }

    crate::accessors::builder_setters! {
        with_weights(weights: Weights),
        with_metric(metric: Metric),
    }

    crate::accessors::fitted_getters! {
        fitted;
        /// Sorted class labels (`classes_`).
        classes -> &classes: Array1<f64>,
        /// The stored training samples.
        x_train -> &x: Array2<f64>,
    }

    /// Training samples seen during fit (`n_samples_fit_`).
    pub fn n_samples_fit(&self) -> Option<usize> {
        self.fitted.as_ref().map(|f| f.x.nrows())
    }

    /// Features seen during fit (`n_features_in_`).
    pub fn n_features(&self) -> Option<usize> {
        self.fitted.as_ref().map(|f| f.x.ncols())
    }

    /// The one check of the neighbour search's hyper-parameters, for every door.
    pub fn check_params(&self) -> Result<()> {
        require_nonzero("n_neighbors", self.n_neighbors)?;
        self.metric.check_params()
    }

    /// Store the training set.
    pub fn fit(&mut self, x: &ArrayRef2<f64>, y: &ArrayRef1<f64>) -> Result<&mut Self> {
        let (x, y) = (x.view(), y.view());
        self.check_params()?;
        check_xy(&x, &y)?;
        self.metric.check_range(&x, "X")?;
        if self.n_neighbors > x.nrows() {
            return Err(Error::invalid_input(format!(
                "n_neighbors ({}) must not exceed the number of training samples (n_samples = {})",
                self.n_neighbors,
                x.nrows()
            )));
        }
        let (classes, codes) = encode_classes(&y);
        let x = x.as_standard_layout().into_owned();
        let sq_norms = distance::row_sq_norms(x.view());
        self.fitted = Some(Fitted {
            x,
            sq_norms,
            codes,
            classes,
        });
        Ok(self)
    }

    fn fitted(&self) -> Result<&Fitted> {
        fitted_state(&self.fitted, "KNN")
    }

    fn check_k(k: usize, available: usize) -> Result<()> {
        if k == 0 {
            return Err(Error::invalid_input(
                "n_neighbors must be at least 1, got 0",
            ));
        }
        if k > available {
            return Err(Error::invalid_input(format!(
                "n_neighbors ({k}) must not exceed the number of training samples available ({available})"
            )));
        }
        Ok(())
    }

    /// Distances to and indices of the `n_neighbors` (default: the model's) nearest training
    /// samples of every row of `x`, nearest first.
    pub fn kneighbors(
        &self,
        x: &ArrayRef2<f64>,
        n_neighbors: Option<usize>,
    ) -> Result<(Array2<f64>, Array2<usize>)> {
        let x = x.view();
        let fitted = self.fitted()?;
        check_n_features(&x, fitted.x.ncols(), "KNN")?;
        self.metric.check_range(&x, "X")?;
        let k = n_neighbors.unwrap_or(self.n_neighbors);
        Self::check_k(k, fitted.x.nrows())?;
        self.searcher(fitted).search(Queries::Rows(x), k)
    }

    /// Neighbours of the training samples themselves, each sample excluded from its own list
    /// (scikit-learn's `kneighbors(X=None)`): when duplicates hide the sample, the first
    /// neighbour is the one dropped.
    pub fn kneighbors_of_training(
        &self,
        n_neighbors: Option<usize>,
    ) -> Result<(Array2<f64>, Array2<usize>)> {
        let fitted = self.fitted()?;
        let k = n_neighbors.unwrap_or(self.n_neighbors);
        Self::check_k(k, fitted.x.nrows().saturating_sub(1))?;
        let (dist, ind) = self
            .searcher(fitted)
            .search(Queries::Reference { include_self: true }, k + 1)?;
        let n = fitted.x.nrows();
        let mut out_d = Array2::zeros((n, k));
        let mut out_i = Array2::zeros((n, k));
        for i in 0..n {
            let drop = ind.row(i).iter().position(|&j| j == i).unwrap_or(0);
            let kept = (0..=k).filter(|&c| c != drop);
            for (c, src) in kept.enumerate() {
                out_d[[i, c]] = dist[[i, src]];
                out_i[[i, c]] = ind[[i, src]];
            }
        }
        Ok((out_d, out_i))
    }

    /// Class probabilities (`n_samples x n_classes`, columns in `classes()` order).
    pub fn predict_proba(&self, x: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        let fitted = self.fitted()?;
        let (dist, ind) = self.kneighbors(x, None)?;
        let mut proba = Array2::zeros((dist.nrows(), fitted.classes.len()));
        for ((d, i), mut p) in dist
            .rows()
            .into_iter()
            .zip(ind.rows())
            .zip(proba.rows_mut())
        {
            let exact = self.weights == Weights::Distance && d.iter().any(|&v| v == 0.0);
            for (&dj, &j) in d.iter().zip(i.iter()) {
                let w = match self.weights {
                    Weights::Uniform => 1.0,
                    Weights::Distance if exact => f64::from(u8::from(dj == 0.0)),
                    Weights::Distance => 1.0 / dj,
                };
                p[fitted.codes[j] as usize] += w;
            }
            let total = p.sum();
            if total > 0.0 {
                p /= total;
            }
        }
        Ok(proba)
    }

    /// Predicted class labels: the class with the largest (weighted) vote, ties to the lowest
    /// class.
    pub fn predict(&self, x: &ArrayRef2<f64>) -> Result<Array1<f64>> {
        let proba = self.predict_proba(x)?;
        let classes = &self.fitted()?.classes;
        Ok(proba
            .rows()
            .into_iter()
            .map(|p| {
                let best = p
                    .iter()
                    .enumerate()
                    .fold(0, |b, (k, &v)| if v > p[b] { k } else { b });
                classes[best]
            })
            .collect())
    }

    /// The k-nearest engine over the training rows (their norms stored at `fit`).
    fn searcher<'a>(&self, fitted: &'a Fitted) -> KNearest<'a> {
        KNearest::with_sq_norms(fitted.x.view(), fitted.sq_norms.view(), self.metric)
    }
}

crate::machine_learning::linear_model::supervised_conveniences!(KnnClassifier: accuracy_score);

impl Persist for KnnClassifier {
    const MODEL_NAME: &'static str = "KNN";
}

/// The original RustyML `KNN<T>`: any hashable label type over the [`KnnClassifier`] engine.
/// Labels are coded in order of first appearance, so a tied vote goes to the label seen first
/// in the training target.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KNN<T> {
    engine: KnnClassifier,
    metric: DistanceCalculationMetric,
    /// Distinct training labels, indexed by their code.
    labels: Option<Vec<T>>,
}

impl<T: Clone + Hash + Eq> Default for KNN<T> {
    /// k 5, uniform weights, euclidean.
    fn default() -> Self {
        Self::new(5).expect("valid defaults")
    }
}

impl<T: Clone + Hash + Eq> KNN<T> {
    /// `k` neighbours (>= 1, else `InvalidParameter`), uniform weights, euclidean.
    pub fn new(k: usize) -> Result<Self> {
        let engine = KnnClassifier::new(k);
        engine.check_params()?;
        Ok(Self {
            engine,
            metric: DistanceCalculationMetric::Euclidean,
            labels: None,
        })
    }

    pub fn with_weighting_strategy(mut self, weighting_strategy: WeightingStrategy) -> Self {
        self.engine.weights = weighting_strategy;
        self
    }

    /// Euclidean, manhattan or minkowski (`p >= 1`, finite; else `InvalidParameter`).
    pub fn with_metric(mut self, metric: DistanceCalculationMetric) -> Result<Self> {
        self.engine.metric = metric.to_metric();
        self.engine.check_params()?;
        self.metric = metric;
        Ok(self)
    }

    pub fn get_k(&self) -> usize {
        self.engine.n_neighbors
    }

    pub fn get_weighting_strategy(&self) -> WeightingStrategy {
        self.engine.weights
    }

    pub fn get_metric(&self) -> DistanceCalculationMetric {
        self.metric
    }

    pub fn get_x_train(&self) -> Option<&Array2<f64>> {
        self.engine.x_train()
    }

    /// Store the training set; empty -> `EmptyInput`, NaN/inf -> `NonFinite`, `x`/`y` length
    /// disagreement -> `DimensionMismatch`, fewer samples than `k` -> `InvalidInput`.
    pub fn fit(&mut self, x: &ArrayRef2<f64>, y: &ArrayRef1<T>) -> Result<&mut Self> {
        require_data(&x.view(), "KNN training data")?;
        if y.len() != x.nrows() {
            return Err(Error::dimension_mismatch(x.nrows(), y.len()));
        }
        let mut index: HashMap<&T, usize> = HashMap::new();
        let mut labels: Vec<T> = Vec::new();
        let codes: Array1<f64> = y
            .iter()
            .map(|label| {
                let next = labels.len();
                let code = *index.entry(label).or_insert(next);
                if code == next {
                    labels.push(label.clone());
                }
                code as f64
            })
            .collect();
        self.engine.fit(x, &codes)?;
        self.labels = Some(labels);
        Ok(self)
    }

    /// Majority (or inverse-distance weighted) label of the `k` nearest training samples;
    /// unfitted -> `NotFitted`, empty -> `EmptyInput`, wrong width -> `DimensionMismatch`.
    pub fn predict(&self, x: &ArrayRef2<f64>) -> Result<Array1<T>> {
        let (Some(labels), Some(train)) = (self.labels.as_ref(), self.engine.x_train()) else {
            return Err(Error::NotFitted("KNN"));
        };
        require_data_width(&x.view(), train.ncols(), "KNN input")?;
        let codes = self.engine.predict(x)?;
        Ok(codes.iter().map(|&c| labels[c as usize].clone()).collect())
    }

    /// Same as [`KNN::predict`]: the neighbour search already runs on rayon behind its gate.
    pub fn predict_parallel<S>(&self, x: &ArrayBase<S, Ix2>) -> Result<Array1<T>>
    where
        S: Data<Elem = f64> + Send + Sync,
        T: Send + Sync,
    {
        self.predict(x)
    }

    /// Fit, then predict the training samples.
    pub fn fit_predict(
        &mut self,
        x_train: &ArrayRef2<f64>,
        y_train: &ArrayRef1<T>,
    ) -> Result<Array1<T>> {
        self.fit(x_train, y_train)?;
        self.predict(x_train)
    }
}

crate::machine_learning::path_persistence!(KNN<T>);

impl<T: Serialize + for<'de> Deserialize<'de>> Persist for KNN<T> {
    const MODEL_NAME: &'static str = "KNN<T>";
}

impl<'a, T, S1, S2> crate::traits::Fit<(&'a ArrayBase<S1, Ix2>, &'a ArrayBase<S2, Ix1>)> for KNN<T>
where
    T: Clone + Hash + Eq,
    S1: Data<Elem = f64>,
    S2: Data<Elem = T>,
{
    fn fit(&mut self, data: (&'a ArrayBase<S1, Ix2>, &'a ArrayBase<S2, Ix1>)) -> Result<&mut Self> {
        KNN::fit(self, data.0, data.1)
    }
}

impl<'a, T, S> crate::traits::Predict<&'a ArrayBase<S, Ix2>> for KNN<T>
where
    T: Clone + Hash + Eq,
    S: Data<Elem = f64>,
{
    type Output = Array1<T>;
    fn predict(&self, x: &'a ArrayBase<S, Ix2>) -> Result<Array1<T>> {
        KNN::predict(self, x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::serial_and_parallel;
    use crate::math::distance::SCAN_F64;
    use crate::math::matmul;
    use ndarray::array;

    fn blobs(n: usize, d: usize, seed: usize) -> (Array2<f64>, Array1<f64>) {
        let x = Array2::from_shape_fn((n, d), |(i, j)| {
            let class = (i % 3) as f64;
            class * 2.0
                + (((i * 7919 + j * 104_729 + seed * 13) % 1000) as f64 / 1000.0 - 0.5) * 3.0
        });
        let y = Array1::from_shape_fn(n, |i| (i % 3) as f64);
        (x, y)
    }

    #[test]
    fn hand_computed_neighbours_and_votes() {
        // 1-D points 0, 1, 3, 6 with classes a a b b; query 2.0 is 1 from 1 and 3 (tie: the
        // lower index, sample 1, comes first), 2 from 0.
        let x = array![[0.0], [1.0], [3.0], [6.0]];
        let y = array![10.0, 10.0, 20.0, 20.0];
        let mut knn = KnnClassifier::new(3);
        knn.fit(&x, &y).unwrap();
        let (d, i) = knn.kneighbors(&array![[2.0]], None).unwrap();
        assert_eq!(i.row(0).to_vec(), vec![1, 2, 0]);
        assert_eq!(d.row(0).to_vec(), vec![1.0, 1.0, 2.0]);
        // uniform: two votes for 10, one for 20
        assert_eq!(
            knn.predict_proba(&array![[2.0]]).unwrap().row(0).to_vec(),
            vec![2.0 / 3.0, 1.0 / 3.0]
        );
        assert_eq!(knn.predict(&array![[2.0]]).unwrap()[0], 10.0);
        // distance weights at query 4: neighbours 3 (d=1, class 20), 6 (d=2, 20), 1 (d=3, 10)
        let mut weighted = KnnClassifier::new(3).with_weights(Weights::Distance);
        weighted.fit(&x, &y).unwrap();
        let p = weighted.predict_proba(&array![[4.0]]).unwrap();
        let total = 1.0 + 0.5 + 1.0 / 3.0;
        assert!((p[[0, 0]] - (1.0 / 3.0) / total).abs() < 1e-15);
        assert!((p[[0, 1]] - 1.5 / total).abs() < 1e-15);
        // a query on a training point: the zero-distance neighbour takes all the weight
        assert_eq!(
            weighted
                .predict_proba(&array![[3.0]])
                .unwrap()
                .row(0)
                .to_vec(),
            vec![0.0, 1.0]
        );
        // manhattan in 2-D: |dx| + |dy|
        let mut l1 = KnnClassifier::new(1).with_metric(Metric::Manhattan);
        l1.fit(&array![[0.0, 0.0], [3.0, 3.0]], &array![0.0, 1.0])
            .unwrap();
        let (d, i) = l1.kneighbors(&array![[2.0, 1.5]], Some(2)).unwrap();
        assert_eq!(i.row(0).to_vec(), vec![1, 0]);
        assert_eq!(d.row(0).to_vec(), vec![2.5, 3.5]);
    }

    #[test]
    fn product_path_finds_the_same_neighbours_as_a_direct_scan() {
        let (x, y) = blobs(300, 5, 1);
        let (q, _) = blobs(120, 5, 2);
        let mut knn = KnnClassifier::new(7);
        knn.fit(&x, &y).unwrap();
        let (d, i) = knn.kneighbors(&q, None).unwrap();
        for r in 0..q.nrows() {
            let mut exact: Vec<(f64, usize)> = x
                .outer_iter()
                .map(|t| distance::euclidean(q.row(r), t).unwrap())
                .zip(0..)
                .collect();
            exact.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            for c in 0..7 {
                assert_eq!(i[[r, c]], exact[c].1, "row {r} rank {c}");
                // product-form rounding is relative to the norms (see math::distance tests)
                assert!((d[[r, c]] - exact[c].0).abs() < 1e-6, "row {r} rank {c}");
            }
        }
        // minkowski p=2 takes the same path, p=1 the manhattan scan
        let mut m2 = KnnClassifier::new(7).with_metric(Metric::Minkowski(2.0));
        m2.fit(&x, &y).unwrap();
        assert_eq!(m2.kneighbors(&q, None).unwrap().1, i);
    }

    #[test]
    fn training_neighbours_exclude_the_sample_itself() {
        let x = array![[0.0], [1.0], [1.0], [5.0]];
        let mut knn = KnnClassifier::new(2);
        knn.fit(&x, &array![0.0, 0.0, 1.0, 1.0]).unwrap();
        let (d, i) = knn.kneighbors_of_training(None).unwrap();
        assert_eq!(i.row(0).to_vec(), vec![1, 2]);
        assert_eq!(i.row(1).to_vec(), vec![2, 0]); // its duplicate first, itself dropped
        assert_eq!(i.row(2).to_vec(), vec![1, 0]);
        assert_eq!(d.row(3).to_vec(), vec![4.0, 4.0]);
        assert!(knn.kneighbors_of_training(Some(4)).is_err());
    }

    #[test]
    fn scan_gate_serial_and_parallel_agree_bitwise_on_both_paths() {
        let (x, y) = blobs(400, 6, 3);
        let (q, _) = blobs(150, 6, 4);
        for metric in [Metric::Euclidean, Metric::Manhattan, Metric::Minkowski(3.0)] {
            let mut knn = KnnClassifier::new(5)
                .with_metric(metric)
                .with_weights(Weights::Distance);
            knn.fit(&x, &y).unwrap();
            let (s, p) = serial_and_parallel(&SCAN_F64, || {
                let (d, i) = knn.kneighbors(&q, Some(40)).unwrap();
                (
                    d.mapv(f64::to_bits),
                    i,
                    knn.predict_proba(&q).unwrap().mapv(f64::to_bits),
                )
            });
            assert_eq!(s, p, "{metric:?}");
        }
    }

    #[test]
    fn tiling_policy_never_changes_the_neighbours() {
        let (x, y) = blobs(500, 8, 5);
        let (q, _) = blobs(333, 8, 6);
        let mut knn = KnnClassifier::new(9);
        knn.fit(&x, &y).unwrap();
        let _lock = crate::gate::GATE_TEST_LOCK
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let reference = knn.kneighbors(&q, None).unwrap();
        let run = |chunk, resident| {
            crate::gate::with_gate(&matmul::CHUNK_ELEMS, chunk, || {
                crate::gate::with_gate(&matmul::CACHE_RESIDENT_MAX_BYTES, resident, || {
                    knn.kneighbors(&q, None).unwrap()
                })
            })
        };
        // 50-row chunks, as a parallel swarm or one after another: the same bits.
        for resident in [usize::MAX, 0] {
            let got = run(50 * 500, resident);
            assert_eq!(got.1, reference.1, "resident={resident}");
            assert_eq!(
                got.0.mapv(f64::to_bits),
                reference.0.mapv(f64::to_bits),
                "resident={resident}"
            );
        }
        // One-row chunks make every product a GEMV, which gemmkit rounds differently: the
        // distances move by rounding only (relative to the norms, as every product-form
        // distance), so only neighbours at (near-)equal distances may trade places.
        let got = run(1, usize::MAX);
        assert!(got
            .0
            .iter()
            .zip(reference.0.iter())
            .all(|(a, b)| (a - b).abs() < 1e-12 * 100.0));
    }

    #[test]
    fn bad_input_is_refused_before_work() {
        let (x, y) = blobs(10, 2, 7);
        assert!(matches!(
            KnnClassifier::new(3).predict(&x),
            Err(Error::NotFitted(_))
        ));
        assert!(KnnClassifier::new(11).fit(&x, &y).is_err());
        assert!(KnnClassifier::new(0).fit(&x, &y).is_err());
        assert!(KnnClassifier::new(3)
            .with_metric(Metric::Minkowski(0.5))
            .fit(&x, &y)
            .is_err());
        assert!(KnnClassifier::new(3)
            .fit(&x, &y.slice(ndarray::s![..9]))
            .is_err());
        let mut nan = x.clone();
        nan[[2, 1]] = f64::NAN;
        assert!(KnnClassifier::new(3).fit(&nan, &y).is_err());
        assert!(Weights::parse("gaussian").is_err());
        let mut knn = KnnClassifier::new(3);
        knn.fit(&x, &y).unwrap();
        assert!(knn.predict(&Array2::zeros((2, 3))).is_err());
        assert!(knn.predict(&nan).is_err());
        assert!(knn.kneighbors(&x, Some(11)).is_err());
        assert!(knn.predict(&Array2::zeros((0, 2))).is_err());
    }

    #[test]
    fn save_and_load_round_trip() {
        let (x, y) = blobs(60, 3, 8);
        let mut knn = KnnClassifier::new(4)
            .with_metric(Metric::Minkowski(3.0))
            .with_weights(Weights::Distance);
        knn.fit(&x, &y).unwrap();
        let back = KnnClassifier::from_bytes(&knn.to_bytes().unwrap()).unwrap();
        assert_eq!(
            back.predict_proba(&x).unwrap(),
            knn.predict_proba(&x).unwrap()
        );
        assert_eq!(back.metric, Metric::Minkowski(3.0));
    }

    #[test]
    fn generic_labels_and_original_error_kinds() {
        let x = array![[0.0, 0.0], [1.0, 0.0], [10.0, 0.0], [11.0, 0.0]];
        let y = array!["b".to_string(), "b".into(), "a".into(), "a".into()];
        let mut knn = KNN::<String>::new(1).unwrap();
        knn.fit(&x, &y).unwrap();
        let p = knn.predict(&array![[0.2, 0.0], [10.6, 0.0]]).unwrap();
        assert_eq!(p.to_vec(), vec!["b".to_string(), "a".to_string()]);
        // k = 2 between the groups: one vote each, so the label seen first ("b") wins.
        let mut two = KNN::<String>::new(2).unwrap();
        two.fit(&array![[0.0], [2.0]], &array!["b".to_string(), "a".into()])
            .unwrap();
        assert_eq!(two.predict(&array![[1.0]]).unwrap()[0], "b");
        assert!(matches!(
            KNN::<i32>::new(0),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            KNN::<i32>::new(1).unwrap().fit(&x, &array![0, 1]),
            Err(Error::DimensionMismatch {
                expected: 4,
                found: 2
            })
        ));
        assert!(matches!(
            KNN::<i32>::new(5).unwrap().fit(&x, &array![0, 1, 0, 1]),
            Err(Error::InvalidInput(_))
        ));
        assert!(matches!(
            knn.predict(&array![[0.0]]),
            Err(Error::DimensionMismatch { .. })
        ));
        assert!(matches!(
            KNN::<i32>::new(1).unwrap().predict(&x),
            Err(Error::NotFitted(_))
        ));
    }
}
