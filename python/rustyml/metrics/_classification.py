from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from rustyml import _native
from rustyml._validation import as_float_array
from rustyml.metrics import _labels

if TYPE_CHECKING:
    from rustyml.metrics._typing import F64, I64, ArrayLike, Average, ZeroDivision

_m = _native.metrics
_AVERAGES = (None, "micro", "macro", "weighted", "binary")


def _zero_division(zero_division):
    if isinstance(zero_division, str):
        if zero_division == "warn":
            return 0.0
    elif isinstance(zero_division, (int, float, np.floating, np.integer)) and not isinstance(
        zero_division, bool
    ):
        v = float(zero_division)
        if v in (0.0, 1.0) or math.isnan(v):
            return v
    raise ValueError(f"zero_division must be 'warn', 0, 1 or np.nan, got {zero_division!r}")


def _check_average(average):
    if average not in _AVERAGES:
        raise ValueError(
            f"average has to be one of (None, 'micro', 'macro', 'weighted', 'binary'), "
            f"got {average!r}"
        )


def _pos_code(pos_label, classes):
    if classes is None:
        return pos_label
    code = _labels.code_of(classes, pos_label)
    if code is None:
        if len(classes) == 2:  # more classes: the native layer reports the multiclass target
            raise ValueError(
                f"pos_label={pos_label!r} is not a valid label. "
                f"It should be one of {classes.tolist()}"
            )
        code = len(classes)
    return code


def accuracy_score(y_true: ArrayLike, y_pred: ArrayLike, *, normalize: bool = True) -> float:
    """Fraction (or with ``normalize=False`` the number) of exactly matching labels."""
    a, b, _ = _labels.pair(y_true, y_pred, ("y_true", "y_pred"))
    acc = _m.accuracy_score(a, b)
    return acc if normalize else float(round(acc * a.shape[0]))


accuracy = accuracy_score


def precision_recall_fscore_support(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    beta: float = 1.0,
    pos_label: object = 1,
    average: Average = None,
    zero_division: ZeroDivision = "warn",
) -> tuple[float | F64, float | F64, float | F64, I64 | None]:
    """Per-class ``(precision, recall, fbeta, support)`` arrays in sorted label order, or with
    an ``average`` the averaged ``(precision, recall, fbeta, None)``."""
    _check_average(average)
    zd = _zero_division(zero_division)
    a, b, classes = _labels.pair(y_true, y_pred, ("y_true", "y_pred"))
    if average is None:
        _, p, r, f, s = _m.precision_recall_fscore_support(a, b, float(beta), None, 1, zd)
        return p, r, f, s
    # pos_label only selects the class of average='binary'; the other averages ignore it
    pos = _pos_code(pos_label, classes) if average == "binary" else 0
    p, r, f = _m.precision_recall_fscore_support(a, b, float(beta), average, pos, zd)
    return p, r, f, None


def _one(index, y_true, y_pred, beta, pos_label, average, zero_division):
    out = precision_recall_fscore_support(
        y_true,
        y_pred,
        beta=beta,
        pos_label=pos_label,
        average=average,
        zero_division=zero_division,
    )
    return out[index]


def _averaged_score(name: str, index: int, doc: str):
    """The public score ``name``: entry ``index`` (precision, recall, F1) of
    ``precision_recall_fscore_support`` at ``beta = 1``."""

    def score(
        y_true: ArrayLike,
        y_pred: ArrayLike,
        *,
        pos_label: object = 1,
        average: Average = "binary",
        zero_division: ZeroDivision = "warn",
    ) -> float | F64:
        return _one(index, y_true, y_pred, 1.0, pos_label, average, zero_division)

    score.__name__ = score.__qualname__ = name
    score.__doc__ = doc
    return score


precision_score = _averaged_score(
    "precision_score",
    0,
    """``tp / (tp + fp)``; ``average`` is 'binary' (the ``pos_label`` class), 'micro',
    'macro', 'weighted' or None (per class).""",
)
recall_score = _averaged_score(
    "recall_score", 1, """``tp / (tp + fn)``, averaged like ``precision_score``."""
)
f1_score = _averaged_score(
    "f1_score", 2, """Harmonic mean of precision and recall, averaged like ``precision_score``."""
)


def fbeta_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    beta: float,
    pos_label: object = 1,
    average: Average = "binary",
    zero_division: ZeroDivision = "warn",
) -> float | F64:
    """F-beta score (recall ``beta`` times as important as precision)."""
    return _one(2, y_true, y_pred, beta, pos_label, average, zero_division)


def _pair_with_labels(y1, y2, names, labels):
    """Two label arrays as ``_labels.pair`` gives them and, when ``labels`` is given, those
    labels' codes, all three in one dtype (``None`` for no ``labels``)."""
    a, b, classes = _labels.pair(y1, y2, names)
    wanted = None
    if labels is not None:
        wanted = _labels.codes_for(classes, labels, a.dtype)
        if wanted.dtype != a.dtype:
            a, b = a.astype(wanted.dtype), b.astype(wanted.dtype)
    return a, b, wanted


def confusion_matrix(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    normalize: Literal["true", "pred", "all"] | None = None,
) -> I64 | F64:
    """``C[i, j]``: samples of class ``i`` predicted as class ``j`` (classes sorted, or in the
    order of ``labels``); ``normalize`` 'true', 'pred' or 'all' divides by row, column or total
    sums."""
    a, b, wanted = _pair_with_labels(y_true, y_pred, ("y_true", "y_pred"), labels)
    if normalize not in (None, "true", "pred", "all"):
        raise ValueError(
            f"normalize must be one of {{'true', 'pred', 'all', None}}, got {normalize!r}"
        )
    return _m.confusion_matrix(a, b, wanted, normalize)[1]


def balanced_accuracy_score(
    y_true: ArrayLike, y_pred: ArrayLike, *, adjusted: bool = False
) -> float:
    """Mean per-class recall over the classes of ``y_true``; ``adjusted`` maps chance to 0."""
    a, b, _ = _labels.pair(y_true, y_pred, ("y_true", "y_pred"))
    return _m.balanced_accuracy_score(a, b, bool(adjusted))


def matthews_corrcoef(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    """Matthews correlation coefficient (multiclass form); 0 when undefined."""
    a, b, _ = _labels.pair(y_true, y_pred, ("y_true", "y_pred"))
    return _m.matthews_corrcoef(a, b)


def roc_auc_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    average: Literal["micro", "macro", "weighted"] = "macro",
    multi_class: Literal["raise", "ovr", "ovo"] = "raise",
) -> float:
    """Area under the ROC curve. Binary: ``y_score`` (n,) scores the greater class.
    Multiclass: ``y_score`` (n, n_classes) probabilities with ``multi_class`` 'ovr' or 'ovo'
    and ``average`` 'macro' or 'weighted' (or 'micro' for 'ovr')."""
    y, _ = _labels.single(y_true, "y_true")
    return _m.roc_auc_score(y, _real_scores(y_score), average, multi_class)


roc_auc = roc_auc_score


def log_loss(y_true: ArrayLike, y_proba: ArrayLike, *, labels: ArrayLike | None = None) -> float:
    """Mean cross-entropy of predicted probabilities: ``y_proba`` (n,) for the greater class
    of a binary problem or (n, n_classes) in sorted class order; values outside [0, 1] raise
    ``ValueError``, the rest are clipped to [eps, 1 - eps]."""
    y = _labels.column(y_true, "y_true")
    proba = _real_scores(y_proba, "y_proba")
    native = _labels.numeric(y)
    wanted = None
    if native is not None:
        if labels is not None:
            wanted = _labels.codes_for(None, labels, native.dtype)
            if wanted.dtype != native.dtype:
                native = native.astype(wanted.dtype)
        return _m.log_loss(native, proba, wanted)
    # string labels: codes of the sorted class list (from labels, else from y_true)
    if labels is None:
        classes, codes = np.unique(y, return_inverse=True)
        return _m.log_loss(codes.astype(np.int64).ravel(), proba, None)
    classes = np.unique(np.asarray(labels))
    codes = np.array([_labels.code_of(classes, v) for v in y.tolist()], dtype=object)
    missing = [v for v, c in zip(y.tolist(), codes) if c is None]
    if missing:
        raise ValueError(
            f"y_true contains values not belonging to the passed labels {list(classes)}: "
            f"{sorted(set(map(repr, missing)))}"
        )
    return _m.log_loss(codes.astype(np.int64), proba, np.arange(len(classes), dtype=np.int64))


def _native_ratio(name):
    """The ``ConfusionMatrix`` method ``name``: the native matrix's ratio of that name."""

    def ratio(self) -> float:
        return getattr(self._cm, name)()

    ratio.__name__ = name
    ratio.__qualname__ = f"ConfusionMatrix.{name}"
    return ratio


class ConfusionMatrix:
    """Binary confusion matrix of the original crate: values ``>= 0.5`` are positive (hard
    0/1 labels or probabilities). Counts ``tp``, ``fp``, ``tn``, ``fn``; ratios with a zero
    denominator are 0."""

    __slots__ = ("_cm",)

    def __init__(self, y_true: ArrayLike, y_pred: ArrayLike) -> None:
        self._cm = _m.ConfusionMatrix(
            as_float_array(y_true, "y_true", 1), as_float_array(y_pred, "y_pred", 1)
        )

    @classmethod
    def from_counts(cls, tp: int, fp: int, tn: int, fn: int) -> ConfusionMatrix:
        for name, v in (("tp", tp), ("fp", fp), ("tn", tn), ("fn", fn)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= v < 2**64:
                raise ValueError(f"{name} must be a non-negative int below 2**64, got {v!r}")
        obj = cls.__new__(cls)
        obj._cm = _m.ConfusionMatrix.from_counts(tp, fp, tn, fn)
        return obj

    tp = property(lambda self: self._cm.tp)
    fp = property(lambda self: self._cm.fp)
    tn = property(lambda self: self._cm.tn)
    fn = property(lambda self: self._cm.fn)

    def get_counts(self) -> tuple[int, int, int, int]:
        """``(tp, fp, tn, fn)``."""
        return self._cm.get_counts()

    # the derived ratios, each computed by the native matrix
    accuracy = _native_ratio("accuracy")
    error_rate = _native_ratio("error_rate")
    precision = _native_ratio("precision")
    recall = _native_ratio("recall")
    specificity = _native_ratio("specificity")
    f1_score = _native_ratio("f1_score")
    f1 = f1_score
    balanced_accuracy = _native_ratio("balanced_accuracy")
    mcc = _native_ratio("mcc")

    def summary(self) -> str:
        """The counts as a table and the derived metrics."""
        return self._cm.summary()

    def __str__(self):
        return self._cm.summary()

    def __repr__(self):
        return repr(self._cm)

    def __eq__(self, other):
        return isinstance(other, ConfusionMatrix) and self.get_counts() == other.get_counts()

    def __hash__(self):
        return hash(self.get_counts())

    def __reduce__(self):
        return (ConfusionMatrix.from_counts, self.get_counts())


def _real_scores(y_score, name="y_score"):
    """Scores or probabilities as float64, refusing values that are not real numbers."""
    score = np.asarray(y_score)
    if score.dtype.kind not in "fiub":
        raise TypeError(f"{name} must hold real numbers, got dtype {score.dtype}")
    return score.astype(np.float64, copy=False)


def _binary_pos(y_true, pos_label):
    """Native labels and pos_label for a binary curve: string labels become codes, and then
    pos_label must be given (scikit-learn's rule: without it the labels must be {0, 1} or
    {-1, 1})."""
    y, classes = _labels.single(y_true, "y_true")
    if classes is None:
        return y, pos_label
    if pos_label is None:
        raise ValueError(
            f"y_true takes value in {set(classes.tolist())} and pos_label is not specified: "
            "either make y_true take value in {0, 1} or {-1, 1} or pass pos_label explicitly."
        )
    code = _labels.code_of(classes, pos_label)
    return y, len(classes) if code is None else code


def roc_curve(
    y_true: ArrayLike, y_score: ArrayLike, *, pos_label: Any = None, drop_intermediate: bool = True
) -> tuple[F64, F64, F64]:
    """``(fpr, tpr, thresholds)`` of a binary problem; thresholds decrease from ``inf``."""
    y, pos = _binary_pos(y_true, pos_label)
    return _m.roc_curve(y, _real_scores(y_score), pos, bool(drop_intermediate))


def precision_recall_curve(
    y_true: ArrayLike, y_score: ArrayLike, *, pos_label: Any = None, drop_intermediate: bool = False
) -> tuple[F64, F64, F64]:
    """``(precision, recall, thresholds)`` of a binary problem; thresholds increase and the
    last point is (precision 1, recall 0)."""
    y, pos = _binary_pos(y_true, pos_label)
    return _m.precision_recall_curve(y, _real_scores(y_score), pos, bool(drop_intermediate))


def average_precision_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    average: Literal["micro", "macro", "weighted"] | None = "macro",
    pos_label: Any = 1,
) -> float | F64:
    """Area under the precision-recall curve as ``sum_n (R_n - R_{n-1}) P_n``. Binary:
    ``y_score`` (n,) scores ``pos_label``. Multiclass: ``y_score`` (n, n_classes), one-vs-rest
    per class (``pos_label`` must stay 1) averaged 'macro', 'weighted', 'micro' or None."""
    y = _labels.column(y_true, "y_true")
    classes = np.unique(y)
    if len(classes) <= 2:
        native, codes = _labels.single(y, "y_true")
        pos = _pos_code(pos_label, codes)
        return _m.average_precision_score(native, _real_scores(y_score), pos)
    if pos_label != 1:
        raise ValueError(
            "Parameter pos_label is fixed to 1 for multiclass y_true. Do not set pos_label "
            "or set pos_label to 1."
        )
    if average not in (None, "micro", "macro", "weighted"):
        raise ValueError(
            f"average has to be one of (None, 'micro', 'macro', 'weighted'), got {average!r}"
        )
    score = np.asarray(y_score, dtype=np.float64)
    if score.ndim != 2 or score.shape[1] != len(classes):
        raise ValueError(
            f"y_score must have shape (n_samples, {len(classes)}) for {len(classes)} classes, "
            f"got {score.shape}"
        )
    indicator = (y[:, None] == classes[None, :]).astype(np.int64)
    if average == "micro":
        return _m.average_precision_score(indicator.ravel(), score.ravel(), 1)
    per_class = np.array(
        [
            _m.average_precision_score(indicator[:, j].copy(), score[:, j].copy(), 1)
            for j in range(len(classes))
        ]
    )
    if average is None:
        return per_class
    if average == "weighted":
        return float(np.average(per_class, weights=indicator.sum(axis=0)))
    return float(per_class.mean())


def top_k_accuracy_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    k: int = 2,
    normalize: bool = True,
    labels: ArrayLike | None = None,
) -> float:
    """Fraction (or with ``normalize=False`` the number) of samples whose true class is among
    the ``k`` highest scores; classes are the sorted labels (or ``labels``), one column of
    ``y_score`` each. Ties rank the later column first, as scikit-learn's stable sort."""
    y = _labels.column(y_true, "y_true")
    score = np.asarray(y_score)
    if score.dtype.kind not in "fiub":
        raise TypeError(f"y_score must hold real numbers, got dtype {score.dtype}")
    score = score.astype(np.float64)
    if labels is None:
        classes = np.unique(y)
    else:
        given = np.asarray(labels).ravel()
        classes = np.unique(given)
        if len(classes) != len(given):
            raise ValueError("Parameter 'labels' must be unique.")
        if not np.array_equal(classes, given):
            raise ValueError("Parameter 'labels' must be ordered.")
    # scikit-learn's target type: binary when y_true shows at most 2 classes, unless more
    # labels are given
    binary = len(np.unique(y)) <= 2 and not (labels is not None and len(classes) > 2)
    if binary:
        if score.ndim == 2 and score.shape[1] != 1:
            raise ValueError(
                f"`y_true` is binary while y_score is 2d with {score.shape[1]} classes. If "
                "`y_true` does not contain all the labels, `labels` must be provided."
            )
        score = score.ravel()
    n_score = 2 if score.ndim == 1 else score.shape[1]
    if len(classes) != n_score:
        what = "given labels" if labels is not None else "classes in 'y_true'"
        raise ValueError(
            f"Number of {what} ({len(classes)}) not equal to the number of classes in "
            f"'y_score' ({n_score})."
        )
    codes = np.searchsorted(classes, y)
    if np.any(codes >= len(classes)) or np.any(classes[np.minimum(codes, len(classes) - 1)] != y):
        raise ValueError("'y_true' contains labels not in parameter 'labels'.")
    codes = codes.astype(np.int64)
    if binary:
        s = score
        if y.shape[0] != s.shape[0]:
            raise ValueError(
                f"y_true and y_score have different lengths ({y.shape[0]} and {s.shape[0]})"
            )
        if k == 1:
            threshold = 0.5 if s.min() >= 0 and s.max() <= 1 else 0
            hits = (s > threshold).astype(np.int64) == codes
        else:
            hits = np.ones(s.shape[0], dtype=bool)
        return float(hits.mean()) if normalize else float(hits.sum())
    return _m.top_k_accuracy_score(codes, score, int(k), bool(normalize))


def cohen_kappa_score(
    y1: ArrayLike,
    y2: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    weights: Literal["linear", "quadratic"] | None = None,
    replace_undefined_by: float = np.nan,
) -> float:
    """Agreement of two annotators corrected for chance; ``weights`` None, 'linear' or
    'quadratic'. Undefined (both use one class) gives ``replace_undefined_by``."""
    a, b, wanted = _pair_with_labels(y1, y2, ("y1", "y2"), labels)
    kappa = _m.cohen_kappa_score(a, b, wanted, weights)
    return replace_undefined_by if math.isnan(kappa) else kappa
