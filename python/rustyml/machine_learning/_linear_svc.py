from __future__ import annotations

from typing import Literal

from rustyml import _native
from rustyml._base import param_constraints
from rustyml.machine_learning._fitted import F64, ArrayLike, Fitted
from rustyml.machine_learning._labels import LabelClassifier


class LinearSVC(LabelClassifier):
    """Linear support vector classifier with the squared hinge loss (liblinear's default).

    Minimises ``penalty(w) + C * sum(max(0, 1 - y (w.x + b))^2)`` with ``penalty``
    ``"l2"`` (``|w|^2 / 2``) or ``"l1"`` (``|w|_1``), one-vs-rest for more than two classes.
    As in liblinear, the intercept is the weight of a constant feature of value
    ``intercept_scaling`` and is penalised like the other weights. Solved in the primal by
    L-BFGS (OWL-QN for ``"l1"``) until the largest gradient entry of the objective scaled by
    ``1 / (C n)`` is at most ``tol``.
    """

    _native_class = _native.machine_learning.LinearSVC
    _param_constraints = param_constraints(
        {
            "C": ("real",),
            "intercept_scaling": ("real",),
            "max_iter": ("int",),
            "tol": ("real",),
        }
    )

    def __init__(
        self,
        penalty: Literal["l1", "l2"] = "l2",
        C: float = 1.0,
        fit_intercept: bool = True,
        intercept_scaling: float = 1.0,
        max_iter: int = 1000,
        tol: float = 1e-4,
    ) -> None:
        self._store_params(locals())

    def fit(self, X: ArrayLike, y: ArrayLike) -> LinearSVC:
        """Fit to ``X`` (n_samples, n_features) and labels ``y``. Returns ``self``."""
        return self._fit_labels(X, y)

    def decision_function(self, X: ArrayLike) -> F64:
        """Signed distances: shape (n,) for two classes (positive favours ``classes_[1]``),
        (n, n_classes) otherwise."""
        return self._decision_scores(X)

    coef_ = Fitted[F64]()
    intercept_ = Fitted[F64]()
    n_iter_ = Fitted[int]()
