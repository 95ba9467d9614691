"""The neighbour doors with ``metric="precomputed"``, against stock scikit-learn.

A precomputed search computes nothing: it selects entries of the given distances, so the
door's neighbours must be scikit-learn's exactly (indices and distances bit for bit), and
where scikit-learn's answer hangs on a tie it leaves to NumPy's sort the door runs
scikit-learn's search.
"""

import re
import warnings

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from scipy import sparse
from sklearn import neighbors as stock
from sklearn.exceptions import EfficiencyWarning
from sklearn.metrics import pairwise_distances

import rustyml.sklearn as door
from rustyml.sklearn import neighbors as door_neighbors

EPS = np.finfo(np.float64).eps


@pytest.fixture(autouse=True)
def _fresh_stats():
    door.dispatch_stats(reset=True)
    yield
    door.unpatch_sklearn()


def _paths(method):
    return {path: n for (_, name, path), n in door.dispatch_stats().items() if name == method and n}


def _distances(n_train=60, n_query=25, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X, Q = rng.random((n_train, d)), rng.random((n_query, d))
    return X, Q, pairwise_distances(X), pairwise_distances(Q, X)


def _assert_same(ours, theirs):
    (dist, ind), (sdist, sind) = ours, theirs
    np.testing.assert_array_equal(ind, sind)
    assert ind.dtype == sind.dtype
    # the distances are the given entries: bit for bit
    np.testing.assert_array_equal(dist, sdist)
    assert dist.dtype == sdist.dtype


@pytest.mark.parametrize("k", [1, 5, 60])
def test_dense_precomputed_neighbours_are_scikit_learns(k):
    _, _, DXX, DQX = _distances()
    ours = door_neighbors.NearestNeighbors(n_neighbors=k, metric="precomputed").fit(DXX)
    theirs = stock.NearestNeighbors(n_neighbors=k, metric="precomputed").fit(DXX)
    _assert_same(ours.kneighbors(DQX), theirs.kneighbors(DQX))
    np.testing.assert_array_equal(
        ours.kneighbors(DQX, return_distance=False), theirs.kneighbors(DQX, return_distance=False)
    )
    if k < DXX.shape[0]:
        # the training set itself, each sample left out
        _assert_same(ours.kneighbors(), theirs.kneighbors())
    assert set(_paths("kneighbors")) == {"rustyml"}


@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_precomputed_classifier_and_regressor_predict_as_scikit_learn(weights):
    X, Q, DXX, DQX = _distances(seed=1)
    rng = np.random.default_rng(2)
    labels, target = rng.integers(0, 3, X.shape[0]), rng.random(X.shape[0])
    params = {"n_neighbors": 7, "metric": "precomputed", "weights": weights}
    clf = door_neighbors.KNeighborsClassifier(**params).fit(DXX, labels)
    sclf = stock.KNeighborsClassifier(**params).fit(DXX, labels)
    np.testing.assert_array_equal(clf.predict(DQX), sclf.predict(DQX))
    np.testing.assert_array_equal(clf.predict_proba(DQX), sclf.predict_proba(DQX))
    reg = door_neighbors.KNeighborsRegressor(**params).fit(DXX, target)
    sreg = stock.KNeighborsRegressor(**params).fit(DXX, target)
    np.testing.assert_array_equal(reg.predict(DQX), sreg.predict(DQX))
    # the same neighbours as the features' own euclidean search (no ties in random data)
    np.testing.assert_array_equal(
        reg.kneighbors(DQX)[1],
        stock.NearestNeighbors(n_neighbors=7).fit(X).kneighbors(Q)[1],
    )
    assert set(_paths("predict")) == {"rustyml"}


def test_dense_ties_run_scikit_learns_search():
    # integer distances on a line: many equal values, whose order is NumPy's sort's
    points = np.arange(12.0)[:, None]
    D = np.abs(points - points.T)
    ours = door_neighbors.NearestNeighbors(n_neighbors=3, metric="precomputed").fit(D)
    theirs = stock.NearestNeighbors(n_neighbors=3, metric="precomputed").fit(D)
    _assert_same(ours.kneighbors(D), theirs.kneighbors(D))
    assert _paths("kneighbors") == {"scikit-learn": 1}


def test_dense_precomputed_errors_are_scikit_learns():
    _, _, DXX, DQX = _distances(n_train=10, n_query=3)
    ours = door_neighbors.NearestNeighbors(n_neighbors=3, metric="precomputed").fit(DXX)
    theirs = stock.NearestNeighbors(n_neighbors=3, metric="precomputed").fit(DXX)
    for bad in (DQX[:, :4], -DQX):
        with pytest.raises(ValueError) as stock_error:
            theirs.kneighbors(bad)
        with pytest.raises(ValueError, match=re.escape(str(stock_error.value))):
            ours.kneighbors(bad)


def _shuffled_graph(D, keep, seed):
    """A CSR graph of ``keep`` entries per row (of a varying count when ``keep`` is a list),
    stored in a random order, with some tied values."""
    rng = np.random.default_rng(seed)
    rows, cols, vals = [], [], []
    for i in range(D.shape[0]):
        count = keep[i % len(keep)] if isinstance(keep, list) else keep
        chosen = rng.permutation(D.shape[1])[:count]
        rows += [i] * count
        cols += list(chosen)
        vals += list(np.round(D[i, chosen], 1) + 0.05)  # rounding makes ties
    return sparse.csr_matrix((vals, (rows, cols)), shape=D.shape)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "lil"])
@pytest.mark.parametrize("keep", [8, [6, 9, 12]])
def test_sparse_graph_neighbours_are_scikit_learns_ties_in_stored_order(fmt, keep):
    _, _, DXX, DQX = _distances(seed=3)
    graph = _shuffled_graph(DQX, keep, seed=4)
    fit_graph = _shuffled_graph(DXX, keep, seed=5)
    query = graph.asformat(fmt)
    ours = door_neighbors.NearestNeighbors(n_neighbors=5, metric="precomputed").fit(fit_graph)
    theirs = stock.NearestNeighbors(n_neighbors=5, metric="precomputed").fit(fit_graph)
    with warnings.catch_warnings(record=True) as ours_warned:
        warnings.simplefilter("always")
        got = ours.kneighbors(query)
    with warnings.catch_warnings(record=True) as stock_warned:
        warnings.simplefilter("always")
        want = theirs.kneighbors(query)
    _assert_same(got, want)
    assert [(w.category, str(w.message)) for w in ours_warned] == [
        (w.category, str(w.message)) for w in stock_warned
    ]
    assert any(w.category is EfficiencyWarning for w in ours_warned)
    # the training graph (sorted by scikit-learn's fit), each sample left out
    _assert_same(ours.kneighbors(n_neighbors=4), theirs.kneighbors(n_neighbors=4))
    assert set(_paths("kneighbors")) == {"rustyml"}


def test_sparse_graph_errors_are_scikit_learns():
    _, _, DXX, DQX = _distances(n_train=10, n_query=3)
    ours = door_neighbors.NearestNeighbors(n_neighbors=3, metric="precomputed").fit(DXX)
    theirs = stock.NearestNeighbors(n_neighbors=3, metric="precomputed").fit(DXX)
    short = _shuffled_graph(DQX, 2, seed=6)
    for bad, error in (
        (sparse.dok_matrix(DQX), TypeError),  # explicit zeros
        (short, ValueError),  # fewer stored entries than neighbours
        (sparse.csr_matrix(-DQX), ValueError),
    ):
        with pytest.raises(error) as stock_error:
            theirs.kneighbors(bad)
        with pytest.raises(error, match=re.escape(str(stock_error.value))):
            ours.kneighbors(bad)
    assert "rustyml" not in _paths("kneighbors")


def test_precomputed_regressor_on_sparse_distance_queries():
    """scikit-learn's own regression test: a dense fit, queries as sparse full matrices (the
    zero diagonal is not stored, so each sample's nearest stored entry is another)."""
    rng = np.random.default_rng(7)
    X = 2 * rng.random((40, 5)) - 1
    y = ((X**2).sum(axis=1) < 0.25).astype(float)
    D = pairwise_distances(X)
    ours = door_neighbors.KNeighborsRegressor(n_neighbors=5, metric="precomputed").fit(D, y)
    theirs = stock.KNeighborsRegressor(n_neighbors=5, metric="precomputed").fit(D, y)
    for container in (sparse.csr_matrix, sparse.coo_array, sparse.lil_matrix):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EfficiencyWarning)
            np.testing.assert_array_equal(ours.predict(container(D)), theirs.predict(container(D)))
    assert set(_paths("kneighbors")) == {"rustyml"}


@pytest.mark.parametrize("algorithm", ["kd_tree", "ball_tree"])
def test_float32_and_integer_queries_of_a_tree_are_searched_in_float64(algorithm):
    """scikit-learn's trees hold and query float64 copies of float32 and integer data, as
    the engine searches them: the same neighbours, the distances to rounding (a tree sums
    the squared differences in float64, the engine finishes the product form exactly where
    it cancels: a few ulp of the distance)."""
    rng = np.random.default_rng(9)
    X32, Q32 = rng.random((300, 4), dtype=np.float32), rng.random((50, 4), dtype=np.float32)
    # wide integers: no two training points equally far from a query
    Xint, Qint = rng.integers(-(10**6), 10**6, (300, 3)), rng.integers(-(10**6), 10**6, (50, 3))
    for X, Q in ((X32, Q32), (Xint, Qint)):
        ours = door_neighbors.NearestNeighbors(n_neighbors=4, algorithm=algorithm).fit(X)
        theirs = stock.NearestNeighbors(n_neighbors=4, algorithm=algorithm).fit(X)
        for query in (Q, None):
            (dist, ind), (sdist, sind) = ours.kneighbors(query), theirs.kneighbors(query)
            np.testing.assert_array_equal(ind, sind)
            assert dist.dtype == sdist.dtype == np.float64
            np.testing.assert_allclose(dist, sdist, rtol=8 * np.finfo(np.float64).eps)
    assert set(_paths("kneighbors")) == {"rustyml"}
    # narrow integers tie, and a tree orders ties its own way; scikit-learn's brute force
    # computes float32 distances its own way: both run scikit-learn's search
    door.dispatch_stats(reset=True)
    grid = rng.integers(-3, 3, (300, 3))
    tied = door_neighbors.NearestNeighbors(n_neighbors=4, algorithm=algorithm).fit(grid)
    np.testing.assert_array_equal(
        tied.kneighbors(grid[:20])[1],
        stock.NearestNeighbors(n_neighbors=4, algorithm=algorithm)
        .fit(grid)
        .kneighbors(grid[:20])[1],
    )
    assert _paths("kneighbors") == {"scikit-learn": 1}
    door.dispatch_stats(reset=True)
    brute = door_neighbors.NearestNeighbors(n_neighbors=4, algorithm="brute").fit(X32)
    brute.kneighbors(Q32)
    assert _paths("kneighbors") == {"scikit-learn": 1}


@pytest.mark.parametrize("algorithm", ["auto", "kd_tree", "ball_tree", "brute"])
@pytest.mark.parametrize("k", [1, 3, 5])
def test_float64_ties_on_a_grid_leave_the_answer_to_scikit_learns_search(algorithm, k):
    # Integer-valued float64 data: equal distances everywhere, which each search orders its
    # own way (a tree by its traversal). Without the tie guard the door's brute-force
    # neighbours, probabilities and regression averages differed from scikit-learn's here.
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, (200, 2)).astype(float)
    y, target = rng.integers(0, 3, 200), rng.standard_normal(200)
    Q = rng.integers(0, 4, (50, 2)) + 0.5 * rng.integers(0, 2, (50, 2))
    params = {"n_neighbors": k, "algorithm": algorithm}
    ours = door_neighbors.KNeighborsClassifier(**params).fit(X, y)
    theirs = stock.KNeighborsClassifier(**params).fit(X, y)
    for got, want in zip(ours.kneighbors(Q), theirs.kneighbors(Q)):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(ours.predict_proba(Q), theirs.predict_proba(Q))
    np.testing.assert_array_equal(
        door_neighbors.KNeighborsRegressor(**params).fit(X, target).predict(Q),
        stock.KNeighborsRegressor(**params).fit(X, target).predict(Q),
    )


@pytest.mark.parametrize("algorithm", ["kd_tree", "brute"])
def test_distances_equal_but_for_rounding_leave_the_answer_to_scikit_learns_search(algorithm):
    # Each query between a mirrored pair of training samples (q + v and q - v, decimal
    # coordinates): the two distances are equal but for rounding, and the engine (by
    # products) and scikit-learn (a tree's direct differences, or its own products) round
    # them each its own way. Distinct by an ulp was once taken as no tie: the door's
    # nearest neighbour then differed from scikit-learn's for a fifth to a third of them.
    rng = np.random.default_rng(7)
    Q = np.round(rng.uniform(-50, 50, (80, 3)), 1)
    V = np.round(rng.uniform(-5, 5, (80, 3)), 1)
    X, y = np.concatenate([Q + V, Q - V]), np.repeat([0, 1], 80)
    ours = door_neighbors.KNeighborsClassifier(n_neighbors=1, algorithm=algorithm).fit(X, y)
    theirs = stock.KNeighborsClassifier(n_neighbors=1, algorithm=algorithm).fit(X, y)
    door.dispatch_stats(reset=True)
    for q in Q[:, None, :]:  # one query a call: an exact tie sends only its own call back
        np.testing.assert_array_equal(ours.kneighbors(q)[1], theirs.kneighbors(q)[1])
        np.testing.assert_array_equal(ours.predict(q), theirs.predict(q))
    # each answer is native where the pair's distances differ beyond rounding
    assert 5 <= _paths("kneighbors")["rustyml"] <= 70


@pytest.mark.parametrize("algorithm", ["kd_tree", "brute"])
def test_float64_queries_without_ties_stay_native(algorithm):
    rng = np.random.default_rng(1)
    X, y, Q = rng.random((300, 3)), rng.integers(0, 3, 300), rng.random((40, 3))
    ours = door_neighbors.KNeighborsClassifier(n_neighbors=5, algorithm=algorithm).fit(X, y)
    theirs = stock.KNeighborsClassifier(n_neighbors=5, algorithm=algorithm).fit(X, y)
    np.testing.assert_array_equal(ours.predict_proba(Q), theirs.predict_proba(Q))
    np.testing.assert_array_equal(ours.kneighbors(Q)[1], theirs.kneighbors(Q)[1])
    assert _paths("predict_proba") == {"rustyml": 1}
    assert _paths("kneighbors") == {"rustyml": 1}


@pytest.mark.parametrize("weights", ["uniform", "distance"])
@pytest.mark.parametrize("algorithm", ["kd_tree", "brute"])
def test_votes_tied_among_samples_of_one_label_stay_native(algorithm, weights):
    # Duplicated training samples (each copy with its sample's label) tie at the k-th
    # distance: whichever copy a search keeps casts the same vote, so the door answers.
    rng = np.random.default_rng(2)
    base = rng.random((60, 3))
    labels = rng.integers(0, 3, (60, 2))
    X, Y = np.repeat(base, 3, axis=0), np.repeat(labels, 3, axis=0)
    Q = np.vstack([base[:20] + 1e-3 * rng.standard_normal((20, 3)), rng.random((20, 3))])
    params = {"n_neighbors": 4, "algorithm": algorithm, "weights": weights}
    for y in (Y[:, 0], Y):
        ours = door_neighbors.KNeighborsClassifier(**params).fit(X, y)
        theirs = stock.KNeighborsClassifier(**params).fit(X, y)
        np.testing.assert_array_equal(ours.predict(Q), theirs.predict(Q))
        # Uniform votes are counts: bit for bit. Distance weights are the inverse distances,
        # which scikit-learn computes as |x|^2 + |q|^2 - 2 x.q: an error of a few eps
        # (|x|^2 + |q|^2 <= 6) in d^2, relative eps * 6 / (2 d^2) in each weight and at
        # most twice that in a normalised vote.
        bound = 0.0 if weights == "uniform" else 16 * 6 * EPS / theirs.kneighbors(Q)[0].min() ** 2
        for got, want in zip(
            np.atleast_3d(ours.predict_proba(Q)), np.atleast_3d(theirs.predict_proba(Q))
        ):
            np.testing.assert_allclose(got, want, rtol=0, atol=bound)
    assert _paths("predict") == {"rustyml": 2}
    assert _paths("predict_proba") == {"rustyml": 2}


def test_votes_tied_among_samples_of_two_labels_run_scikit_learns_search():
    # The same duplicates, one copy relabelled: the k-th neighbour's vote depends on which
    # copy a search keeps, so scikit-learn's own search answers.
    rng = np.random.default_rng(3)
    base = rng.random((30, 3))
    X, y = np.repeat(base, 2, axis=0), np.repeat(rng.integers(0, 2, 30), 2)
    y[1::2] = 1 - y[1::2]
    Q = base[:10] + 1e-3 * rng.standard_normal((10, 3))
    params = {"n_neighbors": 3, "algorithm": "brute"}
    ours = door_neighbors.KNeighborsClassifier(**params).fit(X, y)
    theirs = stock.KNeighborsClassifier(**params).fit(X, y)
    np.testing.assert_array_equal(ours.predict_proba(Q), theirs.predict_proba(Q))
    assert _paths("predict_proba") == {"scikit-learn": 1}


# metric="cosine": scikit-learn's brute force (``cosine_distances``) and the engine's scan
# differ by at most 2 (d + 3) eps per distance (the door's bound, taken four times over:
# see DistanceRounding.cosine)
def _cosine_bound(d):
    return 8 * (d + 3) * EPS


def _cosine_data(seed, n_train=200, n_query=40, d=6):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_train, d)) * rng.uniform(0.1, 100, (n_train, 1))
    Q = rng.standard_normal((n_query, d)) * rng.uniform(0.1, 100, (n_query, 1))
    return X, Q, rng.integers(0, 3, n_train), rng.standard_normal(n_train)


def _assert_cosine_neighbours(ours, theirs, d):
    (dist, ind), (sdist, sind) = ours, theirs
    np.testing.assert_array_equal(ind, sind)
    assert dist.dtype == sdist.dtype == np.float64
    np.testing.assert_allclose(dist, sdist, rtol=0, atol=_cosine_bound(d))


@pytest.mark.parametrize("k", [1, 5, 30])
def test_cosine_neighbours_are_scikit_learns_and_native(k):
    X, Q, _, _ = _cosine_data(0)
    ours = door_neighbors.NearestNeighbors(n_neighbors=k, metric="cosine").fit(X)
    theirs = stock.NearestNeighbors(n_neighbors=k, metric="cosine").fit(X)
    _assert_cosine_neighbours(ours.kneighbors(Q), theirs.kneighbors(Q), X.shape[1])
    _assert_cosine_neighbours(ours.kneighbors(), theirs.kneighbors(), X.shape[1])
    np.testing.assert_array_equal(
        ours.kneighbors(Q, return_distance=False), theirs.kneighbors(Q, return_distance=False)
    )
    assert _paths("kneighbors") == {"rustyml": 3}


def test_cosine_of_sparse_data_is_scikit_learns_and_native():
    # (rows with a single stored entry would tie: axis directions)
    X, Q, _, _ = _cosine_data(1, d=20)
    rng = np.random.default_rng(11)
    X, Q = X * (rng.random(X.shape) < 0.3), Q * (rng.random(Q.shape) < 0.3)
    X, Q = X[(X != 0).sum(axis=1) >= 2], Q[(Q != 0).sum(axis=1) >= 2]
    ours = door_neighbors.NearestNeighbors(n_neighbors=4, metric="cosine")
    theirs = stock.NearestNeighbors(n_neighbors=4, metric="cosine")
    ours.fit(sparse.csr_matrix(X)), theirs.fit(sparse.csr_matrix(X))
    _assert_cosine_neighbours(
        ours.kneighbors(sparse.csr_matrix(Q)), theirs.kneighbors(sparse.csr_matrix(Q)), X.shape[1]
    )
    assert _paths("kneighbors") == {"rustyml": 1}


@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_cosine_classifier_and_regressor_predict_as_scikit_learn(weights):
    X, Q, labels, target = _cosine_data(2)
    params = {"n_neighbors": 6, "metric": "cosine", "weights": weights}
    clf = door_neighbors.KNeighborsClassifier(**params).fit(X, labels)
    sclf = stock.KNeighborsClassifier(**params).fit(X, labels)
    np.testing.assert_array_equal(clf.predict(Q), sclf.predict(Q))
    # inverse-distance votes carry the distances' rounding: relative bound / d per weight,
    # at most twice that in a normalised vote
    dmin = sclf.kneighbors(Q)[0].min()
    atol = 0.0 if weights == "uniform" else 4 * _cosine_bound(X.shape[1]) / dmin
    np.testing.assert_allclose(clf.predict_proba(Q), sclf.predict_proba(Q), rtol=0, atol=atol)
    reg = door_neighbors.KNeighborsRegressor(**params).fit(X, target)
    sreg = stock.KNeighborsRegressor(**params).fit(X, target)
    scale = np.abs(target).sum()
    np.testing.assert_allclose(reg.predict(Q), sreg.predict(Q), rtol=1e-12, atol=atol * scale)
    assert _paths("predict") == {"rustyml": 1}
    assert _paths("predict_proba") == {"rustyml": 1}
    assert _paths("kneighbors") == {"rustyml": 1}  # the regressor's


def test_cosine_ties_leave_the_answer_to_scikit_learns_search():
    # Rows that are multiples of one another lie at the same cosine distance from every
    # query (exactly or but for rounding), and integer grids make equal angles common:
    # each answer must be scikit-learn's, the tied ones through its own search.
    rng = np.random.default_rng(3)
    base = rng.integers(-3, 4, (40, 3)).astype(float)
    X = np.vstack([base, 2 * base, 0.1 * base, base + 1e-17])
    X = X[X.any(axis=1)]
    Q = rng.integers(-3, 4, (30, 3)).astype(float)
    Q = Q[Q.any(axis=1)]
    labels = rng.integers(0, 3, X.shape[0])
    for k in (1, 3):
        ours = door_neighbors.KNeighborsClassifier(n_neighbors=k, metric="cosine").fit(X, labels)
        theirs = stock.KNeighborsClassifier(n_neighbors=k, metric="cosine").fit(X, labels)
        door.dispatch_stats(reset=True)
        for q in Q[:, None, :]:
            got, want = ours.kneighbors(q), theirs.kneighbors(q)
            np.testing.assert_array_equal(got[1], want[1])
            np.testing.assert_allclose(got[0], want[0], rtol=0, atol=_cosine_bound(3))
            np.testing.assert_array_equal(ours.predict_proba(q), theirs.predict_proba(q))
        # (scikit-learn's predict_proba asks the door's kneighbors again)
        assert _paths("kneighbors") == {"scikit-learn": 2 * Q.shape[0]}


def test_cosine_near_ties_fall_back_and_clear_gaps_stay_native():
    # Pairs of training rows at angles from each query that differ by about an ulp (within
    # rounding: scikit-learn's answer) or by far more (native).
    rng = np.random.default_rng(4)
    Q = rng.standard_normal((60, 5))
    V = rng.standard_normal((60, 5))
    V -= (np.einsum("ij,ij->i", V, Q) / np.einsum("ij,ij->i", Q, Q))[:, None] * Q
    # small next to q: the pair is each query's two nearest rows
    V *= 0.05 * np.sqrt(np.einsum("ij,ij->i", Q, Q) / np.einsum("ij,ij->i", V, V))[:, None]
    # q + v and q - v (v orthogonal to q up to rounding) are at equal angles from q
    X = np.concatenate([Q + V, Q - V])
    ours = door_neighbors.NearestNeighbors(n_neighbors=1, metric="cosine").fit(X)
    theirs = stock.NearestNeighbors(n_neighbors=1, metric="cosine").fit(X)
    for q in Q[:, None, :]:
        np.testing.assert_array_equal(ours.kneighbors(q)[1], theirs.kneighbors(q)[1])
    assert _paths("kneighbors") == {"scikit-learn": Q.shape[0]}
    door.dispatch_stats(reset=True)
    Xfar = np.concatenate([Q + V, Q - 1.5 * V])
    ours.fit(Xfar)
    theirs.fit(Xfar)
    for q in Q[:, None, :]:
        np.testing.assert_array_equal(ours.kneighbors(q)[1], theirs.kneighbors(q)[1])
    assert _paths("kneighbors") == {"rustyml": Q.shape[0]}


def test_cosine_zero_rows_are_scikit_learns():
    # a zero row is at distance 1 from everything; scikit-learn zeroes a training row's
    # distance to itself, so a zero training row's own query falls back
    X, Q, _, _ = _cosine_data(5, n_train=50, n_query=10)
    X[7] = 0.0
    Q[3] = 0.0
    ours = door_neighbors.NearestNeighbors(n_neighbors=3, metric="cosine").fit(X)
    theirs = stock.NearestNeighbors(n_neighbors=3, metric="cosine").fit(X)
    for q in Q[:, None, :]:
        _assert_cosine_neighbours(ours.kneighbors(q), theirs.kneighbors(q), X.shape[1])
    _assert_cosine_neighbours(ours.kneighbors(), theirs.kneighbors(), X.shape[1])
    paths = _paths("kneighbors")
    assert paths["rustyml"] == 9  # the zero query ties everywhere
    assert paths["scikit-learn"] == 2


@pytest.mark.parametrize(
    "why",
    ["float32", "tiny", "below_ten_eps", "huge", "tree"],
)
def test_cosine_outside_the_door_falls_back_to_scikit_learn(why):
    X, Q, _, _ = _cosine_data(6, n_train=50, n_query=10)
    params = {"n_neighbors": 3, "metric": "cosine"}
    if why == "float32":
        X, Q = X.astype(np.float32), Q.astype(np.float32)
    elif why == "tiny":
        X[4] *= 1e-150
    elif why == "below_ten_eps":
        # scikit-learn leaves rows of norm below 10 eps unnormalised: its "cosine" distance
        # of such rows is another one (the door once answered natively here, wrongly)
        X *= 1e-43
    elif why == "huge":
        Q[2] *= 1e150
    else:
        params["algorithm"] = "kd_tree"  # scikit-learn's error, as its own
        with pytest.raises(ValueError) as theirs:
            stock.NearestNeighbors(**params).fit(X)
        with pytest.raises(ValueError, match=re.escape(str(theirs.value))):
            door_neighbors.NearestNeighbors(**params).fit(X)
        return
    ours = door_neighbors.NearestNeighbors(**params).fit(X)
    theirs = stock.NearestNeighbors(**params).fit(X)
    got, want = ours.kneighbors(Q), theirs.kneighbors(Q)
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[0], want[0])
    assert _paths("kneighbors") == {"scikit-learn": 1}
