"""Label arrays on their way to the native metrics: int64 or float64, one dtype per pair.

Integer and boolean labels become int64, floats float64 (a mix of the two float64); string
and other labels are encoded to int64 codes of their sorted distinct values (``classes``),
which keeps NumPy's sort order, so per-class results come in scikit-learn's order.
"""

import numpy as np

_I64 = np.dtype(np.int64)
_F64 = np.dtype(np.float64)


def column(y, name):
    if type(y) is not np.ndarray:
        try:
            y = np.asarray(y)
        except Exception as exc:  # ragged lists and the like
            raise ValueError(f"{name} could not be converted to an array: {exc}") from exc
    if y.ndim != 1:
        if y.ndim == 2 and y.shape[1] == 1:
            return y.ravel()
        raise ValueError(f"{name} must be 1-dimensional, got an array of shape {y.shape}")
    return y


def numeric(y):
    """``y`` as int64 / float64, or None for non-numeric labels."""
    dt = y.dtype
    if dt == _I64 or dt == _F64:
        return y
    k = dt.kind
    if k in "iub":
        return y.astype(np.int64)
    if k == "f":
        return y.astype(np.float64)
    return None


def _encode(values, name):
    try:
        return np.unique(values, return_inverse=True)
    except TypeError as exc:
        raise ValueError(
            f"{name} has labels that cannot be compared with each other: {exc}"
        ) from exc


def single(y, name):
    """``(labels, classes)``: native labels, and the label values when they are codes."""
    y = column(y, name)
    n = numeric(y)
    if n is not None:
        return n, None
    classes, codes = _encode(y, name)
    return codes.astype(np.int64).ravel(), classes


def pair(a, b, names, shared=True):
    """``(a, b, classes)``: one native dtype for both; ``classes`` (the sorted union of the
    labels, which the int64 codes index) when the labels had to be encoded. Without ``shared``
    each array is encoded on its own (clustering: the two labelings are unrelated)."""
    a = column(a, names[0])
    b = column(b, names[1])
    if a.shape[0] != b.shape[0]:
        raise ValueError(
            f"{names[0]} and {names[1]} have different lengths ({a.shape[0]} and {b.shape[0]})"
        )
    na, nb = numeric(a), numeric(b)
    if na is not None and nb is not None:
        if na.dtype != nb.dtype:
            na, nb = na.astype(np.float64), nb.astype(np.float64)
        return na, nb, None
    if not shared:
        ca = na if na is not None else _encode(a, names[0])[1].astype(np.int64).ravel()
        cb = nb if nb is not None else _encode(b, names[1])[1].astype(np.int64).ravel()
        if ca.dtype != cb.dtype:
            ca, cb = ca.astype(np.float64), cb.astype(np.float64)
        return ca, cb, None
    if (na is None) != (nb is None):
        raise ValueError(
            f"Mix of label input types (string and number) in {names[0]} and {names[1]}"
        )
    classes, codes = _encode(np.concatenate([a, b]), f"{names[0]} and {names[1]}")
    codes = codes.astype(np.int64).ravel()
    return codes[: a.shape[0]], codes[a.shape[0] :], classes


def code_of(classes, value):
    """Index of ``value`` in the sorted ``classes``, or None."""
    try:
        i = int(np.searchsorted(classes, value))
    except TypeError:
        return None
    if i < len(classes) and classes[i] == value:
        return i
    return None


def codes_for(classes, values, native_dtype):
    """Values given by the caller (``labels=``) in the native representation of a pair."""
    values = np.asarray(values)
    if classes is None:
        if native_dtype == _I64 and values.dtype.kind in "iub":
            return values.astype(np.int64).ravel()
        return values.astype(np.float64).ravel()
    # labels absent from the data get codes of their own, past the data's classes
    out = np.empty(values.size, dtype=np.int64)
    extra = len(classes)
    for i, v in enumerate(values.ravel().tolist()):
        c = code_of(classes, v)
        if c is None:
            c, extra = extra, extra + 1
        out[i] = c
    return out
