"""``sklearn.cluster`` with rustyml's engines behind KMeans, DBSCAN and MeanShift.

``MeanShift`` runs natively on dense float64 input: the same bandwidth estimate (when none
is given), seeds, flat-kernel shifts, intensity ordering and de-duplication as scikit-learn;
where a sample's label hangs on rounding (two centers, or the bandwidth, at the same
distance but for rounding), scikit-learn's.

``KMeans`` runs Lloyd's iterations natively on dense float64 input: each of the ``n_init``
starts is drawn by scikit-learn's own initialisation (so a ``random_state`` picks the same
starting centers, weighted draws included), the iterations follow scikit-learn's rule (stop
on unchanged labels or a total squared center shift within ``tol`` times the mean feature
variance; labels recomputed against the final centers), and the best run is kept by
scikit-learn's criterion. ``elkan`` reaches the same fixed point as ``lloyd`` and runs as
Lloyd here. Without ``sample_weight`` the k-means engine iterates; with it each step's
nearest-center search is rustyml's pairwise distance engine and the centers are the
weighted means of their points (an empty cluster, which scikit-learn relocates, hands the
fit to scikit-learn). A run with a decision within rounding of its threshold (a sample
nearly as close to another center, the stop at the tolerance, several empty clusters
relocated, two runs' inertias within rounding of each other) is scikit-learn's: each
implementation rounds such a comparison its own way.

``DBSCAN`` runs natively for euclidean and manhattan (Minkowski ``p`` of 2 or 1) distances,
and on precomputed distances, dense or sparse (a graph whose absent entries are no
neighbours): the engine finds the same exact radius neighbourhoods
and labels clusters in scikit-learn's order (a cluster grows from the lowest-index
unlabelled core sample; a border sample joins the first cluster that reaches it). Where a
distance within rounding of ``eps`` would decide a neighbourhood (the engine's and
scikit-learn's computations of it may fall on either side; float32 data's rounding is
float32's, as scikit-learn's brute force computes it), scikit-learn's own fit runs:
the engine clusters at eps less and more that rounding, from one neighbourhood search at
the larger radius, and answers where the two agree.
"""

import warnings

import numpy as np
from scipy.sparse import SparseEfficiencyWarning, issparse
from sklearn import cluster as _sk
from sklearn.cluster._kmeans import _is_same_clustering
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._openmp_helpers import _openmp_effective_n_threads
from sklearn.utils.extmath import row_norms
from sklearn.utils.parallel import _get_threadpool_controller
from sklearn.utils.validation import _check_sample_weight, check_array, validate_data

from rustyml import _native
from rustyml.machine_learning import KMeans as _KMeans
from rustyml.machine_learning import MeanShift as _MeanShift
from rustyml.math.distance import pairwise as _pairwise
from rustyml.sklearn._dispatch import SPARSE_DENSE_MAX, dense_copy, native_path, require
from rustyml.sklearn._rounding import DistanceRounding, largest_square_norm

__all__ = ["DBSCAN", "KMeans", "MeanShift"]

_EPS = np.finfo(np.float64).eps
_SkDBSCAN = _sk.DBSCAN
_SkKMeans = _sk.KMeans
_SkMeanShift = _sk.MeanShift

_DBSCAN_METRICS = {"euclidean": 2.0, "l2": 2.0, "manhattan": 1.0, "cityblock": 1.0, "l1": 1.0}


def _dbscan_p(est):
    """The Minkowski power of the search, resolved as scikit-learn's neighbour search
    resolves it: a named metric ignores ``p``; ``"minkowski"`` takes ``metric_params``'
    ``p`` over its own (``None`` is 2), with no weights ``w``."""
    params = est.metric_params or {}
    if est.metric == "minkowski":
        require(set(params) <= {"p", "w"} and params.get("w") is None, "metric_params")
        p = params.get("p", est.p)
        p = 2.0 if p is None else p
        require(p in (1, 2), f"minkowski p={p!r}")
        return float(p)
    require(not params, "metric_params")
    require(isinstance(est.metric, str) and est.metric in _DBSCAN_METRICS, f"metric={est.metric!r}")
    return _DBSCAN_METRICS[est.metric]


def _warn_when_p_is_overridden(est):
    """scikit-learn's neighbour search warns where ``metric_params`` overrides ``p``: once
    the fit is the door's, so does the door."""
    if est.metric == "minkowski" and "p" in (est.metric_params or {}) and est.p is not None:
        warnings.warn(
            "Parameter p is found in metric_params. The corresponding parameter from "
            "__init__ is ignored.",
            SyntaxWarning,
            stacklevel=4,  # the caller of fit (past the door's dispatch)
        )


class DBSCAN(_SkDBSCAN):
    __doc__ = _SkDBSCAN.__doc__

    @native_path(_SkDBSCAN.fit, fits=True)
    def fit(self, X, y=None, sample_weight=None):
        self._validate_params()
        precomputed = self.metric == "precomputed"
        if precomputed:
            require(self.metric_params in (None, {}), "metric_params")
            p = 2.0  # the engine's metric is not used on distances
        else:
            p = _dbscan_p(self)
        X = validate_data(self, X, accept_sparse="csr")
        points = X
        # a sparse precomputed matrix is a graph: the pairs it leaves out are no neighbours
        graph = precomputed and issparse(X)
        if issparse(X) and not precomputed:
            points = dense_copy(X)  # sparse features have their dense copy's distances
        require(points.dtype.kind == "f", f"X of dtype {X.dtype}")
        if precomputed:
            # scikit-learn's neighbour search refuses these, with its own messages
            require(X.shape[0] == X.shape[1], "a precomputed matrix that is not square")
            require(
                bool((X.data if graph else X).min(initial=0) >= 0),
                "negative precomputed distances",
            )
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X)
            # scikit-learn sums each neighbourhood's weights with NumPy's pairwise sum, in
            # its search's order: only sums that are exact in any order give its decisions.
            require(
                bool(np.all(sample_weight == np.round(sample_weight)))
                and float(np.abs(sample_weight).sum()) < 2.0**53,
                "non-integer sample_weight",
            )
        # (the sandwich below needs neighbourhood weights that only grow with the radius)
        require(
            precomputed or sample_weight is None or bool(np.all(sample_weight >= 0)),
            "negative sample_weight",
        )
        eps = float(self.eps)
        if precomputed:
            # The given distances are compared with eps as they are, in their own dtype:
            # scikit-learn's ``d <= eps`` on float32 distances compares in float32 (NumPy
            # casts the Python float), so eps is rounded to that dtype first; the widened
            # values then compare alike in float64.
            eps = float(X.dtype.type(eps))
            require(eps > 0.0, f"eps below the smallest {X.dtype} value")
            if graph:
                return self._fit_graph(X, eps, sample_weight)
            points = np.asarray(points, dtype=np.float64)
            core, labels = self._native_dbscan(points, eps, p, precomputed, sample_weight)
        else:
            points = np.asarray(points, dtype=np.float64)
            # A pair within rounding of eps is a neighbour or not as each computation
            # rounds its distance. scikit-learn's neighbourhoods lie between the native
            # ones at eps less and more that rounding; where those two give one answer,
            # so does every choice in between (more neighbours only add core samples and
            # join clusters; a border sample joins the first cluster that reaches it).
            # One search at the outer radius gives both (the inner lists are filtered
            # from the outer ones).
            norms = 2 * largest_square_norm(points) if p == 2 else 0.0
            # (scikit-learn's brute force rounds float32 data's distances, and eps, to
            # float32: the bound is float32's there)
            rounding = DistanceRounding(points.shape[1], p, norms, np.finfo(X.dtype).eps)
            slack = float(rounding.of(np.array([[eps]]))[0, 0])
            native = self._native_estimator(eps + slack, p)
            agree = native.fit_band(
                points, inner_eps=max(eps - slack, 0.0), sample_weight=sample_weight
            )
            require(agree, "a distance within rounding of eps decides a neighbourhood")
            core, labels = self._fitted_arrays(native)
            _warn_when_p_is_overridden(self)
        self.core_sample_indices_, self.labels_ = core, labels
        if len(self.core_sample_indices_):
            self.components_ = X[self.core_sample_indices_].copy()
        else:
            self.components_ = np.empty((0, X.shape[1]))
        return self

    def _fit_graph(self, X, eps, sample_weight):
        """A sparse precomputed fit, as scikit-learn's: the diagonal stored explicitly (each
        point its own neighbour unless a stored entry says otherwise), then a point's
        neighbours are its row's stored entries at most ``eps`` (the engine's); the core
        points' rows, each sorted by value (a stable sort, natively), are ``components_``.
        Sorting only those rows gives scikit-learn's rows: its sort is row by row."""
        G = X.copy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SparseEfficiencyWarning)
            G.setdiag(G.diagonal())
        native = self._native_estimator(eps, 2.0)
        native.fit_graph(
            np.asarray(G.data, dtype=np.float64),
            np.asarray(G.indices, dtype=np.int64),
            np.asarray(G.indptr, dtype=np.int64),
            sample_weight=sample_weight,
        )
        core, labels = self._fitted_arrays(native)
        self.core_sample_indices_, self.labels_ = core, labels
        if len(core):
            rows = G[core]
            order = _native.math.distance.graph_value_order(
                np.asarray(rows.data, dtype=np.float64),
                np.asarray(rows.indices, dtype=np.int64),
                np.asarray(rows.indptr, dtype=np.int64),
            )
            rows.data, rows.indices = rows.data[order], rows.indices[order]
            self.components_ = rows
        else:
            self.components_ = np.empty((0, X.shape[1]))
        return self

    def fit_predict(self, X, y=None, sample_weight=None):
        self.fit(X, sample_weight=sample_weight)
        return self.labels_

    def _native_dbscan(self, points, eps, p, precomputed, sample_weight):
        """The engine's core samples and labels with radius ``eps``."""
        native = self._native_estimator(eps, p)
        native.fit_with(points, precomputed=precomputed, sample_weight=sample_weight)
        return self._fitted_arrays(native)

    def _native_estimator(self, eps, p):
        return _native.machine_learning.DBSCAN(
            eps=eps,
            min_samples=int(self.min_samples),
            metric="manhattan" if p == 1.0 else "euclidean",
            p=None,
        )

    @staticmethod
    def _fitted_arrays(native):
        core = np.asarray(native.core_sample_indices_, dtype=np.intp)
        return core, np.asarray(native.labels_, dtype=np.intp)


class KMeans(_SkKMeans):
    __doc__ = _SkKMeans.__doc__

    @native_path(_SkKMeans.fit, fits=True)
    def fit(self, X, y=None, sample_weight=None):
        require(not callable(self.init), "a callable init")
        require(not self.verbose, "verbose output")
        self._validate_params()
        X = validate_data(
            self,
            X,
            accept_sparse="csr",
            dtype=[np.float64, np.float32],
            order="C",
            # (scikit-learn copies to centre X in place; this door centres a copy of its own
            # and never writes to X)
            copy=False,
            accept_large_sparse=False,
        )
        require(X.dtype == np.float64, "float32 X (scikit-learn iterates in float32)")
        sparse = issparse(X)
        require(
            not sparse or X.shape[0] * X.shape[1] <= SPARSE_DENSE_MAX,
            "sparse X too large to iterate on a dense copy",
        )
        self._check_params_vs_input(X)
        self._n_threads = _openmp_effective_n_threads()  # read by scikit-learn's predict
        random_state = check_random_state(self.random_state)
        init = self.init
        if not isinstance(init, str):
            init = check_array(init, dtype=X.dtype, copy=True, order="C")
            self._validate_center_shape(X, init)
        if sparse:
            # scikit-learn draws the starts from the sparse X itself (it cannot centre
            # it); the iterations then run on a dense copy, which gives its answer.
            dense = X.toarray()
            mean = np.zeros(X.shape[1])
            centered = X
        else:
            # scikit-learn draws its starting centers on centered data; draw them the same
            # way so a random_state gives the same starts, then hand them back uncentered.
            dense = X
            mean = X.mean(axis=0)
            centered = X - mean
            if not isinstance(init, str):
                init = init - mean
        norms = row_norms(centered, squared=True)
        # how far another summation order puts a center's coordinate (n terms, each at
        # most the largest coordinate)
        largest = max(abs(float(X.max())), abs(float(X.min()))) if X.size else 0.0
        center_rounding = X.shape[0] * _EPS * largest
        weighted = sample_weight is not None
        weights = _check_sample_weight(sample_weight, X, dtype=X.dtype)
        # Every run's start first: scikit-learn's runs draw from random_state only there, so
        # the draws are the same, and the centred copy is gone before the engine makes its
        # own. One BLAS thread for the init's products, the same bits (each output entry is
        # one thread's sum either way): OpenBLAS's workers spin for a while after a call,
        # and on a 2-core host they took 10 % from the engine's Lloyd threads.
        with _get_threadpool_controller().limit(limits=1, user_api="blas"):
            starts = [
                self._init_centroids(
                    centered,
                    x_squared_norms=norms,
                    init=init,
                    random_state=random_state,
                    sample_weight=weights,
                )
                for _ in range(self._n_init)
            ]
        del norms
        if not weighted:
            centered = None  # the engine centres a copy of its own
        elif sparse:
            centered = dense - mean  # the weighted runs iterate here, on dense centred rows
        best = None
        for start in starts:
            if weighted:
                run = _weighted_lloyd(
                    centered, weights, start, self.max_iter, self._tol, center_rounding
                )
                run = (run[0], run[1], run[2] + mean, run[3])
            else:
                engine = _KMeans(
                    n_clusters=self.n_clusters,
                    init=start + mean,
                    n_init=1,
                    max_iter=self.max_iter,
                    tol=self.tol,
                ).fit(dense)
                require(not engine.rounding_decided_, _WITHIN_ROUNDING)
                run = (
                    np.asarray(engine.labels_, dtype=np.int32),
                    engine.inertia_,
                    np.asarray(engine.cluster_centers_),
                    engine.n_iter_,
                )
            if best is not None and not _is_same_clustering(run[0], best[0], self.n_clusters):
                # the two inertias are sums another order rounds its own way
                gap = abs(run[1] - best[1])
                require(
                    gap > _inertia_rounding(X.shape, max(run[1], best[1]), center_rounding),
                    "two runs' inertias within rounding of each other",
                )
            if best is None or (
                run[1] < best[1] and not _is_same_clustering(run[0], best[0], self.n_clusters)
            ):
                best = run
        labels, inertia, centers, n_iter = best
        distinct = len(set(labels))
        if distinct < self.n_clusters:
            warnings.warn(
                f"Number of distinct clusters ({distinct}) found smaller than "
                f"n_clusters ({self.n_clusters}). Possibly due to duplicate points in X.",
                ConvergenceWarning,
                stacklevel=3,
            )
        self.cluster_centers_ = centers
        self._n_features_out = centers.shape[0]
        self.labels_ = labels
        self.inertia_ = float(inertia)
        self.n_iter_ = int(n_iter)
        return self


_WITHIN_ROUNDING = "an assignment or the stop within rounding of its threshold"


def _clear_assignment(X, dist, centers, center_rounding):
    """The nearest centers in the squared distances ``dist``, or Unsupported where a
    sample's runner-up lies within rounding of its nearest: each side's computation of the
    scores (|x|^2 + |c|^2 - 2 x.c, d + 2 roundings each, four times over) and centers off
    by ``center_rounding`` per coordinate (moving a score by 2 |x - c| sqrt(d) of it)."""
    labels = np.argmin(dist, axis=1).astype(np.int32)
    if centers.shape[0] > 1:
        two = np.partition(dist, 1, axis=1)[:, :2]
        d = X.shape[1]
        x_norms = np.einsum("ij,ij->i", X, X)
        c_norm = float(np.max(np.einsum("ij,ij->i", centers, centers)))
        bound = 16 * (d + 2) * _EPS * (x_norms + c_norm) + 4 * np.sqrt(d) * center_rounding * (
            np.sqrt(x_norms) + np.sqrt(c_norm)
        )
        require(bool(np.all(two[:, 1] - two[:, 0] > bound)), _WITHIN_ROUNDING)
    return labels


def _shift_rounding(shift, tol, shape, k, center_rounding):
    """How far another computation of Lloyd's total squared center shift, and of its
    tolerance, may sit from these (see the engine's ``lloyd``)."""
    n, d = shape
    cells = k * d
    return (
        4 * np.sqrt(shift * cells) * center_rounding
        + 4 * cells * center_rounding**2
        + 4 * (cells + 2) * _EPS * shift
        + 4 * n * _EPS * tol
    )


def _inertia_rounding(shape, inertia, center_rounding):
    """How far another summation of an inertia (n d squared differences, to centers off by
    ``center_rounding`` per coordinate) may sit from this one."""
    n, d = shape
    cells = n * d
    return 4 * cells * _EPS * inertia + 4 * np.sqrt(cells * inertia) * center_rounding


def _weighted_lloyd(X, weights, centers, max_iter, tol, center_rounding):
    """Lloyd's iterations with sample weights, by scikit-learn's rule: assign each sample
    to its nearest center, move each center to the weighted mean of its samples, stop when
    the labels repeat (strict convergence) or the centers moved by at most ``tol`` in total
    squared distance, then re-assign against the final centers. Returns
    ``(labels, inertia, centers, n_iter)``; an assignment or stop within rounding of its
    threshold is Unsupported."""
    k = centers.shape[0]
    rows = np.arange(X.shape[0])
    labels_old = None
    strict = False
    for it in range(max_iter):
        dist = _pairwise(X, centers, metric="sqeuclidean")
        labels = _clear_assignment(X, dist, centers, center_rounding)
        mass = np.bincount(labels, weights=weights, minlength=k)
        require(np.all(mass > 0), "an empty cluster (scikit-learn relocates it)")
        sums = np.column_stack(
            [np.bincount(labels, weights=weights * col, minlength=k) for col in X.T]
        )
        new = sums / mass[:, None]
        shift = np.sum((new - centers) ** 2)
        centers = new
        if labels_old is not None and np.array_equal(labels, labels_old):
            strict = True
            break
        require(
            abs(shift - tol) > _shift_rounding(shift, tol, X.shape, k, center_rounding),
            _WITHIN_ROUNDING,
        )
        if shift <= tol:
            break
        labels_old = labels
    dist = _pairwise(X, centers, metric="sqeuclidean")
    if not strict:
        labels = _clear_assignment(X, dist, centers, center_rounding)
    inertia = float(np.dot(weights, dist[rows, labels]))
    return labels, inertia, centers, it + 1


class MeanShift(_SkMeanShift):
    __doc__ = _SkMeanShift.__doc__

    @native_path(_SkMeanShift.fit, fits=True)
    def fit(self, X, y=None):
        self._validate_params()
        require(not issparse(X), "sparse X")
        X = validate_data(self, X)
        require(X.dtype == np.float64, f"X of dtype {X.dtype}")
        seeds = self.seeds
        if seeds is not None:
            seeds = np.asarray(seeds, dtype=np.float64)
            require(seeds.ndim == 2 and seeds.shape[1] == X.shape[1], "seeds of another shape")
        bandwidth = self.bandwidth
        require(bandwidth is None or bandwidth > 0, f"bandwidth={bandwidth!r}")
        native = _MeanShift(
            bandwidth=None if bandwidth is None else float(bandwidth),
            seeds=seeds,
            bin_seeding=bool(self.bin_seeding),
            min_bin_freq=int(self.min_bin_freq),
            cluster_all=bool(self.cluster_all),
            max_iter=int(self.max_iter),
        ).fit(X)
        centers = np.asarray(native.cluster_centers_, dtype=np.float64)
        _check_clear_labels(X, centers, float(native.bandwidth_), bool(self.cluster_all))
        self.cluster_centers_ = centers
        self.labels_ = np.asarray(native.labels_, dtype=int)
        self.n_iter_ = int(native.n_iter_)
        return self


def _check_clear_labels(X, centers, bandwidth, cluster_all):
    """Unsupported where a sample's label hangs on rounding: its nearest center within
    rounding of the next (scikit-learn's neighbour search, a tree, breaks such ties its
    own way), or, with ``cluster_all=False``, its distance within rounding of the
    bandwidth."""
    if len(centers) < 2 and cluster_all:
        return
    dist = _pairwise(X, centers, metric="euclidean")
    nearest = np.partition(dist, 1, axis=1)[:, :2] if len(centers) > 1 else dist[:, :1]
    norms = np.einsum("ij,ij->i", X, X) + largest_square_norm(centers)
    slack = DistanceRounding(X.shape[1], 2, norms)
    if len(centers) > 1:
        gaps = nearest[:, 1] - nearest[:, 0] - slack.of_gaps(nearest)[:, 0]
        require(bool(np.all(gaps > 0)), "a sample's nearest centers within rounding")
    if not cluster_all:
        first = nearest[:, :1]
        require(
            bool(np.all(np.abs(first - bandwidth) > slack.of(first))),
            "a sample within rounding of the bandwidth from its center",
        )
