from __future__ import annotations

from typing import Literal, overload

import numpy as np

from rustyml import _native
from rustyml._base import BaseEstimator, ClassifierMixin, param_constraints
from rustyml._validation import as_float_array, fit_array
from rustyml.machine_learning._fitted import F64, I64, ArrayLike, Fitted
from rustyml.machine_learning._labels import decode_labels, fitted_classes, prepare_labels

Metric = Literal[
    "minkowski", "euclidean", "manhattan", "chebyshev", "l1", "l2", "cityblock", "infinity"
]


class KNN(ClassifierMixin, BaseEstimator):
    """k-nearest-neighbours classifier (brute force).

    ``metric``: ``"minkowski"`` (scikit-learn's default) with exponent ``p`` in ``[1, inf]``:
    ``p=2`` is ``"euclidean"`` (through matrix products, like scikit-learn's brute force),
    ``p=1`` ``"manhattan"``, ``p=inf`` ``"chebyshev"``; those names are accepted too (``p`` is
    then only validated). ``p < 1`` is refused (not a distance metric).
    ``weights``: ``"uniform"`` or ``"distance"`` (inverse distance; exact matches take all the
    weight). Equal distances keep the lower training index first; vote ties go to the lowest
    class.
    """

    _native_class = _native.machine_learning.KNN
    _param_constraints = param_constraints(
        {
            "n_neighbors": ("int",),
        }
    )

    def __init__(
        self,
        n_neighbors: int = 5,
        weights: Literal["uniform", "distance"] = "uniform",
        metric: Metric = "minkowski",
        p: float = 2,
    ) -> None:
        self._store_params(locals())

    def fit(self, X: ArrayLike, y: ArrayLike) -> KNN:
        """Store the training set. Returns ``self``."""
        X = fit_array(X)
        y_native, encoded = prepare_labels(y, self)
        native = self._build_native(**self.get_params())
        native.fit(X, y_native)
        self._native = native
        self.classes_ = fitted_classes(y, native.classes_, encoded)
        self._encoded_labels = encoded is not None
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predicted class labels."""
        native = self._check_fitted()
        pred = native.predict(as_float_array(X, "X", 2))
        return decode_labels(pred, self.classes_, self._encoded_labels)

    def predict_proba(self, X: ArrayLike) -> F64:
        """Class probabilities (n_samples, n_classes), columns in ``classes_`` order."""
        return self._check_fitted().predict_proba(as_float_array(X, "X", 2))

    @overload
    def kneighbors(
        self,
        X: ArrayLike | None = None,
        n_neighbors: int | None = None,
        return_distance: Literal[True] = True,
    ) -> tuple[F64, I64]: ...
    @overload
    def kneighbors(
        self, X: ArrayLike | None, n_neighbors: int | None, return_distance: Literal[False]
    ) -> I64: ...
    def kneighbors(
        self,
        X: ArrayLike | None = None,
        n_neighbors: int | None = None,
        return_distance: bool = True,
    ) -> tuple[F64, I64] | I64:
        """Distances and indices of the nearest training samples, nearest first.

        ``X=None`` queries the training set, each sample excluded from its own neighbours.
        """
        native = self._check_fitted()
        X = None if X is None else as_float_array(X, "X", 2)
        dist, ind = native.kneighbors(X, n_neighbors)
        return (dist, ind) if return_distance else ind

    n_samples_fit_ = Fitted[int]()
