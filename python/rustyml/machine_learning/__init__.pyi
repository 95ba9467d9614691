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

I32: TypeAlias = npt.NDArray[np.int32]
I64: TypeAlias = npt.NDArray[np.int64]

class KMeans:
    n_clusters: int
    init: Literal["k-means++", "random"] | ArrayLike
    n_init: int | Literal["auto"]
    max_iter: int
    tol: float
    random_state: int | None
    cluster_centers_: F64
    labels_: I32
    inertia_: float
    n_iter_: int
    n_features_in_: int
    def __init__(
        self,
        n_clusters: int = 8,
        *,
        init: Literal["k-means++", "random"] | ArrayLike = "k-means++",
        n_init: int | Literal["auto"] = 10,
        max_iter: int = 300,
        tol: float = 1e-4,
        random_state: int | None = None,
    ) -> None: ...
    def fit(self, X: ArrayLike, y: object = None) -> KMeans: ...
    def predict(self, X: ArrayLike) -> I32: ...
    def fit_predict(self, X: ArrayLike, y: object = None) -> I32: ...
    def transform(self, X: ArrayLike) -> F64: ...
    def fit_transform(self, X: ArrayLike, y: object = None) -> F64: ...
    def score(self, X: ArrayLike, y: object = None) -> float: ...
    def get_params(self, deep: bool = True) -> dict: ...
    def set_params(self, **params) -> KMeans: ...
    def save(self, path) -> None: ...
    @classmethod
    def load(cls, path) -> KMeans: ...

class DBSCAN:
    eps: float
    min_samples: int
    metric: Literal["euclidean", "manhattan", "cityblock", "l1", "l2", "minkowski", "sqeuclidean"]
    p: float | None
    labels_: I64
    core_sample_indices_: I64
    components_: F64
    n_features_in_: int
    def __init__(
        self,
        eps: float = 0.5,
        *,
        min_samples: int = 5,
        metric: Literal[
            "euclidean", "manhattan", "cityblock", "l1", "l2", "minkowski", "sqeuclidean"
        ] = "euclidean",
        p: float | None = None,
    ) -> None: ...
    def fit(self, X: ArrayLike, y: object = None) -> DBSCAN: ...
    def fit_predict(self, X: ArrayLike, y: object = None) -> I64: ...
    def get_params(self, deep: bool = True) -> dict: ...
    def set_params(self, **params) -> DBSCAN: ...
    def save(self, path) -> None: ...
    @classmethod
    def load(cls, path) -> DBSCAN: ...

class MeanShift:
    bandwidth: float | None
    seeds: ArrayLike | None
    bin_seeding: bool
    min_bin_freq: int
    cluster_all: bool
    max_iter: int
    cluster_centers_: F64
    labels_: I64
    n_iter_: int
    bandwidth_: float
    n_features_in_: int
    def __init__(
        self,
        *,
        bandwidth: float | None = None,
        seeds: ArrayLike | None = None,
        bin_seeding: bool = False,
        min_bin_freq: int = 1,
        cluster_all: bool = True,
        max_iter: int = 300,
    ) -> None: ...
    def fit(self, X: ArrayLike, y: object = None) -> MeanShift: ...
    def predict(self, X: ArrayLike) -> I64: ...
    def fit_predict(self, X: ArrayLike, y: object = None) -> I64: ...
    def get_params(self, deep: bool = True) -> dict: ...
    def set_params(self, **params) -> MeanShift: ...
    def save(self, path) -> None: ...
    @classmethod
    def load(cls, path) -> MeanShift: ...

def estimate_bandwidth(X: ArrayLike, *, quantile: float = 0.3) -> float: ...
