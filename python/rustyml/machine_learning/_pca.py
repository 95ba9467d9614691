from __future__ import annotations

from typing import Any

import numpy as np

from rustyml import _native
from rustyml._base import BaseEstimator, param_constraints
from rustyml._validation import as_float_array, fit_array
from rustyml.machine_learning._fitted import F64, ArrayLike, Fitted, fit_fresh, partial_fit_step


class PCA(BaseEstimator):
    """Principal component analysis, numerically matching scikit-learn's ``PCA``.

    ``n_components``: ``None`` keeps ``min(n_samples, n_features)`` components, an int keeps
    that many, a float in (0, 1) keeps the fewest components whose explained-variance ratios
    add up to more than it. ``whiten=True`` scales the projections to unit variance.
    Component signs follow scikit-learn's ``svd_flip``: the largest-magnitude entry of each
    component is positive.
    """

    _native_class = _native.machine_learning.PCA
    _partial_native_class = _native.machine_learning.IncrementalPCA
    _param_constraints = param_constraints(
        {
            "n_components": ("int", "real", "str", "none"),
        }
    )

    def __init__(self, n_components: float | None = None, whiten: bool = False) -> None:
        self._store_params(locals())

    def fit(self, X: ArrayLike, y: object = None) -> PCA:
        """Fit the components to ``X`` (n_samples, n_features). Returns ``self``."""
        fit_fresh(self, X)
        return self

    def fit_transform(self, X: ArrayLike, y: object = None) -> F64:
        """Fit, then return the projections of ``X``."""
        return fit_fresh(self, X, "fit_transform")

    def partial_fit(self, X: ArrayLike, y: object = None) -> PCA:
        """One incremental update with the batch ``X``, as scikit-learn's
        ``IncrementalPCA.partial_fit`` (Ross et al.'s incremental SVD): ``n_components`` must
        be an int or ``None`` (then the first batch's ``min(n_samples, n_features)``) and no
        larger than any batch. ``mean_``, ``var_`` and ``n_samples_seen_`` cover every batch
        so far. A ``partial_fit`` after ``fit`` starts afresh. Returns ``self``."""
        return partial_fit_step(self, X, self._start_incremental)

    def _start_incremental(self, X: ArrayLike, fitted: Any) -> Any:
        """The incremental engine of a first ``partial_fit`` (a ``fit`` before it is dropped)."""
        k = self.n_components
        if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1):
            raise ValueError(
                "partial_fit needs n_components as a positive int or None (as "
                f"IncrementalPCA), got {k!r}"
            )
        X = fit_array(X)
        fresh = self._partial_native_class(
            n_components=None if k is None else int(k), whiten=bool(self.whiten)
        )
        return fresh, X

    def transform(self, X: ArrayLike) -> F64:
        """Project ``X`` onto the components (whitened if ``whiten``)."""
        return self._check_fitted().transform(as_float_array(X, "X", 2))

    def inverse_transform(self, X: ArrayLike) -> F64:
        """Map projections back to feature space."""
        return self._check_fitted().inverse_transform(as_float_array(X, "X", 2))

    components_ = Fitted[F64]()
    explained_variance_ = Fitted[F64]()
    explained_variance_ratio_ = Fitted[F64]()
    singular_values_ = Fitted[F64]()
    mean_ = Fitted[F64]()
    n_components_ = Fitted[int]()
    noise_variance_ = Fitted[float]()
    n_samples_ = Fitted[int]()
    var_ = Fitted[F64]("Per-feature variance of every batch so far (after ``partial_fit``).")
    n_samples_seen_ = Fitted[int]("Samples seen by ``partial_fit``.")
