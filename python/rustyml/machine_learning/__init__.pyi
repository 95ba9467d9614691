from typing import Literal

import numpy as np
import numpy.typing as npt
from typing_extensions import TypeAlias

ArrayLike = npt.ArrayLike
F64: TypeAlias = npt.NDArray[np.float64]

class LinearRegression:
    fit_intercept: bool
    solver: Literal["normal", "gradient_descent"]
    penalty: Literal["l1", "l2"] | None
    alpha: float
    learning_rate: float
    max_iter: int
    tol: float
    coef_: F64
    intercept_: float
    n_iter_: int
    n_features_in_: int
    def __init__(
        self,
        fit_intercept: bool = True,
        solver: Literal["normal", "gradient_descent"] = "normal",
        penalty: Literal["l1", "l2"] | None = None,
        alpha: float = 0.0,
        learning_rate: float = 0.01,
        max_iter: int = 1000,
        tol: float = 1e-6,
    ) -> None: ...
    def fit(self, X: ArrayLike, y: ArrayLike) -> LinearRegression: ...
    def predict(self, X: ArrayLike) -> F64: ...
    def score(self, X: ArrayLike, y: ArrayLike) -> float: ...
    def get_params(self, deep: bool = True) -> dict: ...
    def set_params(self, **params) -> LinearRegression: ...
    def save(self, path) -> None: ...
    @classmethod
    def load(cls, path) -> LinearRegression: ...
