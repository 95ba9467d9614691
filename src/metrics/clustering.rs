//! Clustering metrics with the original crate's signatures: `isize` cluster labels in arrays
//! of any storage, a plain `f64`, panics on bad input.
//!
//! Each validates in the original's terms and then runs the scikit-learn-style function of
//! [`checked::clustering`](super::checked::clustering): the mutual-information scores use the
//! arithmetic mean of the entropies, the V-measure `beta = 1`.

use super::checked::clustering::{self as checked, AverageMethod, SilhouetteMetric};
use super::{check_pair_len, or_panic, pair_views};
use crate::error::{Error, Result};
use crate::math::DistanceCalculationMetric;
use ndarray::{ArrayBase, ArrayRef1, ArrayRef2, ArrayView1, ArrayView2, Data, Ix1};

#[doc(hidden)]
pub use super::checked::clustering::SILHOUETTE;

/// Generates the original-API wrapper of a checked score of two labelings.
macro_rules! labeling_metric {
    ($(#[$doc:meta])* $name:ident => $body:expr) => {
        $(#[$doc])*
        ///
        /// # Panics
        /// If the lengths differ or the input is empty.
        pub fn $name<S>(labels_true: &ArrayBase<S, Ix1>, labels_pred: &ArrayBase<S, Ix1>) -> f64
        where
            S: Data<Elem = isize>,
        {
            let body: fn(ArrayView1<isize>, ArrayView1<isize>) -> Result<f64> = $body;
            or_panic(pair_views(labels_true, labels_pred).and_then(|(t, p)| body(t, p)))
        }
    };
}

labeling_metric!(
    /// Rand index adjusted for chance: 1 for identical partitions, ~0 for random ones.
    adjusted_rand_index => checked::adjusted_rand_score
);
labeling_metric!(
    /// Mutual information over the arithmetic mean of the two entropies.
    normalized_mutual_info => |t, p| {
        checked::normalized_mutual_info_score(t, p, AverageMethod::Arithmetic)
    }
);
labeling_metric!(
    /// Mutual information adjusted for chance (arithmetic-mean normalisation).
    adjusted_mutual_info => |t, p| {
        checked::adjusted_mutual_info_score(t, p, AverageMethod::Arithmetic)
    }
);
labeling_metric!(
    /// Each cluster holds members of a single class only (1 = perfectly homogeneous).
    homogeneity_score => checked::homogeneity_score
);
labeling_metric!(
    /// All members of a class fall in one cluster (1 = perfectly complete).
    completeness_score => checked::completeness_score
);
labeling_metric!(
    /// Harmonic mean of homogeneity and completeness.
    v_measure_score => |t, p| checked::v_measure_score(t, p, 1.0)
);
labeling_metric!(
    /// Geometric mean of pairwise precision and recall; 0 when no pair shares a cluster.
    fowlkes_mallows_score => checked::fowlkes_mallows_score
);

/// Data and labels of an internal metric: one label per row, not empty, and between 2 and
/// `n_samples - 1` clusters.
fn internal<'a>(
    x: &'a ArrayRef2<f64>,
    labels: &'a ArrayRef1<isize>,
) -> Result<(ArrayView2<'a, f64>, ArrayView1<'a, isize>)> {
    check_pair_len(x.nrows(), labels.len())?;
    let mut distinct = labels.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    let k = distinct.len();
    if k < 2 || k >= x.nrows() {
        return Err(Error::invalid_input(format!(
            "number of clusters is {k}; it must be between 2 and n_samples - 1 = {}",
            x.nrows() - 1
        )));
    }
    Ok((x.view(), labels.view()))
}

/// Mean silhouette coefficient `(b - a) / max(a, b)` under `metric`; samples alone in their
/// cluster count as 0.
///
/// # Panics
/// If the row count differs from the label count, the input is empty or holds NaN, or the
/// number of clusters is not in `2..n_samples`.
pub fn silhouette_score(
    x: &ArrayRef2<f64>,
    labels: &ArrayRef1<isize>,
    metric: DistanceCalculationMetric,
) -> f64 {
    let metric = SilhouetteMetric::Distance(metric.to_metric());
    or_panic(internal(x, labels).and_then(|(x, l)| checked::silhouette_score(x, l, metric)))
}

/// Davies-Bouldin index: mean over clusters of the worst `(s_i + s_j) / d(c_i, c_j)`; lower
/// is better.
///
/// # Panics
/// As [`silhouette_score`].
pub fn davies_bouldin_score(x: &ArrayRef2<f64>, labels: &ArrayRef1<isize>) -> f64 {
    or_panic(internal(x, labels).and_then(|(x, l)| checked::davies_bouldin_score(x, l)))
}

/// Calinski-Harabasz variance ratio; 1.0 when every sample sits on its centroid.
///
/// # Panics
/// As [`silhouette_score`].
pub fn calinski_harabasz_score(x: &ArrayRef2<f64>, labels: &ArrayRef1<isize>) -> f64 {
    or_panic(internal(x, labels).and_then(|(x, l)| checked::calinski_harabasz_score(x, l)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{arr1, arr2};

    #[test]
    fn labeling_scores_by_hand() {
        let t = arr1(&[0isize, 0, 1, 1]);
        let p = arr1(&[0isize, 1, 2, 3]);
        // homogeneity 1 (every cluster pure), completeness 1/2 -> V = 2/3
        assert_eq!(homogeneity_score(&t, &p), 1.0);
        assert!((completeness_score(&t, &p) - 0.5).abs() < 1e-15);
        assert!((v_measure_score(&t, &p) - 2.0 / 3.0).abs() < 1e-15);
        assert_eq!(
            adjusted_mutual_info(&arr1(&[0isize, 1]), &arr1(&[0isize, 1])),
            1.0
        );
    }

    #[test]
    #[should_panic(expected = "invalid input: number of clusters")]
    fn one_cluster_panics() {
        let x = arr2(&[[0.0], [1.0], [2.0]]);
        calinski_harabasz_score(&x, &arr1(&[1isize, 1, 1]));
    }
}
