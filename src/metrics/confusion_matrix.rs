//! The original crate's binary confusion matrix: counts of a two-class problem plus the
//! metrics derived from them and a text summary.

use super::{check_pair_len, or_panic};
use crate::error::{Error, Result};
use ndarray::{ArrayRef1, ArrayView1};

/// True/false positive/negative counts of a binary classifier.
///
/// Ratios with a zero denominator are 0.0, except [`specificity`](Self::specificity), which
/// is 1.0 when there are no actual negatives (no negative can be misclassified).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ConfusionMatrix {
    tp: usize,
    fp: usize,
    tn: usize,
    fn_: usize,
}

fn frac(num: usize, den: usize) -> f64 {
    if den == 0 {
        0.0
    } else {
        num as f64 / den as f64
    }
}

impl ConfusionMatrix {
    /// Count from hard 0/1 labels (1 is positive).
    ///
    /// # Panics
    /// If the lengths differ, the input is empty, or a value is not exactly 0 or 1 (NaN and
    /// probabilities included: threshold them first).
    pub fn new(y_true: &ArrayRef1<f64>, y_pred: &ArrayRef1<f64>) -> Self {
        Self::new_with_labels(y_true, y_pred, 0.0, 1.0)
    }

    /// Count from labels that take exactly the two given values (e.g. -1/+1 of a margin
    /// classifier).
    ///
    /// # Panics
    /// As [`new`](Self::new), and if the two label values are equal or not finite.
    pub fn new_with_labels(
        y_true: &ArrayRef1<f64>,
        y_pred: &ArrayRef1<f64>,
        negative_label: f64,
        positive_label: f64,
    ) -> Self {
        or_panic(Self::try_new_with_labels(
            y_true.view(),
            y_pred.view(),
            negative_label,
            positive_label,
        ))
    }

    /// [`new_with_labels`](Self::new_with_labels) reporting bad input as an error.
    pub fn try_new_with_labels(
        y_true: ArrayView1<f64>,
        y_pred: ArrayView1<f64>,
        negative_label: f64,
        positive_label: f64,
    ) -> Result<Self> {
        if !(negative_label.is_finite() && positive_label.is_finite()) {
            return Err(Error::invalid_parameter(
                "negative_label/positive_label",
                "the labels must be finite",
            ));
        }
        if negative_label == positive_label {
            return Err(Error::invalid_parameter(
                "negative_label/positive_label",
                format!("the negative and positive labels must differ, both are {positive_label}"),
            ));
        }
        check_pair_len(y_true.len(), y_pred.len())?;
        let is_positive = |v: f64, name: &str, i: usize| -> Result<bool> {
            if v == positive_label {
                Ok(true)
            } else if v == negative_label {
                Ok(false)
            } else {
                Err(Error::invalid_input(format!(
                    "{name} must hold only {negative_label} or {positive_label}, found {v} at index {i}"
                )))
            }
        };
        let mut tally = [0usize; 4];
        for (i, (&t, &p)) in y_true.iter().zip(y_pred.iter()).enumerate() {
            let t = is_positive(t, "y_true", i)?;
            let p = is_positive(p, "y_pred", i)?;
            tally[usize::from(t) * 2 + usize::from(p)] += 1;
        }
        let [tn, fp, fn_, tp] = tally;
        Ok(Self { tp, fp, tn, fn_ })
    }

    /// Count with a threshold: values `>= threshold` are positive, so probabilities work as
    /// predictions (the Python `ConfusionMatrix`). Lengths must agree, values be finite.
    pub fn from_thresholded(
        y_true: ArrayView1<f64>,
        y_pred: ArrayView1<f64>,
        threshold: f64,
    ) -> Result<Self> {
        super::checked::regression::check_pair(&y_true, &y_pred)?;
        let mut cm = Self::default();
        for (&t, &p) in y_true.iter().zip(y_pred.iter()) {
            match (t >= threshold, p >= threshold) {
                (true, true) => cm.tp += 1,
                (false, true) => cm.fp += 1,
                (true, false) => cm.fn_ += 1,
                (false, false) => cm.tn += 1,
            }
        }
        Ok(cm)
    }

    /// From counts directly; at least one sample.
    pub fn from_counts(tp: usize, fp: usize, tn: usize, fn_: usize) -> Result<Self> {
        if tp + fp + tn + fn_ == 0 {
            return Err(Error::empty_input(
                "a confusion matrix needs at least one sample",
            ));
        }
        Ok(Self { tp, fp, tn, fn_ })
    }

    /// `(TP, FP, TN, FN)`.
    pub fn get_counts(&self) -> (usize, usize, usize, usize) {
        (self.tp, self.fp, self.tn, self.fn_)
    }

    fn total(&self) -> usize {
        self.tp + self.fp + self.tn + self.fn_
    }

    /// `(TP + TN) / total`.
    pub fn accuracy(&self) -> f64 {
        frac(self.tp + self.tn, self.total())
    }

    /// `(FP + FN) / total`, i.e. `1 - accuracy`.
    pub fn error_rate(&self) -> f64 {
        frac(self.fp + self.fn_, self.total())
    }

    /// `TP / (TP + FP)`; 0 without predicted positives.
    pub fn precision(&self) -> f64 {
        frac(self.tp, self.tp + self.fp)
    }

    /// `TP / (TP + FN)` (sensitivity); 0 without actual positives.
    pub fn recall(&self) -> f64 {
        frac(self.tp, self.tp + self.fn_)
    }

    /// `TN / (TN + FP)`; 1 without actual negatives.
    pub fn specificity(&self) -> f64 {
        if self.tn + self.fp == 0 {
            1.0
        } else {
            frac(self.tn, self.tn + self.fp)
        }
    }

    /// Harmonic mean of precision and recall, `2 TP / (2 TP + FP + FN)`; 0 when both are 0.
    pub fn f1_score(&self) -> f64 {
        frac(2 * self.tp, 2 * self.tp + self.fp + self.fn_)
    }

    /// Mean of recall and specificity.
    pub fn balanced_accuracy(&self) -> f64 {
        (self.recall() + self.specificity()) / 2.0
    }

    /// Matthews correlation coefficient; 0 when a margin is empty.
    pub fn mcc(&self) -> f64 {
        let [tp, fp, tn, fn_] = [self.tp, self.fp, self.tn, self.fn_].map(|c| c as f64);
        let den = (tp + fp) * (tp + fn_) * (tn + fp) * (tn + fn_);
        if den == 0.0 {
            0.0
        } else {
            (tp * tn - fp * fn_) / den.sqrt()
        }
    }

    /// The counts as a table and the derived metrics to four decimals.
    pub fn summary(&self) -> String {
        self.summary_with_specificity(self.specificity())
    }

    /// [`summary`](Self::summary) with the specificity (and the balanced accuracy built on
    /// it) supplied by the caller: the Python class keeps scikit-learn's 0 for 0/0.
    pub fn summary_with_specificity(&self, specificity: f64) -> String {
        let sep = "+-----------------+--------------------+--------------------+";
        let mut s = String::from("Confusion Matrix:\n");
        s.push_str(&format!(
            "{sep}\n| {:<15} | {:<18} | {:<18} |\n{sep}\n",
            "", "Predicted Positive", "Predicted Negative"
        ));
        s.push_str(&format!(
            "| {:<15} | {:<18} | {:<18} |\n",
            "Actual Positive",
            format!("TP: {}", self.tp),
            format!("FN: {}", self.fn_)
        ));
        s.push_str(&format!(
            "| {:<15} | {:<18} | {:<18} |\n{sep}\n\n",
            "Actual Negative",
            format!("FP: {}", self.fp),
            format!("TN: {}", self.tn)
        ));
        s.push_str("Performance Metrics:\n");
        for (name, v) in [
            ("Accuracy:", self.accuracy()),
            ("Balanced Accuracy:", (self.recall() + specificity) / 2.0),
            ("Error Rate:", self.error_rate()),
            ("Precision:", self.precision()),
            ("Recall:", self.recall()),
            ("Specificity:", specificity),
            ("F1 Score:", self.f1_score()),
            ("MCC:", self.mcc()),
        ] {
            s.push_str(&format!("- {name:<18} {v:.4}\n"));
        }
        s
    }
}

impl std::fmt::Display for ConfusionMatrix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.summary())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::arr1;

    #[test]
    fn counts_and_ratios_by_hand() {
        let t = arr1(&[1.0, 0.0, 1.0, 0.0, 1.0, 1.0]);
        let p = arr1(&[1.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
        let cm = ConfusionMatrix::new(&t, &p);
        // tp: idx 0,4,5; fn: idx 2; fp: idx 3; tn: idx 1
        assert_eq!(cm.get_counts(), (3, 1, 1, 1));
        assert_eq!(cm.accuracy(), 4.0 / 6.0);
        assert_eq!(cm.precision(), 0.75);
        assert_eq!(cm.recall(), 0.75);
        assert_eq!(cm.specificity(), 0.5);
        assert_eq!(cm.f1_score(), 0.75);
        // (3*1 - 1*1) / sqrt(4*4*2*2)
        assert_eq!(cm.mcc(), 0.25);
        let text = cm.summary();
        assert!(text.contains("TP: 3") && text.contains("0.7500"), "{text}");
        // no actual negatives: specificity 1 by the original's convention
        let pos = ConfusionMatrix::from_counts(2, 0, 0, 1).unwrap();
        assert_eq!(pos.specificity(), 1.0);
        assert_eq!(pos.balanced_accuracy(), (2.0 / 3.0 + 1.0) / 2.0);
    }

    #[test]
    fn labels_and_thresholds() {
        let t = arr1(&[1.0, -1.0, 1.0]);
        let p = arr1(&[-1.0, -1.0, 1.0]);
        let cm = ConfusionMatrix::new_with_labels(&t, &p, -1.0, 1.0);
        assert_eq!(cm.get_counts(), (1, 0, 1, 1));
        let err = ConfusionMatrix::try_new_with_labels(t.view(), p.view(), 0.0, 1.0)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("y_pred must hold only 0 or 1, found -1 at index 0"),
            "{err}"
        );
        let probs = arr1(&[0.9, 0.2, 0.5]);
        let cm =
            ConfusionMatrix::from_thresholded(arr1(&[1.0, 0.0, 0.0]).view(), probs.view(), 0.5)
                .unwrap();
        assert_eq!(cm.get_counts(), (1, 1, 1, 0));
    }

    #[test]
    #[should_panic(expected = "must differ")]
    fn equal_labels_panic() {
        let y = arr1(&[1.0, 0.0]);
        ConfusionMatrix::new_with_labels(&y, &y, 1.0, 1.0);
    }
}
