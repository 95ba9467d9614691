from __future__ import annotations

from typing import Literal

from rustyml import _native
from rustyml._base import BaseEstimator, ClusterMixin, param_constraints
from rustyml.machine_learning._fitted import F64, I64, ArrayLike, Fitted, fit_fresh

Metric = Literal["euclidean", "manhattan", "cityblock", "l1", "l2", "minkowski", "sqeuclidean"]


class DBSCAN(ClusterMixin, BaseEstimator):
    """Density-based clustering, label for label as scikit-learn's ``DBSCAN``.

    A point with at least ``min_samples`` points (itself included) within ``eps`` is a core
    point; clusters are numbered in the order of their first core point; border points join
    the first cluster that reaches them; noise is ``-1``. ``metric`` is ``"euclidean"``,
    ``"manhattan"`` or ``"minkowski"`` (with ``p``, default 2). Neighbourhoods are exact:
    a point at exactly ``eps`` is a neighbour.
    """

    _native_class = _native.machine_learning.DBSCAN
    _param_constraints = param_constraints(
        {
            "eps": ("real",),
            "min_samples": ("int",),
            "p": ("real>0", "none"),
        }
    )

    def __init__(
        self,
        eps: float = 0.5,
        *,
        min_samples: int = 5,
        metric: Metric = "euclidean",
        p: float | None = None,
    ) -> None:
        self._store_params(locals())

    def fit(self, X: ArrayLike, y: object = None) -> DBSCAN:
        """Cluster ``X`` (n_samples, n_features). Returns ``self``."""
        fit_fresh(self, X)
        return self

    labels_ = Fitted[I64]()
    core_sample_indices_ = Fitted[I64]()
    components_ = Fitted[F64]()
