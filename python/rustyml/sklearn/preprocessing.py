"""``sklearn.preprocessing`` with rustyml's reduction engine behind StandardScaler.

``StandardScaler.fit`` computes the column means and variances natively (the deterministic
blocked fold) on dense, finite input without ``sample_weight``; the constant-column rule
and the scales then follow scikit-learn's own helpers, so ``scale_`` is scikit-learn's
definition on those moments. ``partial_fit`` (scikit-learn's incremental update), NaN-aware
fits, sparse input and ``transform`` are scikit-learn's own.
"""

import numpy as np
from scipy.sparse import issparse
from sklearn import preprocessing as _sk
from sklearn.preprocessing._data import _handle_zeros_in_scale, _is_constant_feature
from sklearn.utils.validation import validate_data

from rustyml.sklearn._dispatch import native_path, require
from rustyml.utils import StandardScaler as _StandardScaler

__all__ = ["StandardScaler"]

_SkStandardScaler = _sk.StandardScaler


class StandardScaler(_SkStandardScaler):
    __doc__ = _SkStandardScaler.__doc__

    @native_path(_SkStandardScaler.fit, fits=True)
    def fit(self, X, y=None, sample_weight=None):
        require(sample_weight is None, "sample_weight")
        self._validate_params()
        require(not issparse(X), "sparse X")
        require(self.with_mean or self.with_std, "neither centering nor scaling")
        self._reset()
        X = validate_data(
            self,
            X,
            dtype=[np.float64, np.float32],
            ensure_all_finite="allow-nan",
            reset=True,
        )
        require(X.dtype == np.float64, "float32 X")
        require(np.isfinite(X).all(), "NaN in X (scikit-learn ignores it per column)")
        native = _StandardScaler().fit(X)
        self.n_samples_seen_ = np.int64(X.shape[0])
        self.mean_ = np.asarray(native.mean_, dtype=np.float64)
        if self.with_std:
            self.var_ = np.asarray(native.var_, dtype=np.float64)
            constant = _is_constant_feature(self.var_, self.mean_, self.n_samples_seen_)
            self.scale_ = _handle_zeros_in_scale(
                np.sqrt(self.var_), copy=False, constant_mask=constant
            )
        else:
            self.var_ = None
            self.scale_ = None
        return self
