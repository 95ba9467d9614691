from rustyml import _native
from rustyml._base import BaseEstimator, ClusterMixin, param_constraints
from rustyml._validation import as_float_array, fit_array


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
        bandwidth=None,
        seeds=None,
        bin_seeding=False,
        min_bin_freq=1,
        cluster_all=True,
        max_iter=300,
    ):
        self.bandwidth = bandwidth
        self.seeds = seeds
        self.bin_seeding = bin_seeding
        self.min_bin_freq = min_bin_freq
        self.cluster_all = cluster_all
        self.max_iter = max_iter

    def fit(self, X, y=None):
        """Cluster ``X`` (n_samples, n_features). Returns ``self``."""
        X = fit_array(X)
        params = self.get_params()
        if params["seeds"] is not None:
            params["seeds"] = as_float_array(params["seeds"], "seeds", 2)
        native = self._build_native(**params)
        native.fit(X)
        self._native = native
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        """Index of the closest center for each row of ``X``."""
        return self._check_fitted().predict(as_float_array(X, "X", 2))

    @property
    def cluster_centers_(self):
        return self._check_fitted().cluster_centers_

    @property
    def labels_(self):
        return self._check_fitted().labels_

    @property
    def n_iter_(self):
        return self._check_fitted().n_iter_

    @property
    def bandwidth_(self):
        """The bandwidth the fit used (given or estimated)."""
        return self._check_fitted().bandwidth_


def estimate_bandwidth(X, *, quantile=0.3):
    """Mean distance of each sample to its ``max(1, int(n * quantile))``-th nearest sample
    (itself first), as scikit-learn's ``estimate_bandwidth`` on all samples."""
    return _native.machine_learning.estimate_bandwidth(as_float_array(X, "X", 2), quantile)
