"""Boundary conversion for estimator inputs (dtype and dimensionality only; values are checked
in Rust, which names the problem)."""

import numpy as np


def as_float_array(x, name, ndim, dtype=np.float64):
    """Return ``x`` as a ``dtype`` NumPy array of ``ndim`` dimensions.

    Arrays already in ``dtype`` are returned as they are (no copy, any strides); float32/64,
    integer and boolean arrays are converted like scikit-learn does. Complex, string and object
    data raise ``TypeError``; a wrong dimensionality raises ``ValueError``.
    """
    if not isinstance(x, np.ndarray):
        try:
            x = np.asarray(x)
        except Exception as exc:  # ragged lists and the like
            raise ValueError(f"{name} could not be converted to an array: {exc}") from exc
    kind = x.dtype.kind
    if kind not in "fiub":
        raise TypeError(f"{name} must hold real numbers, got dtype {x.dtype}")
    if x.ndim != ndim:
        hint = (
            " (reshape a single feature with x.reshape(-1, 1))" if ndim == 2 and x.ndim == 1 else ""
        )
        raise ValueError(
            f"{name} must be {ndim}-dimensional, got {x.ndim} dimension(s) with shape {x.shape}{hint}"
        )
    if x.dtype != dtype and kind != "f":
        x = x.astype(dtype)
    return x
