//! The original crate's multiclass confusion matrix over `usize` class labels.

use super::checked::classification::{self as checked, ZeroDivision};
use super::classification::Average;
use super::{or_panic, pair_views};
use ndarray::{Array2, ArrayRef1, ArrayView2};

/// Counts `matrix[[i, j]]` of samples of true class `labels()[i]` predicted as
/// `labels()[j]`, classes being the sorted union of the labels in both arrays.
///
/// Per-class ratios with a zero denominator (a class never predicted, or absent from
/// `y_true`) are 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MulticlassConfusionMatrix {
    labels: Vec<usize>,
    matrix: Array2<usize>,
}

impl MulticlassConfusionMatrix {
    /// # Panics
    /// If the lengths differ or the input is empty.
    pub fn new(y_true: &ArrayRef1<usize>, y_pred: &ArrayRef1<usize>) -> Self {
        let (t, p) = or_panic(pair_views(y_true, y_pred));
        let (labels, counts) = or_panic(checked::confusion_matrix(t, p, None));
        Self {
            labels,
            matrix: counts.mapv(|c| c as usize),
        }
    }

    /// The `n_classes x n_classes` counts (rows: true class, columns: predicted class).
    pub fn matrix(&self) -> ArrayView2<'_, usize> {
        self.matrix.view()
    }

    /// The classes, ascending.
    pub fn labels(&self) -> &[usize] {
        &self.labels
    }

    pub fn n_classes(&self) -> usize {
        self.labels.len()
    }

    /// Samples per true class (row sums).
    pub fn support(&self) -> Vec<usize> {
        self.matrix.rows().into_iter().map(|r| r.sum()).collect()
    }

    /// Predictions per class (column sums).
    fn predicted(&self) -> Vec<usize> {
        self.matrix.columns().into_iter().map(|c| c.sum()).collect()
    }

    fn true_positives(&self) -> Vec<usize> {
        self.matrix.diag().to_vec()
    }

    /// Trace over total.
    pub fn accuracy(&self) -> f64 {
        self.matrix.diag().sum() as f64 / self.matrix.sum() as f64
    }

    /// Per-class `(precision, recall, f1)` through the scikit-learn-style core.
    fn per_class(&self) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        checked::prf(
            &self.true_positives(),
            &self.predicted(),
            &self.support(),
            1.0,
            ZeroDivision::Zero,
        )
    }

    pub fn per_class_precision(&self) -> Vec<f64> {
        self.per_class().0
    }

    pub fn per_class_recall(&self) -> Vec<f64> {
        self.per_class().1
    }

    pub fn per_class_f1(&self) -> Vec<f64> {
        self.per_class().2
    }

    /// `(precision, recall, f1)` averaged as asked.
    fn averaged(&self, average: Average) -> (f64, f64, f64) {
        checked::averaged_prf(
            self.true_positives(),
            self.predicted(),
            self.support(),
            average.into(),
            1.0,
            ZeroDivision::Zero,
        )
    }

    /// Precision averaged over classes: `Macro` (plain mean), `Micro` (global counts, equal
    /// to the accuracy), `Weighted` (by support).
    pub fn precision(&self, average: Average) -> f64 {
        self.averaged(average).0
    }

    /// Recall, averaged like [`precision`](Self::precision).
    pub fn recall(&self, average: Average) -> f64 {
        self.averaged(average).1
    }

    /// F1, averaged like [`precision`](Self::precision).
    pub fn f1(&self, average: Average) -> f64 {
        self.averaged(average).2
    }

    /// A per-class report in the layout of scikit-learn's `classification_report`.
    pub fn summary(&self) -> String {
        let (p, r, f) = self.per_class();
        let support = self.support();
        let total: usize = support.iter().sum();
        let width = self
            .labels
            .iter()
            .map(|l| l.to_string().len())
            .chain(["weighted avg".len()])
            .max()
            .unwrap_or(0);
        let mut s = format!(
            "{:>width$} {:>9} {:>9} {:>9} {:>9}\n\n",
            "", "precision", "recall", "f1-score", "support"
        );
        for (i, label) in self.labels.iter().enumerate() {
            s.push_str(&format!(
                "{:>width$} {:>9.4} {:>9.4} {:>9.4} {:>9}\n",
                label, p[i], r[i], f[i], support[i]
            ));
        }
        s.push_str(&format!(
            "\n{:>width$} {:>9} {:>9} {:>9.4} {:>9}\n",
            "accuracy",
            "",
            "",
            self.accuracy(),
            total
        ));
        for (name, avg) in [
            ("macro avg", Average::Macro),
            ("weighted avg", Average::Weighted),
        ] {
            let (ap, ar, af) = self.averaged(avg);
            s.push_str(&format!(
                "{name:>width$} {ap:>9.4} {ar:>9.4} {af:>9.4} {total:>9}\n"
            ));
        }
        s
    }
}

impl std::fmt::Display for MulticlassConfusionMatrix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.summary())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::arr1;

    #[test]
    fn counts_and_averages_by_hand() {
        // true [0,0,1,2], pred [0,1,1,1]: rows [[1,1,0],[0,1,0],[0,1,0]]
        let cm =
            MulticlassConfusionMatrix::new(&arr1(&[0usize, 0, 1, 2]), &arr1(&[0usize, 1, 1, 1]));
        assert_eq!(cm.labels(), &[0, 1, 2]);
        assert_eq!(cm.matrix()[[0, 1]], 1);
        assert_eq!(cm.support(), vec![2, 1, 1]);
        // precision [1, 1/3, 0 (never predicted)], recall [1/2, 1, 0]
        assert_eq!(cm.per_class_precision(), vec![1.0, 1.0 / 3.0, 0.0]);
        assert_eq!(cm.per_class_recall(), vec![0.5, 1.0, 0.0]);
        assert_eq!(cm.precision(Average::Micro), cm.accuracy());
        assert_eq!(cm.accuracy(), 0.5);
        // weighted recall = (1/2*2 + 1*1 + 0*1) / 4
        assert_eq!(cm.recall(Average::Weighted), 0.5);
        let text = cm.summary();
        assert!(
            text.contains("macro avg") && text.contains("f1-score"),
            "{text}"
        );
    }
}
