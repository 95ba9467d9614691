from __future__ import annotations

from typing import Any, Literal, Optional

from rustyml import _native
from rustyml._base import BaseEstimator, param_constraints
from rustyml._validation import as_float_array
from rustyml.machine_learning._fitted import F64, ArrayLike, Fitted, fit_fresh


class KernelPCA(BaseEstimator):
    """Kernel principal component analysis, following scikit-learn's ``KernelPCA``.

    ``kernel``: ``"linear"``, ``"poly"``, ``"rbf"``, ``"sigmoid"`` or ``"cosine"``;
    ``gamma=None`` means ``1 / n_features``. The kernel matrix is centered in feature space and
    its top eigenpairs kept (``n_components=None`` keeps every positive eigenvalue). Eigenvector
    signs follow scikit-learn's ``svd_flip`` (largest-magnitude entry positive).
    """

    _native_class = _native.machine_learning.KernelPCA
    _param_constraints = param_constraints(
        {
            "n_components": ("int", "none"),
            "gamma": ("real", "none"),
            "degree": ("int",),
            "coef0": ("real",),
        }
    )

    def __init__(
        self,
        n_components: int | None = None,
        kernel: Literal["linear", "poly", "rbf", "sigmoid", "cosine"] = "linear",
        gamma: float | None = None,
        degree: int = 3,
        coef0: float = 1,
    ) -> None:
        self._store_params(locals())

    def _new_native(self) -> Any:
        if not isinstance(self.kernel, str):
            raise TypeError(
                f"kernel must be one of 'linear', 'poly', 'rbf', 'sigmoid', 'cosine', got "
                f"{type(self.kernel).__name__}"
            )
        return self._build_native(**self.get_params())

    def fit(self, X: ArrayLike, y: object = None) -> KernelPCA:
        """Fit to ``X`` (n_samples, n_features). Returns ``self``."""
        fit_fresh(self, X)
        return self

    def fit_transform(self, X: ArrayLike, y: object = None) -> F64:
        """Fit, then return ``eigenvectors_ * sqrt(eigenvalues_)``."""
        return fit_fresh(self, X, "fit_transform")

    def transform(self, X: ArrayLike) -> F64:
        """Project ``X`` onto the fitted components."""
        return self._check_fitted().transform(as_float_array(X, "X", 2))

    eigenvalues_ = Fitted[F64]()
    eigenvectors_ = Fitted[F64]()
    X_fit_ = Fitted[F64]()
    gamma_ = Fitted[Optional[float]]()
