"""``sklearn.metrics`` with rustyml's metric engines behind the common scores.

Each function here is scikit-learn's function under its own parameter validation; its
native path first checks the inputs with scikit-learn's own target checks (so errors and
the target type are scikit-learn's), then answers natively the calls where the definition
is unambiguous, and hands every other call, unchanged, to scikit-learn's body:

- classification (``accuracy_score``, ``confusion_matrix``, ``precision_recall_fscore_support``,
  ``precision_score``, ``recall_score``, ``f1_score``, ``fbeta_score``): binary or multiclass
  targets, and (all but ``confusion_matrix``) dense multilabel indicator targets, with or
  without ``sample_weight``. The O(n) part is native: the confusion matrix over the present
  labels, or with ``sample_weight`` rustyml's weighted counts, summed in sample order as
  scikit-learn's ``bincount`` / ``coo_array`` sum them (so the floats are its own); per-label
  and per-sample counts of an indicator target. Precision, recall and F-beta follow from
  those counts by scikit-learn's arithmetic (``labels=`` selects and orders classes, labels
  absent from the data included; ``average`` micro / macro / weighted / binary / samples /
  None; ``beta`` 0 and infinity), with scikit-learn's ``zero_division`` values and its
  UndefinedMetricWarning messages word for word. A weighted accuracy is the same sum in
  another order than NumPy's (equal to rounding). scikit-learn's errors (and the warning that
  ``pos_label`` is ignored), sparse indicators, and labels NumPy sorts differently from
  scikit-learn run scikit-learn's body.
- ``balanced_accuracy_score``, ``matthews_corrcoef`` and ``cohen_kappa_score`` (binary or
  multiclass targets, any ``sample_weight``, kappa's ``labels=`` and ``weights``): the
  confusion matrix natively, as above, and scikit-learn's arithmetic over it (the same
  floats, its warnings and its ``replace_undefined_by``).
- ``log_loss`` of float64 probabilities without ``sample_weight`` (scikit-learn's label
  encoding, its checks and its warning for rows that do not sum to one): each sample's
  clipped ``-log`` natively, averaged in another order (equal to rounding).
- regression (``mean_squared_error``, ``root_mean_squared_error``, ``mean_absolute_error``,
  ``r2_score``): float64 targets without ``sample_weight``, each output scored natively and
  combined as ``multioutput`` says; ``r2_score`` answers scikit-learn's special cases (fewer
  than two samples; a constant output whose mean is exact) and weighs ``variance_weighted``
  outputs by rustyml's variances; a constant whose mean rounds runs scikit-learn's body.
- ``roc_auc_score``: a binary target (the greater class
  positive; one class present gives scikit-learn's warning and NaN), a multiclass one
  (``ovr`` / ``ovo`` over probability columns) and a multilabel indicator (per label, per
  sample or raveled, each a native binary area); a partial ``max_fpr`` of a binary or
  multilabel target is scikit-learn's McClish-corrected area over the native curve;
  ``sample_weight`` (not negative) with binary and multilabel targets, each area over the
  weighted native curve, averaged as scikit-learn averages weighted scores.
- ``explained_variance_score`` (as ``r2_score``), ``median_absolute_error`` (the same
  median, bit for bit; integer targets too) and ``mean_absolute_percentage_error``: float64
  targets without ``sample_weight``.
- ``roc_curve``, ``precision_recall_curve`` and ``average_precision_score`` (with
  ``sample_weight`` that is not negative, summed in scikit-learn's order): the native curve of the positives scikit-learn's ``pos_label`` rule
  picks (a multiclass ``y_true`` with ``pos_label`` too), point for point and bit for bit
  (its dropped points, its first threshold at infinity, its warnings for a class missing);
  average precision is scikit-learn's step sum over that curve, per label, per sample or
  raveled for indicator and multiclass targets, averaged as scikit-learn averages them.
- ``top_k_accuracy_score`` of a multiclass target without ``sample_weight`` (``labels=``
  as scikit-learn checks it): the native hit count, ties ranked in scikit-learn's column
  order, bit for bit.
- ``adjusted_rand_score`` of two discrete labelings, from rustyml's exact pair counts; the
  mutual-information family (``mutual_info_score``, ``normalized_mutual_info_score``,
  ``adjusted_mutual_info_score`` but where it is 0 / 0 (a singleton labeling under ``"min"``),
  ``homogeneity_completeness_v_measure`` and its three scores) from the same terms as
  scikit-learn's, summed in another order; ``fowlkes_mallows_score`` from exact pair counts.
- ``calinski_harabasz_score`` on float64 (or integer) ``X`` where some cluster spreads.
- ``silhouette_score`` with the euclidean metric on a dense float64 (or integer) ``X`` (or the subset
  scikit-learn draws for ``sample_size``).
"""

import inspect
import warnings
from numbers import Real

import numpy as np
from scipy.sparse import issparse as _issparse
from sklearn import get_config
from sklearn import metrics as _sk
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics._classification import (
    _check_targets,
    _one_hot_encoding_multiclass_target,
)
from sklearn.metrics.cluster._supervised import check_clusterings as _sk_check_clusterings
from sklearn.preprocessing import label_binarize
from sklearn.utils import check_random_state
from sklearn.utils._array_api import get_namespace
from sklearn.utils._encode import _encode, _unique
from sklearn.utils.extmath import _nanaverage
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import (
    _check_pos_label_consistency,
    _check_sample_weight,
    assert_all_finite,
    check_array,
    check_consistent_length,
    check_X_y,
    column_or_1d,
)

try:
    from sklearn.metrics._regression import (
        _check_reg_targets,
        _check_reg_targets_with_floating_dtype,
    )
except ImportError:  # scikit-learn before 1.6: its regression scores run their own code
    _check_reg_targets = _check_reg_targets_with_floating_dtype = None

from rustyml import _native
from rustyml.metrics import _labels
from rustyml.sklearn._dispatch import Unsupported, dense_copy, native_function, require

__all__ = [
    "accuracy_score",
    "adjusted_mutual_info_score",
    "adjusted_rand_score",
    "average_precision_score",
    "balanced_accuracy_score",
    "calinski_harabasz_score",
    "cohen_kappa_score",
    "completeness_score",
    "confusion_matrix",
    "explained_variance_score",
    "f1_score",
    "fbeta_score",
    "fowlkes_mallows_score",
    "homogeneity_completeness_v_measure",
    "homogeneity_score",
    "log_loss",
    "matthews_corrcoef",
    "mean_absolute_error",
    "mean_absolute_percentage_error",
    "mean_squared_error",
    "median_absolute_error",
    "mutual_info_score",
    "normalized_mutual_info_score",
    "precision_recall_curve",
    "precision_recall_fscore_support",
    "precision_score",
    "r2_score",
    "recall_score",
    "roc_auc_score",
    "roc_curve",
    "root_mean_squared_error",
    "silhouette_score",
    "top_k_accuracy_score",
    "v_measure_score",
]

_m = _native.metrics
_reduction = _native.math.reduction
# scikit-learn's target check returns (type, present labels, y_true, y_pred, weights) since
# it took sample_weight; older releases return three values: their calls run their own code.
_TARGETS_WITH_LABELS = "sample_weight" in inspect.signature(_check_targets).parameters
# Above this many classes the k x k count matrix costs more than scikit-learn's bincounts.
_MAX_CLASSES = 1024
EPS64 = np.finfo(np.float64).eps


def _plain_numpy():
    require(not get_config()["array_api_dispatch"], "array API dispatch")


def _class_targets(y_true, y_pred, sample_weight, multilabel=False):
    """scikit-learn's checked targets, present labels and checked ``sample_weight`` (or
    None), for a binary or multiclass target (1-D), or with ``multilabel`` a dense
    multilabel indicator target (as the CSR matrices scikit-learn's check makes of it).
    Input scikit-learn refuses is handed to its body, which raises its own error in its own
    order."""
    _plain_numpy()
    require(_TARGETS_WITH_LABELS, "an older scikit-learn")
    # a sparse indicator may store explicit zeros, which scikit-learn's counts count
    require(not (_issparse(y_true) or _issparse(y_pred)), "sparse targets")
    try:
        y_type, present, y_true, y_pred, sample_weight = _check_targets(
            y_true, y_pred, sample_weight
        )
    except (ValueError, TypeError) as exc:
        raise Unsupported(f"scikit-learn's error ({exc})") from None
    kinds = ("binary", "multiclass") + (("multilabel-indicator",) if multilabel else ())
    require(y_type in kinds, f"{y_type} target")
    require(y_true.shape[0] > 0, "empty target")
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight)
        require(sample_weight.ndim == 1, "sample_weight of another shape")
        require(sample_weight.dtype.kind in "biuf", f"sample_weight of dtype {sample_weight.dtype}")
    return y_type, y_true, y_pred, np.asarray(present), sample_weight


def _integer_weights(sample_weight):
    """Whether scikit-learn counts ``sample_weight`` in int64 (integer or boolean weights);
    such weights are summed natively in float64 only while every partial sum is exact."""
    if sample_weight.dtype.kind not in "biu":
        return False
    total = np.abs(sample_weight.astype(np.float64)).sum()
    require(total < 2.0**52, "integer weights too large to sum exactly in float64")
    return True


def _same_classes(classes, present):
    # Both orders are the sorted distinct labels; a label set NumPy and Python sort
    # differently (mixed objects) is left to scikit-learn.
    require(len(classes) == len(present), "labels sorted differently")


def _counts(y_true, y_pred, present):
    """The confusion matrix over the present labels (scikit-learn's sorted order),
    counted natively."""
    require(len(present) <= _MAX_CLASSES, f"more than {_MAX_CLASSES} classes")
    a, b, _ = _labels.pair(y_true, y_pred, ("y_true", "y_pred"))
    classes, counts = _m.confusion_matrix(a, b, None, None)
    _same_classes(classes, present)
    return np.asarray(counts, dtype=np.int64)


def _weighted_counts(y_true, y_pred, present, sample_weight):
    """The weighted confusion matrix over the present labels: rustyml's weighted count
    kernel sums each cell in sample order, as scikit-learn's ``coo_array`` does."""
    require(len(present) <= _MAX_CLASSES, f"more than {_MAX_CLASSES} classes")
    a, b, _ = _labels.pair(y_true, y_pred, ("y_true", "y_pred"))
    classes, counts = _m.weighted_confusion_matrix(a, b, sample_weight.astype(np.float64))
    _same_classes(classes, present)
    return np.asarray(counts)


def _positions(present, labels, absent_ok=False):
    """Indices of ``labels`` among the present labels (-1 for a label absent from the data,
    where ``absent_ok``); every label once, of the data's kind."""
    labels = np.asarray(labels)
    require(labels.ndim == 1 and labels.size > 0, "labels of another shape")
    numeric = present.dtype.kind in "iufb"
    require(numeric == (labels.dtype.kind in "iufb"), "labels of another kind than y")
    if numeric:
        require(np.isfinite(labels.astype(np.float64)).all(), "non-finite labels")
    idx = np.minimum(np.searchsorted(present, labels), len(present) - 1)
    found = present[idx] == labels
    require(absent_ok or found.all(), "a label absent from the data")
    require(len(np.unique(labels)) == len(labels), "repeated labels")
    return np.where(found, idx, -1)


def _take(values, idx, fill=0):
    """``values[idx]`` with ``fill`` where ``idx`` is -1 (an absent label)."""
    out = values[np.maximum(idx, 0)]
    out[idx < 0] = fill
    return out


def _multilabel_counts(y_true, y_pred, sample_weight, columns=None):
    """``(tp, pred, true, exact, row_tp, row_pred, row_true)`` of a multilabel indicator
    target (of its ``columns``, scikit-learn's selected labels), counted natively: per label,
    the weights summed over the samples in order (as scikit-learn's ``np.bincount`` over its
    CSR indices), int64 counts without weights as scikit-learn's; the weight of the rows
    predicted exactly; and per sample the int64 counts."""
    dense = [np.asarray(y.toarray(), dtype=np.float64) for y in (y_true, y_pred)]
    if columns is not None:
        dense = [np.ascontiguousarray(d[:, columns]) for d in dense]
    w = None if sample_weight is None else sample_weight.astype(np.float64)
    tp, pred, true, exact, *rows = _m.multilabel_counts(dense[0], dense[1], w)
    # int64 without weights; with integer weights too when no label is true or predicted
    # (NumPy's bincount of nothing is int64, and nothing float enters scikit-learn's stack)
    no_entries = rows[1].sum() == 0 and rows[2].sum() == 0
    if sample_weight is None or (sample_weight.dtype.kind in "biu" and no_entries):
        tp, pred, true = (v.astype(np.int64) for v in (tp, pred, true))
    return (tp, pred, true, exact, *(r.astype(np.intp) for r in rows))


@native_function(_sk.accuracy_score)
def accuracy_score(y_true, y_pred, *, normalize=True, sample_weight=None):
    y_type, y_true, y_pred, present, sample_weight = _class_targets(
        y_true, y_pred, sample_weight, multilabel=True
    )
    if sample_weight is not None:
        # NumPy's dot product of two boolean arrays is a boolean (any correct sample)
        require(normalize or sample_weight.dtype.kind != "b", "boolean weights, normalize=False")
        _integer_weights(sample_weight)  # exact sums for scikit-learn's integer dot product
        # numpy.average's total and its error for weights summing to zero
        total = sample_weight.sum(dtype=np.float64)
        require(not normalize or total != 0, "weights summing to zero (scikit-learn's error)")
    if y_type == "multilabel-indicator":
        # subset accuracy: the rows predicted exactly
        correct = _multilabel_counts(y_true, y_pred, sample_weight)[3]
    else:
        a, b, _ = _labels.pair(y_true, y_pred, ("y_true", "y_pred"))
        if sample_weight is None:
            score = _m.accuracy_score(a, b)
            return float(score) if normalize else float(round(score * a.shape[0]))
        classes, tp, _, _ = _m.weighted_class_counts(a, b, sample_weight.astype(np.float64))
        _same_classes(classes, present)
        correct = np.sum(tp)
    if not normalize:
        return float(correct)
    if sample_weight is None:
        return float(correct / y_true.shape[0])
    return float(correct / total)


_SINGLE_LABEL = (
    "A single label was found in 'y_true' and 'y_pred'. For the confusion matrix to have "
    "the correct shape, use the 'labels' parameter to pass all known labels."
)


@native_function(_sk.confusion_matrix)
def confusion_matrix(y_true, y_pred, *, labels=None, sample_weight=None, normalize=None):
    _, y_true, y_pred, present, sample_weight = _class_targets(y_true, y_pred, sample_weight)
    if sample_weight is None:
        counts = _counts(y_true, y_pred, present)
    else:
        integer = _integer_weights(sample_weight)
        counts = _weighted_counts(y_true, y_pred, present, sample_weight)
        if integer:  # scikit-learn's int64 accumulator; the float sums were exact
            counts = counts.astype(np.int64)
    if labels is not None:
        idx = _positions(present, labels, absent_ok=True)
        # scikit-learn's error when no label is in y_true
        require(len(np.intersect1d(y_true, present[idx[idx >= 0]])) > 0, "no label in y_true")
        k = len(idx)
        out = np.zeros((k, k), dtype=counts.dtype)
        keep = np.flatnonzero(idx >= 0)
        out[np.ix_(keep, keep)] = counts[np.ix_(idx[keep], idx[keep])]
        counts = out
    if normalize is not None:
        with np.errstate(all="ignore"):
            if normalize == "true":
                counts = counts / counts.sum(axis=1, keepdims=True)
            elif normalize == "pred":
                counts = counts / counts.sum(axis=0, keepdims=True)
            else:
                counts = counts / counts.sum()
        counts = np.nan_to_num(counts)
    if counts.shape == (1, 1):
        warnings.warn(_SINGLE_LABEL, UserWarning, stacklevel=3)
    return counts


def _confusion(y_true, y_pred, sample_weight, labels=None):
    """scikit-learn's ``confusion_matrix`` of a binary or multiclass target, counted natively
    (its int64 or float64 cells, bit for bit; its single-label warning included), or
    :class:`Unsupported` before anything is warned."""
    return confusion_matrix.__rustyml_native__(
        y_true, y_pred, labels=labels, sample_weight=sample_weight
    )


@native_function(_sk.balanced_accuracy_score)
def balanced_accuracy_score(y_true, y_pred, *, sample_weight=None, adjusted=False):
    counts = _confusion(y_true, y_pred, sample_weight)
    # The mean per-class recall over the native matrix, in scikit-learn's order of float
    # operations (so its floats); a class only predicted has no recall and is dropped.
    with np.errstate(divide="ignore", invalid="ignore"):
        recalls = np.diagonal(counts) / np.sum(counts, axis=1)
    undefined = np.isnan(recalls)
    if undefined.any():
        warnings.warn("y_pred contains classes not in y_true", stacklevel=3)
        recalls = recalls[~undefined]
    score = np.mean(recalls)
    if adjusted:
        # rescaled so that chance (1 / classes) scores 0
        chance = 1 / recalls.shape[0]
        score = (score - chance) / (1 - chance)
    return float(score)


@native_function(_sk.matthews_corrcoef)
def matthews_corrcoef(y_true, y_pred, *, sample_weight=None):
    # over the sorted labels of both (scikit-learn's label encoding's order)
    counts = _confusion(y_true, y_pred, sample_weight)
    # The multiclass correlation from the matrix's margins (Gorodkin's form), by the same
    # float operations as scikit-learn: its floats.
    true_totals = counts.sum(axis=1, dtype=np.float64)
    predicted_totals = counts.sum(axis=0, dtype=np.float64)
    correct = np.trace(counts, dtype=np.float64)
    total = predicted_totals.sum()
    agreement = correct * total - np.dot(true_totals, predicted_totals)
    predicted_spread = total**2 - np.dot(predicted_totals, predicted_totals)
    true_spread = total**2 - np.dot(true_totals, true_totals)
    spread = predicted_spread * true_spread
    if spread == 0:
        return 0.0
    return float(agreement / np.sqrt(spread))


_KAPPA_NO_COMMON_LABEL = (
    "`y2` contains no labels that are present in both `y1` and `labels`."
    "`cohen_kappa_score` is undefined and set to the value defined by "
    "the `replace_undefined_by` param, which is set to {}."
)
_KAPPA_ONE_COMMON_LABEL = (
    "`y1`, `y2` and `labels` have only one label in common. "
    "`cohen_kappa_score` is undefined and set to the value defined by the "
    "the `replace_undefined_by` param, which is set to {}."
)


@native_function(_sk.cohen_kappa_score)
def cohen_kappa_score(
    y1, y2, *, labels=None, weights=None, sample_weight=None, replace_undefined_by=np.nan
):
    observed = _confusion(y1, y2, sample_weight, labels=labels).astype(np.float64)
    # Observed against chance disagreement over the native matrix, by the same float
    # operations as scikit-learn: its floats.
    predicted_totals = np.sum(observed, axis=0)
    true_totals = np.sum(observed, axis=1)
    total = np.sum(predicted_totals)
    if total == 0:
        return _undefined_kappa(_KAPPA_NO_COMMON_LABEL, replace_undefined_by)
    chance = np.outer(predicted_totals, true_totals) / total
    # disagreement weights: 1 off the diagonal, or |i - j|, or (i - j)^2
    rank = np.arange(observed.shape[0], dtype=np.float64)
    distance = np.abs(rank[None, :] - rank[:, None])
    if weights is None:
        disagreement = (distance > 0).astype(np.float64)
    else:
        disagreement = distance if weights == "linear" else distance**2
    observed_disagreement = np.sum(disagreement * observed)
    chance_disagreement = np.sum(disagreement * chance)
    if chance_disagreement == 0:
        return _undefined_kappa(_KAPPA_ONE_COMMON_LABEL, replace_undefined_by)
    return float(1 - observed_disagreement / chance_disagreement)


def _undefined_kappa(message, replace_undefined_by):
    warnings.warn(message.format(replace_undefined_by), UndefinedMetricWarning, stacklevel=4)
    return replace_undefined_by


@native_function(_sk.log_loss)
def log_loss(
    y_true, y_proba=None, *, normalize=True, sample_weight=None, labels=None, y_pred="deprecated"
):
    _plain_numpy()
    require(sample_weight is None, "sample_weight")
    # scikit-learn's deprecated y_pred (its warning or error) and its missing y_proba
    require(isinstance(y_pred, str) and y_pred == "deprecated", "y_pred")
    require(y_proba is not None, "no y_proba")
    try:
        # scikit-learn keeps float32 and float16 probabilities, clipped and logged in
        # their own dtype
        y_proba = check_array(y_proba, ensure_2d=False, dtype=[np.float64, np.float32, np.float16])
        require(y_proba.dtype == np.float64, f"y_proba of dtype {y_proba.dtype}")
        require(y_proba.ndim in (1, 2) and y_proba.size > 0, "y_proba of another shape")
        require(y_proba.max() <= 1 and y_proba.min() >= 0, "not in [0, 1] (its error)")
        check_consistent_length(y_proba, y_true)
        if labels is not None:
            # unsorted labels warn in scikit-learn's encoding: let it
            labels = column_or_1d(labels)
            require(np.array_equal(_unique(labels), labels), "labels not sorted and unique")
        onehot, classes = _one_hot_encoding_multiclass_target(
            y_true=y_true, labels=labels, target_xp=np, target_device=None
        )
    except (ValueError, TypeError) as exc:
        raise Unsupported(f"scikit-learn's error ({exc})") from None
    onehot = np.asarray(onehot)
    proba = y_proba if y_proba.ndim == 2 else y_proba[:, None]
    n_columns = 2 if proba.shape[1] == 1 else proba.shape[1]
    require(classes.shape[0] == n_columns, "class count other than y_proba's (its error)")
    require(bool(np.all(onehot.sum(axis=1) == 1)), "samples of no class")
    codes = np.argmax(onehot, axis=1).astype(np.int64)
    full = np.concatenate([1 - proba, proba], axis=1) if proba.shape[1] == 1 else proba
    if not np.all(np.isclose(np.sum(full, axis=1), 1, rtol=np.sqrt(EPS64))):
        warnings.warn(
            "The y_prob values do not sum to one. Make sure to pass probabilities.",
            UserWarning,
            stacklevel=3,
        )
    # each sample's -log of its class's probability clipped to [eps, 1 - eps] (scikit-learn's
    # xlogy over a one-hot row: the same single term), averaged in another order
    loss = _m.log_loss(codes, np.ascontiguousarray(proba), np.arange(n_columns, dtype=np.int64))
    return float(loss) if normalize else float(loss * codes.shape[0])


def _zero_division_value(zero_division):
    if isinstance(zero_division, str):  # "warn"
        return 0.0
    if zero_division in (0, 1):
        return float(zero_division)
    return np.nan


def _divide(numerator, denominator, metric, modifier, average, warn_for, zero_division):
    """``numerator / denominator`` as float64, scikit-learn's ``zero_division`` value where
    the denominator is 0, and its UndefinedMetricWarning when ``zero_division="warn"`` and
    ``metric`` is in ``warn_for``."""
    mask = denominator == 0
    denominator = np.array(denominator, dtype=np.float64)
    denominator[mask] = 1
    result = np.asarray(numerator, dtype=np.float64) / denominator
    if not mask.any():
        return result
    result[mask] = _zero_division_value(zero_division)
    if isinstance(zero_division, str) and metric in warn_for:
        # scikit-learn's words: labels without samples, or samples without labels
        over, of = ("sample", "label") if average == "samples" else ("label", "sample")
        where = "due to" if result.shape[0] == 1 else f"in {over}s with"
        warnings.warn(
            f"{metric.capitalize()} is ill-defined and being set to 0.0 {where} no "
            f"{modifier} {of}s. Use `zero_division` parameter to control this behavior.",
            UndefinedMetricWarning,
            stacklevel=4,
        )
    return result


def _prfs(y_true, y_pred, beta, labels, pos_label, average, warn_for, sample_weight, zero_division):
    y_type, y_true, y_pred, present, sample_weight = _class_targets(
        y_true, y_pred, sample_weight, multilabel=True
    )
    if y_type == "multilabel-indicator":
        # scikit-learn's error for average='binary', its warning for pos_label
        require(average != "binary", "average='binary' on a multilabel target")
        require(pos_label in (None, 1), "pos_label ignored by this average")
        columns = None
        if labels is not None:
            # label indices into the columns; scikit-learn's errors outside [0, n labels)
            labels = np.asarray(labels)
            require(labels.ndim == 1 and labels.size > 0, "labels of another shape")
            require(labels.dtype.kind in "iu", "labels that are not column indices")
            require(labels.min() >= 0, "labels outside the columns")
            require(labels.max() < y_true.shape[1], "labels outside the columns")
            columns = labels.astype(np.intp)
        tp, pred, true, _, *rows = _multilabel_counts(y_true, y_pred, sample_weight, columns)
        if average == "samples":
            # scikit-learn's sample-wise counts: each row's count times its weight
            tp, pred, true = rows
            if sample_weight is not None:
                tp, pred, true = (v * sample_weight for v in rows)
        idx = np.arange(tp.shape[0])
        return _prfs_from_counts(
            tp, pred, true, idx, beta, average, warn_for, zero_division, sample_weight
        )
    # scikit-learn's error: sample-wise averages need a multilabel target
    require(average != "samples", "average='samples' on a multiclass target")
    if average == "binary":
        # scikit-learn's error for a multiclass target or an absent pos_label among two
        require(y_type == "binary", "average='binary' on a multiclass target")
        idx = _positions(present, [pos_label], absent_ok=len(present) < 2)
    else:
        # scikit-learn warns that pos_label is ignored: let it
        require(pos_label in (None, 1), "pos_label ignored by this average")
        if labels is None:
            idx = np.arange(len(present))
        else:
            idx = _positions(present, labels, absent_ok=True)
    if sample_weight is None:
        counts = _counts(y_true, y_pred, present)
        tp, pred, true = np.diagonal(counts), counts.sum(axis=0), counts.sum(axis=1)
        if not tp.any():
            # scikit-learn's counts turn float64 when no prediction is right
            tp = np.zeros(len(present))
    else:
        require(len(present) <= _MAX_CLASSES, f"more than {_MAX_CLASSES} classes")
        a, b, _ = _labels.pair(y_true, y_pred, ("y_true", "y_pred"))
        classes, tp, pred, true = _m.weighted_class_counts(a, b, sample_weight.astype(np.float64))
        _same_classes(classes, present)
    return _prfs_from_counts(tp, pred, true, idx, beta, average, warn_for, zero_division)


def _prfs_from_counts(tp, pred, true, idx, beta, average, warn_for, zero_division, weights=None):
    """Precision, recall, F-beta and support of the labels ``idx`` (-1: absent) from
    per-label counts, by scikit-learn's arithmetic, ``zero_division`` and warnings."""
    tp, pred, true = (_take(np.asarray(v), idx) for v in (tp, pred, true))
    # scikit-learn's sums go through its false positives and negatives
    pred = tp + (pred - tp)
    true = tp + (true - tp)
    if average == "micro":
        tp, pred, true = (np.reshape(np.sum(v), (1,)) for v in (tp, pred, true))
    beta2 = beta**2
    args = (average, warn_for, zero_division)
    precision = _divide(tp, pred, "precision", "predicted", *args)
    recall = _divide(tp, true, "recall", "true", *args)
    if np.isposinf(beta):
        fscore = recall
    elif beta == 0:
        fscore = precision
    else:
        denom = beta2 * true.astype(np.float64) + pred.astype(np.float64)
        fscore = _divide(
            (1 + beta2) * tp.astype(np.float64), denom, "f-score", "true nor predicted", *args
        )
    if average is None:
        return precision, recall, fscore, true
    if average == "weighted":
        weights = true
    elif average != "samples":
        weights = None
    return (
        float(_nanaverage(precision, weights=weights)),
        float(_nanaverage(recall, weights=weights)),
        float(_nanaverage(fscore, weights=weights)),
        None,
    )


@native_function(_sk.precision_recall_fscore_support)
def precision_recall_fscore_support(
    y_true,
    y_pred,
    *,
    beta=1.0,
    labels=None,
    pos_label=1,
    average=None,
    warn_for=("precision", "recall", "f-score"),
    sample_weight=None,
    zero_division="warn",
):
    return _prfs(
        y_true, y_pred, beta, labels, pos_label, average, warn_for, sample_weight, zero_division
    )


def _prfs_entry(index, fallback, warn_for):
    """The native path of ``fallback``: entry ``index`` (precision, recall, F1) of
    ``precision_recall_fscore_support`` at ``beta = 1``, warning as scikit-learn's
    ``fallback`` does (``warn_for``)."""

    @native_function(fallback)
    def native(
        y_true,
        y_pred,
        *,
        labels=None,
        pos_label=1,
        average="binary",
        sample_weight=None,
        zero_division="warn",
    ):
        return _prfs(
            y_true,
            y_pred,
            1.0,
            labels,
            pos_label,
            average,
            warn_for,
            sample_weight,
            zero_division,
        )[index]

    return native


precision_score = _prfs_entry(0, _sk.precision_score, ("precision",))
recall_score = _prfs_entry(1, _sk.recall_score, ("recall",))
f1_score = _prfs_entry(2, _sk.f1_score, ("f-score",))


@native_function(_sk.fbeta_score)
def fbeta_score(
    y_true,
    y_pred,
    *,
    beta,
    labels=None,
    pos_label=1,
    average="binary",
    sample_weight=None,
    zero_division="warn",
):
    return _prfs(
        y_true,
        y_pred,
        beta,
        labels,
        pos_label,
        average,
        ("f-score",),
        sample_weight,
        zero_division,
    )[2]


def _reg_targets(y_true, y_pred, sample_weight, multioutput):
    """scikit-learn's checked targets as float64 columns (one per output), without sample
    weights."""
    _plain_numpy()
    require(sample_weight is None, "sample_weight")
    require(_check_reg_targets_with_floating_dtype is not None, "this scikit-learn's target checks")
    xp, _ = get_namespace(y_pred)
    try:
        _, y_true, y_pred, _, _ = _check_reg_targets_with_floating_dtype(
            y_true, y_pred, None, multioutput, xp=xp
        )
    except (ValueError, TypeError) as exc:
        raise Unsupported(f"scikit-learn's error ({exc})") from None
    require(y_true.dtype == np.float64 and y_pred.dtype == np.float64, "float32 targets")
    return [
        (np.ascontiguousarray(y_true[:, j]), np.ascontiguousarray(y_pred[:, j]))
        for j in range(y_true.shape[1])
    ]


def _per_output(metric, columns, multioutput):
    """The native metric of each output, combined as scikit-learn's ``multioutput`` says
    (its own weights array included)."""
    return _combine_outputs(np.array([metric(a, b) for a, b in columns]), multioutput)


def _combine_outputs(scores, multioutput):
    """Per-output scores combined as ``multioutput`` says (an array of weights included)."""
    if isinstance(multioutput, str):
        if multioutput == "raw_values":
            return scores
        multioutput = None
    return float(np.average(scores, weights=multioutput))


@native_function(_sk.mean_squared_error)
def mean_squared_error(y_true, y_pred, *, sample_weight=None, multioutput="uniform_average"):
    columns = _reg_targets(y_true, y_pred, sample_weight, multioutput)
    return _per_output(_m.mean_squared_error, columns, multioutput)


@native_function(_sk.root_mean_squared_error)
def root_mean_squared_error(y_true, y_pred, *, sample_weight=None, multioutput="uniform_average"):
    columns = _reg_targets(y_true, y_pred, sample_weight, multioutput)
    return _per_output(_m.root_mean_squared_error, columns, multioutput)


@native_function(_sk.mean_absolute_error)
def mean_absolute_error(y_true, y_pred, *, sample_weight=None, multioutput="uniform_average"):
    columns = _reg_targets(y_true, y_pred, sample_weight, multioutput)
    return _per_output(_m.mean_absolute_error, columns, multioutput)


@native_function(_sk.r2_score)
def r2_score(
    y_true, y_pred, *, sample_weight=None, multioutput="uniform_average", force_finite=True
):
    columns = _reg_targets(y_true, y_pred, sample_weight, multioutput)
    n_samples = columns[0][0].shape[0]
    if n_samples < 2:
        warnings.warn(
            "R^2 score is not well-defined with less than two samples.", UndefinedMetricWarning
        )
        return float("nan")
    # A constant output's score hangs on whether its mean is exactly its value: scikit-learn
    # then answers 1.0 or 0.0 (force_finite), as the native score does; a constant whose
    # mean rounds would give scikit-learn's 1 - x / tiny, which depends on NumPy's order.
    constant = _constant_outputs(columns)
    scores = np.array([_m.r2_score(a, b) for a, b in columns])
    if not force_finite:
        _unforced_constants(scores, constant)
    if isinstance(multioutput, str) and multioutput == "variance_weighted":
        # each output weighs its sum of squared deviations; uniformly if all are 0
        weights = np.array([_reduction.mean_var(a)[1] * n_samples for a, _ in columns])
        multioutput = weights if weights.any() else None
    return _combine_outputs(scores, multioutput)


def _mean_is_exact(value, count):
    """Whether ``count`` copies of ``value`` sum exactly in float64 in every order (each
    partial sum ``k * value`` is representable), so that NumPy's pairwise mean and rustyml's
    blocked fold both give ``value`` itself and a zero variance."""
    numerator, _ = float(value).as_integer_ratio()  # over a power of two
    return abs(numerator) * count < 2**53


def _constant_outputs(columns):
    """Which outputs have a constant ``y_true``; every such constant must sum exactly (its
    mean is then its value in NumPy's order and rustyml's, its variance exactly 0, so
    scikit-learn's zero-denominator rule reads both alike)."""
    n_samples = columns[0][0].shape[0]
    constant = [a.min() == a.max() for a, _ in columns]
    require(
        not any(c and not _mean_is_exact(a[0], n_samples) for c, (a, _) in zip(constant, columns)),
        "a constant target whose mean rounds",
    )
    return constant


def _unforced_constants(scores, constant):
    """scikit-learn's ``force_finite=False`` scores of the constant outputs, in place: its
    plain ``1 - numerator / 0``, NaN where the native score says perfect (1.0) and -inf
    elsewhere, with NumPy's divide warnings."""
    constant = np.array(constant, dtype=bool)
    if constant.any():
        perfect = scores[constant] == 1.0
        scores[constant] = 1 - (np.where(perfect, 0.0, 1.0) / np.zeros(perfect.size))


@native_function(_sk.explained_variance_score)
def explained_variance_score(
    y_true, y_pred, *, sample_weight=None, multioutput="uniform_average", force_finite=True
):
    columns = _reg_targets(y_true, y_pred, sample_weight, multioutput)
    n_samples = columns[0][0].shape[0]
    constant = _constant_outputs(columns)
    for c, (a, b) in zip(constant, columns):
        if not c:
            continue
        # Over a constant y_true (zero denominator) scikit-learn answers by whether the
        # numerator, the residuals' spread about their mean, is exactly 0: it is where the
        # residuals are one value whose mean is exact, and positive in both sums where they
        # differ (unless their squared half-range underflows).
        d = a - b
        spread = (d.max() - d.min()) / 2
        if spread == 0:
            require(_mean_is_exact(d[0], n_samples), "constant residuals whose mean rounds")
        else:
            require(spread * spread / n_samples > 0, "residual spread underflows")
    scores = np.array([_m.explained_variance_score(a, b) for a, b in columns])
    if not force_finite:
        _unforced_constants(scores, constant)
    if isinstance(multioutput, str) and multioutput == "variance_weighted":
        # each output weighs its variance (the score's denominator); uniformly if all are 0
        weights = np.array([_reduction.mean_var(a)[1] for a, _ in columns])
        multioutput = weights if weights.any() else None
    return _combine_outputs(scores, multioutput)


@native_function(_sk.median_absolute_error)
def median_absolute_error(y_true, y_pred, *, multioutput="uniform_average", sample_weight=None):
    _plain_numpy()
    require(sample_weight is None, "sample_weight")
    require(_check_reg_targets is not None, "this scikit-learn's target checks")
    try:
        _, y_true, y_pred, _, _ = _check_reg_targets(y_true, y_pred, None, multioutput)
    except (ValueError, TypeError) as exc:
        raise Unsupported(f"scikit-learn's error ({exc})") from None
    # scikit-learn takes the median of |y_pred - y_true| in the targets' own dtype: float64
    # as here, or integers whose differences and middle pairs are exact in float64
    for y in (y_true, y_pred):
        require(y.dtype == np.float64 or y.dtype.kind in "iu", f"targets of dtype {y.dtype}")
        if y.dtype.kind in "iu":
            require(y.size == 0 or np.abs(y).max() < 2**51, "integers too large for float64")
    columns = [
        (
            np.ascontiguousarray(y_true[:, j], dtype=np.float64),
            np.ascontiguousarray(y_pred[:, j], dtype=np.float64),
        )
        for j in range(y_true.shape[1])
    ]
    # the median of the same errors: the middle one, or (lower + upper) / 2 as NumPy's mean
    return _per_output(_m.median_absolute_error, columns, multioutput)


@native_function(_sk.mean_absolute_percentage_error)
def mean_absolute_percentage_error(
    y_true, y_pred, *, sample_weight=None, multioutput="uniform_average"
):
    columns = _reg_targets(y_true, y_pred, sample_weight, multioutput)
    try:
        return _per_output(_m.mean_absolute_percentage_error, columns, multioutput)
    except ValueError:  # the native sum overflows where scikit-learn's gives infinity
        raise Unsupported("errors overflowing float64") from None


def _binary_scores(y_true, y_score, pos_label):
    """scikit-learn's checks of a binary curve's inputs (its target type, ``pos_label``
    rule, lengths and finite scores; its errors run its body), as the native kernel's
    labels: int64 1 for the positive class, 0 otherwise; and the scores in float64."""
    _plain_numpy()
    try:
        y_type = type_of_target(y_true, input_name="y_true")
        require(
            y_type == "binary" or (y_type == "multiclass" and pos_label is not None),
            f"{y_type} format (scikit-learn's error)",
        )
        pos_label = _check_pos_label_consistency(pos_label, y_true)
        positive = np.asarray(y_true) == pos_label
        check_consistent_length(y_true, y_score)
        positive = column_or_1d(positive)
        y_score = column_or_1d(y_score)
        assert_all_finite(y_score)
    except (ValueError, TypeError) as exc:
        raise Unsupported(f"scikit-learn's error ({exc})") from None
    require(positive.dtype == np.bool_, "labels not comparable with pos_label")
    require(positive.shape[0] > 0, "empty input")
    # scikit-learn sorts and compares the scores in their own dtype: floats and integers
    # exact in float64 sort and tie alike (booleans it cannot subtract)
    require(y_score.dtype.kind in "iuf" and y_score.dtype.itemsize <= 8, "scores' dtype")
    if y_score.dtype.kind in "iu":
        require(np.abs(y_score).max() < 2**53, "integer scores too large for float64")
    score = np.asarray(y_score, dtype=np.float64)
    # -0.0 and 0.0 tie in scikit-learn's curve (which reports the first in its order) but
    # not in the native sort
    require(not np.any(np.signbit(score) & (score == 0)), "a score of -0.0")
    return positive.astype(np.int64), score, y_score.dtype


def _curve_weights(sample_weight, positive):
    """A binary curve's sample weights as scikit-learn checks them (its errors run its body),
    in float64 (float32 weights widen exactly, as its float64 products widen them). The
    native curve sums them in scikit-learn's order, so its points are scikit-learn's floats.
    Weights that are not negative only: then whether a class has weight (scikit-learn's
    warnings and conventions ask whether a sum is 0) does not hang on that order."""
    if sample_weight is None:
        return None
    try:
        weight = _check_sample_weight(column_or_1d(sample_weight), positive)
    except (ValueError, TypeError) as exc:
        raise Unsupported(f"scikit-learn's error ({exc})") from None
    weight = np.asarray(weight, dtype=np.float64)
    require(bool(np.all(weight >= 0)), "negative sample_weight")
    require(bool(np.any(weight > 0)), "every sample_weight 0 (scikit-learn's error)")
    return weight


def _class_has_weight(positive, weight, cls):
    """Whether class ``cls`` (1 positive, 0 negative) has a sample of positive weight."""
    members = positive == cls
    return bool(members.any() if weight is None else np.any(weight[members] > 0))


def _roc_curve(positive, score, weight, drop_intermediate):
    # one point per distinct score in decreasing order, scikit-learn's corners kept, the
    # origin at threshold inf first; the rates are the same counts (or weight sums, in
    # scikit-learn's order) over their totals
    fpr, tpr, thresholds = _m.roc_curve(
        positive, score, 1, bool(drop_intermediate), sample_weight=weight
    )
    if not _class_has_weight(positive, weight, 0):
        warnings.warn(
            "No negative samples in y_true, false positive value should be meaningless",
            UndefinedMetricWarning,
            stacklevel=4,
        )
    if not _class_has_weight(positive, weight, 1):
        warnings.warn(
            "No positive samples in y_true, true positive value should be meaningless",
            UndefinedMetricWarning,
            stacklevel=4,
        )
    return fpr, tpr, thresholds


@native_function(_sk.roc_curve)
def roc_curve(y_true, y_score, *, pos_label=None, sample_weight=None, drop_intermediate=True):
    positive, score, _ = _binary_scores(y_true, y_score, pos_label)
    weight = _curve_weights(sample_weight, positive)
    return _roc_curve(positive, score, weight, drop_intermediate)


def _pr_curve(positive, score, drop_intermediate, weight=None):
    precision, recall, thresholds = _m.precision_recall_curve(
        positive, score, 1, bool(drop_intermediate), sample_weight=weight
    )
    if not _class_has_weight(positive, weight, 1):
        warnings.warn(
            "No positive class found in y_true, recall is set to one for all thresholds.",
            stacklevel=4,
        )
    return precision, recall, thresholds


@native_function(_sk.precision_recall_curve)
def precision_recall_curve(
    y_true, y_score, *, pos_label=None, sample_weight=None, drop_intermediate=False
):
    positive, score, dtype = _binary_scores(y_true, y_score, pos_label)
    weight = _curve_weights(sample_weight, positive)
    # scikit-learn's tps / (tps + fps) and tps / tps[-1] of the same counts (or weight
    # sums), reversed; its thresholds keep the scores' dtype (each exact in float64, so cast
    # back exactly)
    precision, recall, thresholds = _pr_curve(positive, score, drop_intermediate, weight)
    return precision, recall, thresholds.astype(dtype, copy=False)


@native_function(_sk.average_precision_score)
def average_precision_score(y_true, y_score, *, average="macro", pos_label=1, sample_weight=None):
    _plain_numpy()
    try:
        y_type = type_of_target(y_true, input_name="y_true")
    except (ValueError, TypeError) as exc:
        raise Unsupported(f"scikit-learn's error ({exc})") from None
    present = np.unique(np.asarray(y_true))
    if y_type == "binary":
        require(not (len(present) == 2 and pos_label not in present), "pos_label absent (error)")
        return _binary_average_precision(y_true, y_score, pos_label, sample_weight)
    require(y_type in ("multilabel-indicator", "multiclass"), f"a {y_type} target")
    require(pos_label == 1, "pos_label other than 1 (scikit-learn's error)")
    require(not _issparse(y_true), "a sparse indicator")
    try:
        if y_type == "multiclass":
            y_true = label_binarize(y_true, classes=present)
            require(np.shape(y_score) == y_true.shape, "scores of another shape (its error)")
        check_consistent_length(y_true, y_score)
        y_true = check_array(y_true)
        y_score = check_array(y_score)
    except (ValueError, TypeError) as exc:
        raise Unsupported(f"scikit-learn's error ({exc})") from None
    require(y_score.ndim == 2 and y_score.shape == y_true.shape, "scores of another shape")
    # what the per-column checks below would refuse, refused before any column warns
    require(y_score.dtype.kind in "iuf" and y_score.dtype.itemsize <= 8, "scores' dtype")
    if y_score.dtype.kind in "iu":
        require(np.abs(y_score).max() < 2**53, "integer scores too large for float64")
    require(not np.any(np.signbit(y_score) & (y_score == 0)), "a score of -0.0")
    weight = _average_weights(sample_weight, y_true)
    return _binary_average(
        lambda t, s, w: _binary_average_precision(t, s, 1, w), y_true, y_score, average, weight
    )


def _average_weights(sample_weight, y_true):
    """``sample_weight`` as scikit-learn's binary average reads it (``column_or_1d``), one
    per row of ``y_true``; its errors run its body."""
    if sample_weight is None:
        return None
    try:
        weight = column_or_1d(sample_weight)
    except (ValueError, TypeError) as exc:
        raise Unsupported(f"scikit-learn's error ({exc})") from None
    require(weight.shape[0] == y_true.shape[0], "sample_weight of another length (its error)")
    require(weight.dtype.kind in "iuf", f"sample_weight of dtype {weight.dtype}")
    return weight


def _require_weighted_classes(y_true, weight, average):
    """The weighted areas' checks for every label column at once, before any column warns:
    weights not negative, and each column with both classes given weight in both."""
    require(bool(np.all(weight >= 0)), "negative sample_weight")
    if average == "micro":
        y_true, weight = y_true.reshape(-1, 1), np.repeat(weight, y_true.shape[1])
    for column in y_true.T:
        if len(np.unique(column)) == 2:
            positive = column == 1
            require(
                bool(np.any(weight[positive] > 0) and np.any(weight[~positive] > 0)),
                "a class without weight",
            )


def _binary_average(binary, y_true, y_score, average, sample_weight):
    """scikit-learn's average of binary scores over a 2-D indicator target, each score
    ``binary(t, s, w)`` native: per label (``macro``, ``None``, or ``weighted`` by each
    label's positives, their weights summed if given), per sample (``samples``, averaged by
    ``sample_weight``) or of the raveled matrix (``micro``, each weight repeated per label);
    a label or sample whose averaging weight is 0 adds 0."""
    score_weight, average_weight = sample_weight, None
    if average == "micro":
        if score_weight is not None:
            score_weight = np.repeat(score_weight, y_true.shape[1])
        y_true, y_score = y_true.reshape(-1, 1), y_score.reshape(-1, 1)
    elif average == "weighted":
        if score_weight is None:
            average_weight = np.sum(y_true, axis=0)
        else:
            positives = np.asarray(y_true, dtype=score_weight.dtype)
            average_weight = np.sum(positives * score_weight.reshape(-1, 1), axis=0)
        if np.isclose(np.sum(average_weight), 0):
            return 0
    elif average == "samples":
        average_weight, score_weight = score_weight, None
        y_true, y_score = y_true.T, y_score.T
    scores = np.zeros(y_true.shape[1])
    for c in range(y_true.shape[1]):
        scores[c] = binary(y_true[:, c], y_score[:, c], score_weight)
    if average is None:
        return scores
    if average_weight is not None:
        scores[average_weight == 0] = 0
    return float(np.average(scores, weights=average_weight))


def _binary_average_precision(y_true, y_score, pos_label, sample_weight=None):
    positive, score, _ = _binary_scores(y_true, y_score, pos_label)
    weight = _curve_weights(sample_weight, positive)
    precision, recall, _ = _pr_curve(positive, score, False, weight)
    # scikit-learn's step integral over the same curve: the same floats
    return float(max(0.0, -np.sum(np.diff(recall) * precision[:-1])))


@native_function(_sk.top_k_accuracy_score)
def top_k_accuracy_score(y_true, y_score, *, k=2, normalize=True, sample_weight=None, labels=None):
    _plain_numpy()
    require(sample_weight is None, "sample_weight")
    try:
        y_true = column_or_1d(check_array(y_true, ensure_2d=False, dtype=None))
        y_type = type_of_target(y_true, input_name="y_true")
        if y_type == "binary" and labels is not None and len(labels) > 2:
            y_type = "multiclass"
        # a binary target is scikit-learn's threshold rule, not a ranking
        require(y_type == "multiclass", f"a {y_type} target")
        y_score = check_array(y_score, ensure_2d=False)
        require(y_score.ndim == 2, "1-D scores of a multiclass target (scikit-learn's error)")
        check_consistent_length(y_true, y_score)
        if labels is None:
            classes = _unique(y_true)
        else:
            labels = column_or_1d(labels)
            classes = _unique(labels)
            require(
                len(classes) == len(labels) and np.array_equal(classes, labels),
                "labels not unique and ordered (scikit-learn's error)",
            )
            require(
                not len(np.setdiff1d(y_true, classes)),
                "labels missing a class of y_true (scikit-learn's error)",
            )
        require(
            len(classes) == y_score.shape[1],
            "a class count other than the score columns (scikit-learn's error)",
        )
        codes = _encode(y_true, uniques=classes)
    except (ValueError, TypeError) as exc:
        raise Unsupported(f"scikit-learn's error ({exc})") from None
    # scikit-learn ranks the scores in their own dtype: floats and integers exact in float64
    # order and tie alike (-0.0 ties with 0.0 in both)
    require(y_score.dtype.kind in "iuf" and y_score.dtype.itemsize <= 8, "scores' dtype")
    if y_score.dtype.kind in "iu":
        require(np.abs(y_score).max() < 2**53, "integer scores too large for float64")
    n_classes = len(classes)
    if k >= n_classes:
        warnings.warn(
            f"'k' ({k}) greater than or equal to 'n_classes' ({n_classes}) "
            "will result in a perfect score and is therefore meaningless.",
            UndefinedMetricWarning,
            stacklevel=3,
        )
    # the true class is a hit when fewer than k columns rank ahead of it in scikit-learn's
    # order (its stable ascending sort reversed: a tied column of greater index first); the
    # hit count is an integer, so its mean is scikit-learn's float
    return float(
        _m.top_k_accuracy_score(
            np.asarray(codes, dtype=np.int64),
            np.asarray(y_score, dtype=np.float64),
            int(k),
            bool(normalize),
        )
    )


@native_function(_sk.roc_auc_score)
def roc_auc_score(
    y_true,
    y_score,
    *,
    average="macro",
    sample_weight=None,
    max_fpr=None,
    multi_class="raise",
    labels=None,
):
    _plain_numpy()
    # scikit-learn reads max_fpr=1 as the whole curve
    if max_fpr == 1:
        max_fpr = None
    require(
        max_fpr is None or (isinstance(max_fpr, Real) and 0 < max_fpr < 1),
        f"max_fpr={max_fpr!r} (scikit-learn's error)",
    )
    y_type = type_of_target(y_true, input_name="y_true")
    y_true = check_array(y_true, ensure_2d=False, dtype=None)
    y_score = check_array(y_score, ensure_2d=False)
    require(y_true.shape[0] == y_score.shape[0], "lengths differ (scikit-learn's error)")
    if y_type == "multiclass":
        require(sample_weight is None, "sample_weight of a multiclass target")
        require(max_fpr is None, "max_fpr of a multiclass target (scikit-learn's error)")
        return _multiclass_roc_auc(y_true, y_score, average, multi_class, labels)
    if y_type == "multilabel-indicator":
        require(y_score.shape == y_true.shape, "scores of another shape (scikit-learn's error)")
        weight = _average_weights(sample_weight, y_true)
        if weight is not None and average != "samples":
            _require_weighted_classes(y_true, weight, average)
        return _binary_average(
            lambda t, s, w: _binary_roc_auc(t, s, max_fpr, w), y_true, y_score, average, weight
        )
    require(y_type == "binary", f"a {y_type} target (scikit-learn's error)")
    require(y_true.ndim == 1 and y_score.ndim == 1, "2-D targets or scores")
    return _binary_roc_auc(y_true, y_score, max_fpr, sample_weight)


def _binary_roc_auc(y_true, y_score, max_fpr=None, sample_weight=None):
    """The native area of one binary column, or scikit-learn's warning and NaN when it holds
    one class. With ``max_fpr`` or ``sample_weight``, scikit-learn's area (McClish-corrected
    and partial up to ``max_fpr``: its formula, step for step) over the native curve, whose
    points are scikit-learn's bit for bit: the same trapezoids then give its number."""
    if len(np.unique(y_true)) != 2:
        warnings.warn(
            "Only one class is present in y_true. ROC AUC score is not defined in that case.",
            UndefinedMetricWarning,
        )
        return np.nan
    if max_fpr is not None or sample_weight is not None:
        return _curve_roc_auc(y_true, y_score, max_fpr, sample_weight)
    y, _ = _labels.single(y_true, "y_true")
    return float(_m.roc_auc_score(y, np.asarray(y_score, dtype=np.float64), "macro", "raise"))


def _curve_roc_auc(y_true, y_score, max_fpr, sample_weight):
    """scikit-learn's area (up to ``max_fpr``, standardised) over the native curve of the
    larger label against the other."""
    positive = (np.asarray(y_true) == np.unique(y_true)[1]).astype(np.int64)
    positive, score, _ = _binary_scores(positive, y_score, 1)
    weight = _curve_weights(sample_weight, positive)
    # a class without weight: scikit-learn's NaN rates, warnings and area (its body)
    require(
        _class_has_weight(positive, weight, 0) and _class_has_weight(positive, weight, 1),
        "a class without weight",
    )
    fpr, tpr, _ = _m.roc_curve(positive, score, 1, True, sample_weight=weight)
    if max_fpr is None:
        return _sk.auc(fpr, tpr)
    stop = np.searchsorted(fpr, max_fpr, "right")
    x_interp = [fpr[stop - 1], fpr[stop]]
    y_interp = [tpr[stop - 1], tpr[stop]]
    tpr = np.append(tpr[:stop], np.interp(max_fpr, x_interp, y_interp))
    fpr = np.append(fpr[:stop], max_fpr)
    partial_auc = _sk.auc(fpr, tpr)
    min_area = 0.5 * max_fpr**2
    max_area = max_fpr
    return float(0.5 * (1 + (partial_auc - min_area) / (max_area - min_area)))


def _multiclass_roc_auc(y_true, y_score, average, multi_class, labels):
    """One-vs-rest or one-vs-one areas of probability columns in sorted class order, as
    scikit-learn averages them; its errors run its body."""
    classes = np.unique(y_true)
    if labels is not None:
        labels = np.asarray(labels)
        # the same classes in the same order read alike; others (absent classes) do not
        require(
            labels.dtype.kind == classes.dtype.kind and np.array_equal(labels, classes),
            "labels other than y_true's classes in order",
        )
    require(multi_class in ("ovr", "ovo"), f"multi_class={multi_class!r} (scikit-learn's error)")
    averages = (
        ("micro", "macro", "weighted", None) if multi_class == "ovr" else ("macro", "weighted")
    )
    require(average in averages, f"average={average!r} for a {multi_class} score")
    require(y_score.ndim == 2, "1-D scores of a multiclass target (scikit-learn's error)")
    require(
        np.allclose(1, y_score.sum(axis=1)),
        "scores that are not probabilities (scikit-learn's error)",
    )
    require(
        len(classes) == y_score.shape[1],
        "a class count other than the score columns (scikit-learn's error)",
    )
    if average is None:
        # one-vs-rest, each class's own binary area
        return np.array(
            [_binary_roc_auc(y_true == c, y_score[:, j]) for j, c in enumerate(classes)]
        )
    y, _ = _labels.single(y_true, "y_true")
    return float(_m.roc_auc_score(y, y_score.astype(np.float64), average, multi_class))


@native_function(_sk.adjusted_rand_score)
def adjusted_rand_score(labels_true, labels_pred):
    _plain_numpy()
    # scikit-learn warns about continuous labelings, then scores them
    for labels in (labels_true, labels_pred):
        require(type_of_target(labels) != "continuous", "continuous labels")
    labels_true, labels_pred = _sk_check_clusterings(labels_true, labels_pred)
    require(labels_true.shape[0] > 0, "empty labelings")
    a, b, _ = _labels.pair(labels_true, labels_pred, ("labels_true", "labels_pred"), shared=False)
    return float(_m.adjusted_rand_score(a, b))


def _clusterings(labels_true, labels_pred):
    """Two labelings checked by scikit-learn's ``check_clusterings`` (its errors run its
    body), as the native kernels' labels: discrete and non-empty (scikit-learn warns about
    continuous labelings, then scores them: its body gives that warning)."""
    _plain_numpy()
    try:
        for labels in (labels_true, labels_pred):
            require(type_of_target(labels) != "continuous", "continuous labels")
        labels_true, labels_pred = _sk_check_clusterings(labels_true, labels_pred)
    except (ValueError, TypeError) as exc:
        raise Unsupported(f"scikit-learn's error ({exc})") from None
    require(labels_true.shape[0] > 0, "empty labelings")
    a, b, _ = _labels.pair(labels_true, labels_pred, ("labels_true", "labels_pred"), shared=False)
    if a.dtype == np.float64:
        # integers cast to float64 beside float labels must stay distinct
        for y in (labels_true, labels_pred):
            if y.dtype.kind in "iu":
                require(np.abs(y).max() < 2**53, "integer labels too large for float64")
    return a, b


@native_function(_sk.mutual_info_score)
def mutual_info_score(labels_true, labels_pred, *, contingency=None):
    require(contingency is None, "a given contingency matrix")
    a, b = _clusterings(labels_true, labels_pred)
    return float(_m.mutual_info_score(a, b))


@native_function(_sk.normalized_mutual_info_score)
def normalized_mutual_info_score(labels_true, labels_pred, *, average_method="arithmetic"):
    a, b = _clusterings(labels_true, labels_pred)
    return float(_m.normalized_mutual_info_score(a, b, average_method))


def _ami_vanishes(a, b, average_method):
    """Whether AMI's (MI - EMI) / (normaliser - EMI) is 0 / 0 in exact arithmetic, so that
    its value is the two sides' rounding: one labeling all singletons (it refines the other,
    and so does every relabeling of it: EMI = MI = the coarser entropy) and the normaliser
    that same entropy (``"min"``). Not when both are all singletons: scikit-learn's MI and
    both entropies are then one pairwise sum of the same n terms, so its numerator and
    denominator are one number and its score 1 exactly, as the engine's."""
    n = a.shape[0]
    ka, kb = np.unique(a).size, np.unique(b).size
    return average_method == "min" and 1 < min(ka, kb) < max(ka, kb) == n


@native_function(_sk.adjusted_mutual_info_score)
def adjusted_mutual_info_score(labels_true, labels_pred, *, average_method="arithmetic"):
    a, b = _clusterings(labels_true, labels_pred)
    # Elsewhere the engine's terms are scikit-learn's to rounding (a refinement's MI is the
    # coarser entropy exactly, where scikit-learn's carries its sum's rounding), and so is
    # the score; where the score is 0 / 0 scikit-learn's is its rounding's ratio (0.4 to 2
    # on small singleton labelings): its body.
    require(not _ami_vanishes(a, b, average_method), "AMI is 0 / 0 (a singleton labeling)")
    return float(_m.adjusted_mutual_info_score(a, b, average_method))


@native_function(_sk.homogeneity_completeness_v_measure)
def homogeneity_completeness_v_measure(labels_true, labels_pred, *, beta=1.0):
    require(np.isfinite(beta), "infinite beta")
    a, b = _clusterings(labels_true, labels_pred)
    return tuple(float(v) for v in _m.homogeneity_completeness_v_measure(a, b, float(beta)))


def _hcv_entry(index, fallback, with_beta):
    """The native path of ``fallback``: entry ``index`` (homogeneity, completeness,
    V-measure) of ``homogeneity_completeness_v_measure``."""
    if with_beta:

        @native_function(fallback)
        def native(labels_true, labels_pred, *, beta=1.0):
            require(np.isfinite(beta), "infinite beta")
            a, b = _clusterings(labels_true, labels_pred)
            return float(_m.homogeneity_completeness_v_measure(a, b, float(beta))[index])

    else:

        @native_function(fallback)
        def native(labels_true, labels_pred):
            a, b = _clusterings(labels_true, labels_pred)
            return float(_m.homogeneity_completeness_v_measure(a, b, 1.0)[index])

    return native


homogeneity_score = _hcv_entry(0, _sk.homogeneity_score, False)
completeness_score = _hcv_entry(1, _sk.completeness_score, False)
v_measure_score = _hcv_entry(2, _sk.v_measure_score, True)


@native_function(_sk.fowlkes_mallows_score)
def fowlkes_mallows_score(labels_true, labels_pred):
    a, b = _clusterings(labels_true, labels_pred)
    # scikit-learn's int64 pair counts: exact below n^2 < 2^63
    require(a.shape[0] < 2**31, "pair counts past int64")
    return float(_m.fowlkes_mallows_score(a, b))


@native_function(_sk.calinski_harabasz_score)
def calinski_harabasz_score(X, labels):
    _plain_numpy()
    require(not _issparse(X), "sparse X (scikit-learn's error)")
    try:
        X, labels = check_X_y(X, labels)
    except (ValueError, TypeError) as exc:
        raise Unsupported(f"scikit-learn's error ({exc})") from None
    # scikit-learn scores in float64: float arrays cast to it, integers exact in it
    require(X.dtype.kind in "iuf" and X.dtype.itemsize <= 8, f"X of dtype {X.dtype}")
    if X.dtype.kind in "iu":
        require(np.abs(X).max() < 2**53, "integers too large for float64")
    X = np.asarray(X, dtype=np.float64)
    # rustyml rescales X past 2^400, where scikit-learn's squares overflow
    require(np.abs(X).max() <= 2.0**400, "values whose squares overflow")
    codes = np.unique(labels, return_inverse=True)[1].ravel().astype(np.int64)
    k = int(codes.max()) + 1
    # scikit-learn's error for one label or one sample per label
    require(1 < k < X.shape[0], "not 2 <= n_labels <= n_samples - 1")
    # scikit-learn answers 1.0 when the within-cluster dispersion is exactly 0; where a
    # cluster spreads, the dispersion is at least its squared half-range, positive in both
    # sums; every cluster a single point would hang on its mean's rounding: its body.
    order = np.argsort(codes, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(codes[order]) != 0])
    rows = X[order]
    spread = np.max(np.maximum.reduceat(rows, starts) - np.minimum.reduceat(rows, starts))
    require((spread / 2) ** 2 > 0, "every cluster a single point")
    return float(_m.calinski_harabasz_score(X, codes))


@native_function(_sk.silhouette_score)
def silhouette_score(X, labels, *, metric="euclidean", sample_size=None, random_state=None, **kwds):
    _plain_numpy()
    require(
        isinstance(metric, str) and metric in ("euclidean", "precomputed"), f"metric={metric!r}"
    )
    require(not kwds, "metric keywords")
    if _issparse(X):
        # the euclidean distances of a sparse X are its dense copy's (at most 2^22 entries)
        require(metric == "euclidean", "sparse precomputed distances")
        X = dense_copy(X)
    X, labels = check_X_y(X, labels)
    if X.dtype.kind in "iu":
        # scikit-learn's pairwise distances take integers as float64: exact below 2**53
        require(X.size == 0 or np.abs(X).max() < 2**53, "integers beyond 2**53")
        X = X.astype(np.float64)
    require(X.dtype == np.float64, f"X of dtype {X.dtype}")
    if sample_size is not None:
        # the subset scikit-learn draws from the same random_state
        rows = check_random_state(random_state).permutation(X.shape[0])[:sample_size]
        X = X[rows][:, rows] if metric == "precomputed" else X[rows]
        labels = labels[rows]
    if metric == "precomputed":
        # scikit-learn's errors: a non-square matrix, a diagonal above its float tolerance
        # (100 eps, the engine's too), negative distances
        require(X.shape[0] == X.shape[1], "a precomputed matrix that is not square")
        require(
            bool(np.all(np.abs(X.diagonal()) <= 100 * np.finfo(np.float64).eps)),
            "non-zero diagonal",
        )
        require(bool(np.all(X >= 0)), "negative precomputed distances")
    codes = np.unique(labels, return_inverse=True)[1].ravel()
    # scikit-learn's error for one label or one sample per label
    require(1 < codes.max() + 1 < X.shape[0], "not 2 <= n_labels <= n_samples - 1")
    return float(_m.silhouette_score(X, codes.astype(np.int64), metric, 2.0))
