from __future__ import annotations

from typing import Literal

import numpy as np

from rustyml import _native
from rustyml._base import (
    BaseEstimator,
    ClassifierMixin,
    RegressorMixin,
    available_if,
    param_constraints,
)
from rustyml._validation import as_float_array, fit_array, target_array
from rustyml.machine_learning._fitted import F64, ArrayLike, Fitted
from rustyml.machine_learning._labels import decode_labels, fitted_classes, prepare_labels


class DecisionTree(BaseEstimator):
    """Decision tree classifier (``is_classifier=True``) or regressor.

    ``algorithm`` picks the classification criterion: ``"cart"`` (gini impurity), ``"id3"``
    (information gain) or ``"c45"`` (gain ratio among splits of at least average gain). All
    splits are binary thresholds at midpoints between consecutive distinct values; a sample
    goes left when ``x[feature] <= threshold``. Regression trees minimise the squared error
    whatever ``algorithm`` says. ``random_state`` only reorders features to break ties between
    equally good splits; ``None`` keeps the lowest feature index, so every fit is reproducible.
    """

    _native_class = _native.machine_learning.DecisionTree
    _param_constraints = param_constraints(
        {
            "max_depth": ("int", "none"),
            "min_samples_split": ("int",),
            "min_samples_leaf": ("int",),
            "random_state": ("int", "none"),
        }
    )

    def __init__(
        self,
        algorithm: Literal["cart", "id3", "c45"] = "cart",
        is_classifier: bool = True,
        max_depth: int | None = None,
        min_samples_split: int = 2,
        min_samples_leaf: int = 1,
        random_state: int | None = None,
    ) -> None:
        self._store_params(locals())

    @property
    def _estimator_type(self) -> str:
        return "classifier" if self.is_classifier else "regressor"

    def fit(self, X: ArrayLike, y: ArrayLike) -> DecisionTree:
        """Fit to ``X`` (n_samples, n_features) and ``y`` (labels or targets). Returns ``self``."""
        X = fit_array(X)
        native = self._build_native(**self.get_params())
        if self.is_classifier:
            y_native, encoded = prepare_labels(y, self)
            native.fit(X, y_native)
            self.classes_ = fitted_classes(y, native.classes_, encoded)
            self.n_classes_ = len(self.classes_)
            self._encoded_labels = encoded is not None
        else:
            native.fit(X, target_array(y, self))
        self._native = native
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predicted class labels (classifier) or values (regressor)."""
        native = self._check_fitted()
        pred = native.predict(as_float_array(X, "X", 2))
        if self.is_classifier:
            return decode_labels(pred, self.classes_, self._encoded_labels)
        return pred

    @available_if(lambda self: self.is_classifier, "only when is_classifier=True")
    def predict_proba(self, X: ArrayLike) -> F64:
        """Class probabilities (n_samples, n_classes), columns in ``classes_`` order (only
        when ``is_classifier=True``)."""
        native = self._check_fitted()
        return native.predict_proba(as_float_array(X, "X", 2))

    def score(self, X: ArrayLike, y: ArrayLike) -> float:
        """Accuracy (classifier) or R² (regressor) of ``predict(X)`` against ``y``."""
        mixin = ClassifierMixin if self.is_classifier else RegressorMixin
        return mixin.score(self, X, y)

    def get_depth(self) -> int:
        """Depth of the tree (0 for a single leaf)."""
        return self._check_fitted().get_depth()

    def get_n_leaves(self) -> int:
        """Number of leaves."""
        return self._check_fitted().get_n_leaves()

    @property
    def node_count_(self) -> int:
        return self._check_fitted().node_count

    feature_importances_ = Fitted[F64]()
