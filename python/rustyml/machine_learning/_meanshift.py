from __future__ import annotations

from typing import Any

from rustyml import _native
from rustyml._base import BaseEstimator, ClusterMixin, param_constraints
from rustyml._validation import as_float_array
from rustyml.machine_learning._fitted import F64, I64, ArrayLike, Fitted, fit_fresh


class MeanShift(ClusterMixin, BaseEstimator):
    """Mean-shift clustering with a flat kernel, as scikit-learn's ``MeanShift``.

    ``bandwidth=None`` estimates it with :func:`estimate_bandwidth` (quantile 0.3). Seeds are
    the samples, the occupied ``bandwidth``-wide bins (``bin_seeding``) or ``seeds``. Centers
    come best first (most samples within the bandwidth); with ``cluster_all=False`` samples
    farther than the bandwidth from every center get ``-1``.
    """

    _native_class = _native.machine_learning.MeanShift
    _param_constraints = param_constraints(
        {
            "bandwidth": ("real", "none"),
            "min_bin_freq": ("int",),
            "max_iter": ("int",),
        }
    )

    def __init__(
        self,
        *,
        bandwidth: float | None = None,
        seeds: ArrayLike | None = None,
        bin_seeding: bool = False,
        min_bin_freq: int = 1,
        cluster_all: bool = True,
        max_iter: int = 300,
    ) -> None:
        self._store_params(locals())

    def fit(self, X: ArrayLike, y: object = None) -> MeanShift:
        """Cluster ``X`` (n_samples, n_features). Returns ``self``."""
        fit_fresh(self, X)
        return self

    def _new_native(self) -> Any:
        params = self.get_params()
        if params["seeds"] is not None:
            params["seeds"] = as_float_array(params["seeds"], "seeds", 2)
        return self._build_native(**params)

    def predict(self, X: ArrayLike) -> I64:
        """Index of the closest center for each row of ``X``."""
        return self._check_fitted().predict(as_float_array(X, "X", 2))

    cluster_centers_ = Fitted[F64]()
    labels_ = Fitted[I64]()
    n_iter_ = Fitted[int]()
    bandwidth_ = Fitted[float]("The bandwidth the fit used (given or estimated).")


def estimate_bandwidth(X: ArrayLike, *, quantile: float = 0.3) -> float:
    """Mean distance of each sample to its ``max(1, int(n * quantile))``-th nearest sample
    (itself first), as scikit-learn's ``estimate_bandwidth`` on all samples."""
    return _native.machine_learning.estimate_bandwidth(as_float_array(X, "X", 2), quantile)
