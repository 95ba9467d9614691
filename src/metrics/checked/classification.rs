//! Classification metrics with scikit-learn's definitions, options and edge-case rules.
//!
//! Labels are any [`Label`]; classes are the sorted union of the labels seen in `y_true` and
//! `y_pred` (as `np.unique`), so per-class results come in scikit-learn's order. Per-class
//! counts come from one pass over the dense codes (`O(n + classes)`); only
//! [`confusion_matrix`] builds the `classes x classes` table.

use super::check_lengths;
use crate::error::{Error, Result};
use crate::math::labels::{self, bincount, encode_all, Encoding, Label};
use ndarray::{Array2, ArrayView1, ArrayView2};

/// How per-class precision / recall / F-scores combine into one number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Average {
    /// The score of the positive class only (`pos_label`); binary targets only.
    Binary,
    /// Global counts: total true positives over total predicted / true positives.
    Micro,
    /// Unweighted mean of the per-class scores.
    Macro,
    /// Mean of the per-class scores weighted by support (true count).
    Weighted,
}

impl Average {
    /// Parse scikit-learn's name (`"binary"`, `"micro"`, `"macro"`, `"weighted"`).
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "binary" => Ok(Self::Binary),
            "micro" => Ok(Self::Micro),
            "macro" => Ok(Self::Macro),
            "weighted" => Ok(Self::Weighted),
            other => Err(Error::invalid_input(format!(
                "unknown average {other:?}: average has to be one of None, 'micro', 'macro', 'weighted', 'binary'"
            ))),
        }
    }
}

/// The value a ratio takes when its denominator is zero (scikit-learn's `zero_division`;
/// its default `"warn"` behaves as [`ZeroDivision::Zero`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ZeroDivision {
    #[default]
    Zero,
    One,
    /// NaN, and NaN scores are left out of averages.
    Nan,
}

impl ZeroDivision {
    /// From scikit-learn's numeric forms: 0, 1 or NaN.
    pub fn from_value(v: f64) -> Result<Self> {
        if v.is_nan() {
            Ok(Self::Nan)
        } else if v == 0.0 {
            Ok(Self::Zero)
        } else if v == 1.0 {
            Ok(Self::One)
        } else {
            Err(Error::invalid_input(format!(
                "zero_division must be 'warn', 0, 1 or nan, got {v}"
            )))
        }
    }

    fn value(self) -> f64 {
        match self {
            Self::Zero => 0.0,
            Self::One => 1.0,
            Self::Nan => f64::NAN,
        }
    }
}

/// Validate a pair of label arrays for a classification metric: same non-zero length, valid
/// labels, no continuous (fractional float) values.
fn check_targets<T: Label>(y_true: &ArrayView1<T>, y_pred: &ArrayView1<T>) -> Result<()> {
    check_lengths(y_true.len(), y_pred.len(), "y_true", "y_pred")?;
    for (y, name) in [(y_true, "y_true"), (y_pred, "y_pred")] {
        labels::check_labels(y, name)?;
        check_discrete(y, name)?;
    }
    Ok(())
}

fn check_discrete<T: Label>(y: &ArrayView1<T>, name: &str) -> Result<()> {
    if let Some(i) = y.iter().position(Label::is_fractional) {
        return Err(Error::invalid_input(format!(
            "{name} holds continuous values (first non-integer float at index {i}); classification metrics need class labels"
        )));
    }
    Ok(())
}

/// Dense codes of both arrays against their common classes.
fn encode_targets<T: Label>(y_true: ArrayView1<T>, y_pred: ArrayView1<T>) -> Result<Encoding<T>> {
    check_targets(&y_true, &y_pred)?;
    encode_all(&[(y_true, "y_true"), (y_pred, "y_pred")])
}

/// Fraction of samples whose prediction equals the truth.
pub fn accuracy_score<T: Label>(y_true: ArrayView1<T>, y_pred: ArrayView1<T>) -> Result<f64> {
    check_targets(&y_true, &y_pred)?;
    let correct = y_true
        .iter()
        .zip(y_pred.iter())
        .filter(|(t, p)| labels::same(*t, *p))
        .count();
    Ok(correct as f64 / y_true.len() as f64)
}

/// Per-class counts: true positives, predicted count, true count.
struct ClassCounts {
    tp: Vec<usize>,
    pred: Vec<usize>,
    truth: Vec<usize>,
}

fn class_counts<T>(enc: &Encoding<T>) -> ClassCounts {
    let k = enc.n_classes();
    let (t, p) = (&enc.codes[0], &enc.codes[1]);
    let mut tp = vec![0usize; k];
    for (&a, &b) in t.iter().zip(p) {
        if a == b {
            tp[a] += 1;
        }
    }
    ClassCounts {
        tp,
        pred: bincount(p, k),
        truth: bincount(t, k),
    }
}

/// Per-class precision, recall, F-beta and support, labels sorted (scikit-learn's
/// `precision_recall_fscore_support` with `average=None`).
#[derive(Debug, Clone, PartialEq)]
pub struct Prfs<T> {
    pub labels: Vec<T>,
    pub precision: Vec<f64>,
    pub recall: Vec<f64>,
    pub fscore: Vec<f64>,
    pub support: Vec<usize>,
}

fn ratio(num: f64, den: f64, zero_division: ZeroDivision) -> f64 {
    if den == 0.0 {
        zero_division.value()
    } else {
        num / den
    }
}

fn check_beta(beta: f64) -> Result<()> {
    if beta.is_nan() || beta < 0.0 {
        return Err(Error::invalid_input(format!(
            "beta should be >= 0 in the F-beta score, got {beta}"
        )));
    }
    Ok(())
}

/// Precision, recall and F-beta of parallel count vectors.
pub(crate) fn prf(
    tp: &[usize],
    pred: &[usize],
    truth: &[usize],
    beta: f64,
    zd: ZeroDivision,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let precision: Vec<f64> = tp
        .iter()
        .zip(pred)
        .map(|(&a, &b)| ratio(a as f64, b as f64, zd))
        .collect();
    let recall: Vec<f64> = tp
        .iter()
        .zip(truth)
        .map(|(&a, &b)| ratio(a as f64, b as f64, zd))
        .collect();
    let fscore = if beta.is_infinite() {
        recall.clone()
    } else if beta == 0.0 {
        precision.clone()
    } else {
        // (1 + b²) tp / (b² true + pred): scikit-learn's count form of the harmonic mean.
        let b2 = beta * beta;
        let largest_count = truth.iter().chain(pred).copied().max().unwrap_or(0) as f64;
        if ((1.0 + b2) * largest_count).is_finite() {
            tp.iter()
                .zip(pred.iter().zip(truth))
                .map(|(&t, (&p, &s))| ratio((1.0 + b2) * t as f64, b2 * s as f64 + p as f64, zd))
                .collect()
        } else {
            // A finite beta so large that b² overflows (inf / inf would be NaN): the same
            // ratio divided through by 1 + b², tp / (w true + (1 - w) pred), w = b² / (1 + b²).
            let rest = 1.0 / (1.0 + b2);
            let w = 1.0 / (1.0 + 1.0 / b2);
            tp.iter()
                .zip(pred.iter().zip(truth))
                .map(|(&t, (&p, &s))| ratio(t as f64, w * s as f64 + rest * p as f64, zd))
                .collect()
        }
    };
    (precision, recall, fscore)
}

/// Average ignoring NaN entries (scikit-learn's `_nanaverage`); NaN when nothing is left.
/// Weights that sum to zero fall back to the plain mean.
fn nan_average(values: &[f64], weights: Option<&[usize]>) -> f64 {
    let kept: Vec<(f64, f64)> = values
        .iter()
        .enumerate()
        .filter(|(_, v)| !v.is_nan())
        .map(|(i, &v)| (v, weights.map_or(1.0, |w| w[i] as f64)))
        .collect();
    if kept.is_empty() {
        return f64::NAN;
    }
    let wsum: f64 = kept.iter().map(|(_, w)| w).sum();
    if wsum == 0.0 {
        return kept.iter().map(|(v, _)| v).sum::<f64>() / kept.len() as f64;
    }
    kept.iter().map(|(v, w)| v * w).sum::<f64>() / wsum
}

/// Per-class precision / recall / F-beta / support (`average=None`).
pub fn precision_recall_fscore_support<T: Label>(
    y_true: ArrayView1<T>,
    y_pred: ArrayView1<T>,
    beta: f64,
    zero_division: ZeroDivision,
) -> Result<Prfs<T>> {
    check_beta(beta)?;
    let enc = encode_targets(y_true, y_pred)?;
    let c = class_counts(&enc);
    let (precision, recall, fscore) = prf(&c.tp, &c.pred, &c.truth, beta, zero_division);
    Ok(Prfs {
        labels: enc.classes,
        precision,
        recall,
        fscore,
        support: c.truth,
    })
}

/// Averaged `(precision, recall, f-beta)` (scikit-learn's `precision_recall_fscore_support`
/// with an `average`).
pub fn precision_recall_fscore<T: Label>(
    y_true: ArrayView1<T>,
    y_pred: ArrayView1<T>,
    beta: f64,
    average: Average,
    pos_label: &T,
    zero_division: ZeroDivision,
) -> Result<(f64, f64, f64)> {
    check_beta(beta)?;
    let enc = encode_targets(y_true, y_pred)?;
    let c = class_counts(&enc);
    if average != Average::Binary {
        return Ok(averaged_prf(
            c.tp,
            c.pred,
            c.truth,
            average,
            beta,
            zero_division,
        ));
    }
    if enc.n_classes() > 2 {
        return Err(Error::invalid_input(
            "Target is multiclass but average='binary'. Please choose another average setting, one of [None, 'micro', 'macro', 'weighted']",
        ));
    }
    // the positive class alone (all zero counts when it is absent from a one-class target)
    let (tp, pred, truth) = match labels::position(&enc.classes, pos_label) {
        Some(k) => (c.tp[k], c.pred[k], c.truth[k]),
        None if enc.n_classes() >= 2 => {
            return Err(Error::invalid_input(format!(
                "pos_label={pos_label:?} is not a valid label. It should be one of {:?}",
                enc.classes
            )))
        }
        None => (0, 0, 0),
    };
    Ok(averaged_prf(
        vec![tp],
        vec![pred],
        vec![truth],
        average,
        beta,
        zero_division,
    ))
}

/// `(precision, recall, f-beta)` of per-class counts averaged `Micro` (global counts),
/// `Macro` or `Weighted` (by true count); for `Binary` the caller passes the positive class's
/// counts alone.
pub(crate) fn averaged_prf(
    tp: Vec<usize>,
    pred: Vec<usize>,
    truth: Vec<usize>,
    average: Average,
    beta: f64,
    zero_division: ZeroDivision,
) -> (f64, f64, f64) {
    let (tp, pred, truth, weights) = match average {
        Average::Micro => (
            vec![tp.iter().sum()],
            vec![pred.iter().sum()],
            vec![truth.iter().sum()],
            None,
        ),
        Average::Weighted => {
            let w = truth.clone();
            (tp, pred, truth, Some(w))
        }
        Average::Macro | Average::Binary => (tp, pred, truth, None),
    };
    let (p, r, f) = prf(&tp, &pred, &truth, beta, zero_division);
    let w = weights.as_deref();
    (nan_average(&p, w), nan_average(&r, w), nan_average(&f, w))
}

/// A public score that is entry `$entry` of [`precision_recall_fscore`] at `beta = 1`.
macro_rules! prf_entry {
    ($(#[$doc:meta])* $name:ident, $entry:tt) => {
        $(#[$doc])*
        pub fn $name<T: Label>(
            y_true: ArrayView1<T>,
            y_pred: ArrayView1<T>,
            average: Average,
            pos_label: &T,
            zero_division: ZeroDivision,
        ) -> Result<f64> {
            precision_recall_fscore(y_true, y_pred, 1.0, average, pos_label, zero_division)
                .map(|s| s.$entry)
        }
    };
}

prf_entry!(
    /// Precision `tp / (tp + fp)`, averaged as asked.
    precision_score,
    0
);
prf_entry!(
    /// Recall `tp / (tp + fn)`, averaged as asked.
    recall_score,
    1
);
prf_entry!(
    /// F1, the harmonic mean of precision and recall, averaged as asked.
    f1_score,
    2
);

/// F-beta (recall weighted `beta` times as much as precision), averaged as asked.
pub fn fbeta_score<T: Label>(
    y_true: ArrayView1<T>,
    y_pred: ArrayView1<T>,
    beta: f64,
    average: Average,
    pos_label: &T,
    zero_division: ZeroDivision,
) -> Result<f64> {
    precision_recall_fscore(y_true, y_pred, beta, average, pos_label, zero_division).map(|s| s.2)
}

/// The confusion matrix `C[i, j]` = samples of true class `labels[i]` predicted as `labels[j]`.
///
/// `labels` selects and orders the classes (samples outside them are not counted); by default
/// the sorted union of both arrays. Returns the labels with the matrix.
pub fn confusion_matrix<T: Label>(
    y_true: ArrayView1<T>,
    y_pred: ArrayView1<T>,
    labels: Option<&[T]>,
) -> Result<(Vec<T>, Array2<u64>)> {
    let enc = encode_targets(y_true, y_pred)?;
    let (order, out_labels): (Vec<Option<usize>>, Vec<T>) = match labels {
        None => (
            (0..enc.n_classes()).map(Some).collect(),
            enc.classes.clone(),
        ),
        Some(wanted) => {
            if wanted.is_empty() {
                return Err(Error::invalid_input(
                    "'labels' should contain at least one label",
                ));
            }
            for (i, l) in wanted.iter().enumerate() {
                if !l.is_valid_label() {
                    return Err(Error::invalid_input(format!(
                        "labels contains NaN or infinity (at index {i})"
                    )));
                }
                if wanted[..i].iter().any(|m| labels::same(l, m)) {
                    return Err(Error::invalid_input(format!(
                        "labels contains {l:?} more than once"
                    )));
                }
            }
            let order = enc
                .classes
                .iter()
                .map(|c| wanted.iter().position(|w| labels::same(w, c)))
                .collect();
            (order, wanted.to_vec())
        }
    };
    let k = out_labels.len();
    let mut cm = Array2::<u64>::zeros((k, k));
    let mut any_true = false;
    for (&t, &p) in enc.codes[0].iter().zip(&enc.codes[1]) {
        if let Some(i) = order[t] {
            any_true = true;
            if let Some(j) = order[p] {
                cm[[i, j]] += 1;
            }
        }
    }
    if labels.is_some() && !any_true {
        return Err(Error::invalid_input(
            "At least one label specified must be in y_true",
        ));
    }
    Ok((out_labels, cm))
}

/// How [`normalize_confusion_matrix`] divides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfusionNormalize {
    /// By row sums (each true class sums to 1).
    True,
    /// By column sums (each predicted class sums to 1).
    Pred,
    /// By the total.
    All,
}

impl ConfusionNormalize {
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "true" => Ok(Self::True),
            "pred" => Ok(Self::Pred),
            "all" => Ok(Self::All),
            other => Err(Error::invalid_input(format!(
                "unknown normalize {other:?}: expected one of 'true', 'pred', 'all' or None"
            ))),
        }
    }
}

/// Normalised confusion matrix; a zero row/column/total gives zeros (NumPy's `nan_to_num`).
pub fn normalize_confusion_matrix(cm: ArrayView2<u64>, how: ConfusionNormalize) -> Array2<f64> {
    let rows: Vec<f64> = cm
        .rows()
        .into_iter()
        .map(|r| r.iter().sum::<u64>() as f64)
        .collect();
    let cols: Vec<f64> = cm
        .columns()
        .into_iter()
        .map(|c| c.iter().sum::<u64>() as f64)
        .collect();
    let total: f64 = rows.iter().sum();
    Array2::from_shape_fn(cm.dim(), |(i, j)| {
        let den = match how {
            ConfusionNormalize::True => rows[i],
            ConfusionNormalize::Pred => cols[j],
            ConfusionNormalize::All => total,
        };
        if den == 0.0 {
            0.0
        } else {
            cm[[i, j]] as f64 / den
        }
    })
}

/// Mean per-class recall over the classes present in `y_true`; `adjusted` rescales so that
/// chance scores 0.
pub fn balanced_accuracy_score<T: Label>(
    y_true: ArrayView1<T>,
    y_pred: ArrayView1<T>,
    adjusted: bool,
) -> Result<f64> {
    let enc = encode_targets(y_true, y_pred)?;
    let c = class_counts(&enc);
    let per_class: Vec<f64> =
        c.tp.iter()
            .zip(&c.truth)
            .filter(|(_, &s)| s > 0)
            .map(|(&t, &s)| t as f64 / s as f64)
            .collect();
    let mut score = per_class.iter().sum::<f64>() / per_class.len() as f64;
    if adjusted {
        let chance = 1.0 / per_class.len() as f64;
        score -= chance;
        score /= 1.0 - chance;
    }
    Ok(score)
}

/// Matthews correlation coefficient (multiclass form); 0 when either marginal is constant.
pub fn matthews_corrcoef<T: Label>(y_true: ArrayView1<T>, y_pred: ArrayView1<T>) -> Result<f64> {
    let enc = encode_targets(y_true, y_pred)?;
    let c = class_counts(&enc);
    let n = enc.codes[0].len() as f64;
    let correct = c.tp.iter().sum::<usize>() as f64;
    let dot = |a: &[usize], b: &[usize]| {
        a.iter()
            .zip(b)
            .map(|(&x, &y)| x as f64 * y as f64)
            .sum::<f64>()
    };
    let cov_tp = correct * n - dot(&c.truth, &c.pred);
    let cov_pp = n * n - dot(&c.pred, &c.pred);
    let cov_tt = n * n - dot(&c.truth, &c.truth);
    if cov_pp * cov_tt == 0.0 {
        return Ok(0.0);
    }
    Ok(cov_tp / (cov_tt * cov_pp).sqrt())
}

/// Area under the ROC curve of scores for boolean truth (Mann-Whitney U with tied scores
/// given half credit, which equals the trapezoidal area). Both classes must be present.
pub(crate) fn binary_auc(positive: &[bool], score: &[f64]) -> f64 {
    let mut order: Vec<usize> = (0..score.len()).collect();
    order.sort_unstable_by(|&a, &b| score[a].total_cmp(&score[b]));
    let (mut rank_sum, mut n_pos) = (0.0f64, 0usize);
    let mut i = 0;
    while i < order.len() {
        let mut j = i + 1;
        while j < order.len() && score[order[j]] == score[order[i]] {
            j += 1;
        }
        // ranks i+1..=j share their mean (i + 1 + j) / 2
        let mean_rank = (i + 1 + j) as f64 / 2.0;
        let pos_here = order[i..j].iter().filter(|&&s| positive[s]).count();
        rank_sum += mean_rank * pos_here as f64;
        n_pos += pos_here;
        i = j;
    }
    let n_neg = score.len() - n_pos;
    let (p, q) = (n_pos as f64, n_neg as f64);
    (rank_sum - p * (p + 1.0) / 2.0) / (p * q)
}

fn check_scores(y_score: &[f64], name: &str) -> Result<()> {
    if let Some(i) = y_score.iter().position(|v| !v.is_finite()) {
        return Err(Error::invalid_input(format!(
            "{name} contains NaN or infinity (first at index {i})"
        )));
    }
    Ok(())
}

fn single_class_auc_error() -> Error {
    Error::invalid_input(
        "Only one class is present in y_true. ROC AUC score is not defined in that case.",
    )
}

/// ROC AUC of a binary problem: `y_score` scores the greater of the two classes of `y_true`.
pub fn roc_auc_score<T: Label>(y_true: ArrayView1<T>, y_score: ArrayView1<f64>) -> Result<f64> {
    check_lengths(y_true.len(), y_score.len(), "y_true", "y_score")?;
    labels::check_labels(&y_true, "y_true")?;
    check_discrete(&y_true, "y_true")?;
    let score: Vec<f64> = y_score.to_vec();
    check_scores(&score, "y_score")?;
    let (classes, codes) = labels::encode(y_true, "y_true")?;
    match classes.len() {
        1 => Err(single_class_auc_error()),
        2 => {
            let positive: Vec<bool> = codes.iter().map(|&c| c == 1).collect();
            Ok(binary_auc(&positive, &score))
        }
        k => Err(Error::invalid_input(format!(
            "y_true has {k} classes: multiclass ROC AUC needs a 2-D y_score with one column per class and multi_class='ovr' or 'ovo'"
        ))),
    }
}

/// Multiclass ROC AUC strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MultiClass {
    /// One class against the rest, per class.
    Ovr,
    /// Every pair of classes (Hand & Till).
    Ovo,
}

impl MultiClass {
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "ovr" => Ok(Self::Ovr),
            "ovo" => Ok(Self::Ovo),
            other => Err(Error::invalid_input(format!(
                "multi_class must be in ('ovo', 'ovr'), got {other:?}"
            ))),
        }
    }
}

/// ROC AUC of a multiclass problem from per-class probabilities (`n_samples x n_classes`,
/// columns in sorted class order, rows summing to 1). `average` is `Macro`, `Weighted`, or
/// (one-vs-rest only) `Micro`.
pub fn roc_auc_score_multiclass<T: Label>(
    y_true: ArrayView1<T>,
    y_score: ArrayView2<f64>,
    multi_class: MultiClass,
    average: Average,
) -> Result<f64> {
    check_lengths(y_true.len(), y_score.nrows(), "y_true", "y_score")?;
    labels::check_labels(&y_true, "y_true")?;
    check_discrete(&y_true, "y_true")?;
    crate::validation::check_finite_2d(&y_score, "y_score")?;
    let allowed = match multi_class {
        MultiClass::Ovr => matches!(average, Average::Macro | Average::Weighted | Average::Micro),
        MultiClass::Ovo => matches!(average, Average::Macro | Average::Weighted),
    };
    if !allowed {
        return Err(Error::invalid_input(format!(
            "average must be one of {} for multiclass problems, got {average:?}",
            if multi_class == MultiClass::Ovr {
                "('micro', 'macro', 'weighted')"
            } else {
                "('macro', 'weighted')"
            }
        )));
    }
    // np.allclose(1, row sums): |sum - 1| <= 1e-8 + 1e-5 |sum|
    if let Some(i) = y_score.rows().into_iter().position(|r| {
        let s: f64 = r.sum();
        (s - 1.0).abs() > 1e-8 + 1e-5 * s.abs()
    }) {
        return Err(Error::invalid_input(format!(
            "Target scores need to be probabilities for multiclass roc_auc, i.e. they should sum up to 1.0 over classes (row {i} does not)"
        )));
    }
    let (classes, codes) = labels::encode(y_true, "y_true")?;
    let k = classes.len();
    if k < 2 {
        return Err(single_class_auc_error());
    }
    if k != y_score.ncols() {
        return Err(Error::invalid_input(format!(
            "Number of classes in y_true ({k}) not equal to the number of columns in 'y_score' ({})",
            y_score.ncols()
        )));
    }
    let counts = bincount(&codes, k);
    match multi_class {
        MultiClass::Ovr if average == Average::Micro => {
            let positive: Vec<bool> = codes
                .iter()
                .flat_map(|&c| (0..k).map(move |j| j == c))
                .collect();
            let score: Vec<f64> = y_score
                .rows()
                .into_iter()
                .flat_map(|r| r.to_vec())
                .collect();
            Ok(binary_auc(&positive, &score))
        }
        MultiClass::Ovr => {
            let aucs: Vec<f64> = (0..k)
                .map(|j| {
                    let positive: Vec<bool> = codes.iter().map(|&c| c == j).collect();
                    binary_auc(&positive, &y_score.column(j).to_vec())
                })
                .collect();
            Ok(weighted_mean(
                &aucs,
                (average == Average::Weighted).then_some(&counts[..]),
            ))
        }
        MultiClass::Ovo => {
            let n = codes.len() as f64;
            let (mut scores, mut prevalence) = (Vec::new(), Vec::new());
            for a in 0..k {
                for b in a + 1..k {
                    let rows: Vec<usize> = (0..codes.len())
                        .filter(|&i| codes[i] == a || codes[i] == b)
                        .collect();
                    let is_a: Vec<bool> = rows.iter().map(|&i| codes[i] == a).collect();
                    let is_b: Vec<bool> = is_a.iter().map(|v| !v).collect();
                    let sa: Vec<f64> = rows.iter().map(|&i| y_score[[i, a]]).collect();
                    let sb: Vec<f64> = rows.iter().map(|&i| y_score[[i, b]]).collect();
                    scores.push((binary_auc(&is_a, &sa) + binary_auc(&is_b, &sb)) / 2.0);
                    prevalence.push(rows.len() as f64 / n);
                }
            }
            if average == Average::Weighted {
                let w: f64 = prevalence.iter().sum();
                Ok(scores
                    .iter()
                    .zip(&prevalence)
                    .map(|(s, p)| s * p)
                    .sum::<f64>()
                    / w)
            } else {
                Ok(scores.iter().sum::<f64>() / scores.len() as f64)
            }
        }
    }
}

fn weighted_mean(values: &[f64], weights: Option<&[usize]>) -> f64 {
    match weights {
        None => values.iter().sum::<f64>() / values.len() as f64,
        Some(w) => {
            let total: f64 = w.iter().map(|&v| v as f64).sum();
            values
                .iter()
                .zip(w)
                .map(|(v, &w)| v * w as f64)
                .sum::<f64>()
                / total
        }
    }
}

/// Predicted probabilities for [`log_loss`].
#[derive(Debug, Clone, Copy)]
pub enum Probabilities<'a> {
    /// Probability of the greater class of a binary problem, one per sample.
    Positive(ArrayView1<'a, f64>),
    /// One column per class in sorted class order (`n_samples x n_classes`).
    PerClass(ArrayView2<'a, f64>),
}

/// Cross-entropy of predicted probabilities, averaged over samples. Probabilities are clipped
/// to `[eps, 1 - eps]`; values outside `[0, 1]` are refused. `labels` gives the full class list
/// when `y_true` does not show every class.
pub fn log_loss<T: Label>(
    y_true: ArrayView1<T>,
    y_proba: Probabilities<'_>,
    labels: Option<&[T]>,
) -> Result<f64> {
    let (n_rows, name) = match y_proba {
        Probabilities::Positive(p) => (p.len(), "y_proba"),
        Probabilities::PerClass(p) => (p.nrows(), "y_proba"),
    };
    check_lengths(y_true.len(), n_rows, "y_true", name)?;
    labels::check_labels(&y_true, "y_true")?;
    let (lo, hi, finite) = match y_proba {
        Probabilities::Positive(p) => (
            p.fold(f64::INFINITY, |m, &v| m.min(v)),
            p.fold(f64::NEG_INFINITY, |m, &v| m.max(v)),
            p.iter().all(|v| v.is_finite()),
        ),
        Probabilities::PerClass(p) => (
            p.fold(f64::INFINITY, |m, &v| m.min(v)),
            p.fold(f64::NEG_INFINITY, |m, &v| m.max(v)),
            p.iter().all(|v| v.is_finite()),
        ),
    };
    if !finite {
        return Err(Error::invalid_input("y_proba contains NaN or infinity"));
    }
    if hi > 1.0 {
        return Err(Error::invalid_input(format!(
            "y_proba contains values greater than 1: {hi}"
        )));
    }
    if lo < 0.0 {
        return Err(Error::invalid_input(format!(
            "y_proba contains values lower than 0: {lo}"
        )));
    }
    let classes: Vec<T> = match labels {
        None => labels::encode(y_true, "y_true")?.0,
        Some(l) => {
            let mut sorted = l.to_vec();
            for (i, v) in sorted.iter().enumerate() {
                if !v.is_valid_label() {
                    return Err(Error::invalid_input(format!(
                        "labels contains NaN or infinity (at index {i})"
                    )));
                }
            }
            sorted.sort_by(|a, b| a.cmp_label(b));
            sorted.dedup_by(|a, b| labels::same(a, b));
            sorted
        }
    };
    if classes.len() == 1 {
        return Err(Error::invalid_input(format!(
            "y_true contains only one label ({:?}). Please provide the list of all expected class labels explicitly through the labels argument.",
            classes[0]
        )));
    }
    let n_cols = match y_proba {
        Probabilities::Positive(_) => 2,
        Probabilities::PerClass(p) => {
            if p.ncols() == 1 {
                2
            } else {
                p.ncols()
            }
        }
    };
    if classes.len() != n_cols {
        return Err(Error::invalid_input(format!(
            "y_true and y_proba contain different number of classes: {} vs {n_cols}. Please provide the true labels explicitly through the labels argument. Classes found in y_true: {:?}",
            classes.len(),
            classes
        )));
    }
    let mut total = 0.0;
    for (i, t) in y_true.iter().enumerate() {
        let k = labels::position(&classes, t).ok_or_else(|| {
            Error::invalid_input(format!(
                "y_true contains values not belonging to the passed labels ({t:?} at index {i})"
            ))
        })?;
        let p = match y_proba {
            Probabilities::Positive(p) => {
                if k == 1 {
                    p[i]
                } else {
                    1.0 - p[i]
                }
            }
            Probabilities::PerClass(p) if p.ncols() == 1 => {
                if k == 1 {
                    p[[i, 0]]
                } else {
                    1.0 - p[[i, 0]]
                }
            }
            Probabilities::PerClass(p) => p[[i, k]],
        };
        total += clipped_nll(p);
    }
    Ok(total / y_true.len() as f64)
}

/// `-ln p` with `p` clipped to `[eps, 1 - eps]` (`eps = f64::EPSILON`), so a confident
/// mistake costs about 36 instead of infinity.
pub(crate) fn clipped_nll(p: f64) -> f64 {
    -p.clamp(f64::EPSILON, 1.0 - f64::EPSILON).ln()
}

/// Disagreement weights of Cohen's kappa.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KappaWeights {
    /// Every disagreement costs 1.
    #[default]
    Unweighted,
    /// Cost `|i - j|` between class indices.
    Linear,
    /// Cost `(i - j)^2`.
    Quadratic,
}

impl KappaWeights {
    /// scikit-learn's names: `None` (unweighted), `"linear"`, `"quadratic"`.
    pub fn parse(name: Option<&str>) -> Result<Self> {
        match name {
            None => Ok(Self::Unweighted),
            Some("linear") => Ok(Self::Linear),
            Some("quadratic") => Ok(Self::Quadratic),
            Some(other) => Err(Error::invalid_input(format!(
                "Unknown kappa weighting type: {other:?}"
            ))),
        }
    }

    fn cost(self, i: usize, j: usize) -> f64 {
        let d = i.abs_diff(j) as f64;
        match self {
            Self::Unweighted => f64::from(u8::from(i != j)),
            Self::Linear => d,
            Self::Quadratic => d * d,
        }
    }
}

/// Kappa of a confusion matrix: `1 - sum(w * observed) / sum(w * expected)`, with `expected`
/// the outer product of the margins over the total (scikit-learn's arrangement). NaN when
/// the expected disagreement is 0 (one class only).
pub(crate) fn kappa_from_confusion(cm: ArrayView2<u64>, weights: KappaWeights) -> f64 {
    let k = cm.nrows();
    let pred: Vec<f64> = cm.columns().into_iter().map(|c| c.sum() as f64).collect();
    let truth: Vec<f64> = cm.rows().into_iter().map(|r| r.sum() as f64).collect();
    let total: f64 = pred.iter().sum();
    let (mut observed, mut expected) = (0.0, 0.0);
    for i in 0..k {
        for j in 0..k {
            let w = weights.cost(i, j);
            observed += w * cm[[i, j]] as f64;
            expected += w * (pred[i] * truth[j] / total);
        }
    }
    if expected == 0.0 {
        return f64::NAN;
    }
    1.0 - observed / expected
}

/// Cohen's kappa, the agreement of two annotators corrected for chance (scikit-learn's
/// `cohen_kappa_score`); NaN when undefined (both annotators use one class only). `labels`
/// selects and orders the classes, as in [`confusion_matrix`].
pub fn cohen_kappa_score<T: Label>(
    y1: ArrayView1<T>,
    y2: ArrayView1<T>,
    labels: Option<&[T]>,
    weights: KappaWeights,
) -> Result<f64> {
    let (_, cm) = confusion_matrix(y1, y2, labels)?;
    Ok(kappa_from_confusion(cm.view(), weights))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{arr1, arr2};

    #[test]
    fn accuracy_counts_matches() {
        let t = arr1(&[0i64, 1, 2, 2, 1]);
        let p = arr1(&[0i64, 2, 2, 2, 1]);
        assert_eq!(accuracy_score(t.view(), p.view()).unwrap(), 0.8);
        assert_eq!(
            accuracy_score(arr1(&[0.0, 1.0]).view(), arr1(&[-0.0, 0.0]).view()).unwrap(),
            0.5
        );
        let err = accuracy_score(arr1(&[0.5, 1.0]).view(), arr1(&[0.0, 1.0]).view())
            .unwrap_err()
            .to_string();
        assert!(err.contains("continuous"), "{err}");
    }

    #[test]
    fn precision_recall_f1_by_hand() {
        // classes 0,1,2; true [0,0,1,1,2,2], pred [0,1,1,1,0,2]
        // tp = [1,2,1], pred = [2,3,1], true = [2,2,2]
        let t = arr1(&[0i64, 0, 1, 1, 2, 2]);
        let p = arr1(&[0i64, 1, 1, 1, 0, 2]);
        let zd = ZeroDivision::Zero;
        let prfs = precision_recall_fscore_support(t.view(), p.view(), 1.0, zd).unwrap();
        assert_eq!(prfs.precision, vec![0.5, 2.0 / 3.0, 1.0]);
        assert_eq!(prfs.recall, vec![0.5, 1.0, 0.5]);
        // f1 = 2tp / (true + pred)
        assert_eq!(prfs.fscore, vec![0.5, 0.8, 2.0 / 3.0]);
        assert_eq!(prfs.support, vec![2, 2, 2]);
        let macro_p = precision_score(t.view(), p.view(), Average::Macro, &1, zd).unwrap();
        assert!((macro_p - (0.5 + 2.0 / 3.0 + 1.0) / 3.0).abs() < 1e-15);
        let micro_r = recall_score(t.view(), p.view(), Average::Micro, &1, zd).unwrap();
        assert_eq!(micro_r, 4.0 / 6.0);
        assert!(f1_score(t.view(), p.view(), Average::Binary, &1, zd)
            .unwrap_err()
            .to_string()
            .contains("multiclass"));
        // binary: pos_label 1 in [0,1]
        let tb = arr1(&[0i64, 1, 1, 0]);
        let pb = arr1(&[1i64, 1, 0, 0]);
        assert_eq!(
            f1_score(tb.view(), pb.view(), Average::Binary, &1, zd).unwrap(),
            0.5
        );
        assert!(f1_score(tb.view(), pb.view(), Average::Binary, &7, zd)
            .unwrap_err()
            .to_string()
            .contains("pos_label"));
        // no predicted positives: precision falls back to zero_division
        let none = arr1(&[0i64, 0, 0, 0]);
        assert_eq!(
            precision_score(
                tb.view(),
                none.view(),
                Average::Binary,
                &1,
                ZeroDivision::One
            )
            .unwrap(),
            1.0
        );
        assert!(precision_score(
            tb.view(),
            none.view(),
            Average::Binary,
            &1,
            ZeroDivision::Nan
        )
        .unwrap()
        .is_nan());
        assert!(Average::parse("sample").is_err());
    }

    #[test]
    fn confusion_balanced_mcc_by_hand() {
        let t = arr1(&["a", "a", "b", "b", "c"]);
        let p = arr1(&["a", "b", "b", "b", "a"]);
        let (labels, cm) = confusion_matrix(t.view(), p.view(), None).unwrap();
        assert_eq!(labels, vec!["a", "b", "c"]);
        assert_eq!(cm, arr2(&[[1u64, 1, 0], [0, 2, 0], [1, 0, 0]]));
        let (_, sub) = confusion_matrix(t.view(), p.view(), Some(&["b", "a"])).unwrap();
        assert_eq!(sub, arr2(&[[2u64, 0], [1, 1]]));
        assert!(confusion_matrix(t.view(), p.view(), Some(&["z"])).is_err());
        let norm = normalize_confusion_matrix(cm.view(), ConfusionNormalize::True);
        assert_eq!(norm.row(0).to_vec(), vec![0.5, 0.5, 0.0]);
        // recalls 0.5, 1, 0 -> 0.5
        assert_eq!(
            balanced_accuracy_score(t.view(), p.view(), false).unwrap(),
            0.5
        );
        assert_eq!(
            balanced_accuracy_score(t.view(), p.view(), true).unwrap(),
            0.25
        );
        // binary mcc: tp=1 tn=1 fp=1 fn=1 -> 0
        let tb = arr1(&[1i32, 1, 0, 0]);
        let pb = arr1(&[1i32, 0, 1, 0]);
        assert_eq!(matthews_corrcoef(tb.view(), pb.view()).unwrap(), 0.0);
        assert_eq!(matthews_corrcoef(tb.view(), tb.view()).unwrap(), 1.0);
        assert_eq!(
            matthews_corrcoef(tb.view(), arr1(&[1i32, 1, 1, 1]).view()).unwrap(),
            0.0
        );
    }

    #[test]
    fn cohen_kappa_by_hand() {
        // true [0,0,1,1], pred [0,1,1,1]: observed agreement 3/4; margins true (2,2), pred
        // (1,3) -> chance agreement (2*1 + 2*3)/16 = 1/2 -> kappa (3/4 - 1/2)/(1/2) = 1/2
        let a = arr1(&[0i64, 0, 1, 1]);
        let b = arr1(&[0i64, 1, 1, 1]);
        let k = cohen_kappa_score(a.view(), b.view(), None, KappaWeights::Unweighted).unwrap();
        assert!((k - 0.5).abs() < 1e-15);
        // three ordered classes, one sample one step off
        let t = arr1(&[0i64, 1, 2]);
        let p = arr1(&[0i64, 2, 2]);
        // observed cost: 1 (1 -> 2); expected: sum_ij |i-j| pred_i truth_j / 3 with pred
        // (1,0,2), truth (1,1,1): (1*(0+1+2) + 2*(2+1+0)) / 3 = 3
        let lin = cohen_kappa_score(t.view(), p.view(), None, KappaWeights::Linear).unwrap();
        assert!((lin - (1.0 - 1.0 / 3.0)).abs() < 1e-15);
        let same = arr1(&[4i64, 4, 4]);
        assert!(
            cohen_kappa_score(same.view(), same.view(), None, KappaWeights::Unweighted)
                .unwrap()
                .is_nan()
        );
        assert!(KappaWeights::parse(Some("cubic")).is_err());
    }

    #[test]
    fn macro_average_ignores_pos_label() {
        // pos_label only selects the class of average='binary'; a label absent from y is
        // fine for the other averages (strings: no class is 1).
        let t = arr1(&["a", "b", "b", "a"]);
        let p = arr1(&["a", "b", "a", "a"]);
        let zd = ZeroDivision::Zero;
        // precision a: 2/3, b: 1 -> 5/6
        let macro_p = precision_score(t.view(), p.view(), Average::Macro, &"z", zd).unwrap();
        assert!((macro_p - 5.0 / 6.0).abs() < 1e-15);
        assert!(precision_score(t.view(), p.view(), Average::Binary, &"z", zd).is_err());
    }

    #[test]
    fn auc_by_hand() {
        // positives score 0.35 (tied with a negative) and 0.8; negatives 0.1, 0.35
        // pairs (pos, neg): (0.35,0.1)=1, (0.35,0.35)=0.5, (0.8,*)=1+1 -> 3.5/4
        let y = arr1(&[0i64, 1, 0, 1]);
        let s = arr1(&[0.1, 0.35, 0.35, 0.8]);
        assert_eq!(roc_auc_score(y.view(), s.view()).unwrap(), 0.875);
        let err = roc_auc_score(arr1(&[1i64, 1]).view(), arr1(&[0.1, 0.2]).view())
            .unwrap_err()
            .to_string();
        assert!(err.contains("Only one class"), "{err}");
        // multiclass ovr on a perfectly ranked problem
        let y3 = arr1(&[0i64, 1, 2]);
        let p3 = arr2(&[[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]]);
        for mc in [MultiClass::Ovr, MultiClass::Ovo] {
            assert_eq!(
                roc_auc_score_multiclass(y3.view(), p3.view(), mc, Average::Macro).unwrap(),
                1.0
            );
        }
        let bad = arr2(&[[0.9, 0.9, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]]);
        assert!(
            roc_auc_score_multiclass(y3.view(), bad.view(), MultiClass::Ovr, Average::Macro)
                .is_err()
        );
    }

    #[test]
    fn log_loss_by_hand() {
        let y = arr1(&[0i64, 1]);
        let p = arr1(&[0.25, 0.5]);
        // -(ln 0.75 + ln 0.5) / 2
        let want = -(0.75f64.ln() + 0.5f64.ln()) / 2.0;
        assert!(
            (log_loss(y.view(), Probabilities::Positive(p.view()), None).unwrap() - want).abs()
                < 1e-15
        );
        let p2 = arr2(&[[0.75, 0.25], [0.5, 0.5]]);
        assert!(
            (log_loss(y.view(), Probabilities::PerClass(p2.view()), None).unwrap() - want).abs()
                < 1e-15
        );
        let err = log_loss(
            y.view(),
            Probabilities::Positive(arr1(&[0.5, 1.5]).view()),
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("greater than 1"), "{err}");
        let err = log_loss(
            arr1(&[1i64, 1]).view(),
            Probabilities::Positive(p.view()),
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("only one label"), "{err}");
        assert!(log_loss(
            arr1(&[1i64, 1]).view(),
            Probabilities::Positive(p.view()),
            Some(&[0, 1])
        )
        .is_ok());
    }
}
