//! The scikit-learn-style metrics behind the Python bindings: scikit-learn's names, options,
//! argument order `(y_true, y_pred)` and edge-case rules, with bad input reported as an
//! [`Error`](crate::error::Error), never a panic.
//!
//! Labels may be any [`Label`] type (integers, floats, booleans, strings). Bad input
//! (mismatched lengths, empty arrays, NaN, a single class where a metric needs two,
//! probabilities outside `[0, 1]`, an unknown option) is refused with
//! [`Error::InvalidInput`](crate::error::Error) naming the problem. The original crate's API
//! (`rustyml::metrics::*`) validates in its own terms and runs these same cores.

pub mod classification;
pub mod clustering;
pub mod ranking;
pub mod regression;
pub mod weighted_counts;

pub use crate::math::labels::Label;
pub use classification::{
    accuracy_score, balanced_accuracy_score, cohen_kappa_score, confusion_matrix, f1_score,
    fbeta_score, log_loss, matthews_corrcoef, normalize_confusion_matrix, precision_recall_fscore,
    precision_recall_fscore_support, precision_score, recall_score, roc_auc_score,
    roc_auc_score_multiclass, Average, ConfusionNormalize, KappaWeights, MultiClass, Prfs,
    Probabilities, ZeroDivision,
};
pub use clustering::{
    adjusted_mutual_info_score, adjusted_rand_score, calinski_harabasz_score, completeness_score,
    davies_bouldin_score, fowlkes_mallows_score, homogeneity_completeness_v_measure,
    homogeneity_score, mutual_info_score, normalized_mutual_info_score, silhouette_samples,
    silhouette_score, v_measure_score, AverageMethod, SilhouetteMetric,
};
pub use ranking::{
    average_precision_score, precision_recall_curve, roc_curve, top_k_accuracy_score, TieRule,
};
pub use regression::{
    explained_variance_score, mean_absolute_error, mean_absolute_percentage_error,
    mean_squared_error, median_absolute_error, r2_score, root_mean_squared_error,
};
pub use weighted_counts::{
    multilabel_counts, weighted_class_counts, weighted_confusion_matrix, MultilabelCounts,
    WeightedClassCounts,
};

use crate::error::{Error, Result};

/// Two arrays describing the same samples: equal lengths, not empty.
pub(crate) fn check_lengths(a: usize, b: usize, a_name: &str, b_name: &str) -> Result<()> {
    if a != b {
        return Err(Error::invalid_input(format!(
            "{a_name} and {b_name} have different lengths ({a} and {b})"
        )));
    }
    if a == 0 {
        return Err(Error::invalid_input(format!(
            "{a_name} and {b_name} are empty"
        )));
    }
    Ok(())
}
