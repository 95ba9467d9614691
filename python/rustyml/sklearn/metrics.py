"""``sklearn.metrics`` with rustyml's metric engines behind the common scores.

Each function here is scikit-learn's function under its own parameter validation; its
native path first checks the inputs with scikit-learn's own target checks (so errors and
the target type are scikit-learn's), then answers natively the calls where the definition
is unambiguous, and hands every other call, unchanged, to scikit-learn's body:

- classification (``accuracy_score``, ``confusion_matrix``, ``precision_recall_fscore_support``,
  ``precision_score``, ``recall_score``, ``f1_score``, ``fbeta_score``): binary or multiclass
  targets without ``sample_weight``. The O(n) part, counting label pairs, is rustyml's
  confusion matrix over the present labels; precision, recall and F-beta follow from its
  diagonal, row and column sums by scikit-learn's definitions (``labels=`` selects and
  orders classes, ``average`` micro / macro / weighted / binary / None). A call where a
  ratio would divide by zero (scikit-learn then warns and applies ``zero_division``), a
  label absent from the data, or a single-label confusion matrix (scikit-learn warns) runs
  scikit-learn's body.
- regression (``mean_squared_error``, ``root_mean_squared_error``, ``mean_absolute_error``,
  ``r2_score``): float64 targets without ``sample_weight``, each output scored natively and
  combined as ``multioutput`` says; ``r2_score`` needs two samples and non-constant outputs
  (scikit-learn's special cases otherwise) and leaves ``variance_weighted`` to scikit-learn.
- ``roc_auc_score`` of a binary target (two classes present, the greater one positive, one
  finite score per sample) without ``sample_weight`` or ``max_fpr``.
- ``adjusted_rand_score`` of two discrete labelings, from rustyml's exact pair counts.
- ``silhouette_score`` with the euclidean metric on a dense float64 ``X`` (or the subset
  scikit-learn draws for ``sample_size``).
"""

import inspect

import numpy as np
from scipy.sparse import issparse as _issparse
from sklearn import get_config
from sklearn import metrics as _sk
from sklearn.metrics._classification import _check_targets
from sklearn.metrics.cluster._supervised import check_clusterings as _sk_check_clusterings
from sklearn.utils import check_random_state
from sklearn.utils._array_api import get_namespace
from sklearn.utils.extmath import _nanaverage
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_array, check_X_y

try:
    from sklearn.metrics._regression import _check_reg_targets_with_floating_dtype
except ImportError:  # scikit-learn before 1.6: its regression scores run their own code
    _check_reg_targets_with_floating_dtype = None

from rustyml import _native
from rustyml.metrics import _labels
from rustyml.sklearn._dispatch import native_function, require

__all__ = [
    "accuracy_score",
    "adjusted_rand_score",
    "confusion_matrix",
    "f1_score",
    "fbeta_score",
    "mean_absolute_error",
    "mean_squared_error",
    "precision_recall_fscore_support",
    "precision_score",
    "r2_score",
    "recall_score",
    "roc_auc_score",
    "root_mean_squared_error",
    "silhouette_score",
]

_m = _native.metrics
# scikit-learn's target check returns (type, present labels, y_true, y_pred, weights) since
# it took sample_weight; older releases return three values: their calls run their own code.
_TARGETS_WITH_LABELS = "sample_weight" in inspect.signature(_check_targets).parameters
# Above this many classes the k x k count matrix costs more than scikit-learn's bincounts.
_MAX_CLASSES = 1024


def _plain_numpy():
    require(not get_config()["array_api_dispatch"], "array API dispatch")


def _class_targets(y_true, y_pred, sample_weight):
    """scikit-learn's checked 1-D targets and present labels, for a binary or multiclass
    target without sample weights."""
    _plain_numpy()
    require(_TARGETS_WITH_LABELS, "an older scikit-learn")
    require(sample_weight is None, "sample_weight")
    y_type, present, y_true, y_pred, _ = _check_targets(y_true, y_pred)
    require(y_type in ("binary", "multiclass"), f"{y_type} target")
    require(y_true.shape[0] > 0, "empty target")
    return y_type, y_true, y_pred, np.asarray(present)


def _counts(y_true, y_pred, present):
    """The confusion matrix over the present labels (scikit-learn's sorted order),
    counted natively."""
    require(len(present) <= _MAX_CLASSES, f"more than {_MAX_CLASSES} classes")
    a, b, _ = _labels.pair(y_true, y_pred, ("y_true", "y_pred"))
    classes, counts = _m.confusion_matrix(a, b, None, None)
    # Both orders are the sorted distinct labels; a label set NumPy and Python sort
    # differently (mixed objects) is left to scikit-learn.
    require(len(classes) == len(present), "labels sorted differently")
    return np.asarray(counts, dtype=np.int64)


def _positions(present, labels):
    """Indices of ``labels`` among the present labels; every label must be present, once."""
    labels = np.asarray(labels)
    require(labels.ndim == 1 and labels.size > 0, "labels of another shape")
    numeric = present.dtype.kind in "iufb"
    require(numeric == (labels.dtype.kind in "iufb"), "labels of another kind than y")
    idx = np.searchsorted(present, labels)
    require(np.all(idx < len(present)), "a label absent from the data")
    require(np.array_equal(present[idx], labels), "a label absent from the data")
    require(len(np.unique(idx)) == len(idx), "repeated labels")
    return idx


@native_function(_sk.accuracy_score)
def accuracy_score(y_true, y_pred, *, normalize=True, sample_weight=None):
    _, y_true, y_pred, _ = _class_targets(y_true, y_pred, sample_weight)
    a, b, _ = _labels.pair(y_true, y_pred, ("y_true", "y_pred"))
    score = _m.accuracy_score(a, b)
    return float(score) if normalize else float(round(score * a.shape[0]))


@native_function(_sk.confusion_matrix)
def confusion_matrix(y_true, y_pred, *, labels=None, sample_weight=None, normalize=None):
    _, y_true, y_pred, present = _class_targets(y_true, y_pred, sample_weight)
    counts = _counts(y_true, y_pred, present)
    if labels is not None:
        idx = _positions(present, labels)
        counts = counts[np.ix_(idx, idx)]
    require(counts.shape != (1, 1), "a single label (scikit-learn warns)")
    if normalize is None:
        return counts
    with np.errstate(all="ignore"):
        if normalize == "true":
            out = counts / counts.sum(axis=1, keepdims=True)
        elif normalize == "pred":
            out = counts / counts.sum(axis=0, keepdims=True)
        else:
            out = counts / counts.sum()
    return np.nan_to_num(out)


def _prfs(y_true, y_pred, beta, labels, pos_label, average, sample_weight):
    require(average != "samples", "average='samples'")
    require(np.isfinite(beta) and beta > 0, f"beta={beta!r}")
    y_type, y_true, y_pred, present = _class_targets(y_true, y_pred, sample_weight)
    if average == "binary":
        # scikit-learn's error for a multiclass target, its zero division for an absent
        # positive label
        require(y_type == "binary", "average='binary' on a multiclass target")
        idx = _positions(present, [pos_label])
    else:
        # scikit-learn warns that pos_label is ignored: let it
        require(pos_label in (None, 1), "pos_label ignored by this average")
        idx = np.arange(len(present)) if labels is None else _positions(present, labels)
    counts = _counts(y_true, y_pred, present)
    tp = np.diagonal(counts)[idx]
    pred = counts.sum(axis=0)[idx]
    true = counts.sum(axis=1)[idx]
    if average == "micro":
        tp, pred, true = (np.array([v.sum()]) for v in (tp, pred, true))
    # A zero denominator is scikit-learn's zero_division case, with its warnings.
    require(np.all(pred > 0) and np.all(true > 0), "a ratio with a zero denominator")
    beta2 = beta**2
    precision = tp / pred
    recall = tp / true
    fscore = (1 + beta2) * tp.astype(np.float64) / (beta2 * true + pred)
    if average is None:
        return precision, recall, fscore, true
    weights = true if average == "weighted" else None
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
    return _prfs(y_true, y_pred, beta, labels, pos_label, average, sample_weight)


def _prfs_entry(index, fallback):
    """The native path of ``fallback``: entry ``index`` (precision, recall, F1) of
    ``precision_recall_fscore_support`` at ``beta = 1``."""

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
        return _prfs(y_true, y_pred, 1.0, labels, pos_label, average, sample_weight)[index]

    return native


precision_score = _prfs_entry(0, _sk.precision_score)
recall_score = _prfs_entry(1, _sk.recall_score)
f1_score = _prfs_entry(2, _sk.f1_score)


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
    return _prfs(y_true, y_pred, beta, labels, pos_label, average, sample_weight)[2]


def _reg_targets(y_true, y_pred, sample_weight, multioutput):
    """scikit-learn's checked targets as float64 columns (one per output), without sample
    weights."""
    _plain_numpy()
    require(sample_weight is None, "sample_weight")
    require(_check_reg_targets_with_floating_dtype is not None, "this scikit-learn's target checks")
    xp, _ = get_namespace(y_pred)
    _, y_true, y_pred, _, _ = _check_reg_targets_with_floating_dtype(
        y_true, y_pred, None, multioutput, xp=xp
    )
    require(y_true.dtype == np.float64 and y_pred.dtype == np.float64, "float32 targets")
    return [
        (np.ascontiguousarray(y_true[:, j]), np.ascontiguousarray(y_pred[:, j]))
        for j in range(y_true.shape[1])
    ]


def _per_output(metric, columns, multioutput):
    """The native metric of each output, combined as scikit-learn's ``multioutput`` says
    (its own weights array included)."""
    scores = np.array([metric(a, b) for a, b in columns])
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
    require(columns[0][0].shape[0] >= 2, "fewer than two samples (scikit-learn warns)")
    require(all(a.min() < a.max() for a, _ in columns), "a constant target")
    # weighted by the outputs' variances, which the native score does not return
    require(
        not (isinstance(multioutput, str) and multioutput == "variance_weighted"),
        "multioutput='variance_weighted'",
    )
    return _per_output(_m.r2_score, columns, multioutput)


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
    require(sample_weight is None, "sample_weight")
    require(max_fpr is None, "max_fpr")
    require(type_of_target(y_true, input_name="y_true") == "binary", "not a binary target")
    y_true = check_array(y_true, ensure_2d=False, dtype=None)
    y_score = check_array(y_score, ensure_2d=False)
    require(y_true.ndim == 1 and y_score.ndim == 1, "2-D targets or scores")
    require(y_true.shape == y_score.shape, "lengths differ (scikit-learn's error)")
    require(len(np.unique(y_true)) == 2, "one class in y_true (scikit-learn warns)")
    require(np.isfinite(y_score).all(), "non-finite scores (scikit-learn's error)")
    y, _ = _labels.single(y_true, "y_true")
    return float(_m.roc_auc_score(y, y_score.astype(np.float64), "macro", "raise"))


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


@native_function(_sk.silhouette_score)
def silhouette_score(X, labels, *, metric="euclidean", sample_size=None, random_state=None, **kwds):
    _plain_numpy()
    require(isinstance(metric, str) and metric == "euclidean", f"metric={metric!r}")
    require(not kwds, "metric keywords")
    require(not _issparse(X), "sparse X")
    X, labels = check_X_y(X, labels)
    require(X.dtype == np.float64, f"X of dtype {X.dtype}")
    if sample_size is not None:
        # the subset scikit-learn draws from the same random_state
        rows = check_random_state(random_state).permutation(X.shape[0])[:sample_size]
        X, labels = X[rows], labels[rows]
    codes = np.unique(labels, return_inverse=True)[1].ravel()
    # scikit-learn's error for one label or one sample per label
    require(1 < codes.max() + 1 < X.shape[0], "not 2 <= n_labels <= n_samples - 1")
    return float(_m.silhouette_score(X, codes.astype(np.int64), "euclidean", 2.0))
