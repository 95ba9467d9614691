//! Metrics of ranked scores: the ROC and precision-recall curves, average precision and top-k
//! accuracy, scikit-learn's definitions.
//!
//! The curves come from one pass over the scores sorted in decreasing order
//! ([`binary_clf_curve`]): one point per distinct score, with the cumulative false and true
//! positive counts at that threshold. The original crate's `roc_curve`,
//! `precision_recall_curve`, `average_precision` and `top_k_accuracy` run these same cores.

use super::check_lengths;
use crate::error::{Error, Result};
use crate::math::labels::{self, Label};
use ndarray::{Array1, ArrayView1, ArrayView2};

/// Cumulative counts at each distinct score, scores decreasing.
pub(crate) struct BinaryCurve {
    /// False positives among the samples scoring `>= thresholds[i]`.
    pub fps: Vec<u64>,
    /// True positives among the samples scoring `>= thresholds[i]`.
    pub tps: Vec<u64>,
    pub thresholds: Vec<f64>,
}

/// scikit-learn's `_binary_clf_curve` (no sample weights). Scores must not hold NaN.
pub(crate) fn binary_clf_curve(positive: &[bool], score: &[f64]) -> BinaryCurve {
    let mut order: Vec<usize> = (0..score.len()).collect();
    order.sort_by(|&a, &b| score[b].total_cmp(&score[a]));
    let mut curve = BinaryCurve {
        fps: Vec::new(),
        tps: Vec::new(),
        thresholds: Vec::new(),
    };
    let (mut tp, mut fp) = (0u64, 0u64);
    for (rank, &i) in order.iter().enumerate() {
        if positive[i] {
            tp += 1;
        } else {
            fp += 1;
        }
        // one point at the last sample of each run of equal scores
        let last_of_run = order
            .get(rank + 1)
            .is_none_or(|&next| score[next] != score[i]);
        if last_of_run {
            curve.fps.push(fp);
            curve.tps.push(tp);
            curve.thresholds.push(score[i]);
        }
    }
    curve
}

/// The binary curve of `score`; with `drop_intermediate`, only its ends and the points `i`
/// that `keep(curve, i)` asks for (a curve of two points or fewer stays whole).
fn thinned_curve(
    positive: &[bool],
    score: &[f64],
    drop_intermediate: bool,
    keep: impl Fn(&BinaryCurve, usize) -> bool,
) -> BinaryCurve {
    let curve = binary_clf_curve(positive, score);
    if !drop_intermediate || curve.fps.len() <= 2 {
        return curve;
    }
    let n = curve.fps.len();
    let idx: Vec<usize> = (0..n)
        .filter(|&i| i == 0 || i + 1 == n || keep(&curve, i))
        .collect();
    BinaryCurve {
        fps: idx.iter().map(|&i| curve.fps[i]).collect(),
        tps: idx.iter().map(|&i| curve.tps[i]).collect(),
        thresholds: idx.iter().map(|&i| curve.thresholds[i]).collect(),
    }
}

/// `counts / counts.last()`, NaN everywhere when the last count is 0 (scikit-learn warns and
/// returns NaN there).
fn rate(counts: &[u64]) -> Array1<f64> {
    let total = counts.last().copied().unwrap_or(0) as f64;
    counts
        .iter()
        .map(|&c| {
            if total > 0.0 {
                c as f64 / total
            } else {
                f64::NAN
            }
        })
        .collect()
}

/// `(fpr, tpr, thresholds)` of a binary problem; the first point is `(0, 0)` at threshold
/// `+inf`. `drop_intermediate` drops points that lie on a straight segment of the curve.
pub(crate) fn roc_curve_core(
    positive: &[bool],
    score: &[f64],
    drop_intermediate: bool,
) -> (Array1<f64>, Array1<f64>, Array1<f64>) {
    let second_diff = |v: &[u64], i: usize| v[i + 1] + v[i - 1] != 2 * v[i];
    let mut curve = thinned_curve(positive, score, drop_intermediate, |c, i| {
        second_diff(&c.fps, i) || second_diff(&c.tps, i)
    });
    curve.fps.insert(0, 0);
    curve.tps.insert(0, 0);
    curve.thresholds.insert(0, f64::INFINITY);
    (
        rate(&curve.fps),
        rate(&curve.tps),
        Array1::from(curve.thresholds),
    )
}

/// `(precision, recall, thresholds)` with thresholds increasing and the final point
/// `(precision 1, recall 0)` that has no threshold. Precision with no predicted positive is 0;
/// with no positive at all, recall is 1 everywhere (scikit-learn's convention).
pub(crate) fn precision_recall_curve_core(
    positive: &[bool],
    score: &[f64],
    drop_intermediate: bool,
) -> (Array1<f64>, Array1<f64>, Array1<f64>) {
    // a point is needed only where the true-positive count changes next to it
    let mut curve = thinned_curve(positive, score, drop_intermediate, |c, i| {
        c.tps[i] != c.tps[i - 1] || c.tps[i + 1] != c.tps[i]
    });
    let total_pos = curve.tps.last().copied().unwrap_or(0);
    let mut precision: Vec<f64> = curve
        .tps
        .iter()
        .zip(&curve.fps)
        .rev()
        .map(|(&tp, &fp)| {
            if tp + fp == 0 {
                0.0
            } else {
                tp as f64 / (tp + fp) as f64
            }
        })
        .collect();
    let mut recall: Vec<f64> = curve
        .tps
        .iter()
        .rev()
        .map(|&tp| {
            if total_pos == 0 {
                1.0
            } else {
                tp as f64 / total_pos as f64
            }
        })
        .collect();
    precision.push(1.0);
    recall.push(0.0);
    curve.thresholds.reverse();
    (
        Array1::from(precision),
        Array1::from(recall),
        Array1::from(curve.thresholds),
    )
}

/// Average precision: `sum_n (R_n - R_{n-1}) P_n` over the thresholds (no interpolation),
/// clipped at 0.
pub(crate) fn average_precision_core(positive: &[bool], score: &[f64]) -> f64 {
    let (precision, recall, _) = precision_recall_curve_core(positive, score, false);
    let area: f64 = recall
        .windows(2)
        .into_iter()
        .zip(precision.iter())
        .map(|(r, &p)| (r[1] - r[0]) * p)
        .sum();
    (-area).max(0.0)
}

/// How [`top_k_hit`] ranks classes that tie with the true class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TieRule {
    /// Ties count for the sample: a hit when fewer than `k` classes score strictly higher
    /// (the original crate).
    Favourable,
    /// scikit-learn's order (a stable ascending sort, reversed): a tied class with a greater
    /// column index ranks ahead of the true class.
    ColumnOrder,
}

/// Whether the true class `truth` is among the `k` best of `row`.
pub(crate) fn top_k_hit(row: ArrayView1<f64>, truth: usize, k: usize, ties: TieRule) -> bool {
    let s = row[truth];
    let ahead = row
        .iter()
        .enumerate()
        .filter(|&(j, &v)| v > s || (ties == TieRule::ColumnOrder && v == s && j > truth))
        .count();
    ahead < k
}

/// Validate scores: no NaN or infinity.
fn check_scores(score: &[f64], name: &str) -> Result<()> {
    if let Some(i) = score.iter().position(|v| !v.is_finite()) {
        return Err(Error::invalid_input(format!(
            "{name} contains NaN or infinity (first at index {i})"
        )));
    }
    Ok(())
}

/// `y_true == pos_label` per sample, scikit-learn's `pos_label` rule: with `None` the labels
/// must be `{0, 1}` or `{-1, 1}` (or one of them) and 1 is positive.
fn positives<T: Label>(
    y_true: ArrayView1<T>,
    y_score: ArrayView1<f64>,
    pos_label: Option<&T>,
) -> Result<(Vec<bool>, Vec<f64>)> {
    check_lengths(y_true.len(), y_score.len(), "y_true", "y_score")?;
    labels::check_labels(&y_true, "y_true")?;
    let score = y_score.to_vec();
    check_scores(&score, "y_score")?;
    let (classes, codes) = labels::encode(y_true, "y_true")?;
    if classes.len() > 2 {
        return Err(Error::invalid_input(format!(
            "y_true has {} classes ({classes:?}): a binary curve needs at most 2 (multiclass format is not supported)",
            classes.len()
        )));
    }
    let positive_code = match pos_label {
        Some(p) => labels::position(&classes, p),
        None => {
            let numeric: Option<Vec<i64>> = classes.iter().map(Label::as_int).collect();
            let ok = numeric.as_ref().is_some_and(|v| {
                v.iter().all(|&c| c == 0 || c == 1) || v.iter().all(|&c| c == -1 || c == 1)
            });
            if !ok {
                return Err(Error::invalid_input(format!(
                    "y_true takes value in {classes:?} and pos_label is not specified: either make y_true take value in {{0, 1}} or {{-1, 1}} or pass pos_label explicitly"
                )));
            }
            numeric.and_then(|v| v.iter().position(|&c| c == 1))
        }
    };
    let positive = codes.iter().map(|&c| Some(c) == positive_code).collect();
    Ok((positive, score))
}

/// ROC curve `(fpr, tpr, thresholds)` of a binary problem (scikit-learn's `roc_curve`): one
/// point per distinct score plus the origin at threshold `+inf`. A curve without negatives
/// (positives) has NaN false (true) positive rates.
pub fn roc_curve<T: Label>(
    y_true: ArrayView1<T>,
    y_score: ArrayView1<f64>,
    pos_label: Option<&T>,
    drop_intermediate: bool,
) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>)> {
    let (positive, score) = positives(y_true, y_score, pos_label)?;
    Ok(roc_curve_core(&positive, &score, drop_intermediate))
}

/// Precision-recall curve `(precision, recall, thresholds)` (scikit-learn's
/// `precision_recall_curve`).
pub fn precision_recall_curve<T: Label>(
    y_true: ArrayView1<T>,
    y_score: ArrayView1<f64>,
    pos_label: Option<&T>,
    drop_intermediate: bool,
) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>)> {
    let (positive, score) = positives(y_true, y_score, pos_label)?;
    Ok(precision_recall_curve_core(
        &positive,
        &score,
        drop_intermediate,
    ))
}

/// Average precision of a binary problem (scikit-learn's `average_precision_score`,
/// `pos_label` 1 by default); 0 when `y_true` holds no positive.
pub fn average_precision_score<T: Label>(
    y_true: ArrayView1<T>,
    y_score: ArrayView1<f64>,
    pos_label: &T,
) -> Result<f64> {
    check_lengths(y_true.len(), y_score.len(), "y_true", "y_score")?;
    labels::check_labels(&y_true, "y_true")?;
    let score = y_score.to_vec();
    check_scores(&score, "y_score")?;
    let (classes, codes) = labels::encode(y_true, "y_true")?;
    if classes.len() > 2 {
        return Err(Error::invalid_input(
            "y_true is multiclass: pass a 2-D y_score with one column per class",
        ));
    }
    let pos = labels::position(&classes, pos_label);
    if pos.is_none() && classes.len() == 2 {
        return Err(Error::invalid_input(format!(
            "pos_label={pos_label:?} is not a valid label. It should be one of {classes:?}"
        )));
    }
    let positive: Vec<bool> = codes.iter().map(|&c| Some(c) == pos).collect();
    Ok(average_precision_core(&positive, &score))
}

/// Top-k accuracy with scikit-learn's tie order: the fraction (or with `normalize == false`
/// the number) of samples whose true class code `y_true[i]` (a column of `y_score`) is among
/// the `k` highest scores of its row.
pub fn top_k_accuracy_score(
    y_true: ArrayView1<usize>,
    y_score: ArrayView2<f64>,
    k: usize,
    normalize: bool,
) -> Result<f64> {
    check_lengths(y_true.len(), y_score.nrows(), "y_true", "y_score")?;
    crate::validation::check_finite_2d(&y_score, "y_score")?;
    if k == 0 {
        return Err(Error::invalid_input("k must be at least 1"));
    }
    if let Some(i) = y_true.iter().position(|&c| c >= y_score.ncols()) {
        return Err(Error::invalid_input(format!(
            "y_true[{i}] = {} has no column in y_score ({} columns)",
            y_true[i],
            y_score.ncols()
        )));
    }
    let hits = top_k_hits(y_true, y_score, k, TieRule::ColumnOrder);
    Ok(if normalize {
        hits as f64 / y_true.len() as f64
    } else {
        hits as f64
    })
}

/// Number of rows whose true class is in the top `k` (codes already in range).
pub(crate) fn top_k_hits(
    y_true: ArrayView1<usize>,
    y_score: ArrayView2<f64>,
    k: usize,
    ties: TieRule,
) -> usize {
    y_true
        .iter()
        .zip(y_score.rows())
        .filter(|&(&t, row)| top_k_hit(row, t, k, ties))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{arr1, arr2};

    #[test]
    fn roc_curve_by_hand() {
        // scores 0.9 (+), 0.8 (+), 0.7 (-), 0.6 (+), 0.5 (-): cumulative (fp, tp) at each
        // threshold: (0,1) (0,2) (1,2) (1,3) (2,3)
        let y = arr1(&[1i64, 1, 0, 1, 0]);
        let s = arr1(&[0.9, 0.8, 0.7, 0.6, 0.5]);
        let (fpr, tpr, thr) = roc_curve(y.view(), s.view(), None, false).unwrap();
        assert_eq!(fpr.to_vec(), vec![0.0, 0.0, 0.0, 0.5, 0.5, 1.0]);
        assert_eq!(
            tpr.to_vec(),
            vec![0.0, 1.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0, 1.0, 1.0]
        );
        assert_eq!(thr.to_vec(), vec![f64::INFINITY, 0.9, 0.8, 0.7, 0.6, 0.5]);
        // no three consecutive points are collinear here, so dropping keeps them all
        let (fpr, _, _) = roc_curve(y.view(), s.view(), None, true).unwrap();
        assert_eq!(fpr.len(), 6);
        // (fp, tp): (0,1) (0,2) (0,3) (1,3) (2,3): (0,2) and (1,3) lie inside straight
        // segments and are dropped (before the origin is prepended, as scikit-learn does)
        let y3 = arr1(&[1i64, 1, 1, 0, 0]);
        let (fpr, tpr, thr) = roc_curve(y3.view(), s.view(), None, true).unwrap();
        assert_eq!(fpr.to_vec(), vec![0.0, 0.0, 0.0, 1.0]);
        assert_eq!(tpr.to_vec(), vec![0.0, 1.0 / 3.0, 1.0, 1.0]);
        assert_eq!(thr.to_vec(), vec![f64::INFINITY, 0.9, 0.7, 0.5]);
        // string labels need pos_label
        let ys = arr1(&["a", "b", "a", "b", "a"]);
        assert!(roc_curve(ys.view(), s.view(), None, true).is_err());
        // "b" at 0.8 and 0.6: the true-positive count steps at those two thresholds
        let (_, tpr, _) = roc_curve(ys.view(), s.view(), Some(&"b"), false).unwrap();
        assert_eq!(tpr.to_vec(), vec![0.0, 0.0, 0.5, 0.5, 1.0, 1.0]);
    }

    #[test]
    fn precision_recall_and_average_precision_by_hand() {
        // positives at ranks 1 and 3 of 4: precision 1 at recall 1/2, 2/3 at recall 1
        let y = arr1(&[1i64, 0, 1, 0]);
        let s = arr1(&[0.9, 0.6, 0.4, 0.1]);
        let (p, r, t) = precision_recall_curve(y.view(), s.view(), None, false).unwrap();
        assert_eq!(p.to_vec(), vec![0.5, 2.0 / 3.0, 0.5, 1.0, 1.0]);
        assert_eq!(r.to_vec(), vec![1.0, 1.0, 0.5, 0.5, 0.0]);
        assert_eq!(t.to_vec(), vec![0.1, 0.4, 0.6, 0.9]);
        let ap = average_precision_score(y.view(), s.view(), &1).unwrap();
        assert!((ap - (0.5 + 0.5 * 2.0 / 3.0)).abs() < 1e-15);
        // dropping keeps the points where the true-positive count changes
        let (_, _, t) = precision_recall_curve(y.view(), s.view(), None, true).unwrap();
        assert_eq!(t.to_vec(), vec![0.1, 0.4, 0.6, 0.9]);
        // no positive: recall 1 everywhere, AP 0
        let none = arr1(&[0i64, 0, 0, 0]);
        let (_, r, _) = precision_recall_curve(none.view(), s.view(), None, false).unwrap();
        assert_eq!(r.to_vec(), vec![1.0, 1.0, 1.0, 1.0, 0.0]);
        assert_eq!(
            average_precision_score(none.view(), s.view(), &1).unwrap(),
            0.0
        );
        let bad = arr1(&[0.9, f64::NAN, 0.4, 0.1]);
        assert!(average_precision_score(y.view(), bad.view(), &1).is_err());
    }

    #[test]
    fn top_k_ties_follow_the_rule() {
        let p = arr2(&[[0.5, 0.5, 0.5], [0.1, 0.6, 0.3]]);
        let t = arr1(&[0usize, 2]);
        // row 0: both other columns tie and have a greater index -> 2 ahead under ColumnOrder
        assert_eq!(top_k_hits(t.view(), p.view(), 1, TieRule::Favourable), 1);
        assert_eq!(top_k_hits(t.view(), p.view(), 1, TieRule::ColumnOrder), 0);
        assert_eq!(top_k_hits(t.view(), p.view(), 2, TieRule::ColumnOrder), 1);
        assert_eq!(
            top_k_accuracy_score(t.view(), p.view(), 3, true).unwrap(),
            1.0
        );
        assert_eq!(
            top_k_accuracy_score(t.view(), p.view(), 2, false).unwrap(),
            1.0
        );
        assert!(top_k_accuracy_score(arr1(&[3usize, 0]).view(), p.view(), 1, true).is_err());
    }
}
