//! Classification metrics with the original crate's signatures: `&ArrayBase` inputs of any
//! storage, plain results, panics on bad input.
//!
//! Each function validates in the original's terms (`"dimension mismatch: ..."`, `"input is
//! empty: ..."`, labels out of range, NaN scores) and then runs the core it shares with the
//! scikit-learn-style [`checked`](super::checked) functions.

use super::checked::classification::{self as checked, binary_auc, clipped_nll, KappaWeights};
use super::checked::ranking::{self, TieRule};
use super::{check_pair_len, or_panic, pair_views};
use crate::error::{Error, Result};
use ndarray::{Array1, ArrayRef1, ArrayRef2, ArrayView1, ArrayView2};

pub use super::confusion_matrix::ConfusionMatrix;
pub use super::multiclass_confusion_matrix::MulticlassConfusionMatrix;

/// How [`MulticlassConfusionMatrix`] combines per-class scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Average {
    /// Unweighted mean of the per-class scores.
    Macro,
    /// Global counts (equal to the accuracy for single-label data).
    Micro,
    /// Mean weighted by each class's support.
    Weighted,
}

impl From<Average> for checked::Average {
    fn from(a: Average) -> Self {
        match a {
            Average::Macro => Self::Macro,
            Average::Micro => Self::Micro,
            Average::Weighted => Self::Weighted,
        }
    }
}

/// Fraction of samples whose prediction equals the truth (floats compared within
/// `f64::EPSILON`, so the comparison is symmetric).
///
/// # Panics
/// If the lengths differ or the input is empty.
pub fn accuracy(y_true: &ArrayRef1<f64>, y_pred: &ArrayRef1<f64>) -> f64 {
    let (t, p) = or_panic(pair_views(y_true, y_pred));
    let hits = t
        .iter()
        .zip(p.iter())
        .filter(|(a, b)| (*a - *b).abs() < f64::EPSILON)
        .count();
    hits as f64 / t.len() as f64
}

/// Boolean labels and scores checked for a ranking metric: equal non-zero lengths, no NaN
/// score, and at least one positive (and with `need_negative` one negative).
fn ranked<'a>(
    labels: &'a ArrayRef1<bool>,
    scores: &'a ArrayRef1<f64>,
    need_negative: bool,
) -> Result<(Vec<bool>, Vec<f64>)> {
    check_pair_len(labels.len(), scores.len())?;
    if let Some(i) = scores.iter().position(|v| v.is_nan()) {
        return Err(Error::invalid_input(format!(
            "scores must not contain NaN (found at index {i})"
        )));
    }
    let n_pos = labels.iter().filter(|&&l| l).count();
    if need_negative && (n_pos == 0 || n_pos == labels.len()) {
        return Err(Error::invalid_input(
            "labels must contain at least one positive and one negative sample",
        ));
    }
    if n_pos == 0 {
        return Err(Error::invalid_input(
            "labels must contain at least one positive label",
        ));
    }
    Ok((labels.to_vec(), scores.to_vec()))
}

/// Area under the ROC curve (tied scores get half credit).
///
/// # Panics
/// If the lengths differ, the input is empty, a score is NaN, or one class is missing.
pub fn roc_auc(labels: &ArrayRef1<bool>, scores: &ArrayRef1<f64>) -> f64 {
    let (positive, score) = or_panic(ranked(labels, scores, true));
    binary_auc(&positive, &score)
}

/// ROC curve `(fpr, tpr, thresholds)`: the origin at threshold `+inf`, then one point per
/// distinct score in decreasing order, points on a straight segment dropped (scikit-learn's
/// default `drop_intermediate=True`).
///
/// # Panics
/// As [`roc_auc`].
pub fn roc_curve(
    labels: &ArrayRef1<bool>,
    scores: &ArrayRef1<f64>,
) -> (Array1<f64>, Array1<f64>, Array1<f64>) {
    let (positive, score) = or_panic(ranked(labels, scores, true));
    ranking::roc_curve_core(&positive, &score, None, true)
}

/// Precision-recall curve `(precision, recall, thresholds)`, thresholds increasing, ending at
/// `(precision 1, recall 0)` (scikit-learn's layout).
///
/// # Panics
/// If the lengths differ, the input is empty, a score is NaN, or no label is positive.
pub fn precision_recall_curve(
    labels: &ArrayRef1<bool>,
    scores: &ArrayRef1<f64>,
) -> (Array1<f64>, Array1<f64>, Array1<f64>) {
    let (positive, score) = or_panic(ranked(labels, scores, false));
    ranking::precision_recall_curve_core(&positive, &score, None, false)
}

/// Average precision `sum_n (R_n - R_{n-1}) P_n` over the thresholds.
///
/// # Panics
/// As [`precision_recall_curve`].
pub fn average_precision(labels: &ArrayRef1<bool>, scores: &ArrayRef1<f64>) -> f64 {
    let (positive, score) = or_panic(ranked(labels, scores, false));
    ranking::average_precision_core(&positive, &score)
}

/// Class indices and a probability table checked together: one row per label, each label a
/// column of the table.
fn class_rows<'a>(
    y_true: &'a ArrayRef1<usize>,
    y_prob: &'a ArrayRef2<f64>,
) -> Result<(ArrayView1<'a, usize>, ArrayView2<'a, f64>)> {
    check_pair_len(y_true.len(), y_prob.nrows())?;
    let k = y_prob.ncols();
    if let Some(i) = y_true.iter().position(|&c| c >= k) {
        return Err(Error::invalid_input(format!(
            "label {} at index {i} is out of range for {k} probability columns",
            y_true[i]
        )));
    }
    Ok((y_true.view(), y_prob.view()))
}

/// Mean cross-entropy. Each row of `y_prob` is renormalised to sum to 1, then the true
/// class's probability is clipped to `[EPS, 1 - EPS]` (`EPS = f64::EPSILON`).
///
/// # Panics
/// If the row count differs from `y_true`'s length, the input is empty, a label has no
/// column, or a row holds a negative/non-finite value or sums to 0.
pub fn log_loss(y_true: &ArrayRef1<usize>, y_prob: &ArrayRef2<f64>) -> f64 {
    let (t, p) = or_panic(class_rows(y_true, y_prob));
    let mut total = 0.0;
    for (i, (&c, row)) in t.iter().zip(p.rows()).enumerate() {
        let sum: f64 = row.sum();
        if row.iter().any(|v| !v.is_finite() || *v < 0.0) || sum <= 0.0 || !sum.is_finite() {
            panic!(
                "{}",
                Error::invalid_input(format!(
                    "y_prob row {i} must hold finite non-negative values with a positive sum"
                ))
            );
        }
        total += clipped_nll(row[c] / sum);
    }
    total / t.len() as f64
}

/// Cohen's kappa of two annotators over `usize` classes; 1.0 when both use a single class
/// (no disagreement is possible).
///
/// # Panics
/// If the lengths differ or the input is empty.
pub fn cohen_kappa(y_true: &ArrayRef1<usize>, y_pred: &ArrayRef1<usize>) -> f64 {
    let (t, p) = or_panic(pair_views(y_true, y_pred));
    let (_, cm) = or_panic(checked::confusion_matrix(t, p, None));
    let kappa = checked::kappa_from_confusion(cm.view(), KappaWeights::Unweighted);
    if kappa.is_nan() {
        1.0
    } else {
        kappa
    }
}

/// Fraction of samples whose true class is among the `k` highest probabilities; ties count
/// for the sample (a hit when fewer than `k` classes score strictly higher).
///
/// # Panics
/// If `k == 0`, the row count differs from `y_true`'s length, the input is empty, a label has
/// no column, or a true-class probability is NaN.
pub fn top_k_accuracy(y_true: &ArrayRef1<usize>, y_prob: &ArrayRef2<f64>, k: usize) -> f64 {
    if k == 0 {
        panic!(
            "{}",
            Error::invalid_parameter("k", "k must be at least 1, got 0")
        );
    }
    let (t, p) = or_panic(class_rows(y_true, y_prob));
    if let Some(i) = t.iter().zip(p.rows()).position(|(&c, row)| row[c].is_nan()) {
        panic!(
            "{}",
            Error::invalid_input(format!(
                "y_prob must not contain NaN at the true class (row {i})"
            ))
        );
    }
    ranking::top_k_hits(t, p, k, TieRule::Favourable) as f64 / t.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{arr1, arr2};

    #[test]
    fn curves_and_areas_agree() {
        // positives score 0.8 and 0.3, negatives 0.5 and 0.1: AUC = 3/4 (pairs won: 0.8 over
        // both, 0.3 over 0.1)
        let l = arr1(&[true, false, true, false]);
        let s = arr1(&[0.8, 0.5, 0.3, 0.1]);
        assert_eq!(roc_auc(&l, &s), 0.75);
        let (fpr, tpr, _) = roc_curve(&l, &s.view());
        let area: f64 = (1..fpr.len())
            .map(|i| (fpr[i] - fpr[i - 1]) * (tpr[i] + tpr[i - 1]) / 2.0)
            .sum();
        assert_eq!(area, 0.75);
        // AP: recall 1/2 at precision 1, recall 1 at precision 2/3
        assert!((average_precision(&l, &s) - (0.5 + 1.0 / 3.0)).abs() < 1e-15);
    }

    #[test]
    #[should_panic(expected = "at least one positive and one negative")]
    fn roc_auc_needs_both_classes() {
        roc_auc(&arr1(&[true, true]), &arr1(&[0.1, 0.2]));
    }

    #[test]
    fn log_loss_kappa_top_k_by_hand() {
        // rows renormalised: [1, 3] -> [1/4, 3/4]
        let y = arr1(&[1usize, 0]);
        let p = arr2(&[[1.0, 3.0], [0.5, 0.5]]);
        let want = -(0.75f64.ln() + 0.5f64.ln()) / 2.0;
        assert!((log_loss(&y, &p) - want).abs() < 1e-15);
        // kappa: observed 3/4, chance 1/2 -> 1/2
        let a = arr1(&[0usize, 0, 1, 1]);
        let b = arr1(&[0usize, 1, 1, 1]);
        assert!((cohen_kappa(&a, &b) - 0.5).abs() < 1e-15);
        assert_eq!(cohen_kappa(&arr1(&[2usize, 2]), &arr1(&[2usize, 2])), 1.0);
        // row 1: class 1 (0.3) has one class above it -> hit at k = 2 only
        let t = arr1(&[0usize, 1]);
        let pr = arr2(&[[0.6, 0.4, 0.0], [0.7, 0.3, 0.0]]);
        assert_eq!(top_k_accuracy(&t, &pr, 1), 0.5);
        assert_eq!(top_k_accuracy(&t, &pr, 2), 1.0);
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn log_loss_label_without_column_panics() {
        log_loss(&arr1(&[2usize]), &arr2(&[[0.5, 0.5]]));
    }
}
