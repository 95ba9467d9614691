"""Type aliases of the metrics' signatures (read by type checkers only, never imported at run
time)."""

from typing import Literal

import numpy as np
import numpy.typing as npt
from typing_extensions import TypeAlias

ArrayLike = npt.ArrayLike
F64: TypeAlias = npt.NDArray[np.float64]
I64: TypeAlias = npt.NDArray[np.int64]
Average: TypeAlias = Literal["binary", "micro", "macro", "weighted"] | None
ZeroDivision: TypeAlias = Literal["warn"] | float
AverageMethod: TypeAlias = Literal["min", "geometric", "arithmetic", "max"]
SilhouetteMetric: TypeAlias = Literal[
    "euclidean", "l2", "sqeuclidean", "manhattan", "cityblock", "l1", "minkowski", "precomputed"
]
