"""Class labels of the classifiers at the Python boundary.

Numeric labels (float, integer, boolean) go to the native model as float64, which checks them
(finite, at least two classes) and sorts the distinct values into ``classes_``; the wrapper
casts ``classes_`` and the predictions back to the labels' own dtype. Other labels (strings,
objects) are encoded here with ``numpy.unique``, like scikit-learn, and mapped back after
prediction.
"""

import numpy as np

from rustyml._validation import as_float_array


def encode_labels(y):
    """Return ``(y_for_native, classes_or_None, label_dtype)``."""
    if not isinstance(y, np.ndarray):
        try:
            y = np.asarray(y)
        except Exception as exc:  # ragged lists and the like
            raise ValueError(f"y could not be converted to an array: {exc}") from exc
    if y.dtype.kind in "fiub":
        return as_float_array(y, "y", 1), None, y.dtype
    if y.ndim != 1:
        raise ValueError(f"y must be 1-dimensional, got {y.ndim} dimension(s) with shape {y.shape}")
    if y.dtype.kind == "c":
        raise TypeError(f"y must hold real numbers or class labels, got dtype {y.dtype}")
    classes, index = np.unique(y, return_inverse=True)
    return index.astype(np.float64), classes, y.dtype


def fitted_classes(native, classes, label_dtype):
    """``classes_`` after a native fit."""
    if classes is not None:
        return classes
    native_classes = native.classes_
    if label_dtype.kind in "iub":
        return native_classes.astype(label_dtype)
    return native_classes


def decode(pred, classes, encoded):
    """Native predictions back to labels."""
    if encoded:
        return classes[pred.astype(np.intp)]
    if classes.dtype != np.float64:
        return pred.astype(classes.dtype)
    return pred
