"""The TSNE door against scikit-learn's own TSNE.

t-SNE's descent amplifies rounding: moving the input by 1e-9 (relative) moves scikit-learn's
own embedding by its whole scale within the 250 exaggerated iterations, and its Barnes-Hut
sums depend on its thread count. So the door is held to what scikit-learn can be held to
itself: an embedding at least as good, by the KL divergence it minimises and by
trustworthiness, as scikit-learn's fits of copies of the data moved by 1e-9, within their
own spread; and everything that is not chaotic (dtypes, counters, learning rate, random
draws, the parameter and input errors) exactly as scikit-learn reports it.
"""

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

import rustyml.sklearn as door
from rustyml.sklearn import manifold as door_manifold


def _data(name):
    from sklearn.datasets import load_digits, load_iris

    return load_digits().data[:150] if name == "digits" else load_iris().data


def _stock_runs(X, params, copies=3):
    """scikit-learn's fits of X and of copies moved by 1e-9: their KL divergences and
    trustworthiness."""
    from sklearn.manifold import TSNE, trustworthiness

    kls, trusts = [], []
    for seed in range(copies):
        moved = (
            X
            if seed == 0
            else X * (1 + 1e-9 * np.random.default_rng(seed).standard_normal(X.shape))
        )
        stock = TSNE(**params).fit(moved)
        kls.append(stock.kl_divergence_)
        trusts.append(trustworthiness(X, stock.embedding_, n_neighbors=5))
    return np.array(kls), np.array(trusts), stock


@pytest.mark.parametrize(
    "data, params",
    [
        ("digits", {}),
        ("iris", {"init": "random", "perplexity": 20.0}),
        ("iris", {"method": "exact", "max_iter": 300}),
        ("digits", {"n_components": 3, "angle": 0.3}),
        ("iris", {"n_components": 1}),
    ],
)
def test_tsne_embeds_as_well_as_scikit_learn(data, params):
    from sklearn.manifold import trustworthiness

    X = _data(data)
    params = {"random_state": 0, "max_iter": 500, **params}
    door.dispatch_stats(reset=True)
    ours = door_manifold.TSNE(**params)
    embedding = ours.fit_transform(X)
    assert door.dispatch_stats()[("TSNE", "fit_transform", "rustyml")] == 1
    kls, trusts, stock = _stock_runs(X, params)
    spread = kls.max() - kls.min()
    assert ours.kl_divergence_ <= kls.max() + spread, (ours.kl_divergence_, kls)
    trust = trustworthiness(X, embedding, n_neighbors=5)
    assert trust >= trusts.min() - (trusts.max() - trusts.min()), (trust, trusts)
    assert embedding is ours.embedding_
    assert embedding.dtype == stock.embedding_.dtype == np.float32
    assert embedding.shape == stock.embedding_.shape
    # Both stop at a progress check (every 50 iterations) or at the last iteration; which
    # check stops a chaotic descent is not shared.
    for n_iter in (ours.n_iter_, stock.n_iter_):
        assert n_iter == params["max_iter"] - 1 or (n_iter + 1) % 50 == 0
    assert ours.learning_rate_ == stock.learning_rate_
    assert ours.n_features_in_ == stock.n_features_in_


def test_tsne_draws_what_scikit_learn_draws_and_is_deterministic():
    from sklearn.manifold import TSNE

    X = np.random.default_rng(0).standard_normal((60, 6))
    for init in ("pca", "random"):
        ours_state, stock_state = np.random.RandomState(3), np.random.RandomState(3)
        params = {"init": init, "perplexity": 10, "max_iter": 250}
        door_manifold.TSNE(random_state=ours_state, **params).fit(X)
        TSNE(random_state=stock_state, **params).fit(X)
        assert ours_state.randint(1 << 30) == stock_state.randint(1 << 30)
        once = door_manifold.TSNE(random_state=3, **params).fit(X)
        again = door_manifold.TSNE(random_state=3, **params).fit(X)
        np.testing.assert_array_equal(once.embedding_, again.embedding_)


def test_tsne_from_a_given_embedding_keeps_its_dtype():
    from sklearn.manifold import TSNE

    X = np.random.default_rng(1).standard_normal((50, 4))
    start = np.random.default_rng(2).standard_normal((50, 2)) * 1e-4
    door.dispatch_stats(reset=True)
    ours = door_manifold.TSNE(init=start, perplexity=8, max_iter=250).fit(X)
    assert door.dispatch_stats() == {("TSNE", "fit_transform", "rustyml"): 1}
    stock = TSNE(init=start, perplexity=8, max_iter=250).fit(X)
    assert ours.embedding_.dtype == stock.embedding_.dtype == np.float64


def test_tsne_counts_its_phases_as_scikit_learn():
    # At max_iter=250 scikit-learn still starts its second phase, runs no iteration of it,
    # and reports the iteration after the last with that phase's untouched error.
    from sklearn.manifold import TSNE

    X = np.random.default_rng(4).standard_normal((40, 3))
    ours = door_manifold.TSNE(max_iter=250, perplexity=5, random_state=0).fit(X)
    stock = TSNE(max_iter=250, perplexity=5, random_state=0).fit(X)
    assert ours.n_iter_ == stock.n_iter_ == 250
    assert ours.kl_divergence_ == stock.kl_divergence_ == np.finfo(float).max


def test_tsne_errors_and_unsupported_calls_are_scikit_learns():
    from sklearn.manifold import TSNE

    X = np.random.default_rng(5).standard_normal((30, 4))
    ours = door_manifold.TSNE(perplexity=40)
    with pytest.raises(ValueError, match="perplexity"):
        ours.fit(X)
    assert not hasattr(ours, "embedding_")
    with pytest.raises(ValueError):
        door_manifold.TSNE(n_components=4).fit(X)
    # verbose output is scikit-learn's fit, the same bits
    door.dispatch_stats(reset=True)
    params = {"verbose": 1, "init": "random", "perplexity": 5, "random_state": 0}
    params["max_iter"] = 250
    ours = door_manifold.TSNE(**params).fit(X)
    assert door.dispatch_stats() == {("TSNE", "fit_transform", "scikit-learn"): 1}
    np.testing.assert_array_equal(ours.embedding_, TSNE(**params).fit(X).embedding_)


def _sidon_line(n):
    """n points on a line whose pairwise differences are all distinct (a greedy Sidon set):
    no row of their distances holds a tie, and the squared distances are integers below
    2**24, exact in float32 and in the engine's own euclidean arithmetic."""
    marks, differences = [0], set()
    while len(marks) < n:
        c = marks[-1] + 1
        while any(c - m in differences for m in marks) or len({c - m for m in marks}) < len(marks):
            c += 1
        differences |= {c - m for m in marks}
        marks.append(c)
    assert marks[-1] ** 2 < 2**24
    return np.array(marks, dtype=np.float64)[:, None]


@pytest.mark.parametrize("method", ["barnes_hut", "exact"])
def test_tsne_of_given_euclidean_distances_is_the_euclidean_fit(method):
    """The engine's euclidean fit and its fit of given distances share everything below the
    distances: where the given distances are the euclidean ones to the bit (integers here),
    the embeddings are the same bit for bit, and both fits are native."""
    X = _sidon_line(40)
    D = np.abs(X - X.T)
    params = {"method": method, "init": "random", "perplexity": 6, "random_state": 0}
    params["max_iter"] = 300
    door.dispatch_stats(reset=True)
    euclidean = door_manifold.TSNE(**params).fit(X)
    given = door_manifold.TSNE(metric="precomputed", **params).fit(D.copy())
    assert door.dispatch_stats()[("TSNE", "fit_transform", "rustyml")] == 2
    np.testing.assert_array_equal(given.embedding_, euclidean.embedding_)
    assert given.kl_divergence_ == euclidean.kl_divergence_
    assert given.n_iter_ == euclidean.n_iter_
    # and the distances are read: other ones give another embedding
    other = door_manifold.TSNE(metric="precomputed", **params).fit(np.sqrt(D))
    assert not np.array_equal(other.embedding_, euclidean.embedding_)


@pytest.mark.parametrize("method", ["barnes_hut", "exact"])
@pytest.mark.parametrize("metric", ["manhattan", "cosine", "chebyshev"])
def test_tsne_of_another_metric_embeds_as_well_as_scikit_learn(metric, method):
    """Another metric's distances, as scikit-learn computes them, into the native engine: a
    fit as good as scikit-learn's (KL divergence, trustworthiness under that metric), and
    the same run as the precomputed fit of scikit-learn's distances."""
    from sklearn.manifold import TSNE, trustworthiness
    from sklearn.metrics import pairwise_distances

    X = np.random.default_rng(8).standard_normal((120, 4))
    params = {"metric": metric, "method": method, "random_state": 0, "max_iter": 400}
    params["init"] = "random"
    door.dispatch_stats(reset=True)
    ours = door_manifold.TSNE(**params).fit(X)
    assert door.dispatch_stats()[("TSNE", "fit_transform", "rustyml")] == 1
    # a metric's embedding varies with the seed as much as between seeds' stock fits: the
    # door's fits over four seeds are held to scikit-learn's over the same seeds
    ours_kl, stock_kl, ours_trust, stock_trust = [], [], [], []
    for seed in range(4):
        run = {**params, "random_state": seed}
        mine = ours if seed == 0 else door_manifold.TSNE(**run).fit(X)
        stock = TSNE(**run).fit(X)
        ours_kl.append(mine.kl_divergence_)
        stock_kl.append(stock.kl_divergence_)
        ours_trust.append(trustworthiness(X, mine.embedding_, n_neighbors=5, metric=metric))
        stock_trust.append(trustworthiness(X, stock.embedding_, n_neighbors=5, metric=metric))
    assert np.mean(ours_kl) <= np.mean(stock_kl) + np.std(stock_kl), (ours_kl, stock_kl)
    assert np.mean(ours_trust) >= np.mean(stock_trust) - np.std(stock_trust), (
        ours_trust,
        stock_trust,
    )
    assert ours.embedding_.dtype == stock.embedding_.dtype == np.float32
    # scikit-learn's distances given: the same run, bit for bit
    D = pairwise_distances(X, metric=metric)
    door.dispatch_stats(reset=True)
    precomputed = door_manifold.TSNE(**{**params, "metric": "precomputed"}).fit(D)
    assert door.dispatch_stats()[("TSNE", "fit_transform", "rustyml")] == 1
    np.testing.assert_array_equal(precomputed.embedding_, ours.embedding_)


def test_tsne_of_a_sparse_precomputed_graph_is_its_dense_matrix_fit():
    """Barnes-Hut reads the k nearest stored entries of each row of a sparse graph, as
    scikit-learn's neighbour search does: a graph holding every distance (zeros on the
    diagonal stored) is the dense matrix's fit, bit for bit."""
    from scipy import sparse
    from sklearn.exceptions import EfficiencyWarning

    X = np.random.default_rng(3).standard_normal((60, 3))
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    rows, cols = np.indices(D.shape)
    graph = sparse.csr_matrix((D.ravel(), (rows.ravel(), cols.ravel())), shape=D.shape)
    assert graph.nnz == D.size
    params = {"metric": "precomputed", "init": "random", "perplexity": 8, "random_state": 0}
    params["max_iter"] = 300
    door.dispatch_stats(reset=True)
    dense = door_manifold.TSNE(**params).fit(D)
    with pytest.warns(EfficiencyWarning, match="not sorted by row values"):
        from_graph = door_manifold.TSNE(**params).fit(graph)
    assert door.dispatch_stats()[("TSNE", "fit_transform", "rustyml")] == 2
    np.testing.assert_array_equal(from_graph.embedding_, dense.embedding_)


def test_tsne_squares_a_given_matrix_in_place_as_scikit_learn():
    """scikit-learn's exact fit squares a given float64 matrix in place; the door's too
    (and a Barnes-Hut fit leaves it)."""
    from sklearn.manifold import TSNE

    X = np.random.default_rng(6).standard_normal((30, 3))
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    params = {"metric": "precomputed", "init": "random", "perplexity": 5, "max_iter": 250}
    for method in ("exact", "barnes_hut"):
        ours, stock = D.copy(), D.copy()
        door_manifold.TSNE(method=method, **params).fit(ours)
        TSNE(method=method, **params).fit(stock)
        np.testing.assert_array_equal(ours, stock)
    np.testing.assert_array_equal(stock, D)


@pytest.mark.parametrize("method", ["barnes_hut", "exact"])
def test_tsne_distance_errors_are_scikit_learns(method):
    from scipy import sparse
    from sklearn.manifold import TSNE

    params = {"metric": "precomputed", "method": method, "perplexity": 1, "init": "random"}
    noise = np.random.default_rng(7).standard_normal((30, 4))
    cases = [
        ({**params, "init": "pca"}, np.zeros((3, 3)), ValueError),
        (params, np.zeros((3, 2)), ValueError),
        (params, np.array([[0.0, -1.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 0.0]]), ValueError),
    ]
    if method == "exact":
        # negative distances of a metric; a sparse matrix of distances
        cases.append(({**params, "metric": lambda a, b: -1.0}, np.eye(3), ValueError))
        cases.append((params, sparse.csr_matrix(np.ones((3, 3)) - np.eye(3)), TypeError))
    else:
        # the neighbour search's own error: Mahalanobis without its matrix (a tree search)
        cases.append(({**params, "metric": "mahalanobis", "perplexity": 2}, noise, ValueError))
    for case, data, error in cases:
        with pytest.raises(error) as stock_error:
            TSNE(**case).fit(data)
        door.dispatch_stats(reset=True)
        ours = door_manifold.TSNE(**case)
        with pytest.raises(error) as our_error:
            ours.fit(data)
        assert str(our_error.value) == str(stock_error.value)
        assert door.dispatch_stats() == {("TSNE", "fit_transform", "scikit-learn"): 1}
        assert not hasattr(ours, "embedding_")


@pytest.mark.parametrize("method", ["barnes_hut", "exact"])
def test_tsne_of_sparse_data_is_its_dense_copys_fit(method):
    """A sparse X is embedded from a dense copy: the same fit as the dense data's, bit for
    bit, from the same random or PCA start."""
    from scipy import sparse

    X = np.random.default_rng(9).standard_normal((60, 4))
    X[np.random.default_rng(10).random(X.shape) < 0.3] = 0.0
    for init in ("random", "pca"):
        params = {"method": method, "init": init, "perplexity": 10, "random_state": 0}
        params["max_iter"] = 300
        door.dispatch_stats(reset=True)
        dense = door_manifold.TSNE(**params).fit_transform(X)
        for container in (sparse.csr_matrix, sparse.csr_array):
            from_sparse = door_manifold.TSNE(**params).fit_transform(container(X))
            np.testing.assert_array_equal(from_sparse, dense)
        assert door.dispatch_stats()[("TSNE", "fit_transform", "rustyml")] == 3
