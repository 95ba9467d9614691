import numpy as np

from rustyml import _native
from rustyml._validation import as_float_array

_m = _native.metrics
_F64 = np.dtype(np.float64)


def _f1(y, name):
    if type(y) is np.ndarray and y.dtype == _F64 and y.ndim == 1:
        return y
    return as_float_array(y, name, 1)


def mean_squared_error(y_true, y_pred):
    """Mean of the squared errors."""
    return _m.mean_squared_error(_f1(y_true, "y_true"), _f1(y_pred, "y_pred"))


def root_mean_squared_error(y_true, y_pred):
    """Square root of the mean squared error."""
    return _m.root_mean_squared_error(_f1(y_true, "y_true"), _f1(y_pred, "y_pred"))


def mean_absolute_error(y_true, y_pred):
    """Mean of the absolute errors."""
    return _m.mean_absolute_error(_f1(y_true, "y_true"), _f1(y_pred, "y_pred"))


def r2_score(y_true, y_pred):
    """Coefficient of determination (1.0 for a perfect prediction of a constant target, 0.0
    for an imperfect one)."""
    return _m.r2_score(_f1(y_true, "y_true"), _f1(y_pred, "y_pred"))


def explained_variance_score(y_true, y_pred):
    """``1 - Var(y_true - y_pred) / Var(y_true)`` (constant targets as in ``r2_score``)."""
    return _m.explained_variance_score(_f1(y_true, "y_true"), _f1(y_pred, "y_pred"))


def median_absolute_error(y_true, y_pred):
    """Median of the absolute errors."""
    return _m.median_absolute_error(_f1(y_true, "y_true"), _f1(y_pred, "y_pred"))


def mean_absolute_percentage_error(y_true, y_pred):
    """Mean of ``|y_pred - y_true| / max(|y_true|, eps)`` (a fraction, not a percentage)."""
    return _m.mean_absolute_percentage_error(_f1(y_true, "y_true"), _f1(y_pred, "y_pred"))
