from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from typing_extensions import TypeAlias

ArrayLike = npt.ArrayLike
F64: TypeAlias = npt.NDArray[np.float64]
I64: TypeAlias = npt.NDArray[np.int64]
Average: TypeAlias = Literal["binary", "micro", "macro", "weighted"] | None
ZeroDivision: TypeAlias = Literal["warn"] | float

# regression
def mean_squared_error(y_true: ArrayLike, y_pred: ArrayLike) -> float: ...
def root_mean_squared_error(y_true: ArrayLike, y_pred: ArrayLike) -> float: ...
def mean_absolute_error(y_true: ArrayLike, y_pred: ArrayLike) -> float: ...
def r2_score(y_true: ArrayLike, y_pred: ArrayLike) -> float: ...
def explained_variance_score(y_true: ArrayLike, y_pred: ArrayLike) -> float: ...
def median_absolute_error(y_true: ArrayLike, y_pred: ArrayLike) -> float: ...
def mean_absolute_percentage_error(y_true: ArrayLike, y_pred: ArrayLike) -> float: ...

# classification
def accuracy_score(y_true: ArrayLike, y_pred: ArrayLike, *, normalize: bool = True) -> float: ...
def accuracy(y_true: ArrayLike, y_pred: ArrayLike, *, normalize: bool = True) -> float: ...
def precision_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    pos_label: object = 1,
    average: Average = "binary",
    zero_division: ZeroDivision = "warn",
) -> float | F64: ...
def recall_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    pos_label: object = 1,
    average: Average = "binary",
    zero_division: ZeroDivision = "warn",
) -> float | F64: ...
def f1_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    pos_label: object = 1,
    average: Average = "binary",
    zero_division: ZeroDivision = "warn",
) -> float | F64: ...
def fbeta_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    beta: float,
    pos_label: object = 1,
    average: Average = "binary",
    zero_division: ZeroDivision = "warn",
) -> float | F64: ...
def precision_recall_fscore_support(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    beta: float = 1.0,
    pos_label: object = 1,
    average: Average = None,
    zero_division: ZeroDivision = "warn",
) -> tuple[float | F64, float | F64, float | F64, I64 | None]: ...
def confusion_matrix(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    normalize: Literal["true", "pred", "all"] | None = None,
) -> I64 | F64: ...
def balanced_accuracy_score(
    y_true: ArrayLike, y_pred: ArrayLike, *, adjusted: bool = False
) -> float: ...
def matthews_corrcoef(y_true: ArrayLike, y_pred: ArrayLike) -> float: ...
def roc_auc_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    average: Literal["micro", "macro", "weighted"] = "macro",
    multi_class: Literal["raise", "ovr", "ovo"] = "raise",
) -> float: ...
def roc_auc(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    average: Literal["micro", "macro", "weighted"] = "macro",
    multi_class: Literal["raise", "ovr", "ovo"] = "raise",
) -> float: ...
def log_loss(
    y_true: ArrayLike, y_proba: ArrayLike, *, labels: ArrayLike | None = None
) -> float: ...
def roc_curve(
    y_true: ArrayLike, y_score: ArrayLike, *, pos_label: Any = None, drop_intermediate: bool = True
) -> tuple[F64, F64, F64]: ...
def precision_recall_curve(
    y_true: ArrayLike, y_score: ArrayLike, *, pos_label: Any = None, drop_intermediate: bool = False
) -> tuple[F64, F64, F64]: ...
def average_precision_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    average: Literal["micro", "macro", "weighted"] | None = "macro",
    pos_label: Any = 1,
) -> float | F64: ...
def top_k_accuracy_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    k: int = 2,
    normalize: bool = True,
    labels: ArrayLike | None = None,
) -> float: ...
def cohen_kappa_score(
    y1: ArrayLike,
    y2: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    weights: Literal["linear", "quadratic"] | None = None,
    replace_undefined_by: float = ...,
) -> float: ...

class ConfusionMatrix:
    tp: int
    fp: int
    tn: int
    fn: int
    def __init__(self, y_true: ArrayLike, y_pred: ArrayLike) -> None: ...
    @classmethod
    def from_counts(cls, tp: int, fp: int, tn: int, fn: int) -> ConfusionMatrix: ...
    def get_counts(self) -> tuple[int, int, int, int]: ...
    def accuracy(self) -> float: ...
    def error_rate(self) -> float: ...
    def precision(self) -> float: ...
    def recall(self) -> float: ...
    def specificity(self) -> float: ...
    def f1_score(self) -> float: ...
    def f1(self) -> float: ...
    def balanced_accuracy(self) -> float: ...
    def mcc(self) -> float: ...
    def summary(self) -> str: ...

# clustering
AverageMethod: TypeAlias = Literal["min", "geometric", "arithmetic", "max"]

def adjusted_rand_score(labels_true: ArrayLike, labels_pred: ArrayLike) -> float: ...
def adjusted_rand_index(labels_true: ArrayLike, labels_pred: ArrayLike) -> float: ...
def mutual_info_score(labels_true: ArrayLike, labels_pred: ArrayLike) -> float: ...
def normalized_mutual_info_score(
    labels_true: ArrayLike, labels_pred: ArrayLike, *, average_method: AverageMethod = "arithmetic"
) -> float: ...
def normalized_mutual_info(labels_true: ArrayLike, labels_pred: ArrayLike) -> float: ...
def adjusted_mutual_info_score(
    labels_true: ArrayLike, labels_pred: ArrayLike, *, average_method: AverageMethod = "arithmetic"
) -> float: ...
def adjusted_mutual_info(labels_true: ArrayLike, labels_pred: ArrayLike) -> float: ...
def homogeneity_completeness_v_measure(
    labels_true: ArrayLike, labels_pred: ArrayLike, *, beta: float = 1.0
) -> tuple[float, float, float]: ...
def homogeneity_score(labels_true: ArrayLike, labels_pred: ArrayLike) -> float: ...
def completeness_score(labels_true: ArrayLike, labels_pred: ArrayLike) -> float: ...
def v_measure_score(
    labels_true: ArrayLike, labels_pred: ArrayLike, *, beta: float = 1.0
) -> float: ...
def fowlkes_mallows_score(labels_true: ArrayLike, labels_pred: ArrayLike) -> float: ...

SilhouetteMetric: TypeAlias = Literal[
    "euclidean", "l2", "sqeuclidean", "manhattan", "cityblock", "l1", "minkowski", "precomputed"
]

def silhouette_samples(
    X: ArrayLike, labels: ArrayLike, *, metric: SilhouetteMetric = "euclidean", p: float = 2.0
) -> F64: ...
def silhouette_score(
    X: ArrayLike,
    labels: ArrayLike,
    *,
    metric: SilhouetteMetric = "euclidean",
    sample_size: int | None = None,
    random_state: int | np.random.RandomState | None = None,
    p: float = 2.0,
) -> float: ...
def calinski_harabasz_score(X: ArrayLike, labels: ArrayLike) -> float: ...
def davies_bouldin_score(X: ArrayLike, labels: ArrayLike) -> float: ...
