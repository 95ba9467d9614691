from typing import Literal

import numpy as np
import numpy.typing as npt
from typing_extensions import TypeAlias

Metric: TypeAlias = Literal[
    "euclidean", "l2", "sqeuclidean", "manhattan", "cityblock", "l1", "minkowski"
]
Vec: TypeAlias = npt.NDArray[np.floating]

def euclidean(a: Vec, b: Vec) -> float: ...
def squared_euclidean(a: Vec, b: Vec) -> float: ...
def manhattan(a: Vec, b: Vec) -> float: ...
def minkowski(a: Vec, b: Vec, p: float = 2.0) -> float: ...
def pairwise(
    a: Vec, b: Vec | None = None, metric: Metric = "euclidean", p: float = 2.0
) -> npt.NDArray[np.float64]: ...
def rowwise(
    a: Vec, b: Vec, metric: Metric = "euclidean", p: float = 2.0
) -> npt.NDArray[np.float64]: ...
