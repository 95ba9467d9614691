from __future__ import annotations

from typing import Literal

import numpy as np

from rustyml import _native
from rustyml._base import BaseEstimator, ClassifierMixin, param_constraints
from rustyml._validation import as_float_array, fit_array
from rustyml.machine_learning._fitted import F64, ArrayLike, Fitted
from rustyml.machine_learning._labels import decode_labels, fitted_classes, prepare_labels


class LDA(ClassifierMixin, BaseEstimator):
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
        self.solver = solver
        self.n_components = n_components
        self.priors = priors
        self.tol = tol

    def fit(self, X: ArrayLike, y: ArrayLike) -> LDA:
        """Fit to ``X`` (n_samples, n_features) and labels ``y``. Returns ``self``."""
        X = fit_array(X)
        y_labels = y
        y, classes = prepare_labels(y, self)
        params = self.get_params()
        if self.priors is not None:
            params["priors"] = [float(p) for p in np.ravel(self.priors)]
        native = self._build_native(**params)
        native.fit(X, y)
        self._native = native
        self.classes_ = fitted_classes(y_labels, native.classes_, classes)
        self._encoded = classes is not None
        self.n_features_in_ = X.shape[1]
        return self

    def transform(self, X: ArrayLike) -> F64:
        """Project ``X`` onto the discriminant directions, shape (n, n_components)."""
        return self._check_fitted().transform(as_float_array(X, "X", 2))

    def fit_transform(self, X: ArrayLike, y: ArrayLike) -> F64:
        """``fit(X, y).transform(X)``."""
        return self.fit(X, y).transform(X)

    def decision_function(self, X: ArrayLike) -> F64:
        """Class scores: shape (n,) for two classes (positive favours ``classes_[1]``),
        (n, n_classes) otherwise."""
        scores = self._check_fitted().decision_function(as_float_array(X, "X", 2))
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict_proba(self, X: ArrayLike) -> F64:
        """Class probabilities, shape (n, n_classes)."""
        return self._check_fitted().predict_proba(as_float_array(X, "X", 2))

    def predict_log_proba(self, X: ArrayLike) -> F64:
        """Natural log of ``predict_proba``."""
        return np.log(self.predict_proba(X))

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predicted labels for ``X``."""
        pred = self._check_fitted().predict(as_float_array(X, "X", 2))
        return decode_labels(pred, self.classes_, self._encoded)

    means_ = Fitted[F64]()
    priors_ = Fitted[F64]()
    xbar_ = Fitted[F64]()
    scalings_ = Fitted[F64]()
    explained_variance_ratio_ = Fitted[F64]()
    coef_ = Fitted[F64]()
    intercept_ = Fitted[F64]()


LinearDiscriminantAnalysis = LDA
