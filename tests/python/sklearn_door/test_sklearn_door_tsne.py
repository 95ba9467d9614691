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
    # distances given, or another metric: scikit-learn's fit, the same bits
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    door.dispatch_stats(reset=True)
    params = {"metric": "precomputed", "init": "random", "perplexity": 5, "random_state": 0}
    params["max_iter"] = 250
    ours = door_manifold.TSNE(**params).fit(D)
    assert door.dispatch_stats() == {("TSNE", "fit_transform", "scikit-learn"): 1}
    np.testing.assert_array_equal(ours.embedding_, TSNE(**params).fit(D).embedding_)


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
