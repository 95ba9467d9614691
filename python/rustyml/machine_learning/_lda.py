from __future__ import annotations

from typing import Literal

import numpy as np

from rustyml import _native
from rustyml._base import param_constraints
from rustyml._validation import as_float_array
from rustyml.machine_learning._fitted import F64, ArrayLike, Fitted
from rustyml.machine_learning._labels import LabelClassifier


class LDA(LabelClassifier):
    """Linear discriminant analysis, like scikit-learn's ``LinearDiscriminantAnalysis``.

    A classifier with a covariance shared by all classes, and a supervised projection
    (``transform``) onto at most ``min(n_classes - 1, n_features)`` discriminant directions.
    ``solver="svd"`` works with singular covariances; ``solver="eigen"`` solves the generalised
    eigenproblem and refuses a singular within-class covariance. No shrinkage.
    """

    _native_class = _native.machine_learning.LDA
    _param_constraints = param_constraints(
        {
            "n_components": ("int", "none"),
            "tol": ("real",),
        }
    )

    def __init__(
        self,
        solver: Literal["svd", "eigen"] = "svd",
        n_components: int | None = None,
        priors: ArrayLike | None = None,
        tol: float = 1e-4,
    ) -> None:
        self._store_params(locals())

    def fit(self, X: ArrayLike, y: ArrayLike) -> LDA:
        """Fit to ``X`` (n_samples, n_features) and labels ``y``. Returns ``self``."""
        return self._fit_labels(X, y)

    def _native_kwargs(self):
        params = self.get_params()
        if self.priors is not None:
            params["priors"] = [float(p) for p in np.ravel(self.priors)]
        return params

    def transform(self, X: ArrayLike) -> F64:
        """Project ``X`` onto the discriminant directions, shape (n, n_components)."""
        return self._check_fitted().transform(as_float_array(X, "X", 2))

    def fit_transform(self, X: ArrayLike, y: ArrayLike) -> F64:
        """``fit(X, y).transform(X)``."""
        return self.fit(X, y).transform(X)

    def decision_function(self, X: ArrayLike) -> F64:
        """Class scores: shape (n,) for two classes (positive favours ``classes_[1]``),
        (n, n_classes) otherwise."""
        return self._decision_scores(X)

    def predict_proba(self, X: ArrayLike) -> F64:
        """Class probabilities, shape (n, n_classes)."""
        return self._check_fitted().predict_proba(as_float_array(X, "X", 2))

    def predict_log_proba(self, X: ArrayLike) -> F64:
        """Natural log of ``predict_proba``."""
        return np.log(self.predict_proba(X))

    means_ = Fitted[F64]()
    priors_ = Fitted[F64]()
    xbar_ = Fitted[F64]()
    scalings_ = Fitted[F64]()
    explained_variance_ratio_ = Fitted[F64]()
    coef_ = Fitted[F64]()
    intercept_ = Fitted[F64]()


LinearDiscriminantAnalysis = LDA
