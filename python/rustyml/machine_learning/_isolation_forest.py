from rustyml import _native
from rustyml._base import BaseEstimator, param_constraints
from rustyml._validation import as_float_array, fit_array


class IsolationForest(BaseEstimator):
    """Isolation Forest outlier detection, with scikit-learn's definitions.

    Each of ``n_estimators`` trees isolates a subsample of ``max_samples`` points (``"auto"``:
    ``min(256, n_samples)``; an int: that many; a float: that fraction) by random splits.
    ``score_samples`` is ``-2 ** (-E[h(x)] / c(max_samples_))`` (lower is more abnormal),
    ``offset_`` is ``-0.5`` for ``contamination="auto"`` or the ``contamination`` percentile of
    the training scores, ``decision_function = score_samples - offset_`` and ``predict`` gives
    -1 for outliers (negative decision) and 1 for inliers. Trees draw per-tree seeds up front,
    so ``random_state`` fixes the result at any thread count.
    """

    _estimator_type = "outlier_detector"
    _native_class = _native.machine_learning.IsolationForest
    _param_constraints = param_constraints(
        {
            "n_estimators": ("int",),
            "max_samples": ("str", "int", "real"),
            "contamination": ("str", "real"),
            "random_state": ("int", "none"),
        }
    )

    def __init__(
        self, n_estimators=100, max_samples="auto", contamination="auto", random_state=None
    ):
        self.n_estimators = n_estimators
        self.max_samples = max_samples
        self.contamination = contamination
        self.random_state = random_state

    def fit(self, X, y=None):
        """Grow the forest on ``X`` (``y`` is ignored). Returns ``self``."""
        X = fit_array(X)
        native = self._build_native(
            self.n_estimators, self.max_samples, self.contamination, self.random_state
        )
        native.fit(X)
        self._native = native
        self.n_features_in_ = X.shape[1]
        return self

    def score_samples(self, X):
        """Opposite of the anomaly score: in [-1, 0), lower is more abnormal."""
        return self._check_fitted().score_samples(as_float_array(X, "X", 2))

    def decision_function(self, X):
        """``score_samples(X) - offset_``: negative for outliers."""
        return self._check_fitted().decision_function(as_float_array(X, "X", 2))

    def predict(self, X):
        """1 for inliers, -1 for outliers."""
        return self._check_fitted().predict(as_float_array(X, "X", 2))

    def fit_predict(self, X, y=None):
        """``fit(X)`` then ``predict(X)``."""
        return self.fit(X).predict(X)

    @property
    def offset_(self):
        return self._check_fitted().offset_

    @property
    def max_samples_(self):
        return self._check_fitted().max_samples_
