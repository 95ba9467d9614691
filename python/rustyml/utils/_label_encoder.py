from __future__ import annotations

import numpy as np

from rustyml import _native
from rustyml._base import BaseEstimator
from rustyml.machine_learning._fitted import F64, I64, ArrayLike

_ENCODERS = {
    "int": _native.utils.LabelEncoderI64,
    "float": _native.utils.LabelEncoderF64,
    "str": _native.utils.LabelEncoderStr,
}


def _column(y, name="y"):
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {y.shape}")
    return y


def _kind_of(y):
    k = y.dtype.kind
    if k in "iub":
        return "int"
    if k == "f":
        return "float"
    if k in "US" or (k == "O" and all(isinstance(v, str) for v in y)):
        return "str"
    raise TypeError(
        f"labels must be integers, floats or strings, got dtype {y.dtype}"
        + (" with mixed types" if k == "O" else "")
    )


def _unseen(values):
    raise ValueError(f"y contains previously unseen labels: {sorted(set(map(repr, values)))}")


def _native_input(y, kind):
    """``y`` in the native encoder's label type; values that cannot be such a label are
    reported as unseen."""
    k = y.dtype.kind
    if kind == "str":
        if k in "US":
            return y.tolist()
        values = y.tolist()
        bad = [v for v in values if not isinstance(v, str)]
        if bad:
            _unseen(bad)
        return values
    if k not in "iubf":
        _unseen(y.tolist())
    if kind == "float":
        return np.ascontiguousarray(y, dtype=np.float64)
    if k == "f":
        frac = y[np.mod(y, 1) != 0] if y.size else y
        if frac.size:
            _unseen(frac.tolist())
    return np.ascontiguousarray(y, dtype=np.int64)


class LabelEncoder(BaseEstimator):
    """Encode labels as ``0..n_classes-1`` in sorted label order (``classes_``).

    Integer, float and string labels are encoded natively; labels not seen at fit raise
    ``ValueError`` listing them.
    """

    def __init__(self) -> None:
        pass

    def _fit_native(self, y, transform):
        """Fit a new native encoder on ``y`` and install it only on success, so a failed
        ``fit`` leaves an already-fitted encoder exactly as it was."""
        y = _column(y)
        kind = _kind_of(y)
        native = _ENCODERS[kind]()
        values = _native_input(y, kind)
        codes = native.fit_transform(values) if transform else native.fit(values)
        # nothing below can fail: the encoder switches to the new fit all at once
        self._kind = kind
        self._dtype = y.dtype
        self._native_class = type(native)
        self._native = native
        return codes

    def fit(self, y: ArrayLike) -> LabelEncoder:
        """Learn the sorted distinct labels of ``y``. Returns ``self``."""
        self._fit_native(y, transform=False)
        return self

    def fit_transform(self, y: ArrayLike) -> I64:
        """``fit(y).transform(y)`` in one pass."""
        return self._fit_native(y, transform=True)

    def transform(self, y: ArrayLike) -> I64:
        """The code of every label (int64)."""
        native = self._check_fitted()
        y = _column(y)
        if y.size == 0:
            return np.zeros(0, dtype=np.int64)
        return native.transform(_native_input(y, self._kind))

    def _restore_dtype(self, values):
        if self._kind == "str":
            return np.array(values, dtype=self._dtype if self._dtype.kind == "O" else None)
        return values.astype(self._dtype, copy=False)

    def inverse_transform(self, y: ArrayLike) -> np.ndarray:
        """The labels of codes ``y``; codes outside ``0..n_classes-1`` raise ``ValueError``."""
        native = self._check_fitted()
        y = _column(y)
        if y.size == 0:
            return self._restore_dtype(native.inverse_transform(np.zeros(0, dtype=np.int64)))
        if y.dtype.kind not in "iu" and (y.dtype.kind != "f" or np.any(np.mod(y, 1) != 0)):
            _unseen(y.tolist())
        return self._restore_dtype(native.inverse_transform(y.astype(np.int64)))

    @property
    def classes_(self) -> np.ndarray:
        """The sorted distinct labels seen at fit."""
        return self._restore_dtype(self._check_fitted().classes_)

    def __sklearn_tags__(self):
        # scikit-learn's own tags for its LabelEncoder: it encodes a 1-D target, not a 2-D X,
        # so scikit-learn's X-based estimator checks do not apply to it.
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.target_tags.one_d_labels = True
        return tags


def to_categorical(y: ArrayLike, num_classes: int | None = None) -> F64:
    """One-hot rows (float64) for non-negative integer labels; ``num_classes`` defaults to the
    largest label + 1."""
    y = _column(y)
    if y.dtype.kind in "iub":
        y = y.astype(np.int64, copy=False)
    elif y.dtype.kind == "f":
        y = y.astype(np.float64, copy=False)
    else:
        raise TypeError(f"to_categorical needs integer labels, got dtype {y.dtype}")
    if num_classes is not None and (
        isinstance(num_classes, bool)
        or not isinstance(num_classes, (int, np.integer))
        or not 0 <= num_classes < 2**63
    ):
        raise ValueError(f"num_classes must be None or a non-negative int, got {num_classes!r}")
    return _native.utils.to_categorical(y, num_classes)


def to_sparse_categorical(categorical: ArrayLike) -> I64:
    """Index (int64) of the largest value of every row, the first on ties: undoes
    ``to_categorical`` and turns class probabilities into labels."""
    from rustyml._validation import as_float_array

    return _native.utils.to_sparse_categorical(as_float_array(categorical, "categorical", 2))
