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

class LogisticRegression:
    penalty: Literal["l1", "l2"] | None
    C: float
    fit_intercept: bool
    max_iter: int
    tol: float
    solver: Literal["lbfgs", "gradient_descent"]
    learning_rate: float
    classes_: np.ndarray
    coef_: F64
    intercept_: F64
    n_iter_: npt.NDArray[np.int64]
    n_features_in_: int
    def __init__(
        self,
        penalty: Literal["l1", "l2"] | None = "l2",
        C: float = 1.0,
        fit_intercept: bool = True,
        max_iter: int = 100,
        tol: float = 1e-4,
        solver: Literal["lbfgs", "gradient_descent"] = "lbfgs",
        learning_rate: float = 0.1,
    ) -> None: ...
    def fit(self, X: ArrayLike, y: ArrayLike) -> LogisticRegression: ...
    def predict(self, X: ArrayLike) -> np.ndarray: ...
    def predict_proba(self, X: ArrayLike) -> F64: ...
    def predict_log_proba(self, X: ArrayLike) -> F64: ...
    def decision_function(self, X: ArrayLike) -> F64: ...
    def score(self, X: ArrayLike, y: ArrayLike) -> float: ...
    def get_params(self, deep: bool = True) -> dict: ...
    def set_params(self, **params) -> LogisticRegression: ...
    def save(self, path) -> None: ...
    @classmethod
    def load(cls, path) -> LogisticRegression: ...

class SVC:
    C: float
    kernel: Literal["linear", "poly", "rbf", "sigmoid"]
    degree: int
    gamma: Literal["scale", "auto"] | float
    coef0: float
    tol: float
    cache_size: float
    max_iter: int
    decision_function_shape: Literal["ovr", "ovo"]
    classes_: np.ndarray
    support_: npt.NDArray[np.int64]
    support_vectors_: F64
    n_support_: npt.NDArray[np.int64]
    dual_coef_: F64
    intercept_: F64
    coef_: F64
    n_iter_: npt.NDArray[np.int64]
    n_features_in_: int
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
    ) -> None: ...
    def fit(self, X: ArrayLike, y: ArrayLike) -> SVC: ...
    def predict(self, X: ArrayLike) -> np.ndarray: ...
    def decision_function(self, X: ArrayLike) -> F64: ...
    def score(self, X: ArrayLike, y: ArrayLike) -> float: ...
    def get_params(self, deep: bool = True) -> dict: ...
    def set_params(self, **params) -> SVC: ...
    def save(self, path) -> None: ...
    @classmethod
    def load(cls, path) -> SVC: ...

class LinearSVC:
    penalty: Literal["l1", "l2"]
    C: float
    fit_intercept: bool
    intercept_scaling: float
    max_iter: int
    tol: float
    classes_: np.ndarray
    coef_: F64
    intercept_: F64
    n_iter_: int
    n_features_in_: int
    def __init__(
        self,
        penalty: Literal["l1", "l2"] = "l2",
        C: float = 1.0,
        fit_intercept: bool = True,
        intercept_scaling: float = 1.0,
        max_iter: int = 1000,
        tol: float = 1e-4,
    ) -> None: ...
    def fit(self, X: ArrayLike, y: ArrayLike) -> LinearSVC: ...
    def predict(self, X: ArrayLike) -> np.ndarray: ...
    def decision_function(self, X: ArrayLike) -> F64: ...
    def score(self, X: ArrayLike, y: ArrayLike) -> float: ...
    def get_params(self, deep: bool = True) -> dict: ...
    def set_params(self, **params) -> LinearSVC: ...
    def save(self, path) -> None: ...
    @classmethod
    def load(cls, path) -> LinearSVC: ...

class LDA:
    solver: Literal["svd", "eigen"]
    n_components: int | None
    priors: ArrayLike | None
    tol: float
    classes_: np.ndarray
    means_: F64
    priors_: F64
    xbar_: F64
    scalings_: F64
    explained_variance_ratio_: F64
    coef_: F64
    intercept_: F64
    n_features_in_: int
    def __init__(
        self,
        solver: Literal["svd", "eigen"] = "svd",
        n_components: int | None = None,
        priors: ArrayLike | None = None,
        tol: float = 1e-4,
    ) -> None: ...
    def fit(self, X: ArrayLike, y: ArrayLike) -> LDA: ...
    def transform(self, X: ArrayLike) -> F64: ...
    def fit_transform(self, X: ArrayLike, y: ArrayLike) -> F64: ...
    def predict(self, X: ArrayLike) -> np.ndarray: ...
    def predict_proba(self, X: ArrayLike) -> F64: ...
    def predict_log_proba(self, X: ArrayLike) -> F64: ...
    def decision_function(self, X: ArrayLike) -> F64: ...
    def score(self, X: ArrayLike, y: ArrayLike) -> float: ...
    def get_params(self, deep: bool = True) -> dict: ...
    def set_params(self, **params) -> LDA: ...
    def save(self, path) -> None: ...
    @classmethod
    def load(cls, path) -> LDA: ...

LinearDiscriminantAnalysis = LDA

class PCA:
    n_components: int | float | None
    whiten: bool
    components_: F64
    explained_variance_: F64
    explained_variance_ratio_: F64
    singular_values_: F64
    mean_: F64
    n_components_: int
    noise_variance_: float
    n_samples_: int
    n_features_in_: int
    def __init__(self, n_components: float | None = None, whiten: bool = False) -> None: ...
    def fit(self, X: ArrayLike, y: object = None) -> PCA: ...
    def fit_transform(self, X: ArrayLike, y: object = None) -> F64: ...
    def transform(self, X: ArrayLike) -> F64: ...
    def inverse_transform(self, X: ArrayLike) -> F64: ...
    def get_params(self, deep: bool = True) -> dict: ...
    def set_params(self, **params) -> PCA: ...
    def save(self, path) -> None: ...
    @classmethod
    def load(cls, path) -> PCA: ...

class KernelPCA:
    n_components: int | None
    kernel: Literal["linear", "poly", "rbf", "sigmoid", "cosine"]
    gamma: float | None
    degree: float
    coef0: float
    eigenvalues_: F64
    eigenvectors_: F64
    X_fit_: F64
    gamma_: float | None
    n_features_in_: int
    def __init__(
        self,
        n_components: int | None = None,
        kernel: Literal["linear", "poly", "rbf", "sigmoid", "cosine"] = "linear",
        gamma: float | None = None,
        degree: float = 3,
        coef0: float = 1,
    ) -> None: ...
    def fit(self, X: ArrayLike, y: object = None) -> KernelPCA: ...
    def fit_transform(self, X: ArrayLike, y: object = None) -> F64: ...
    def transform(self, X: ArrayLike) -> F64: ...
    def get_params(self, deep: bool = True) -> dict: ...
    def set_params(self, **params) -> KernelPCA: ...
    def save(self, path) -> None: ...
    @classmethod
    def load(cls, path) -> KernelPCA: ...

class TSNE:
    n_components: int
    perplexity: float
    early_exaggeration: float
    learning_rate: float | Literal["auto"]
    max_iter: int
    n_iter_without_progress: int
    min_grad_norm: float
    method: Literal["barnes_hut", "exact"]
    init: Literal["pca", "random"]
    angle: float
    random_state: int | None
    embedding_: F64
    kl_divergence_: float
    n_iter_: int
    learning_rate_: float
    n_features_in_: int
    def __init__(
        self,
        n_components: int = 2,
        perplexity: float = 30.0,
        early_exaggeration: float = 12.0,
        learning_rate: float | Literal["auto"] = "auto",
        max_iter: int = 1000,
        n_iter_without_progress: int = 300,
        min_grad_norm: float = 1e-7,
        method: Literal["barnes_hut", "exact"] = "barnes_hut",
        init: Literal["pca", "random"] = "pca",
        angle: float = 0.5,
        random_state: int | None = None,
    ) -> None: ...
    def fit(self, X: ArrayLike, y: object = None) -> TSNE: ...
    def fit_transform(self, X: ArrayLike, y: object = None) -> F64: ...
    def get_params(self, deep: bool = True) -> dict: ...
    def set_params(self, **params) -> TSNE: ...
    def save(self, path) -> None: ...
    @classmethod
    def load(cls, path) -> TSNE: ...

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
    metric: Literal[
        "minkowski", "euclidean", "manhattan", "chebyshev", "l1", "l2", "cityblock", "infinity"
    ]
    p: float
    classes_: np.ndarray
    n_features_in_: int
    n_samples_fit_: int
    def __init__(
        self,
        n_neighbors: int = 5,
        weights: Literal["uniform", "distance"] = "uniform",
        metric: Literal[
            "minkowski", "euclidean", "manhattan", "chebyshev", "l1", "l2", "cityblock", "infinity"
        ] = "minkowski",
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
