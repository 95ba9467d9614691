//! Weighted label-pair counts: scikit-learn's `sample_weight` for the confusion matrix and
//! the precision / recall / F family, and the per-label counts of multilabel indicator
//! targets.
//!
//! Every count is a plain sum of `f64` weights taken **in sample order**, one sample after
//! the other, which is the order scikit-learn's own counts take (`np.bincount(codes,
//! weights)` for the per-class sums, SciPy's `coo_array(...).toarray()` for the matrix), so
//! the floats are scikit-learn's bit for bit. That order is the point, so these kernels are
//! serial: a parallel fold would change the rounding.

use super::check_lengths;
use crate::error::{Error, Result};
use crate::math::labels::{encode_all, Label};
use ndarray::{Array1, Array2, ArrayView1, ArrayView2};

/// Per-class weighted counts over the sorted union of the labels (`classes`): `tp[c]` the
/// weight of samples of class `c` predicted as `c`, `pred[c]` predicted as `c`, `truth[c]`
/// of true class `c`.
#[derive(Debug, Clone, PartialEq)]
pub struct WeightedClassCounts<T> {
    pub classes: Vec<T>,
    pub tp: Array1<f64>,
    pub pred: Array1<f64>,
    pub truth: Array1<f64>,
}

fn check_weights(n: usize, sample_weight: &ArrayView1<f64>) -> Result<()> {
    check_lengths(n, sample_weight.len(), "y_true", "sample_weight")?;
    if let Some(i) = sample_weight.iter().position(|w| !w.is_finite()) {
        return Err(Error::invalid_input(format!(
            "sample_weight contains NaN or infinity (first at index {i})"
        )));
    }
    Ok(())
}

fn encode<T: Label>(
    y_true: &ArrayView1<T>,
    y_pred: &ArrayView1<T>,
    sample_weight: &ArrayView1<f64>,
) -> Result<(Vec<T>, Vec<usize>, Vec<usize>)> {
    check_lengths(y_true.len(), y_pred.len(), "y_true", "y_pred")?;
    check_weights(y_true.len(), sample_weight)?;
    let mut enc = encode_all(&[(y_true.view(), "y_true"), (y_pred.view(), "y_pred")])?;
    let p = enc.codes.pop().expect("two arrays encoded");
    let t = enc.codes.pop().expect("two arrays encoded");
    Ok((enc.classes, t, p))
}

/// Weighted per-class counts (see [`WeightedClassCounts`]), each summed in sample order.
pub fn weighted_class_counts<T: Label>(
    y_true: ArrayView1<T>,
    y_pred: ArrayView1<T>,
    sample_weight: ArrayView1<f64>,
) -> Result<WeightedClassCounts<T>> {
    let (classes, t, p) = encode(&y_true, &y_pred, &sample_weight)?;
    let k = classes.len();
    let (mut tp, mut pred, mut truth) = (vec![0.0; k], vec![0.0; k], vec![0.0; k]);
    for ((&a, &b), &w) in t.iter().zip(&p).zip(sample_weight.iter()) {
        if a == b {
            tp[a] += w;
        }
        pred[b] += w;
        truth[a] += w;
    }
    Ok(WeightedClassCounts {
        classes,
        tp: Array1::from(tp),
        pred: Array1::from(pred),
        truth: Array1::from(truth),
    })
}

/// The weighted confusion matrix over the sorted union of the labels: `C[i, j]` the weight of
/// the samples of true class `classes[i]` predicted as `classes[j]`, each cell summed in
/// sample order.
pub fn weighted_confusion_matrix<T: Label>(
    y_true: ArrayView1<T>,
    y_pred: ArrayView1<T>,
    sample_weight: ArrayView1<f64>,
) -> Result<(Vec<T>, Array2<f64>)> {
    let (classes, t, p) = encode(&y_true, &y_pred, &sample_weight)?;
    let k = classes.len();
    let mut cm = Array2::<f64>::zeros((k, k));
    for ((&a, &b), &w) in t.iter().zip(&p).zip(sample_weight.iter()) {
        cm[[a, b]] += w;
    }
    Ok((classes, cm))
}

/// Per-label counts of two multilabel indicator matrices (samples x labels): `tp[j]` the
/// weight of the samples with label `j` both true and predicted (nonzero in both), `pred[j]`
/// predicted, `truth[j]` true, and `exact` the weight of the samples whose rows are equal
/// (scikit-learn's subset accuracy). Without weights each sample weighs 1. Each sum runs
/// over the samples in order, as scikit-learn's `np.bincount` over a CSR matrix's indices.
/// `row_tp`, `row_pred` and `row_truth` count the same per sample, unweighted (scikit-learn's
/// sample-wise counts, which it multiplies by the weights).
#[derive(Debug, Clone, PartialEq)]
pub struct MultilabelCounts {
    pub tp: Array1<f64>,
    pub pred: Array1<f64>,
    pub truth: Array1<f64>,
    pub exact: f64,
    pub row_tp: Array1<f64>,
    pub row_pred: Array1<f64>,
    pub row_truth: Array1<f64>,
}

/// See [`MultilabelCounts`].
pub fn multilabel_counts(
    y_true: ArrayView2<f64>,
    y_pred: ArrayView2<f64>,
    sample_weight: Option<ArrayView1<f64>>,
) -> Result<MultilabelCounts> {
    if y_true.dim() != y_pred.dim() {
        return Err(Error::invalid_input(format!(
            "y_true and y_pred have different shapes ({:?} and {:?})",
            y_true.dim(),
            y_pred.dim()
        )));
    }
    let (n, k) = y_true.dim();
    check_lengths(n, n, "y_true", "y_pred")?;
    if let Some(w) = &sample_weight {
        check_weights(n, w)?;
    }
    if y_true.iter().chain(y_pred.iter()).any(|v| !v.is_finite()) {
        return Err(Error::invalid_input(
            "y_true or y_pred contains NaN or infinity",
        ));
    }
    let (mut tp, mut pred, mut truth) = (vec![0.0; k], vec![0.0; k], vec![0.0; k]);
    let mut exact = 0.0;
    let mut rows = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
    for (i, (t, p)) in y_true.outer_iter().zip(y_pred.outer_iter()).enumerate() {
        let w = sample_weight.as_ref().map_or(1.0, |w| w[i]);
        let mut equal = true;
        let (mut row_tp, mut row_pred, mut row_truth) = (0.0, 0.0, 0.0);
        for (j, (&a, &b)) in t.iter().zip(p.iter()).enumerate() {
            if a != 0.0 {
                truth[j] += w;
                row_truth += 1.0;
                if b != 0.0 {
                    tp[j] += w;
                    row_tp += 1.0;
                }
            }
            if b != 0.0 {
                pred[j] += w;
                row_pred += 1.0;
            }
            equal &= a == b;
        }
        if equal {
            exact += w;
        }
        rows[0][i] = row_tp;
        rows[1][i] = row_pred;
        rows[2][i] = row_truth;
    }
    let [row_tp, row_pred, row_truth] = rows.map(Array1::from);
    Ok(MultilabelCounts {
        tp: Array1::from(tp),
        pred: Array1::from(pred),
        truth: Array1::from(truth),
        exact,
        row_tp,
        row_pred,
        row_truth,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn class_counts_by_hand() {
        // classes 0, 1, 2; samples (true, pred, weight)
        let t = array![0i64, 0, 1, 2, 2, 1];
        let p = array![0i64, 1, 1, 2, 0, 1];
        let w = array![0.5, 2.0, 1.0, 0.25, 3.0, 4.0];
        let c = weighted_class_counts(t.view(), p.view(), w.view()).unwrap();
        assert_eq!(c.classes, vec![0, 1, 2]);
        // tp: class 0 sample 0 (0.5); class 1 samples 2, 5 (1 + 4); class 2 sample 3 (0.25)
        assert_eq!(c.tp, array![0.5, 5.0, 0.25]);
        // predicted: 0 <- samples 0, 4 (0.5 + 3); 1 <- 1, 2, 5 (2 + 1 + 4); 2 <- 3
        assert_eq!(c.pred, array![3.5, 7.0, 0.25]);
        // true: 0 <- 0, 1 (2.5); 1 <- 2, 5 (5); 2 <- 3, 4 (3.25)
        assert_eq!(c.truth, array![2.5, 5.0, 3.25]);
    }

    #[test]
    fn confusion_matrix_by_hand() {
        let t = array![1.5, 1.5, 3.0, 3.0];
        let p = array![1.5, 3.0, 3.0, 3.0];
        let w = array![2.0, -1.0, 0.5, 0.25];
        let (classes, cm) = weighted_confusion_matrix(t.view(), p.view(), w.view()).unwrap();
        assert_eq!(classes, vec![1.5, 3.0]);
        assert_eq!(cm, array![[2.0, -1.0], [0.0, 0.75]]);
    }

    #[test]
    fn sums_run_in_sample_order() {
        // 1 + 1e16 - 1e16 in order is 0 (the 1 is absorbed); any other order could give 1
        let t = array![0i64, 0, 0];
        let w = array![1.0, 1e16, -1e16];
        let c = weighted_class_counts(t.view(), t.view(), w.view()).unwrap();
        assert_eq!(c.tp[0], (1.0 + 1e16) - 1e16);
        let (_, cm) = weighted_confusion_matrix(t.view(), t.view(), w.view()).unwrap();
        assert_eq!(cm[[0, 0]], c.tp[0]);
    }

    #[test]
    fn bad_weights_are_refused() {
        let t = array![0i64, 1];
        assert!(weighted_class_counts(t.view(), t.view(), array![1.0].view()).is_err());
        let nan = array![1.0, f64::NAN];
        assert!(weighted_confusion_matrix(t.view(), t.view(), nan.view()).is_err());
    }

    #[test]
    fn multilabel_counts_by_hand() {
        let t = array![[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [1.0, 1.0, 0.0]];
        let p = array![[1.0, 0.0, 0.0], [0.0, 1.0, 1.0], [0.0, 1.0, 1.0]];
        let c = multilabel_counts(t.view(), p.view(), None).unwrap();
        // label 0: true in rows 0, 2, predicted in row 0; label 1: true 1, 2, predicted 1, 2;
        // label 2: true 0, 1, predicted 1, 2; only row 1 is predicted exactly
        assert_eq!(c.tp, array![1.0, 2.0, 1.0]);
        assert_eq!(c.pred, array![1.0, 2.0, 2.0]);
        assert_eq!(c.truth, array![2.0, 2.0, 2.0]);
        assert_eq!(c.exact, 1.0);
        assert_eq!(c.row_tp, array![1.0, 2.0, 1.0]);
        assert_eq!(c.row_pred, array![1.0, 2.0, 2.0]);
        assert_eq!(c.row_truth, array![2.0, 2.0, 2.0]);
        let w = array![0.5, 2.0, 4.0];
        let c = multilabel_counts(t.view(), p.view(), Some(w.view())).unwrap();
        assert_eq!(c.tp, array![0.5, 6.0, 2.0]);
        assert_eq!(c.pred, array![0.5, 6.0, 6.0]);
        assert_eq!(c.truth, array![4.5, 6.0, 2.5]);
        assert_eq!(c.exact, 2.0);
        // the sample-wise counts are unweighted
        assert_eq!(c.row_pred, array![1.0, 2.0, 2.0]);
        assert!(multilabel_counts(t.view(), p.t(), Some(array![1.0].view())).is_err());
    }
}
