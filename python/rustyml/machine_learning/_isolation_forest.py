from __future__ import annotations

from typing import Literal

from rustyml import _native
from rustyml._base import BaseEstimator, param_constraints
from rustyml._validation import as_float_array
from rustyml.machine_learning._fitted import F64, I64, ArrayLike, Fitted, fit_fresh


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
        self,
        n_estimators: int = 100,
        max_samples: Literal["auto"] | float = "auto",
        contamination: Literal["auto"] | float = "auto",
        random_state: int | None = None,
    ) -> None:
        self._store_params(locals())

    def fit(self, X: ArrayLike, y: object = None) -> IsolationForest:
        """Grow the forest on ``X`` (``y`` is ignored). Returns ``self``."""
        fit_fresh(self, X)
        return self

    def score_samples(self, X: ArrayLike) -> F64:
        """Opposite of the anomaly score: in [-1, 0), lower is more abnormal."""
        return self._check_fitted().score_samples(as_float_array(X, "X", 2))

    def decision_function(self, X: ArrayLike) -> F64:
        """``score_samples(X) - offset_``: negative for outliers."""
        return self._check_fitted().decision_function(as_float_array(X, "X", 2))

    def predict(self, X: ArrayLike) -> I64:
        """1 for inliers, -1 for outliers."""
        return self._check_fitted().predict(as_float_array(X, "X", 2))

    def fit_predict(self, X: ArrayLike, y: object = None) -> I64:
        """``fit(X)`` then ``predict(X)``."""
        return self.fit(X).predict(X)

    offset_ = Fitted[float]()
    max_samples_ = Fitted[int]()
