from __future__ import annotations

from typing import Literal

from rustyml import _native
from rustyml._base import param_constraints
from rustyml.machine_learning._fitted import F64, I64, ArrayLike, Fitted
from rustyml.machine_learning._labels import LabelClassifier


class SVC(LabelClassifier):
    """C-support vector classifier with a kernel, like scikit-learn's ``SVC``.

    ``kernel`` is ``"linear"``, ``"poly"`` (``(gamma x.y + coef0)^degree``), ``"rbf"``
    (``exp(-gamma |x - y|^2)``) or ``"sigmoid"`` (``tanh(gamma x.y + coef0)``); ``gamma`` is
    ``"scale"`` (``1 / (n_features X.var())``), ``"auto"`` (``1 / n_features``) or a number.
    Each pair of classes gets its own problem (one-vs-one), solved by SMO with libsvm's
    second-order working-set selection until the KKT violation is below ``tol``;
    ``max_iter=-1`` means no cap. ``cache_size`` (MB) bounds the kernel rows kept per problem.
    """

    _native_class = _native.machine_learning.SVC
    _param_constraints = param_constraints(
        {
            "C": ("real",),
            "degree": ("int",),
            "gamma": ("str", "real"),
            "coef0": ("real",),
            "tol": ("real",),
            "cache_size": ("real",),
            "max_iter": ("int",),
        }
    )

    def __init__(
        self,
        C: float = 1.0,
        kernel: Literal["linear", "poly", "rbf", "sigmoid"] = "rbf",
        degree: int = 3,
        gamma: Literal["scale", "auto"] | float = "scale",
        coef0: float = 0.0,
        tol: float = 1e-3,
        cache_size: float = 200.0,
        max_iter: int = -1,
        decision_function_shape: Literal["ovr", "ovo"] = "ovr",
    ) -> None:
        self._store_params(locals())

    def fit(self, X: ArrayLike, y: ArrayLike) -> SVC:
        """Fit to ``X`` (n_samples, n_features) and labels ``y``. Returns ``self``."""
        return self._fit_labels(X, y)

    def decision_function(self, X: ArrayLike) -> F64:
        """Shape (n,) for two classes (positive favours ``classes_[1]``); otherwise
        (n, n_classes) for ``"ovr"`` (votes plus a bounded confidence, as scikit-learn) or
        (n, n_classes * (n_classes - 1) / 2) for ``"ovo"``."""
        return self._decision_scores(X)

    support_ = Fitted[I64]()
    support_vectors_ = Fitted[F64]()
    n_support_ = Fitted[I64]()
    dual_coef_ = Fitted[F64]()
    intercept_ = Fitted[F64]()
    n_iter_ = Fitted[I64]()

    @property
    def coef_(self) -> F64:
        """Primal weights; only for ``kernel="linear"``."""
        coef = self._check_fitted().coef_
        if coef is None:
            raise AttributeError("coef_ is only available when using a linear kernel")
        return coef

    @property
    def _gamma(self) -> float | None:
        return self._check_fitted().gamma_
