"""Class labels for the classifiers.

Numeric labels go to the native model as float64 as they are (it finds the classes itself);
other labels (strings, objects, integers beyond 2**53) are encoded as codes
``0..n_classes`` first. Predictions come back in the labels' own dtype either way.
"""

import warnings

import numpy as np

from rustyml.exceptions import DataConversionWarning

_EXACT = 2**53  # integers below this survive the float64 round trip


def prepare_labels(y):
    """Return ``(y_native, classes)``: float64 labels for the native model, and the sorted
    distinct labels when they had to be encoded (``None`` when numeric labels pass as they
    are). Complex labels raise ``TypeError``, a wrong dimensionality ``ValueError``."""
    if not isinstance(y, np.ndarray):
        try:
            y = np.asarray(y)
        except Exception as exc:  # ragged lists and the like
            raise ValueError(f"y could not be converted to an array: {exc}") from exc
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected. Please change the shape "
            "of y to (n_samples, ), for example using ravel().",
            DataConversionWarning,
            stacklevel=3,
        )
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"y must be 1-dimensional, got {y.ndim} dimension(s) with shape {y.shape}")
    kind = y.dtype.kind
    if kind == "c":
        raise TypeError(f"y must hold class labels, got dtype {y.dtype}")
    if kind == "f":
        if not np.isfinite(y).all():
            raise ValueError("Input y contains NaN or infinity.")
        if not np.array_equal(y, np.floor(y)):
            raise ValueError(
                "Unknown label type: continuous. Maybe you are trying to fit a classifier, which "
                "expects discrete classes on a regression target with continuous values."
            )
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
    """Labels for the native model's predictions."""
    if encoded:
        return classes[pred.astype(np.intp)]
    return pred.astype(classes.dtype, copy=False)
