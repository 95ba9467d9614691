"""Class-label encoding shared by the classifiers: any 1-D labels (numbers, strings) become
codes ``0..n_classes`` for the native model, and predictions map back through ``classes_``."""

import numpy as np


def encode_labels(y):
    """Return ``(classes_, codes)``: the sorted distinct labels and each sample's index as
    float64. NaN/infinite labels raise ``ValueError``, complex ones ``TypeError``."""
    if not isinstance(y, np.ndarray):
        try:
            y = np.asarray(y)
        except Exception as exc:  # ragged lists and the like
            raise ValueError(f"y could not be converted to an array: {exc}") from exc
    if y.ndim != 1:
        raise ValueError(f"y must be 1-dimensional, got {y.ndim} dimension(s) with shape {y.shape}")
    if y.dtype.kind == "c":
        raise TypeError(f"y must hold class labels, got dtype {y.dtype}")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinity")
    classes, codes = np.unique(y, return_inverse=True)
    return classes, codes.reshape(-1).astype(np.float64)


def decode_labels(classes, codes):
    """Labels for the native model's predicted codes."""
    return classes[codes.astype(np.intp)]
