"""``sklearn.preprocessing`` with rustyml's reduction engine behind StandardScaler.

``StandardScaler.fit`` computes the column means and variances natively on dense, finite
float64 input: without ``sample_weight`` by the deterministic blocked fold; with it by
scikit-learn's weighted two-pass formula (the weighted sums ``w^T X`` and ``w^T (X - T)^2``
by rustyml's product engine, ``n_samples_seen_`` the float total weight). The constant-column
rule and the scales then follow scikit-learn's own helpers, so ``scale_`` is scikit-learn's
definition on those moments. ``partial_fit`` (scikit-learn's incremental update), NaN-aware
fits, sparse input and ``transform`` are scikit-learn's own.
"""

import numpy as np
from scipy.sparse import issparse
from sklearn import preprocessing as _sk
from sklearn.preprocessing._data import _handle_zeros_in_scale, _is_constant_feature
from sklearn.utils.validation import _check_sample_weight, validate_data

from rustyml.math.matmul import matvec as _matvec
from rustyml.math.reduction import sum as _sum
from rustyml.sklearn._dispatch import dense_copy, native_path, require
from rustyml.utils import StandardScaler as _StandardScaler

__all__ = ["StandardScaler"]

_SkStandardScaler = _sk.StandardScaler


class StandardScaler(_SkStandardScaler):
    __doc__ = _SkStandardScaler.__doc__

    @native_path(_SkStandardScaler.fit, fits=True)
    def fit(self, X, y=None, sample_weight=None):
        self._validate_params()
        require(self.with_mean or self.with_std, "neither centering nor scaling")
        # scikit-learn refuses to centre a sparse X, with its own message
        require(not (issparse(X) and self.with_mean), "centering a sparse X")
        self._reset()
        X = validate_data(
            self,
            X,
            accept_sparse=("csr", "csc"),
            dtype=[np.float64, np.float32],
            ensure_all_finite="allow-nan",
            reset=True,
        )
        # scikit-learn accumulates a sparse float32 X's moments in float64 too, but hands
        # them back (and the weight total) rounded to float32
        rounded_to_float32 = issparse(X) and X.dtype == np.float32
        if issparse(X):
            # The moments of a sparse X, implicit zeros included, are those of its dense
            # copy: computed on one of at most 2^22 entries (32 MiB).
            X = dense_copy(X)
        if sample_weight is not None:
            # scikit-learn rounds the weights to X's dtype first
            sample_weight = _check_sample_weight(sample_weight, X, dtype=X.dtype)
            sample_weight = sample_weight.astype(np.float64, copy=False)
        # scikit-learn accumulates a float32 X's moments in float64 from the float32
        # values: the moments of the float64 copy.
        X = X.astype(np.float64, copy=False)
        missing = np.isnan(X)
        if missing.any():
            seen, mean, var = _moments_without_nan(X, missing, sample_weight)
        else:
            seen, mean, var = _moments(X, sample_weight)
        if rounded_to_float32:
            seen = np.float32(seen)
            mean, var = (np.asarray(v, dtype=np.float32) for v in (mean, var))
        self.n_samples_seen_ = seen
        self.mean_ = np.asarray(mean, dtype=np.float64)
        if self.with_std:
            self.var_ = np.asarray(var, dtype=np.float64)
            self.scale_ = _scale(self.var_, self.mean_, self.n_samples_seen_)
        else:
            self.var_ = None
            self.scale_ = None
        return self


def _scale(var, mean, seen):
    """scikit-learn's ``scale_``: the standard deviation, 1 for constant features (its
    rule for telling them from rounding)."""
    constant = _is_constant_feature(var, mean, seen)
    return _handle_zeros_in_scale(np.sqrt(var), copy=False, constant_mask=constant)


def standard_scale(X):
    """The ``scale_`` scikit-learn's ``StandardScaler().fit(X)`` sets for a dense float64
    ``X`` without NaN, from rustyml's moments (for other doors that standardise)."""
    seen, mean, var = _moments(X, None)
    return _scale(np.asarray(var, dtype=np.float64), np.asarray(mean, dtype=np.float64), seen)


def _moments(X, w):
    """Total weight (or count), mean and biased variance per column, as scikit-learn's
    first fit gives them: by rustyml's scaler (the deterministic blocked fold) without
    weights, by scikit-learn's two-pass formula with them."""
    if w is None:
        native = _StandardScaler().fit(X)
        # scikit-learn's running count is float64 once a first pass has added to it
        return np.float64(X.shape[0]), native.mean_, native.var_
    return _weighted_moments(X, w)


def _moments_without_nan(X, missing, w):
    """scikit-learn's NaN-aware fit: each column's moments over its non-NaN entries, and
    its per-column counts (one number when they agree)."""
    stats = []
    for j in range(X.shape[1]):
        kept = ~missing[:, j]
        require(kept.any(), "a column of NaN only")
        column = np.ascontiguousarray(X[kept, j : j + 1])
        seen, mean, var = _moments(column, None if w is None else w[kept])
        stats.append((seen, np.ravel(mean)[0], np.ravel(var)[0]))
    seen, mean, var = (np.array(v, dtype=np.float64) for v in zip(*stats))
    return (seen[0] if seen.min() == seen.max() else seen), mean, var


def _weighted_moments(X, w):
    """Total weight, weighted mean and weighted (biased) variance per column, as
    scikit-learn's ``_incremental_mean_and_var`` defines them on a first fit: the centred
    sums are corrected by the residual sum of the first pass (``correction``), which
    removes the error of the rounded mean to first order."""
    total = _sum(w)
    require(total > 0, "sample weights summing to zero")
    XT = np.ascontiguousarray(X.T)
    mean = _matvec(XT, w) / total
    dev = np.ascontiguousarray(XT - mean[:, None])
    correction = _matvec(dev, w)
    np.square(dev, out=dev)
    var = (_matvec(dev, w) - correction**2 / total) / total
    return np.float64(total), mean, var
