from typing import Literal, overload

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

class DecisionTree:
    algorithm: Literal["cart", "id3", "c45"]
    is_classifier: bool
    max_depth: int | None
    min_samples_split: int
    min_samples_leaf: int
    random_state: int | None
    classes_: np.ndarray
    n_classes_: int
    n_features_in_: int
    node_count_: int
    feature_importances_: F64
    def __init__(
        self,
        algorithm: Literal["cart", "id3", "c45"] = "cart",
        is_classifier: bool = True,
        max_depth: int | None = None,
        min_samples_split: int = 2,
        min_samples_leaf: int = 1,
        random_state: int | None = None,
    ) -> None: ...
    def fit(self, X: ArrayLike, y: ArrayLike) -> DecisionTree: ...
    def predict(self, X: ArrayLike) -> np.ndarray: ...
    def predict_proba(self, X: ArrayLike) -> F64: ...
    def score(self, X: ArrayLike, y: ArrayLike) -> float: ...
    def get_depth(self) -> int: ...
    def get_n_leaves(self) -> int: ...
    def get_params(self, deep: bool = True) -> dict: ...
    def set_params(self, **params) -> DecisionTree: ...
    def save(self, path) -> None: ...
    @classmethod
    def load(cls, path) -> DecisionTree: ...

class IsolationForest:
    n_estimators: int
    max_samples: Literal["auto"] | int | float
    contamination: Literal["auto"] | float
    random_state: int | None
    offset_: float
    max_samples_: int
    n_features_in_: int
    def __init__(
        self,
        n_estimators: int = 100,
        max_samples: Literal["auto"] | float = "auto",
        contamination: Literal["auto"] | float = "auto",
        random_state: int | None = None,
    ) -> None: ...
    def fit(self, X: ArrayLike, y: object = None) -> IsolationForest: ...
    def predict(self, X: ArrayLike) -> I64: ...
    def fit_predict(self, X: ArrayLike, y: object = None) -> I64: ...
    def score_samples(self, X: ArrayLike) -> F64: ...
    def decision_function(self, X: ArrayLike) -> F64: ...
    def get_params(self, deep: bool = True) -> dict: ...
    def set_params(self, **params) -> IsolationForest: ...
    def save(self, path) -> None: ...
    @classmethod
    def load(cls, path) -> IsolationForest: ...

class KNN:
    n_neighbors: int
    weights: Literal["uniform", "distance"]
    metric: Literal["euclidean", "manhattan", "minkowski"]
    p: float
    classes_: np.ndarray
    n_features_in_: int
    n_samples_fit_: int
    def __init__(
        self,
        n_neighbors: int = 5,
        weights: Literal["uniform", "distance"] = "uniform",
        metric: Literal["euclidean", "manhattan", "minkowski"] = "euclidean",
        p: float = 2,
    ) -> None: ...
    def fit(self, X: ArrayLike, y: ArrayLike) -> KNN: ...
    def predict(self, X: ArrayLike) -> np.ndarray: ...
    def predict_proba(self, X: ArrayLike) -> F64: ...
    @overload
    def kneighbors(
        self,
        X: ArrayLike | None = None,
        n_neighbors: int | None = None,
        return_distance: Literal[True] = True,
    ) -> tuple[F64, I64]: ...
    @overload
    def kneighbors(
        self, X: ArrayLike | None, n_neighbors: int | None, return_distance: Literal[False]
    ) -> I64: ...
    def score(self, X: ArrayLike, y: ArrayLike) -> float: ...
    def get_params(self, deep: bool = True) -> dict: ...
    def set_params(self, **params) -> KNN: ...
    def save(self, path) -> None: ...
    @classmethod
    def load(cls, path) -> KNN: ...
