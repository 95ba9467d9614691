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
from a dense copy where the distances are euclidean: the same distances, so the same
neighbours and affinities.

Euclidean distances are the engine's own (squared, in float64). Any other ``metric``
(``metric_params`` included) and ``metric="precomputed"`` take scikit-learn's distances, found
as its fit finds them, into the same engine: for ``exact`` the given matrix or
``pairwise_distances``, for ``barnes_hut`` the nearest neighbours that ``NearestNeighbors``
(the door's: native where it answers as scikit-learn, scikit-learn's search where a tie or a
metric decides otherwise) finds among the rows, or in the given matrix or sparse graph;
squared in their dtype and read in float32, as scikit-learn's affinities read them. So a
metric's fit and the precomputed fit of the same distances are the same run, bit for bit.
As in scikit-learn, an ``exact`` fit squares a given matrix in place. scikit-learn's errors
(``init="pca"`` or a non-square or negative matrix with precomputed distances, a sparse one
for ``exact``, negative or failing distances of a metric) and ``verbose`` output are
scikit-learn's own fit.
"""

import numpy as np
from scipy.sparse import issparse
from sklearn import manifold as _sk
from sklearn.metrics import pairwise_distances
from sklearn.utils import check_random_state
from sklearn.utils.validation import validate_data

from rustyml import _native
from rustyml.sklearn._dispatch import Unsupported, dense_copy, native_path, require
from rustyml.sklearn.decomposition import PCA
from rustyml.sklearn.neighbors import NearestNeighbors

__all__ = ["TSNE"]

_SkTSNE = _sk.TSNE


class TSNE(_SkTSNE):
    __doc__ = _SkTSNE.__doc__

    @native_path(_SkTSNE.fit_transform, fits=True)
    def fit_transform(self, X, y=None):
        self._validate_params()
        require(not self.verbose, "verbose output")
        euclidean = isinstance(self.metric, str) and self.metric == "euclidean"
        precomputed = isinstance(self.metric, str) and self.metric == "precomputed"
        # scikit-learn's euclidean fits read no metric_params (exact) or hand them to the
        # neighbour search (barnes_hut); the other metrics' distances are its own functions'
        require(not (euclidean and self.metric_params), "metric_params with metric='euclidean'")
        require(hasattr(X, "shape"), "X without a shape (scikit-learn's own check)")
        # -1 and 0 stop alike at the first check without progress; the engine counts from 1
        require(self.n_iter_without_progress >= 1, "n_iter_without_progress < 1")
        if self.method == "barnes_hut":
            require(self.n_components <= 3, "n_components > 3 (scikit-learn's error)")
        given = isinstance(self.init, np.ndarray)
        if precomputed:
            require(
                given or self.init != "pca", "init='pca' with precomputed distances (its error)"
            )
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
        if precomputed:
            require(X.shape[0] == X.shape[1], "a non-square distance matrix (scikit-learn's error)")
            require(
                (X.data if issparse(X) else X).min(initial=0) >= 0,
                "negative distances (scikit-learn's error)",
            )
            require(not (self.method == "exact" and issparse(X)), "sparse distances for 'exact'")
        if given:
            init = self.init
            require(init.shape == (X.shape[0], self.n_components), "init of another shape")
            require(np.all(np.isfinite(init)), "a non-finite init")
        elif not precomputed:
            require(self.n_components <= min(X.shape) or self.init == "random", "init='pca' error")
        # the distances, as scikit-learn squares them and reads them (in float32)
        if euclidean:
            distances = None
        elif self.method == "exact":
            distances = self._squared_distances(X, precomputed)
        else:
            distances = self._squared_neighbour_distances(X)
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
        start = np.ascontiguousarray(init, dtype=np.float64).ravel()
        if distances is None:
            data = np.asarray(dense_copy(X) if issparse(X) else X, dtype=np.float64)
            embedding = engine.fit_transform_from(data, start)
        elif self.method == "exact":
            if precomputed:
                # scikit-learn squares the given matrix in place (the caller's array, where
                # its checks made no copy): so does the door, once nothing can fall back
                X **= 2
            embedding = engine.fit_transform_given_dense(distances, start)
        else:
            embedding = engine.fit_transform_given_neighbours(*distances, start)
        embedding = np.asarray(embedding)
        if self.learning_rate == "auto":
            self.learning_rate_ = np.maximum(X.shape[0] / self.early_exaggeration / 4, 50)
        else:
            self.learning_rate_ = self.learning_rate
        # scikit-learn's descent runs in the initial embedding's dtype
        self.embedding_ = embedding.astype(np.asarray(init).dtype, copy=False)
        self.kl_divergence_ = float(engine.kl_divergence_)
        self.n_iter_ = int(engine.n_iter_)
        return self.embedding_

    def _squared_distances(self, X, precomputed):
        """``method="exact"``: all pairs' distances, given or computed by scikit-learn's
        ``pairwise_distances``, squared in their dtype and read in float32, as its fit reads
        them (squared into a new array: the given one is squared in place only once the fit
        is the door's)."""
        if precomputed:
            distances = X
        else:
            try:
                distances = pairwise_distances(
                    X, metric=self.metric, n_jobs=self.n_jobs, **(self.metric_params or {})
                )
            except (ValueError, TypeError) as why:
                raise Unsupported(f"the distances failed ({why})") from None
            require(not np.any(distances < 0), "negative distances (scikit-learn's error)")
        return _as_read(distances**2)

    def _squared_neighbour_distances(self, X):
        """``method="barnes_hut"``: the ``min(n - 1, 3 * perplexity + 1)`` nearest
        neighbours of each sample, found by ``NearestNeighbors`` as scikit-learn's fit finds
        them (the door's: native where it answers as scikit-learn, scikit-learn's search
        where not), with their distances squared in their dtype and read in float32."""
        n = X.shape[0]
        k = min(n - 1, int(3.0 * self.perplexity + 1))
        knn = NearestNeighbors(
            algorithm="auto",
            n_jobs=self.n_jobs,
            n_neighbors=k,
            metric=self.metric,
            metric_params=self.metric_params,
        )
        try:
            graph = knn.fit(X).kneighbors_graph(mode="distance")
        except (ValueError, TypeError) as why:
            raise Unsupported(f"the neighbour search failed ({why})") from None
        graph = graph.tocsr()
        counts = np.diff(graph.indptr)
        require(bool((counts == k).all()), "rows without k neighbours")
        indices = np.asarray(graph.indices, dtype=np.int64).reshape(n, k)
        ordered = np.sort(indices, axis=1)
        require(
            bool((np.diff(ordered, axis=1) > 0).all())
            and not (indices == np.arange(n)[:, None]).any(),
            "neighbours repeated or the sample itself",
        )
        return indices, _as_read(graph.data**2).reshape(n, k)

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


def _as_read(squared):
    """Squared distances as scikit-learn's affinities read them: cast to float32 (then
    widened, exactly, for the engine); a value that is not finite there stays on its fit."""
    read = np.asarray(squared).astype(np.float32).astype(np.float64)
    require(bool(np.isfinite(read).all()), "distances not finite in float32")
    return read
