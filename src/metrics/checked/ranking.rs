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

/// Cumulative counts (or weights) at each distinct score, scores decreasing.
pub(crate) struct BinaryCurve {
    /// False positives (their weight) among the samples scoring `>= thresholds[i]`.
    pub fps: Vec<f64>,
    /// True positives (their weight) among the samples scoring `>= thresholds[i]`.
    pub tps: Vec<f64>,
    pub thresholds: Vec<f64>,
}

/// scikit-learn's `_binary_clf_curve`. Scores must not hold NaN. Without weights the counts
/// are integers (exact in `f64`). With `weight` (one per sample, checked by the caller),
/// samples of weight 0 are left out and the weights summed in scikit-learn's order: scores
/// decreasing, equal scores in sample order (its stable sort), each sum `y w` and `(1 - y) w`
/// added in turn from the first (NumPy's sequential cumulative sum), so every float is its.
pub(crate) fn binary_clf_curve(
    positive: &[bool],
    score: &[f64],
    weight: Option<&[f64]>,
) -> BinaryCurve {
    let mut order: Vec<usize> = match weight {
        Some(w) => (0..score.len()).filter(|&i| w[i] != 0.0).collect(),
        None => (0..score.len()).collect(),
    };
    // stable: equal scores keep their sample order
    order.sort_by(|&a, &b| score[b].total_cmp(&score[a]));
    let mut curve = BinaryCurve {
        fps: Vec::new(),
        tps: Vec::new(),
        thresholds: Vec::new(),
    };
    // -0.0 + x is x for every x, -0.0 included: the sums start as a cumulative sum does
    let (mut tp, mut fp) = (-0.0f64, -0.0f64);
    let (mut tp_count, mut fp_count) = (0u64, 0u64);
    for (rank, &i) in order.iter().enumerate() {
        match weight {
            Some(w) => {
                let y = if positive[i] { 1.0 } else { 0.0 };
                tp += y * w[i];
                fp += (1.0 - y) * w[i];
            }
            None if positive[i] => tp_count += 1,
            None => fp_count += 1,
        }
        // one point at the last sample of each run of equal scores
        let last_of_run = order
            .get(rank + 1)
            .is_none_or(|&next| score[next] != score[i]);
        if last_of_run {
            if weight.is_some() {
                curve.fps.push(fp);
                curve.tps.push(tp);
            } else {
                curve.fps.push(fp_count as f64);
                curve.tps.push(tp_count as f64);
            }
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
    weight: Option<&[f64]>,
    drop_intermediate: bool,
    keep: impl Fn(&BinaryCurve, usize) -> bool,
) -> BinaryCurve {
    let curve = binary_clf_curve(positive, score, weight);
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

/// `counts / counts.last()`, NaN everywhere when the last count is not positive
/// (scikit-learn warns and returns NaN there).
fn rate(counts: &[f64]) -> Array1<f64> {
    let total = counts.last().copied().unwrap_or(0.0);
    counts
        .iter()
        .map(|&c| if total > 0.0 { c / total } else { f64::NAN })
        .collect()
}

/// `(fpr, tpr, thresholds)` of a binary problem; the first point is `(0, 0)` at threshold
/// `+inf`. `drop_intermediate` drops points that lie on a straight segment of the curve
/// (scikit-learn's second differences, `(v[i+1] - v[i]) - (v[i] - v[i-1])`, not zero).
pub(crate) fn roc_curve_core(
    positive: &[bool],
    score: &[f64],
    weight: Option<&[f64]>,
    drop_intermediate: bool,
) -> (Array1<f64>, Array1<f64>, Array1<f64>) {
    let second_diff = |v: &[f64], i: usize| (v[i + 1] - v[i]) - (v[i] - v[i - 1]) != 0.0;
    let mut curve = thinned_curve(positive, score, weight, drop_intermediate, |c, i| {
        second_diff(&c.fps, i) || second_diff(&c.tps, i)
    });
    curve.fps.insert(0, 0.0);
    curve.tps.insert(0, 0.0);
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
    weight: Option<&[f64]>,
    drop_intermediate: bool,
) -> (Array1<f64>, Array1<f64>, Array1<f64>) {
    // a point is needed only where the true-positive count changes next to it
    let mut curve = thinned_curve(positive, score, weight, drop_intermediate, |c, i| {
        c.tps[i] != c.tps[i - 1] || c.tps[i + 1] != c.tps[i]
    });
    let total_pos = curve.tps.last().copied().unwrap_or(0.0);
    let mut precision: Vec<f64> = curve
        .tps
        .iter()
        .zip(&curve.fps)
        .rev()
        .map(|(&tp, &fp)| {
            let predicted = tp + fp;
            if predicted == 0.0 {
                0.0
            } else {
                tp / predicted
            }
        })
        .collect();
    let mut recall: Vec<f64> = curve
        .tps
        .iter()
        .rev()
        .map(|&tp| {
            if total_pos == 0.0 {
                1.0
            } else {
                tp / total_pos
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
    let (precision, recall, _) = precision_recall_curve_core(positive, score, None, false);
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

/// Sample weights for a curve: one finite weight per sample, not all zero (the curve of no
/// sample has no point).
fn curve_weights(n: usize, sample_weight: Option<ArrayView1<f64>>) -> Result<Option<Vec<f64>>> {
    let Some(w) = sample_weight else {
        return Ok(None);
    };
    check_lengths(n, w.len(), "y_true", "sample_weight")?;
    if !w.iter().all(|v| v.is_finite()) {
        return Err(Error::invalid_input(
            "sample_weight contains NaN or infinity",
        ));
    }
    if w.iter().all(|&v| v == 0.0) {
        return Err(Error::invalid_input(
            "every sample_weight is 0: the curve has no point",
        ));
    }
    Ok(Some(w.to_vec()))
}

/// ROC curve `(fpr, tpr, thresholds)` of a binary problem (scikit-learn's `roc_curve`): one
/// point per distinct score plus the origin at threshold `+inf`. A curve without negatives
/// (positives) has NaN false (true) positive rates. With `sample_weight`, the rates are of
/// weights, summed in scikit-learn's order ([`binary_clf_curve`]).
pub fn roc_curve<T: Label>(
    y_true: ArrayView1<T>,
    y_score: ArrayView1<f64>,
    pos_label: Option<&T>,
    drop_intermediate: bool,
    sample_weight: Option<ArrayView1<f64>>,
) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>)> {
    let (positive, score) = positives(y_true, y_score, pos_label)?;
    let weight = curve_weights(positive.len(), sample_weight)?;
    Ok(roc_curve_core(
        &positive,
        &score,
        weight.as_deref(),
        drop_intermediate,
    ))
}

/// Precision-recall curve `(precision, recall, thresholds)` (scikit-learn's
/// `precision_recall_curve`), of counts or, with `sample_weight`, of weights.
pub fn precision_recall_curve<T: Label>(
    y_true: ArrayView1<T>,
    y_score: ArrayView1<f64>,
    pos_label: Option<&T>,
    drop_intermediate: bool,
    sample_weight: Option<ArrayView1<f64>>,
) -> Result<(Array1<f64>, Array1<f64>, Array1<f64>)> {
    let (positive, score) = positives(y_true, y_score, pos_label)?;
    let weight = curve_weights(positive.len(), sample_weight)?;
    Ok(precision_recall_curve_core(
        &positive,
        &score,
        weight.as_deref(),
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
        let (fpr, tpr, thr) = roc_curve(y.view(), s.view(), None, false, None).unwrap();
        assert_eq!(fpr.to_vec(), vec![0.0, 0.0, 0.0, 0.5, 0.5, 1.0]);
        assert_eq!(
            tpr.to_vec(),
            vec![0.0, 1.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0, 1.0, 1.0]
        );
        assert_eq!(thr.to_vec(), vec![f64::INFINITY, 0.9, 0.8, 0.7, 0.6, 0.5]);
        // no three consecutive points are collinear here, so dropping keeps them all
        let (fpr, _, _) = roc_curve(y.view(), s.view(), None, true, None).unwrap();
        assert_eq!(fpr.len(), 6);
        // (fp, tp): (0,1) (0,2) (0,3) (1,3) (2,3): (0,2) and (1,3) lie inside straight
        // segments and are dropped (before the origin is prepended, as scikit-learn does)
        let y3 = arr1(&[1i64, 1, 1, 0, 0]);
        let (fpr, tpr, thr) = roc_curve(y3.view(), s.view(), None, true, None).unwrap();
        assert_eq!(fpr.to_vec(), vec![0.0, 0.0, 0.0, 1.0]);
        assert_eq!(tpr.to_vec(), vec![0.0, 1.0 / 3.0, 1.0, 1.0]);
        assert_eq!(thr.to_vec(), vec![f64::INFINITY, 0.9, 0.7, 0.5]);
        // string labels need pos_label
        let ys = arr1(&["a", "b", "a", "b", "a"]);
        assert!(roc_curve(ys.view(), s.view(), None, true, None).is_err());
        // "b" at 0.8 and 0.6: the true-positive count steps at those two thresholds
        let (_, tpr, _) = roc_curve(ys.view(), s.view(), Some(&"b"), false, None).unwrap();
        assert_eq!(tpr.to_vec(), vec![0.0, 0.0, 0.5, 0.5, 1.0, 1.0]);
    }

    #[test]
    fn precision_recall_and_average_precision_by_hand() {
        // positives at ranks 1 and 3 of 4: precision 1 at recall 1/2, 2/3 at recall 1
        let y = arr1(&[1i64, 0, 1, 0]);
        let s = arr1(&[0.9, 0.6, 0.4, 0.1]);
        let (p, r, t) = precision_recall_curve(y.view(), s.view(), None, false, None).unwrap();
        assert_eq!(p.to_vec(), vec![0.5, 2.0 / 3.0, 0.5, 1.0, 1.0]);
        assert_eq!(r.to_vec(), vec![1.0, 1.0, 0.5, 0.5, 0.0]);
        assert_eq!(t.to_vec(), vec![0.1, 0.4, 0.6, 0.9]);
        let ap = average_precision_score(y.view(), s.view(), &1).unwrap();
        assert!((ap - (0.5 + 0.5 * 2.0 / 3.0)).abs() < 1e-15);
        // dropping keeps the points where the true-positive count changes
        let (_, _, t) = precision_recall_curve(y.view(), s.view(), None, true, None).unwrap();
        assert_eq!(t.to_vec(), vec![0.1, 0.4, 0.6, 0.9]);
        // no positive: recall 1 everywhere, AP 0
        let none = arr1(&[0i64, 0, 0, 0]);
        let (_, r, _) = precision_recall_curve(none.view(), s.view(), None, false, None).unwrap();
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

    #[test]
    fn weighted_curves_sum_weights_in_scikit_learns_order() {
        // Integer weights: each sample counted that many times, as repeating it would.
        let y = ndarray::array![1, 0, 1, 1, 0, 0, 1, 0];
        let s = ndarray::array![0.9, 0.8, 0.8, 0.4, 0.4, 0.3, 0.2, 0.1];
        let w = ndarray::array![2.0, 1.0, 3.0, 0.0, 1.0, 2.0, 1.0, 1.0];
        let (mut y_rep, mut s_rep) = (Vec::new(), Vec::new());
        for i in 0..y.len() {
            for _ in 0..w[i] as usize {
                y_rep.push(y[i]);
                s_rep.push(s[i]);
            }
        }
        let (y_rep, s_rep) = (Array1::from(y_rep), Array1::from(s_rep));
        for drop in [false, true] {
            let weighted = roc_curve(y.view(), s.view(), None, drop, Some(w.view())).unwrap();
            let repeated = roc_curve(y_rep.view(), s_rep.view(), None, drop, None).unwrap();
            assert_eq!(weighted, repeated);
            let weighted =
                precision_recall_curve(y.view(), s.view(), None, drop, Some(w.view())).unwrap();
            let repeated =
                precision_recall_curve(y_rep.view(), s_rep.view(), None, drop, None).unwrap();
            assert_eq!(weighted, repeated);
        }
        // A sample of weight 0 leaves no threshold of its own (0.4 stays: its negative).
        let (_, _, thresholds) =
            roc_curve(y.view(), s.view(), None, false, Some(w.view())).unwrap();
        assert!(thresholds.iter().any(|&t| t == 0.4));
        let lone = ndarray::array![1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0];
        let (_, _, thresholds) =
            roc_curve(y.view(), s.view(), None, false, Some(lone.view())).unwrap();
        assert!(thresholds.iter().all(|&t| t != 0.2));
        // Equal scores are summed in sample order: 1 + 1e16 rounds to 1e16 (ties to even)
        // and so does its sum with the last 1, where the order 1, 1, 1e16 would give 1e16 + 2.
        let curve = binary_clf_curve(&[true; 3], &[0.5; 3], Some(&[1.0, 1e16, 1.0]));
        assert_eq!(curve.tps, vec![1e16]);
        assert_eq!(curve.fps, vec![0.0]);
        // Weights of another length, not finite, or all 0: errors.
        let short = ndarray::array![1.0, 2.0];
        assert!(roc_curve(y.view(), s.view(), None, true, Some(short.view())).is_err());
        let nan = Array1::from_elem(y.len(), f64::NAN);
        assert!(roc_curve(y.view(), s.view(), None, true, Some(nan.view())).is_err());
        let zeros = Array1::zeros(y.len());
        assert!(
            precision_recall_curve(y.view(), s.view(), None, true, Some(zeros.view())).is_err()
        );
    }
}
