from __future__ import annotations

from typing import Any, Literal

from rustyml import _native
from rustyml._base import BaseEstimator, ClusterMixin, param_constraints, validate_params
from rustyml._validation import as_float_array, fit_array
from rustyml.machine_learning._fitted import (
    F64,
    I32,
    ArrayLike,
    Fitted,
    fit_fresh,
    partial_fit_step,
)


class KMeans(ClusterMixin, BaseEstimator):
    """K-means clustering (Lloyd's algorithm), as scikit-learn's ``KMeans``.

    ``init`` is ``"k-means++"`` (greedy, ``2 + ln k`` local trials), ``"random"`` or an array
    of initial centers (then one run). ``n_init`` runs are made and the one with the lowest
    inertia kept; ``"auto"`` means one run for k-means++ and an array, ten for random. The
    tolerance is relative to the mean feature variance. ``random_state`` (an integer) makes
    fits reproducible, at any thread count.
    """

    _native_class = _native.machine_learning.KMeans
    _partial_native_class = _native.machine_learning.MiniBatchKMeans
    _param_constraints = param_constraints(
        {
            "n_clusters": ("int",),
            "n_init": ("str", "int"),
            "max_iter": ("int",),
            "tol": ("real",),
            "random_state": ("int", "none"),
        }
    )

    def __init__(
        self,
        n_clusters: int = 8,
        *,
        init: Literal["k-means++", "random"] | ArrayLike = "k-means++",
        n_init: int | Literal["auto"] = 10,
        max_iter: int = 300,
        tol: float = 1e-4,
        random_state: int | None = None,
    ) -> None:
        self._store_params(locals())

    def fit(self, X: ArrayLike, y: object = None) -> KMeans:
        """Cluster ``X`` (n_samples, n_features). Returns ``self``."""
        fit_fresh(self, X)
        return self

    def _new_native(self) -> Any:
        params = self.get_params()
        if not isinstance(params["init"], str):
            params["init"] = as_float_array(params["init"], "init", 2)
        return self._build_native(**params)

    def partial_fit(self, X: ArrayLike, y: object = None) -> KMeans:
        """One mini-batch update with the batch ``X``, as scikit-learn's
        ``MiniBatchKMeans.partial_fit``: the first call seeds the centers from ``X`` (``init``,
        ``random_state``; after ``fit``, from its centers); each call labels ``X`` against the
        current centers and moves every center to the mean of all the samples it has absorbed
        so far. ``labels_`` and ``inertia_`` are the last batch's; ``n_steps_`` counts the
        calls. Centers that attract few samples are not reassigned (scikit-learn's
        ``reassignment_ratio=0``). Returns ``self``."""
        return partial_fit_step(self, X, self._start_mini_batches)

    def _start_mini_batches(self, X: ArrayLike, fitted: Any) -> Any:
        """The mini-batch engine of a first ``partial_fit``, seeded from ``fitted``'s centers
        after a ``fit``."""
        X = fit_array(X)
        params = self.get_params()
        init = params["init"]
        if fitted is not None:
            init = fitted.cluster_centers_
        elif not isinstance(init, str):
            init = as_float_array(init, "init", 2)
        validate_params(self)
        fresh = self._partial_native_class(
            n_clusters=params["n_clusters"], init=init, random_state=params["random_state"]
        )
        return fresh, X

    def predict(self, X: ArrayLike) -> I32:
        """Index of the closest center for each row of ``X``."""
        return self._check_fitted().predict(as_float_array(X, "X", 2))

    def transform(self, X: ArrayLike) -> F64:
        """Euclidean distances of each row of ``X`` to each center."""
        return self._check_fitted().transform(as_float_array(X, "X", 2))

    def fit_transform(self, X: ArrayLike, y: object = None) -> F64:
        """Fit to ``X`` and return its distances to the centers."""
        return self.fit(X).transform(X)

    def score(self, X: ArrayLike, y: object = None) -> float:
        """Opposite of the inertia of ``X`` against the fitted centers."""
        return self._check_fitted().score(as_float_array(X, "X", 2))

    cluster_centers_ = Fitted[F64]()
    labels_ = Fitted[I32]()
    inertia_ = Fitted[float]()
    n_iter_ = Fitted[int]()
    rounding_decided_ = Fitted[bool](
        "Whether the kept run made a decision within rounding of its threshold (a sample "
        "nearly as close to another center, the stop at the tolerance, an empty cluster "
        "relocated): another implementation, such as scikit-learn's, may end elsewhere."
    )
    n_steps_ = Fitted[int]("Mini-batch steps made by ``partial_fit``.")
