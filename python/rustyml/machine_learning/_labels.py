"""Class labels for the classifiers.

Numeric labels go to the native model as float64 as they are (it finds the classes itself);
other labels (strings, objects, integers beyond 2**53) are encoded as codes
``0..n_classes`` first. Predictions come back in the labels' own dtype either way.
"""

import numpy as np

from rustyml._validation import column_or_1d

_EXACT = 2**53  # integers below this survive the float64 round trip


def check_classification_targets(y):
    """Refuse what cannot be class labels: complex values (``ValueError``), NaN or infinity,
    and non-integral floats (scikit-learn's "Unknown label type: continuous"). Returns ``y``."""
    kind = y.dtype.kind
    if kind == "c":
        raise ValueError(f"Complex data not supported: y has dtype {y.dtype}")
    if kind == "f":
        if not np.isfinite(y).all():
            raise ValueError("Input y contains NaN or infinity.")
        if not np.array_equal(y, np.floor(y)):
            raise ValueError(
                "Unknown label type: continuous. Maybe you are trying to fit a classifier, which "
                "expects discrete classes on a regression target with continuous values."
            )
    return y


def prepare_labels(y, estimator):
    """Return ``(y_native, classes)``: float64 labels for the native model, and the sorted
    distinct labels when they had to be encoded (``None`` when numeric labels pass as they
    are). ``None``, complex labels and a wrong dimensionality raise ``ValueError``; a column
    vector is raveled with a ``DataConversionWarning``."""
    y = check_classification_targets(column_or_1d(y, estimator))
    kind = y.dtype.kind
    if kind in "fb" or (
        kind in "iu" and (y.size == 0 or (int(y.min()) > -_EXACT and int(y.max()) < _EXACT))
    ):
        return (y if y.dtype == np.float64 else y.astype(np.float64)), None
    classes, codes = np.unique(y, return_inverse=True)
    return codes.reshape(-1).astype(np.float64), classes


def fitted_classes(y, native_classes, encoded):
    """``classes_`` after a fit: the encoded labels, or the native classes in ``y``'s dtype."""
    if encoded is not None:
        return encoded
    dtype = y.dtype if isinstance(y, np.ndarray) else np.asarray(y).dtype
    return native_classes.astype(dtype)


def decode_labels(pred, classes, encoded):
    """Labels for the native model's predictions (label values, or codes when ``encoded``).

    Each prediction is looked up in the sorted ``classes`` rather than cast, so a prediction
    that is no fitted class (a damaged saved model) is a ``ValueError``, never a garbage
    label."""
    key = np.arange(len(classes), dtype=np.float64) if encoded else classes.astype(np.float64)
    idx = np.searchsorted(key, pred)
    found = idx < len(key)
    found[found] = key[idx[found]] == pred[found]
    if not found.all():
        bad = pred[~found][0]
        raise ValueError(
            f"the model predicted {bad!r}, which is none of its classes: its fitted state is "
            "inconsistent (a damaged saved model?)"
        )
    return classes[idx]
