//! The binary confusion-matrix object of the original crate: counts plus the metrics derived
//! from them and a text summary.

use super::check_lengths;
use crate::error::{Result, RustymlError};
use ndarray::ArrayView1;
use serde::{Deserialize, Serialize};

/// Values at or above this are the positive class (hard 0/1 labels and probabilities alike).
pub const POSITIVE_THRESHOLD: f64 = 0.5;

/// True/false positive/negative counts of a binary classifier.
///
/// Ratios with a zero denominator are 0.0 (scikit-learn's `zero_division` default), so an
/// all-negative problem never yields NaN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ConfusionMatrix {
    pub tp: u64,
    pub fp: u64,
    pub tn: u64,
    #[serde(rename = "fn")]
    pub fn_: u64,
}

fn frac(num: u64, den: u64) -> f64 {
    if den == 0 {
        0.0
    } else {
        num as f64 / den as f64
    }
}

impl ConfusionMatrix {
    /// Count from truth and predictions; values `>= 0.5` are positive, so probabilities work
    /// as predictions.
    pub fn new(y_true: ArrayView1<f64>, y_pred: ArrayView1<f64>) -> Result<Self> {
        check_lengths(y_true.len(), y_pred.len(), "y_true", "y_pred")?;
        crate::validation::check_target(&y_true, "y_true")?;
        crate::validation::check_target(&y_pred, "y_pred")?;
        let mut cm = Self::default();
        for (&t, &p) in y_true.iter().zip(y_pred.iter()) {
            match (t >= POSITIVE_THRESHOLD, p >= POSITIVE_THRESHOLD) {
                (true, true) => cm.tp += 1,
                (false, true) => cm.fp += 1,
                (true, false) => cm.fn_ += 1,
                (false, false) => cm.tn += 1,
            }
        }
        Ok(cm)
    }

    /// From counts directly.
    pub fn from_counts(tp: u64, fp: u64, tn: u64, fn_: u64) -> Result<Self> {
        if tp + fp + tn + fn_ == 0 {
            return Err(RustymlError::invalid(
                "a confusion matrix needs at least one sample",
            ));
        }
        Ok(Self { tp, fp, tn, fn_ })
    }

    /// `(tp, fp, tn, fn)`.
    pub fn get_counts(&self) -> (u64, u64, u64, u64) {
        (self.tp, self.fp, self.tn, self.fn_)
    }

    pub fn total(&self) -> u64 {
        self.tp + self.fp + self.tn + self.fn_
    }

    /// `(tp + tn) / total`.
    pub fn accuracy(&self) -> f64 {
        frac(self.tp + self.tn, self.total())
    }

    /// `1 - accuracy`.
    pub fn error_rate(&self) -> f64 {
        frac(self.fp + self.fn_, self.total())
    }

    /// `tp / (tp + fp)`.
    pub fn precision(&self) -> f64 {
        frac(self.tp, self.tp + self.fp)
    }

    /// `tp / (tp + fn)` (sensitivity).
    pub fn recall(&self) -> f64 {
        frac(self.tp, self.tp + self.fn_)
    }

    /// `tn / (tn + fp)`.
    pub fn specificity(&self) -> f64 {
        frac(self.tn, self.tn + self.fp)
    }

    /// `2 tp / (2 tp + fp + fn)`, the harmonic mean of precision and recall.
    pub fn f1_score(&self) -> f64 {
        frac(2 * self.tp, 2 * self.tp + self.fp + self.fn_)
    }

    /// Mean of recall and specificity.
    pub fn balanced_accuracy(&self) -> f64 {
        (self.recall() + self.specificity()) / 2.0
    }

    /// Matthews correlation coefficient; 0 when a marginal is empty.
    pub fn mcc(&self) -> f64 {
        let (tp, fp, tn, fn_) = (
            self.tp as f64,
            self.fp as f64,
            self.tn as f64,
            self.fn_ as f64,
        );
        let den = (tp + fp) * (tp + fn_) * (tn + fp) * (tn + fn_);
        if den == 0.0 {
            0.0
        } else {
            (tp * tn - fp * fn_) / den.sqrt()
        }
    }

    /// The counts as a table and the derived metrics to four decimals.
    pub fn summary(&self) -> String {
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
            ("Balanced Accuracy:", self.balanced_accuracy()),
            ("Error Rate:", self.error_rate()),
            ("Precision:", self.precision()),
            ("Recall:", self.recall()),
            ("Specificity:", self.specificity()),
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
        let p = arr1(&[0.9, 0.2, 0.3, 0.7, 0.8, 0.5]);
        let cm = ConfusionMatrix::new(t.view(), p.view()).unwrap();
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
        assert!(
            text.contains("TP: 3") && text.contains("Precision:") && text.contains("0.7500"),
            "{text}"
        );
        let none = ConfusionMatrix::from_counts(0, 0, 5, 0).unwrap();
        assert_eq!(
            (none.precision(), none.recall(), none.f1_score(), none.mcc()),
            (0.0, 0.0, 0.0, 0.0)
        );
        assert!(ConfusionMatrix::new(t.view(), arr1(&[1.0]).view()).is_err());
    }
}
