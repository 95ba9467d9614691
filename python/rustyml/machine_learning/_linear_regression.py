from __future__ import annotations

from typing import Literal

from rustyml import _native
from rustyml._base import BaseEstimator, RegressorMixin, param_constraints
from rustyml._validation import as_float_array, fit_array, target_array
from rustyml.machine_learning._fitted import F64, ArrayLike, Fitted


class LinearRegression(RegressorMixin, BaseEstimator):
    """Least-squares linear regression.

    ``solver="normal"`` solves the normal equations in closed form (ridge when
    ``penalty="l2"``: minimises ``|y - Xw - b|^2 + alpha |w|^2`` like scikit-learn's ``Ridge``).
    ``solver="gradient_descent"`` runs full-batch gradient descent on the halved mean squared
    error with ``penalty`` None, ``"l2"`` (same minimiser as the closed form) or ``"l1"``
    (``alpha |w|_1``, scikit-learn's ``Lasso`` objective, solved by proximal steps).
    """

    _native_class = _native.machine_learning.LinearRegression
    _param_constraints = param_constraints(
        {
            "alpha": ("real",),
            "learning_rate": ("real>0",),
            "max_iter": ("int",),
            "tol": ("real>=0",),
        }
    )

    def __init__(
        self,
        fit_intercept: bool = True,
        solver: Literal["normal", "gradient_descent"] = "normal",
        penalty: Literal["l1", "l2"] | None = None,
        alpha: float = 0.0,
        learning_rate: float = 0.01,
        max_iter: int = 1000,
        tol: float = 1e-6,
    ) -> None:
        self._store_params(locals())

    def fit(self, X: ArrayLike, y: ArrayLike) -> LinearRegression:
        """Fit to ``X`` (n_samples, n_features) and ``y`` (n_samples,). Returns ``self``."""
        X = fit_array(X)
        y = target_array(y, self)
        native = self._build_native(**self.get_params())
        native.fit(X, y)
        self._native = native
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X: ArrayLike) -> F64:
        """Predicted targets for ``X``."""
        native = self._check_fitted()
        return native.predict(as_float_array(X, "X", 2))

    coef_ = Fitted[F64]()
    intercept_ = Fitted[float]()

    @property
    def n_iter_(self) -> int:
        """Gradient-descent iterations run; 1 for the closed-form solvers, which solve once
        (scikit-learn's convention: an estimator with ``max_iter`` reports at least one)."""
        native = self._check_fitted()
        return native.n_iter_ if self.solver == "gradient_descent" else 1
