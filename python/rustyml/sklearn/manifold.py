"""``sklearn.manifold`` with rustyml's t-SNE behind TSNE.

A native fit runs scikit-learn's t-SNE: the same affinities (the ``3 * perplexity + 1``
nearest neighbours and their perplexity-calibrated conditional probabilities for
Barnes-Hut, all pairs for ``exact``), the same initial embedding (scikit-learn's own ``pca``
initialisation through the PCA door, or its ``random`` draws from ``random_state``, or the
given array), the same Student-t kernel and the same optimiser (250 iterations of early
exaggeration with momentum 0.5, then momentum 0.8, per-parameter gains, checks every 50
iterations for progress and the gradient norm, ``n_iter_`` and ``kl_divergence_`` counted as
scikit-learn counts them).

The embedding is not scikit-learn's array to rounding, and cannot be: t-SNE's descent
amplifies rounding, and scikit-learn's own Barnes-Hut gradient sums its repulsive forces
over OpenMP threads, so its embedding already changes with the thread count (digits, 500
samples: coordinates 6.5 apart on a scale of 36 between one and two threads). rustyml's
fit is deterministic at any worker count, with an embedding of the same quality
(``kl_divergence_`` and trustworthiness are compared with scikit-learn's in the tests).
``fit`` runs through ``fit_transform``, so each fit counts once. Sparse data is embedded
from a dense copy: the same distances, so the same neighbours and affinities.
"""

import numpy as np
from scipy.sparse import issparse
from sklearn import manifold as _sk
from sklearn.utils import check_random_state
from sklearn.utils.validation import validate_data

from rustyml import _native
from rustyml.sklearn._dispatch import dense_copy, native_path, require
from rustyml.sklearn.decomposition import PCA

__all__ = ["TSNE"]

_SkTSNE = _sk.TSNE


class TSNE(_SkTSNE):
    __doc__ = _SkTSNE.__doc__

    @native_path(_SkTSNE.fit_transform, fits=True)
    def fit_transform(self, X, y=None):
        self._validate_params()
        require(not self.verbose, "verbose output")
        require(self.metric == "euclidean", f"metric={self.metric!r}")
        require(not self.metric_params, "metric_params")
        require(hasattr(X, "shape"), "X without a shape (scikit-learn's own check)")
        # -1 and 0 stop alike at the first check without progress; the engine counts from 1
        require(self.n_iter_without_progress >= 1, "n_iter_without_progress < 1")
        if self.method == "barnes_hut":
            require(self.n_components <= 3, "n_components > 3 (scikit-learn's error)")
        self._check_params_vs_input(X)
        X = validate_data(
            self,
            X,
            # scikit-learn's own formats for each method
            accept_sparse=["csr"] if self.method == "barnes_hut" else ["csr", "csc", "coo"],
            ensure_min_samples=2 if self.method == "barnes_hut" else 1,
            dtype=[np.float32, np.float64],
        )
        require(X.shape[0] >= 2, "a single sample")
        given = isinstance(self.init, np.ndarray)
        if given:
            init = self.init
            require(init.shape == (X.shape[0], self.n_components), "init of another shape")
            require(np.all(np.isfinite(init)), "a non-finite init")
        else:
            require(self.n_components <= min(X.shape) or self.init == "random", "init='pca' error")
        engine = _native.machine_learning.TSNE(
            n_components=int(self.n_components),
            perplexity=float(self.perplexity),
            early_exaggeration=float(self.early_exaggeration),
            learning_rate=self.learning_rate
            if self.learning_rate == "auto"
            else float(self.learning_rate),
            max_iter=int(self.max_iter),
            n_iter_without_progress=int(self.n_iter_without_progress),
            min_grad_norm=float(self.min_grad_norm),
            method=self.method,
            init="random",
            angle=float(self.angle),
            random_state=None,
        )
        if not given:
            init = self._initial_embedding(X)
        # (the initial embedding above is drawn, or fitted by PCA, from X as given)
        data = np.asarray(dense_copy(X) if issparse(X) else X, dtype=np.float64)
        start = np.ascontiguousarray(init, dtype=np.float64).ravel()
        embedding = np.asarray(engine.fit_transform_from(data, start))
        if self.learning_rate == "auto":
            self.learning_rate_ = np.maximum(X.shape[0] / self.early_exaggeration / 4, 50)
        else:
            self.learning_rate_ = self.learning_rate
        # scikit-learn's descent runs in the initial embedding's dtype
        self.embedding_ = embedding.astype(np.asarray(init).dtype, copy=False)
        self.kl_divergence_ = float(engine.kl_divergence_)
        self.n_iter_ = int(engine.n_iter_)
        return self.embedding_

    def _initial_embedding(self, X):
        """scikit-learn's ``pca`` or ``random`` start, drawn from ``random_state`` as its fit
        draws it."""
        random_state = check_random_state(self.random_state)
        if self.init == "pca":
            pca = PCA(n_components=self.n_components, random_state=random_state)
            pca.set_output(transform="default")
            start = pca.fit_transform(X).astype(np.float32, copy=False)
            return start / np.std(start[:, 0]) * 1e-4
        draws = random_state.standard_normal(size=(X.shape[0], self.n_components))
        return 1e-4 * draws.astype(np.float32)
