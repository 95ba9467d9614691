from __future__ import annotations

from typing import Literal

import numpy as np

from rustyml import _native
from rustyml._base import param_constraints
from rustyml._validation import as_float_array
from rustyml.machine_learning._fitted import F64, I64, ArrayLike, Fitted
from rustyml.machine_learning._labels import LabelClassifier


class LogisticRegression(LabelClassifier):
    """Logistic regression: binary, or multinomial (softmax) for more than two classes.

    Minimises ``mean(log-loss) + penalty / (C n)`` (the same minimiser as scikit-learn's
    ``C * sum(log-loss) + penalty``), with ``penalty`` ``"l2"`` (``|w|^2 / 2``), ``"l1"``
    (``|w|_1``) or ``None``; intercepts are not penalised. ``solver="lbfgs"`` runs L-BFGS (the
    orthant-wise variant OWL-QN for ``"l1"``) until the largest gradient entry is at most
    ``tol``, like scikit-learn's ``lbfgs``; ``solver="newton-cholesky"`` (``"l2"`` or ``None``)
    takes scikit-learn's ``newton-cholesky`` steps and stopping rule, ``converged_`` false
    where scikit-learn would go on with L-BFGS; ``solver="newton-cg"`` (``"l2"`` or ``None``)
    takes scikit-learn's ``newton-cg`` steps where each line search takes its first trial,
    ``converged_`` false elsewhere; ``solver="gradient_descent"`` takes fixed
    steps of ``learning_rate`` (proximal for ``"l1"``). Labels may be any numbers or strings.
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
        solver: Literal["lbfgs", "newton-cholesky", "newton-cg", "gradient_descent"] = "lbfgs",
        learning_rate: float = 0.1,
    ) -> None:
        self._store_params(locals())

    def fit(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> LogisticRegression:
        """Fit to ``X`` (n_samples, n_features) and labels ``y``. Returns ``self``.

        ``sample_weight`` (one finite weight ``>= 0`` per sample, positive sum) weights each
        sample's loss; the penalty is then divided by the weight sum instead of ``n`` (the
        minimiser of ``C * sum(weight * log-loss) + penalty``, as in scikit-learn)."""
        if sample_weight is None:
            return self._fit_labels(X, y)

        def fit_weighted(native, X, y):
            weight = as_float_array(sample_weight, "sample_weight", 1)
            if weight.size and not np.any(weight):
                # The engine refuses a zero sum too; this is scikit-learn's wording.
                raise ValueError("sample_weight must not be all zero: no sample would count")
            native.fit_weighted(X, y, weight)

        return self._fit_labels(X, y, fit_weighted)

    def decision_function(self, X: ArrayLike) -> F64:
        """Scores ``X @ coef_.T + intercept_``: shape (n,) for two classes (positive favours
        ``classes_[1]``), (n, n_classes) otherwise."""
        return self._decision_scores(X)

    def predict_proba(self, X: ArrayLike) -> F64:
        """Class probabilities, shape (n, n_classes), columns in ``classes_`` order."""
        return self._check_fitted().predict_proba(as_float_array(X, "X", 2))

    def predict_log_proba(self, X: ArrayLike) -> F64:
        """Natural log of ``predict_proba``."""
        return np.log(self.predict_proba(X))

    coef_ = Fitted[F64]("Shape (1, n_features) for two classes, (n_classes, n_features) otherwise.")
    intercept_ = Fitted[F64]()

    @property
    def n_iter_(self) -> I64:
        return np.array([self._check_fitted().n_iter_])

    @property
    def converged_(self) -> bool:
        """Whether the solver met ``tol`` within ``max_iter``."""
        return bool(self._check_fitted().converged_)
