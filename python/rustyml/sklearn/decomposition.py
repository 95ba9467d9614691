"""``sklearn.decomposition`` with rustyml's engine behind PCA.

``PCA`` fits natively where scikit-learn would take an exact solver (``svd_solver`` "full"
or "covariance_eigh", or "auto" resolving to one of them, or "arpack" run to machine
precision, ``tol=0``, on at most 1,000 features with the kept components' eigenvalues
apart from the rest) on dense, tall input
(``n_samples >= n_features``): the engine returns the whole spectrum of the covariance
(signs as scikit-learn's ``svd_flip`` sets them), and the rest (``n_components`` as an int,
a variance fraction or "mle", ``noise_variance_``, truncation) follows scikit-learn's
definitions here. Transform, inverse transform and scoring are scikit-learn's own, on those
attributes.
"""

import numpy as np
from scipy.sparse import issparse
from sklearn import decomposition as _sk
from sklearn.decomposition._pca import _infer_dimension
from sklearn.utils import check_random_state
from sklearn.utils._arpack import _init_arpack_v0
from sklearn.utils.validation import validate_data

from rustyml.machine_learning import PCA as _PCA
from rustyml.sklearn._dispatch import native_path, require

__all__ = ["PCA"]

_SkPCA = _sk.PCA
# Above this many features the whole spectrum costs more than ARPACK's few components.
_ARPACK_MAX_FEATURES = 1_000
# The kept and the dropped eigenvalues must be apart by more than this (relative to the
# largest) for ARPACK's subspace to be rounding's choice-free.
_MIN_GAP = 1e-6


def _exact_solver(est, X):
    """scikit-learn's solver choice for dense ``X`` when it is an exact one, else None."""
    n_samples, n_features = X.shape
    n_components = min(X.shape) if est.n_components is None else est.n_components
    solver = est.svd_solver
    if solver == "auto":
        if n_features <= 1_000 and n_samples >= 10 * n_features:
            return "covariance_eigh"
        if max(X.shape) <= 500 or n_components == "mle":
            return "full"
        if 1 <= n_components < 0.8 * min(X.shape):
            return None  # randomized
        return "full"
    if solver == "arpack" and est.tol == 0 and n_features <= _ARPACK_MAX_FEATURES:
        # ARPACK run to machine precision (tol=0) finds the exact leading subspace: the
        # whole spectrum's first components, when the spectrum is split cleanly there
        return "arpack"
    return solver if solver in ("full", "covariance_eigh") else None


class PCA(_SkPCA):
    __doc__ = _SkPCA.__doc__

    @native_path(_SkPCA.fit, fits=True)
    def fit(self, X, y=None):
        self._fit_native(X)
        return self

    @native_path(_SkPCA.fit_transform, fits=True)
    def fit_transform(self, X, y=None):
        X = self._fit_native(X)
        return self.transform(X)

    def _fit_native(self, X):
        self._validate_params()
        require(not issparse(X), "sparse X")
        X = validate_data(self, X, dtype=[np.float64, np.float32], ensure_2d=True, copy=False)
        require(isinstance(X, np.ndarray), "sparse X")
        n_samples, n_features = X.shape
        solver = _exact_solver(self, X)
        require(
            solver is not None, f"svd_solver={self.svd_solver!r} resolves to an approximate solver"
        )
        require(n_samples >= n_features, "fewer samples than features")
        require(n_samples >= 2, "a single sample")
        n_components = min(X.shape) if self.n_components is None else self.n_components
        if solver == "arpack":
            # scikit-learn's own errors for the rest
            require(
                isinstance(n_components, (int, np.integer)) and 1 <= n_components < n_features,
                f"n_components={n_components!r} with svd_solver='arpack'",
            )
        if n_components == "mle":
            pass
        elif not 0 <= n_components <= min(n_samples, n_features):
            raise ValueError(
                f"n_components={n_components} must be between 0 and "
                f"min(n_samples, n_features)={min(n_samples, n_features)} with "
                f"svd_solver={solver!r}"
            )
        native = _PCA(n_components=None).fit(np.asarray(X, dtype=np.float64))
        variance = np.maximum(np.asarray(native.explained_variance_, dtype=np.float64), 0.0)
        components = np.asarray(native.components_, dtype=np.float64)
        require(len(variance) == n_features, "the engine returned a truncated spectrum")
        dtype = X.dtype
        ratio = variance / variance.sum()
        if solver == "arpack":
            gap = variance[n_components - 1] - variance[n_components]
            require(gap > _MIN_GAP * variance[0], "a near-tie at the last component kept")
            # ARPACK's start vector is drawn from random_state: draw it, so that a shared
            # RandomState advances as in scikit-learn
            _init_arpack_v0(min(X.shape), check_random_state(self.random_state))
        if n_components == "mle":
            n_components = _infer_dimension(variance, n_samples)
        elif 0 < n_components < 1.0:
            n_components = int(np.searchsorted(np.cumsum(ratio), n_components, side="right") + 1)
        self._fit_svd_solver = solver
        self.mean_ = np.asarray(native.mean_, dtype=dtype)
        if n_components < min(n_features, n_samples):
            self.noise_variance_ = dtype.type(variance[n_components:].mean())
        else:
            self.noise_variance_ = 0.0
        self.n_samples_ = n_samples
        self.n_components_ = n_components
        self.components_ = components[:n_components].astype(dtype, copy=True)
        self.explained_variance_ = variance[:n_components].astype(dtype, copy=True)
        self.explained_variance_ratio_ = ratio[:n_components].astype(dtype, copy=True)
        self.singular_values_ = np.sqrt(variance[:n_components] * (n_samples - 1)).astype(dtype)
        return X
