from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rustyml import _native
from rustyml._validation import as_float_array
from rustyml.metrics import _labels

if TYPE_CHECKING:
    from rustyml.metrics._typing import F64, ArrayLike, AverageMethod, SilhouetteMetric

_m = _native.metrics


def _pair(labels_true, labels_pred):
    a, b, _ = _labels.pair(labels_true, labels_pred, ("labels_true", "labels_pred"), shared=False)
    return a, b


def adjusted_rand_score(labels_true: ArrayLike, labels_pred: ArrayLike) -> float:
    """Rand index adjusted for chance (1 identical, ~0 random), from exact pair counts."""
    return _m.adjusted_rand_score(*_pair(labels_true, labels_pred))


adjusted_rand_index = adjusted_rand_score


def mutual_info_score(labels_true: ArrayLike, labels_pred: ArrayLike) -> float:
    """Mutual information (nats) of two labelings."""
    return _m.mutual_info_score(*_pair(labels_true, labels_pred))


def normalized_mutual_info_score(
    labels_true: ArrayLike, labels_pred: ArrayLike, *, average_method: AverageMethod = "arithmetic"
) -> float:
    """Mutual information over a mean ('min', 'geometric', 'arithmetic', 'max') of the
    entropies."""
    return _m.normalized_mutual_info_score(*_pair(labels_true, labels_pred), average_method)


def normalized_mutual_info(labels_true: ArrayLike, labels_pred: ArrayLike) -> float:
    """The original crate's name for ``normalized_mutual_info_score``."""
    return normalized_mutual_info_score(labels_true, labels_pred)


def adjusted_mutual_info_score(
    labels_true: ArrayLike, labels_pred: ArrayLike, *, average_method: AverageMethod = "arithmetic"
) -> float:
    """Mutual information adjusted for chance (hypergeometric expected value)."""
    return _m.adjusted_mutual_info_score(*_pair(labels_true, labels_pred), average_method)


def adjusted_mutual_info(labels_true: ArrayLike, labels_pred: ArrayLike) -> float:
    """The original crate's name for ``adjusted_mutual_info_score``."""
    return adjusted_mutual_info_score(labels_true, labels_pred)


def homogeneity_completeness_v_measure(
    labels_true: ArrayLike, labels_pred: ArrayLike, *, beta: float = 1.0
) -> tuple[float, float, float]:
    """``(homogeneity, completeness, v_measure)``."""
    return _m.homogeneity_completeness_v_measure(*_pair(labels_true, labels_pred), float(beta))


def homogeneity_score(labels_true: ArrayLike, labels_pred: ArrayLike) -> float:
    """Each cluster holds one class only (1 = perfectly homogeneous)."""
    return homogeneity_completeness_v_measure(labels_true, labels_pred)[0]


def completeness_score(labels_true: ArrayLike, labels_pred: ArrayLike) -> float:
    """Each class falls in one cluster (1 = perfectly complete)."""
    return homogeneity_completeness_v_measure(labels_true, labels_pred)[1]


def v_measure_score(labels_true: ArrayLike, labels_pred: ArrayLike, *, beta: float = 1.0) -> float:
    """Harmonic mean of homogeneity and completeness (``beta`` weights completeness)."""
    return homogeneity_completeness_v_measure(labels_true, labels_pred, beta=beta)[2]


def fowlkes_mallows_score(labels_true: ArrayLike, labels_pred: ArrayLike) -> float:
    """Geometric mean of pairwise precision and recall."""
    return _m.fowlkes_mallows_score(*_pair(labels_true, labels_pred))


def _data_and_labels(X, labels):
    X = as_float_array(X, "X", 2)
    y, _ = _labels.single(labels, "labels")
    return X, y


def silhouette_samples(
    X: ArrayLike, labels: ArrayLike, *, metric: SilhouetteMetric = "euclidean", p: float = 2.0
) -> F64:
    """Silhouette coefficient of every sample (0 for samples alone in their cluster);
    ``metric``: 'euclidean', 'sqeuclidean', 'manhattan', 'minkowski' (with ``p``) or
    'precomputed' (``X`` is the distance matrix)."""
    X, y = _data_and_labels(X, labels)
    return _m.silhouette_samples(X, y, metric, float(p))


def silhouette_score(
    X: ArrayLike,
    labels: ArrayLike,
    *,
    metric: SilhouetteMetric = "euclidean",
    sample_size: int | None = None,
    random_state: int | np.random.RandomState | None = None,
    p: float = 2.0,
) -> float:
    """Mean silhouette coefficient. With ``sample_size``, a random subset is scored (drawn
    as scikit-learn draws it from ``random_state``)."""
    X, y = _data_and_labels(X, labels)
    if sample_size is not None:
        rs = (
            random_state
            if isinstance(random_state, np.random.RandomState)
            else np.random.RandomState(random_state)
        )
        idx = rs.permutation(X.shape[0])[:sample_size]
        if metric == "precomputed":
            X = X[idx][:, idx]
        else:
            X = X[idx]
        y = y[idx]
    return _m.silhouette_score(X, y, metric, float(p))


def calinski_harabasz_score(X: ArrayLike, labels: ArrayLike) -> float:
    """Between- over within-cluster dispersion (higher is better)."""
    return _m.calinski_harabasz_score(*_data_and_labels(X, labels))


def davies_bouldin_score(X: ArrayLike, labels: ArrayLike) -> float:
    """Mean worst-case cluster similarity (lower is better)."""
    return _m.davies_bouldin_score(*_data_and_labels(X, labels))
