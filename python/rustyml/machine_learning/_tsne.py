from __future__ import annotations

from typing import Literal

from rustyml import _native
from rustyml._base import BaseEstimator, param_constraints
from rustyml.machine_learning._fitted import F64, ArrayLike, Fitted, fit_fresh


class TSNE(BaseEstimator):
    """t-distributed stochastic neighbour embedding, following scikit-learn's ``TSNE``.

    ``method="barnes_hut"`` (``n_components <= 3``) uses nearest-neighbour affinities and a
    quadtree/octree for the repulsive forces; ``"exact"`` uses all pairs. The optimisation
    follows scikit-learn's schedule (250 iterations of early exaggeration with momentum 0.5,
    then momentum 0.8; ``learning_rate="auto"`` is ``max(n / early_exaggeration / 4, 50)``).
    ``random_state`` (an int) makes ``init="random"`` reproducible; ``init="pca"`` is
    deterministic. Results are identical at every thread count.
    """

    _native_class = _native.machine_learning.TSNE
    _param_constraints = param_constraints(
        {
            "n_components": ("int",),
            "perplexity": ("real",),
            "early_exaggeration": ("real",),
            "learning_rate": ("str", "real"),
            "max_iter": ("int",),
            "n_iter_without_progress": ("int",),
            "min_grad_norm": ("real",),
            "angle": ("real",),
            "random_state": ("int", "none"),
        }
    )

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
    ) -> None:
        self._store_params(locals())

    def fit(self, X: ArrayLike, y: object = None) -> TSNE:
        """Fit the embedding of ``X``. Returns ``self``."""
        self.fit_transform(X)
        return self

    def fit_transform(self, X: ArrayLike, y: object = None) -> F64:
        """Fit and return the embedding (n_samples, n_components)."""
        return fit_fresh(self, X, "fit_transform")

    embedding_ = Fitted[F64]()

    kl_divergence_ = Fitted[float]()

    n_iter_ = Fitted[int]()

    learning_rate_ = Fitted[float]()
