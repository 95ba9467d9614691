"""rustyml across a Dask cluster: estimators that take dask arrays and fit chunk by chunk
where the chunks live, with rustyml's engines on each chunk and the partial results
combined in chunk order (so a fit is bit-identical whatever the number of workers or the
order they finish in, for a given chunking).

Use a ``distributed.Client`` as usual; without one, dask's default scheduler runs the same
tasks in this process. Requires dask (``pip install "dask[distributed]"``).
"""

try:
    import dask.array  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError('rustyml.dask needs dask: pip install "dask[distributed]"') from exc

from rustyml.dask._classifiers import LinearDiscriminantAnalysis, LogisticRegression
from rustyml.dask._estimators import (
    PCA,
    KMeans,
    LinearRegression,
    MaxAbsScaler,
    MinMaxScaler,
    StandardScaler,
)
from rustyml.dask._network import DataParallelSequential

__all__ = [
    "PCA",
    "DataParallelSequential",
    "KMeans",
    "LinearDiscriminantAnalysis",
    "LinearRegression",
    "LogisticRegression",
    "MaxAbsScaler",
    "MinMaxScaler",
    "StandardScaler",
]
