"""Shared plumbing of the scaler wrappers: fit / transform / inverse_transform delegate to the
native scaler; hyper-parameters other than ``copy`` are passed to it by keyword. Outputs are
always new float64 arrays, so ``copy`` is accepted for scikit-learn compatibility and has no
effect."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rustyml._base import BaseEstimator
from rustyml._validation import as_float_array, fit_array
from rustyml.machine_learning._fitted import F64, ArrayLike, fit_fresh

if TYPE_CHECKING:
    from typing_extensions import Self


class TransformerBase(BaseEstimator):
    """``fit`` returns ``self``; ``fit_transform`` fits and transforms in one native pass."""

    _native_params: tuple[str, ...] = ()
    _feature_names_out = "one-to-one"

    def _native_kwargs(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self._native_params}

    def _new_native(self) -> Any:
        return self._build_native(**self._native_kwargs())

    def fit(self, X: ArrayLike, y: object = None) -> Self:
        """Learn the statistics of ``X`` (n_samples, n_features). Returns ``self``."""
        fit_fresh(self, X)
        return self

    def fit_transform(self, X: ArrayLike, y: object = None) -> F64:
        """``fit(X).transform(X)``, validating and reading ``X`` once."""
        return fit_fresh(self, X, "fit_transform")

    def transform(self, X: ArrayLike, copy: bool | None = None) -> F64:
        """The transformed data as a new float64 array."""
        return self._check_fitted().transform(as_float_array(X, "X", 2))


class PartialFitMixin:
    def partial_fit(self: Any, X: ArrayLike, y: object = None) -> Any:
        """Merge the statistics of one more batch (first call fits). Returns ``self``."""
        X = fit_array(X)
        native = self.__dict__.get("_native")
        if native is None:
            native = self._new_native()
        native.partial_fit(X)
        self._native = native
        self.n_features_in_ = X.shape[1]
        return self


class InverseMixin:
    def inverse_transform(self: Any, X: ArrayLike, copy: bool | None = None) -> F64:
        """Undo ``transform``."""
        return self._check_fitted().inverse_transform(as_float_array(X, "X", 2))
