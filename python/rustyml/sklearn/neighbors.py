"""``sklearn.neighbors`` with rustyml's k-nearest engine behind the k-neighbour search.

``NearestNeighbors``, ``KNeighborsClassifier`` and ``KNeighborsRegressor`` keep
scikit-learn's fit (it only stores the data, or builds a tree: cheap next to the queries),
so every fitted attribute, ``radius_neighbors`` and ``kneighbors_graph`` stay
scikit-learn's own; the native engine answers ``kneighbors`` (and so the regressor's
``predict``, which scikit-learn builds on it) and the classifier's ``predict`` /
``predict_proba`` for Minkowski distances (``p >= 1``, the euclidean / manhattan /
chebyshev names, or their float64 ``DistanceMetric`` objects) and the cosine distance
(scikit-learn's brute force, float64 data) with uniform,
inverse-distance or callable weights, single- or multi-output, dense or sparse (on a
dense copy); ``kneighbors()`` of the training set leaves each sample out, as
scikit-learn's. An answer is native only where no tie decides it: two distances within
their rounding of each other (the engine's computation against scikit-learn's) count as
tied, as equal ones do.

With ``metric="precomputed"`` the neighbours are selected from the given distances: a
dense matrix's rows where no tie decides them (scikit-learn orders ties by NumPy's
partition and sort), a sparse graph's stored entries by value with ties in stored order
(scikit-learn's stable sort, so always).
"""

import warnings

import numpy as np
from scipy.sparse import issparse
from sklearn import neighbors as _sk
from sklearn.exceptions import EfficiencyWarning
from sklearn.metrics import DistanceMetric
from sklearn.neighbors._base import KNeighborsMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from rustyml import _native
from rustyml.machine_learning import KNN as _KNN
from rustyml.sklearn._dispatch import Unsupported, dense_copy, engine, native_path, record, require
from rustyml.sklearn._rounding import DistanceRounding, largest_square_norm

__all__ = ["KNeighborsClassifier", "KNeighborsRegressor", "NearestNeighbors"]


_METRIC_P = {
    "euclidean": 2,
    "l2": 2,
    "manhattan": 1,
    "cityblock": 1,
    "l1": 1,
    "chebyshev": np.inf,
    "infinity": np.inf,
}


# scikit-learn's float64 DistanceMetric objects with a fixed Minkowski exponent
_METRIC_OBJECT_P = {
    "EuclideanDistance64": 2,
    "ManhattanDistance64": 1,
    "ChebyshevDistance64": np.inf,
}


# scikit-learn's cosine distances normalise each row by its norm, but leave a row whose norm
# is below 10 eps as it is (``normalize``'s ``_handle_zeros_in_scale``: a silent difference
# once seen here, on rows scaled by 1e-43); the door answers for zero rows (similarity 0 on
# both sides) and rows whose squared norm lies clear of that threshold (by far more than
# either computation's rounding) and of float64's overflow
_COSINE_SQUARE_NORMS = (1.1 * (10 * np.finfo(np.float64).eps) ** 2, 1e280)


def _cosine_rows_in_range(X):
    """Whether every row of ``X`` is zero or has a squared norm clear of float64's limits;
    and whether some row is zero."""
    sq = np.einsum("ij,ij->i", X, X)
    low, high = _COSINE_SQUARE_NORMS
    zero = ~X.any(axis=1)
    return bool((zero | ((sq >= low) & (sq <= high))).all()), bool(zero.any())


def _minkowski_p(est):
    """The Minkowski exponent of the estimator's metric, or Unsupported."""
    require(est.metric_params in (None, {}), "metric_params")
    if isinstance(est.metric, DistanceMetric):
        name = type(est.metric).__name__
        require(name in _METRIC_OBJECT_P, f"metric={name}")
        return float(_METRIC_OBJECT_P[name])
    if est.metric == "minkowski":
        p = est.p
        require(p is not None and not isinstance(p, bool), f"p={p!r}")
        require(p >= 1, f"p={p!r} < 1")
        return float(p)
    require(isinstance(est.metric, str) and est.metric in _METRIC_P, f"metric={est.metric!r}")
    return float(_METRIC_P[est.metric])


_SkKNeighborsClassifier = _sk.KNeighborsClassifier
_SkKNeighborsRegressor = _sk.KNeighborsRegressor
_SkNearestNeighbors = _sk.NearestNeighbors


class _NativeSearch:
    """The k-nearest search of the three neighbour estimators: scikit-learn's fit (it only
    stores the data, or builds a tree: cheap next to the queries) plus the native engine
    over the same data, which answers ``kneighbors`` for queries it supports."""

    def fit(self, X, y=None):
        self.__dict__.pop("_rustyml_engine", None)
        self.__dict__.pop("_rustyml_reach", None)
        super().fit(X, y)
        # From here on scikit-learn's fitted state stands whatever happens: a query the
        # engine cannot answer goes to scikit-learn's methods, which use it.
        try:
            require(
                not (
                    isinstance(self, _SkKNeighborsClassifier)
                    and isinstance(self.metric, DistanceMetric)
                ),
                "a DistanceMetric object (scikit-learn's classifiers do not take one)",
            )
            weights = getattr(self, "weights", "uniform")
            # None is scikit-learn's other name for uniform weights; a callable weighs the
            # native neighbours' distances, as in scikit-learn
            require(
                callable(weights) or weights in (None, "uniform", "distance"),
                f"weights={weights!r}",
            )
            if isinstance(self.metric, str) and self.metric == "precomputed":
                require(self.metric_params in (None, {}), "metric_params")
                require(self._fit_method == "brute", f"precomputed {self._fit_method}")
                self._rustyml_engine = _GivenDistances()
                record(self, "fit", "rustyml")
                return self
            cosine = isinstance(self.metric, str) and self.metric == "cosine"
            if cosine:
                require(self.metric_params in (None, {}), "metric_params")
                # scikit-learn takes cosine by brute force only (its error otherwise)
                require(self._fit_method == "brute", f"cosine {self._fit_method}")
                p = None
            else:
                p = _minkowski_p(self)
            # scikit-learn searches a sparse X by brute force: the same distances as its
            # dense copy's
            # (a tree given as X leaves its data as a memoryview)
            fit_X = dense_copy(self._fit_X) if issparse(self._fit_X) else np.asarray(self._fit_X)
            require(np.isfinite(fit_X).all(), "non-finite training data")
            # integers are searched as float64, exactly below 2**53
            require(
                fit_X.dtype.kind not in "iu" or (np.abs(fit_X) < 2**53).all(),
                "integers beyond 2**53",
            )
            if cosine:
                in_range, has_zero = _cosine_rows_in_range(np.asarray(fit_X, dtype=np.float64))
                require(in_range, "cosine: a row norm near float64's limits")
        except Unsupported as why:
            record(self, "fit", "scikit-learn", str(why))
            return self  # fitted by scikit-learn alone: later queries fall back
        self._rustyml_p = p
        # scikit-learn's distance of a zero row to itself is 0 in a training-set query (its
        # diagonal), 1 elsewhere: such queries go to it
        self._rustyml_zero_rows = cosine and has_zero
        self.__dict__.pop("_rustyml_reach", None)
        if cosine:
            metric, p = "cosine", 2.0
        else:
            metric = "chebyshev" if p == np.inf else "minkowski"
        # k is given per query; the engine's own default only has to be valid.
        native = _KNN(n_neighbors=1, weights="uniform", metric=metric, p=2 if p == np.inf else p)
        # The engine only searches: votes and averages are formed here from its
        # neighbours, so the labels it is given are placeholders.
        native.fit(np.asarray(fit_X, dtype=np.float64), np.zeros(self.n_samples_fit_))
        self._rustyml_engine = native
        record(self, "fit", "rustyml")
        return self

    def _native_query(self, X):
        native = engine(self)
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=None, accept_sparse=True)
        if issparse(X):
            # scikit-learn's trees refuse sparse queries (its error); brute force takes them
            require(self._fit_method == "brute", f"sparse queries of a {self._fit_method}")
            X = dense_copy(X)
        if X.dtype.kind in "iu":
            # scikit-learn's trees query a float64 copy (exact below 2**53); its brute force
            # takes integer queries through another distance computation
            require(self._fit_method != "brute", f"X of dtype {X.dtype} (brute)")
            require(bool((np.abs(X) < 2**53).all()), "integers beyond 2**53")
            X = X.astype(np.float64)
        require(X.dtype.kind == "f", f"X of dtype {X.dtype} ({self._fit_method})")
        require(X.ndim == 2 and X.shape[0] > 0, f"X of shape {X.shape}")
        require(np.isfinite(X).all(), "non-finite X")
        return native, X

    def _native_neighbours(self, X, k, distances=True, ordered=True, labels=None):
        """The native k nearest training samples of each query: of each training sample,
        less itself, when ``X`` is None (scikit-learn's convention). Returned ``distances``
        need float64 queries, or a tree's (scikit-learn's brute force computes float32 ones
        in its own mixed precision); the votes of a classifier need only the set of
        neighbours, not their ``ordered`` sequence, and not even the set where every
        candidate tied at the k-th distance has the same ``labels`` row (any choice among
        them casts the same votes)."""
        on_training_set = X is None
        if isinstance(engine(self), _GivenDistances):
            return self._given_neighbours(X, k)
        native, Xq = self._native_query(self._fit_X if on_training_set else X)
        if distances:
            # scikit-learn's trees hold and query float64 copies: float32 data is searched
            # in float64, as the engine searches; its brute force computes float32 data in
            # its own mixed precision
            require(
                Xq.dtype == np.float64 or self._fit_method != "brute",
                "float32 queries of a brute-force search",
            )
        require(
            isinstance(k, (int, np.integer)) and not isinstance(k, bool) and k > 0, "n_neighbors"
        )
        k = int(k) + on_training_set
        require(k <= self.n_samples_fit_, "n_neighbors larger than the training set")
        # Each search orders equal distances its own way (a tree by its traversal, the
        # engine lower index first), and duplicates, grids, integer and float32 data make
        # them common: answers are native only where no tie decides them, which one more
        # neighbour tells. Votes need only the k-th neighbour apart from the next; the
        # neighbours themselves (and so a regressor's average) need their whole order.
        if self._rustyml_p is None:
            # cosine: scikit-learn computes float32 data in float32 (beyond the bound)
            require(Xq.dtype == np.float64, f"cosine of {Xq.dtype} data")
            require(_cosine_rows_in_range(Xq)[0], "cosine: a query norm near float64's limits")
            require(
                not (on_training_set and self._rustyml_zero_rows),
                "cosine: a zero training row queried against itself",
            )
        Xq = np.asarray(Xq, dtype=np.float64)
        extra = int(k < self.n_samples_fit_)
        dist, ind = native.kneighbors(Xq, k + extra)
        # Two distances closer than their rounding (the engine's and scikit-learn's
        # computations of them) are a tie too: each search may order them either way.
        slack = _rounding(self, Xq)
        gaps = np.diff(dist, axis=1) - slack.of_gaps(dist)
        tied = ~(gaps > 0).all(axis=1) if ordered else ~(gaps[:, k - 1 :] > 0).all(axis=1)
        if tied.any() and not ordered and labels is not None:
            tied[tied] = ~_tie_casts_one_vote(native, Xq[tied], k, labels, slack.rows(tied))
        require(not tied.any(), "tied distances (each search orders them its own way)")
        dist, ind = dist[:, :k], ind[:, :k]
        return _without_self(dist, ind) if on_training_set else (dist, ind)

    def _given_neighbours(self, X, k):
        """``metric="precomputed"``: the k nearest columns of each row of the given distances
        (the training graph or matrix itself, less each sample, when ``X`` is None)."""
        check_is_fitted(self)
        require(
            isinstance(k, (int, np.integer)) and not isinstance(k, bool) and k > 0, "n_neighbors"
        )
        on_training_set = X is None
        k = int(k) + on_training_set
        require(k <= self.n_samples_fit_, "n_neighbors larger than the training set")
        D = self._fit_X if on_training_set else X
        if issparse(D):
            dist, ind = _graph_neighbours(D, k)
        else:
            # scikit-learn checks a dense matrix (its errors), reads it as float64 and
            # selects by NumPy's partition and sort: ties are left to it
            require(isinstance(D, np.ndarray) and D.dtype == np.float64, "D not float64")
            require(D.ndim == 2 and D.shape[0] > 0, f"D of shape {D.shape}")
            require(D.shape[1] == self.n_samples_fit_, "D of another width (scikit-learn's error)")
            require(np.isfinite(D).all() and (D >= 0).all(), "non-finite or negative D")
            dist, ind, tie_free = _native.math.distance.given_nearest(D, k)
            require(tie_free, "tied distances (scikit-learn's order is NumPy's sort)")
        return _without_self(dist, ind) if on_training_set else (dist, ind)

    @native_path(KNeighborsMixin.kneighbors)
    def kneighbors(self, X=None, n_neighbors=None, return_distance=True):
        k = self.n_neighbors if n_neighbors is None else n_neighbors
        dist, ind = self._native_neighbours(X, k)
        return (dist, ind) if return_distance else ind


class _GivenDistances:
    """The engine of a ``metric="precomputed"`` fit: the distances come with each query."""


# the formats whose stored entries scikit-learn reads as the candidates (it refuses the others)
_GRAPH_FORMATS = ("csr", "csc", "coo", "lil")


def _graph_neighbours(graph, k):
    """scikit-learn's neighbours of a sparse precomputed graph: each row's k smallest stored
    entries, equal values in stored order (its stable sort), with its warning when a row was
    not stored sorted."""
    require(graph.format in _GRAPH_FORMATS, f"a {graph.format} graph (scikit-learn's error)")
    csr = graph if graph.format == "csr" else graph.asformat("csr")
    require(csr.dtype == np.float64, f"a graph of dtype {csr.dtype}")
    require(csr.shape[0] > 0, "an empty graph")
    data = csr.data
    require(np.isfinite(data).all() and (data >= 0).all(), "non-finite or negative entries")
    indptr = np.asarray(csr.indptr, dtype=np.int64)
    require(np.diff(indptr).min() >= k, "a row with fewer than k entries (scikit-learn's error)")
    dist, ind, stored_sorted = _native.math.distance.graph_nearest(
        data, np.asarray(csr.indices, dtype=np.int64), indptr, k
    )
    if not stored_sorted:
        warnings.warn(
            "Precomputed sparse input was not sorted by row values. Use the function "
            "sklearn.neighbors.sort_graph_by_row_values to sort the input by row values, "
            "with warn_when_not_sorted=False to remove this warning.",
            EfficiencyWarning,
        )
    # scikit-learn's indices are the graph's own entries
    return dist, ind.astype(csr.indices.dtype, copy=False)


def _rounding(est, Xq):
    """The rounding of the engine's distances from the queries ``Xq`` against
    scikit-learn's."""
    if est._rustyml_p is None:
        return DistanceRounding.cosine(Xq.shape[1], Xq.shape[0])
    p = est._rustyml_p
    if p != 2:  # no product form: the norms do not enter the bound
        return DistanceRounding(Xq.shape[1], p, np.zeros(Xq.shape[0]))
    norms = np.einsum("ij,ij->i", Xq, Xq) + _largest_square_norm(est)
    return DistanceRounding(Xq.shape[1], p, norms)


def _largest_square_norm(est):
    """The largest squared norm of a training sample (computed once per fit)."""
    found = est.__dict__.get("_rustyml_reach")
    if found is None:
        fit_X = est._fit_X
        fit_X = dense_copy(fit_X) if issparse(fit_X) else np.asarray(fit_X, dtype=np.float64)
        found = largest_square_norm(fit_X)
        est.__dict__["_rustyml_reach"] = found
    return found


def _tie_casts_one_vote(native, Xq, k, labels, slack):
    """For queries whose k-th and (k+1)-th nearest distances tie (within ``slack``, their
    rounding): whether every training sample tied with the k-th has the same ``labels``
    row, so that whichever of them a search keeps, the votes are the same. The search
    widens until it passes the tie (or holds the whole training set)."""
    n_fit = labels.shape[0]
    m = min(2 * (k + 1), n_fit)
    while True:
        dist, ind = native.kneighbors(Xq, m)
        kth = dist[:, k - 1 : k]
        reach = slack.of(kth)
        ties = np.abs(dist - kth) <= slack.of(dist) + reach
        if m == n_fit or not ties[:, -1].any():
            break
        m = min(2 * m, n_fit)
    at_kth = ties
    first = np.argmax(at_kth, axis=1)
    reference = labels[ind[np.arange(ind.shape[0]), first]]
    same = (labels[ind] == reference[:, None, :]).all(axis=2)
    return (same | ~at_kth).all(axis=1)


def _without_self(dist, ind):
    """scikit-learn's answer for the training set queried against itself: each sample's
    k + 1 neighbours less the sample itself, or less the first one where k + 1 duplicates
    of it crowd it out."""
    others = ind != np.arange(ind.shape[0])[:, None]
    others[others.all(axis=1), 0] = False
    shape = (ind.shape[0], ind.shape[1] - 1)
    return dist[others].reshape(shape), ind[others].reshape(shape)


class NearestNeighbors(_NativeSearch, _SkNearestNeighbors):
    __doc__ = _SkNearestNeighbors.__doc__


class KNeighborsRegressor(_NativeSearch, _SkKNeighborsRegressor):
    """scikit-learn's KNeighborsRegressor; its ``predict`` averages the neighbours that
    the native ``kneighbors`` finds (scikit-learn's own averaging)."""

    __doc__ = _SkKNeighborsRegressor.__doc__


class KNeighborsClassifier(_NativeSearch, _SkKNeighborsClassifier):
    __doc__ = _SkKNeighborsClassifier.__doc__

    def _neighbour_votes(self, X):
        """Per output, the class votes of each query's neighbours, summed in neighbour order
        as scikit-learn sums them (so multi-output and single-output fits agree bit for
        bit): a list of (n_queries, n_classes) arrays."""
        # a user's weight function is given the distances themselves
        y = getattr(self, "_y", None)  # (unfitted: the search below says so)
        y = y.reshape(-1, 1) if y is not None and y.ndim == 1 else y
        dist, ind = self._native_neighbours(
            X, self.n_neighbors, distances=callable(self.weights), ordered=False, labels=y
        )
        if callable(self.weights):
            weights = self.weights(dist)
            if np.any(np.all(weights == 0, axis=1)):
                raise ValueError(
                    "All neighbors of some sample is getting zero weights. Please modify "
                    "'weights' to avoid this case if you are using a user-defined function."
                )
        elif self.weights == "distance":
            with np.errstate(divide="ignore"):
                weights = 1.0 / dist
            exact = np.isinf(weights)
            rows = exact.any(axis=1)
            weights[rows] = exact[rows]
        else:
            weights = np.ones_like(dist)
        classes = self.classes_ if self.outputs_2d_ else [self.classes_]
        rows = np.arange(ind.shape[0])
        votes = []
        for k, classes_k in enumerate(classes):
            codes = y[ind, k]
            sums = np.zeros((ind.shape[0], len(classes_k)))
            for i in range(codes.shape[1]):
                sums[rows, codes[:, i]] += weights[:, i]
            votes.append(sums)
        return votes

    @native_path(_SkKNeighborsClassifier.predict)
    def predict(self, X):
        votes = self._neighbour_votes(X)
        classes = self.classes_ if self.outputs_2d_ else [self.classes_]
        out = [c[np.argmax(v, axis=1)] for c, v in zip(classes, votes)]
        return np.stack(out, axis=1) if self.outputs_2d_ else out[0]

    @native_path(_SkKNeighborsClassifier.predict_proba)
    def predict_proba(self, X):
        probas = []
        for sums in self._neighbour_votes(X):
            normalizer = sums.sum(axis=1)[:, np.newaxis]
            normalizer[normalizer == 0.0] = 1.0
            probas.append(sums / normalizer)
        return probas if self.outputs_2d_ else probas[0]
