"""What every wrapper of a native model shares: fitted attributes declared once, with their
type, and the array types the estimators take and return."""

from __future__ import annotations

from typing import Any, Generic, TypeVar, overload

import numpy as np
import numpy.typing as npt

from rustyml._validation import as_float_array, fit_array

ArrayLike = npt.ArrayLike
F64 = npt.NDArray[np.float64]
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]

T = TypeVar("T")


class Fitted(Generic[T]):
    """A fitted attribute read from the native model under the same name, e.g.
    ``coef_ = Fitted[F64]("doc")``: before ``fit`` it raises ``NotFittedError``; type checkers
    see ``T`` on an instance."""

    def __init__(self, doc: str = "") -> None:
        self.__doc__ = doc
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Fitted[T]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...
    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return getattr(obj._check_fitted(), self.name)

    def __set__(self, obj: Any, value: Any) -> None:
        # read-only, as the properties it replaces: a fitted attribute comes from the model
        raise AttributeError(f"can't set attribute {self.name!r}: it is read from the fitted model")


def fit_fresh(estimator: Any, X: ArrayLike, method: str = "fit") -> Any:
    """Run ``method`` (``"fit"``, ``"fit_transform"``) of a fresh native model
    (``estimator._new_native()``) on the validated ``X`` and return its result; the estimator
    keeps the model and ``n_features_in_`` only once that succeeds."""
    X = fit_array(X)
    native = estimator._new_native()
    out = getattr(native, method)(X)
    estimator._native = native
    estimator.n_features_in_ = X.shape[1]
    return out


def partial_fit_step(estimator: Any, X: ArrayLike, start: Any) -> Any:
    """One ``partial_fit`` call: an incremental native model (``_partial_native_class``) goes
    on with the batch ``X``; otherwise ``start(X, fitted)`` (``fitted``: the model a ``fit``
    left, or ``None``) returns a fresh one and the validated ``X``, and the estimator keeps it
    once its first batch succeeds. Returns the estimator."""
    native = estimator.__dict__.get("_native")
    if isinstance(native, estimator._partial_native_class):
        native.partial_fit(as_float_array(X, "X", 2))
        return estimator
    fresh, X = start(X, native)
    fresh.partial_fit(X)
    estimator._native = fresh
    estimator.n_features_in_ = X.shape[1]
    return estimator
