"""Distances: vector to vector, row to row, and pairwise.

``pairwise(a, b=None, metric="euclidean", p=2.0)`` computes euclidean distances through the
matrix product; ``metric`` is one of ``"euclidean"``, ``"sqeuclidean"``, ``"manhattan"``,
``"minkowski"`` (with ``p``).
"""

from rustyml import _native

_d = _native.math.distance
euclidean = _d.euclidean
squared_euclidean = _d.squared_euclidean
manhattan = _d.manhattan
minkowski = _d.minkowski
nearest = _d.nearest
pairwise = _d.pairwise
rowwise = _d.rowwise

__all__ = [
    "euclidean",
    "manhattan",
    "minkowski",
    "nearest",
    "pairwise",
    "rowwise",
    "squared_euclidean",
]
