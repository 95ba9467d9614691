from __future__ import annotations

from typing import Literal

import numpy as np

from rustyml import _native
from rustyml._base import BaseEstimator, ClassifierMixin, param_constraints
from rustyml._validation import as_float_array, fit_array
from rustyml.machine_learning._fitted import F64, I64, ArrayLike, Fitted
from rustyml.machine_learning._labels import decode_labels, fitted_classes, prepare_labels


class LogisticRegression(ClassifierMixin, BaseEstimator):
    """Logistic regression: binary, or multinomial (softmax) for more than two classes.

    Minimises ``mean(log-loss) + penalty / (C n)`` (the same minimiser as scikit-learn's
    ``C * sum(log-loss) + penalty``), with ``penalty`` ``"l2"`` (``|w|^2 / 2``), ``"l1"``
    (``|w|_1``) or ``None``; intercepts are not penalised. ``solver="lbfgs"`` runs L-BFGS (the
    orthant-wise variant OWL-QN for ``"l1"``) until the largest gradient entry is at most
    ``tol``, like scikit-learn's ``lbfgs``; ``solver="gradient_descent"`` takes fixed steps of
    ``learning_rate`` (proximal for ``"l1"``). Labels may be any numbers or strings.
    """

    _native_class = _native.machine_learning.LogisticRegression
    _param_constraints = param_constraints(
        {
            "C": ("real",),
            "max_iter": ("int",),
            "tol": ("real",),
            "learning_rate": ("real>0",),
        }
    )

    def __init__(
        self,
        penalty: Literal["l1", "l2"] | None = "l2",
        C: float = 1.0,
        fit_intercept: bool = True,
        max_iter: int = 100,
        tol: float = 1e-4,
        solver: Literal["lbfgs", "gradient_descent"] = "lbfgs",
        learning_rate: float = 0.1,
    ) -> None:
        self.penalty = penalty
        self.C = C
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver
        self.learning_rate = learning_rate

    def fit(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> LogisticRegression:
        """Fit to ``X`` (n_samples, n_features) and labels ``y``. Returns ``self``.

        ``sample_weight`` (one finite weight ``>= 0`` per sample, positive sum) weights each
        sample's loss; the penalty is then divided by the weight sum instead of ``n`` (the
        minimiser of ``C * sum(weight * log-loss) + penalty``, as in scikit-learn)."""
        X = fit_array(X)
        y_labels = y
        y, classes = prepare_labels(y, self)
        native = self._build_native(**self.get_params())
        if sample_weight is None:
            native.fit(X, y)
        else:
            sample_weight = as_float_array(sample_weight, "sample_weight", 1)
            if sample_weight.size and not np.any(sample_weight):
                # The engine refuses a zero sum too; this is scikit-learn's wording.
                raise ValueError("sample_weight must not be all zero: no sample would count")
            native.fit_weighted(X, y, sample_weight)
        self._native = native
        self.classes_ = fitted_classes(y_labels, native.classes_, classes)
        self._encoded = classes is not None
        self.n_features_in_ = X.shape[1]
        return self

    def decision_function(self, X: ArrayLike) -> F64:
        """Scores ``X @ coef_.T + intercept_``: shape (n,) for two classes (positive favours
        ``classes_[1]``), (n, n_classes) otherwise."""
        scores = self._check_fitted().decision_function(as_float_array(X, "X", 2))
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict_proba(self, X: ArrayLike) -> F64:
        """Class probabilities, shape (n, n_classes), columns in ``classes_`` order."""
        return self._check_fitted().predict_proba(as_float_array(X, "X", 2))

    def predict_log_proba(self, X: ArrayLike) -> F64:
        """Natural log of ``predict_proba``."""
        return np.log(self.predict_proba(X))

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predicted labels for ``X``."""
        pred = self._check_fitted().predict(as_float_array(X, "X", 2))
        return decode_labels(pred, self.classes_, self._encoded)

    coef_ = Fitted[F64]("Shape (1, n_features) for two classes, (n_classes, n_features) otherwise.")
    intercept_ = Fitted[F64]()

    @property
    def n_iter_(self) -> I64:
        return np.array([self._check_fitted().n_iter_])
