from rustyml import _native
from rustyml._base import BaseEstimator, param_constraints
from rustyml._validation import as_float_array, fit_array


class PCA(BaseEstimator):
    """Principal component analysis, numerically matching scikit-learn's ``PCA``.

    ``n_components``: ``None`` keeps ``min(n_samples, n_features)`` components, an int keeps
    that many, a float in (0, 1) keeps the fewest components whose explained-variance ratios
    add up to more than it. ``whiten=True`` scales the projections to unit variance.
    Component signs follow scikit-learn's ``svd_flip``: the largest-magnitude entry of each
    component is positive.
    """

    _native_class = _native.machine_learning.PCA
    _param_constraints = param_constraints(
        {
            "n_components": ("int", "real", "str", "none"),
        }
    )

    def __init__(self, n_components=None, whiten=False):
        self.n_components = n_components
        self.whiten = whiten

    def _new_native(self):
        native = self._build_native(**self.get_params())
        return native

    def fit(self, X, y=None):
        """Fit the components to ``X`` (n_samples, n_features). Returns ``self``."""
        X = fit_array(X)
        native = self._new_native()
        native.fit(X)
        self._native = native
        self.n_features_in_ = X.shape[1]
        return self

    def fit_transform(self, X, y=None):
        """Fit, then return the projections of ``X``."""
        X = fit_array(X)
        native = self._new_native()
        out = native.fit_transform(X)
        self._native = native
        self.n_features_in_ = X.shape[1]
        return out

    def transform(self, X):
        """Project ``X`` onto the components (whitened if ``whiten``)."""
        return self._check_fitted().transform(as_float_array(X, "X", 2))

    def inverse_transform(self, X):
        """Map projections back to feature space."""
        return self._check_fitted().inverse_transform(as_float_array(X, "X", 2))

    @property
    def components_(self):
        return self._check_fitted().components_

    @property
    def explained_variance_(self):
        return self._check_fitted().explained_variance_

    @property
    def explained_variance_ratio_(self):
        return self._check_fitted().explained_variance_ratio_

    @property
    def singular_values_(self):
        return self._check_fitted().singular_values_

    @property
    def mean_(self):
        return self._check_fitted().mean_

    @property
    def n_components_(self):
        return self._check_fitted().n_components_

    @property
    def noise_variance_(self):
        return self._check_fitted().noise_variance_

    @property
    def n_samples_(self):
        return self._check_fitted().n_samples_
