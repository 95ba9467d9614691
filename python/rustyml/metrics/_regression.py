from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from rustyml import _native
from rustyml._validation import as_float_array

if TYPE_CHECKING:
    from rustyml.metrics._typing import ArrayLike

_m = _native.metrics
_F64 = np.dtype(np.float64)


def _f1(y, name):
    if type(y) is np.ndarray and y.dtype == _F64 and y.ndim == 1:
        return y
    return as_float_array(y, name, 1)


def _metric(name: str, doc: str) -> Callable[[ArrayLike, ArrayLike], float]:
    native = getattr(_m, name)

    def metric(y_true: ArrayLike, y_pred: ArrayLike) -> float:
        return native(_f1(y_true, "y_true"), _f1(y_pred, "y_pred"))

    metric.__name__ = metric.__qualname__ = name
    metric.__doc__ = doc
    return metric


mean_squared_error = _metric("mean_squared_error", "Mean of the squared errors.")
root_mean_squared_error = _metric(
    "root_mean_squared_error", "Square root of the mean squared error."
)
mean_absolute_error = _metric("mean_absolute_error", "Mean of the absolute errors.")
r2_score = _metric(
    "r2_score",
    "Coefficient of determination (1.0 for a perfect prediction of a constant target, 0.0 "
    "for an imperfect one).",
)
explained_variance_score = _metric(
    "explained_variance_score",
    "``1 - Var(y_true - y_pred) / Var(y_true)`` (constant targets as in ``r2_score``).",
)
median_absolute_error = _metric("median_absolute_error", "Median of the absolute errors.")
mean_absolute_percentage_error = _metric(
    "mean_absolute_percentage_error",
    "Mean of ``|y_pred - y_true| / max(|y_true|, eps)`` (a fraction, not a percentage).",
)
