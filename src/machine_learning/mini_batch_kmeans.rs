//! k-means fitted batch by batch, as scikit-learn's `MiniBatchKMeans.partial_fit`: each call
//! sees one batch; the state kept between calls is the `k x d` centers and their counts, never
//! the data.
//!
//! The first batch seeds the centers (k-means++, random rows, or given centers); every batch
//! is labelled against the current centers and each center moves to the weighted mean of its
//! old position (weight: the samples it has absorbed so far) and its new points, summed in row
//! order (scikit-learn's update). scikit-learn's random reassignment of rarely-chosen centers
//! is not made (its `reassignment_ratio=0`).

use crate::error::{Error, Result};
use crate::machine_learning::fitted_state;
use crate::machine_learning::kmeans::{kmeans_plusplus, KMeansInit};
use crate::math::distance::{self, row_sq_norms, Metric};
use crate::persistence::Persist;
use crate::validation::{check_features, check_n_features};
use ndarray::{Array1, Array2, ArrayRef2, ArrayView2, Axis};
use serde::{Deserialize, Serialize};

/// What a mini-batch k-means has learned so far.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct CentersSoFar {
    centers: Array2<f64>,
    /// Samples absorbed by each center (scikit-learn's `_counts`).
    counts: Array1<f64>,
    /// The last batch's labels and inertia against the updated centers.
    labels: Array1<isize>,
    inertia: f64,
    n_steps: usize,
}

/// k-means fitted batch by batch (scikit-learn's `MiniBatchKMeans.partial_fit`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MiniBatchKMeans {
    pub n_clusters: usize,
    pub init: KMeansInit,
    pub random_state: Option<u64>,
    state: Option<CentersSoFar>,
}

impl MiniBatchKMeans {
    pub fn new(n_clusters: usize, init: KMeansInit, random_state: Option<u64>) -> Self {
        Self {
            n_clusters,
            init,
            random_state,
            state: None,
        }
    }

    fn first_centers(&self, x: ArrayView2<f64>) -> Result<Array2<f64>> {
        let k = self.n_clusters;
        if k == 0 {
            return Err(Error::invalid_input("n_clusters must be at least 1, got 0"));
        }
        if x.nrows() < k {
            return Err(Error::invalid_input(format!(
                "n_samples={} should be >= n_clusters={k}",
                x.nrows()
            )));
        }
        let mut rng = crate::random::rng_from(self.random_state);
        Ok(match &self.init {
            KMeansInit::KMeansPlusPlus => {
                let norms = row_sq_norms(x);
                kmeans_plusplus(x, norms.view(), k, &mut rng)
            }
            KMeansInit::Random => {
                let picks = rand::seq::index::sample(&mut rng, x.nrows(), k).into_vec();
                x.select(Axis(0), &picks)
            }
            KMeansInit::Centers(c) => {
                if c.dim() != (k, x.ncols()) {
                    return Err(Error::invalid_input(format!(
                        "the init centers have shape {:?}, expected ({k}, {}) (n_clusters, n_features)",
                        c.dim(),
                        x.ncols()
                    )));
                }
                check_features(&c.view(), "init centers")?;
                c.clone()
            }
        })
    }

    /// One mini-batch step on `x`; the first call seeds the centers from it.
    pub fn partial_fit(&mut self, x: &ArrayRef2<f64>) -> Result<()> {
        let x = x.view();
        match &self.state {
            None => check_features(&x, "X")?,
            Some(st) => check_n_features(&x, st.centers.ncols(), "KMeans")?,
        }
        Metric::Euclidean.check_range(&x, "X")?;
        let (mut centers, mut counts, n_steps) = match &self.state {
            None => (self.first_centers(x)?, Array1::zeros(self.n_clusters), 0),
            Some(st) => (st.centers.clone(), st.counts.clone(), st.n_steps),
        };
        let (labels, _) = distance::nearest_rows(x, centers.view())?;
        // center * absorbed + its new rows in row order, then divided by the new count
        let k = centers.nrows();
        let mut added = vec![0usize; k];
        for &l in &labels {
            added[l] += 1;
        }
        for c in 0..k {
            if added[c] > 0 {
                let w = counts[c];
                centers.row_mut(c).mapv_inplace(|v| v * w);
            }
        }
        for (i, &l) in labels.iter().enumerate() {
            let mut row = centers.row_mut(l);
            row += &x.row(i);
        }
        for c in 0..k {
            if added[c] > 0 {
                counts[c] += added[c] as f64;
                // scikit-learn multiplies by the reciprocal
                let alpha = 1.0 / counts[c];
                centers.row_mut(c).mapv_inplace(|v| v * alpha);
            }
        }
        let (labels, _) = distance::nearest_rows(x, centers.view())?;
        let inertia = labels
            .iter()
            .enumerate()
            .map(|(i, &l)| Metric::SquaredEuclidean.between(x.row(i), centers.row(l)))
            .sum();
        self.state = Some(CentersSoFar {
            centers,
            counts,
            labels: labels.into_iter().map(|l| l as isize).collect(),
            inertia,
            n_steps: n_steps + 1,
        });
        Ok(())
    }

    fn fitted(&self, x: &ArrayView2<f64>) -> Result<&CentersSoFar> {
        let st = fitted_state(&self.state, "KMeans")?;
        check_n_features(x, st.centers.ncols(), "KMeans")?;
        Metric::Euclidean.check_range(x, "X")?;
        Ok(st)
    }

    pub fn predict(&self, x: &ArrayRef2<f64>) -> Result<Array1<usize>> {
        let x = x.view();
        let st = self.fitted(&x)?;
        Ok(Array1::from(
            distance::nearest_rows(x, st.centers.view())?.0,
        ))
    }

    pub fn transform(&self, x: &ArrayRef2<f64>) -> Result<Array2<f64>> {
        let x = x.view();
        let st = self.fitted(&x)?;
        distance::pairwise(x, st.centers.view(), Metric::Euclidean)
    }

    pub fn score(&self, x: &ArrayRef2<f64>) -> Result<f64> {
        let x = x.view();
        let st = self.fitted(&x)?;
        let (labels, _) = distance::nearest_rows(x, st.centers.view())?;
        Ok(-labels
            .iter()
            .enumerate()
            .map(|(i, &l)| Metric::SquaredEuclidean.between(x.row(i), st.centers.row(l)))
            .sum::<f64>())
    }

    crate::accessors::fitted_getters! {
        state;
        cluster_centers -> &centers: Array2<f64>,
        counts -> &counts: Array1<f64>,
        labels -> &labels: Array1<isize>,
        inertia -> inertia: f64,
        n_steps -> n_steps: usize,
    }
}

impl Persist for MiniBatchKMeans {
    const MODEL_NAME: &'static str = "MiniBatchKMeans";
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn a_center_moves_to_the_mean_of_everything_it_absorbed() {
        // Hand derivation: one cluster seeded at (0, 0); batches {(2,0),(4,0)} then {(6,3)}:
        // the center is the running mean of the three points seen, (4, 1), with 3 absorbed.
        let mut km = MiniBatchKMeans::new(1, KMeansInit::Centers(array![[0.0, 0.0]]), None);
        km.partial_fit(&array![[2.0, 0.0], [4.0, 0.0]]).unwrap();
        assert_eq!(km.cluster_centers().unwrap(), &array![[3.0, 0.0]]);
        km.partial_fit(&array![[6.0, 3.0]]).unwrap();
        assert_eq!(km.cluster_centers().unwrap(), &array![[4.0, 1.0]]);
        assert_eq!(km.counts().unwrap(), &array![3.0]);
        assert_eq!(km.n_steps(), Some(2));
    }
}
