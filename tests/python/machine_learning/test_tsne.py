"""t-SNE against scikit-learn's TSNE: embedding quality (trustworthiness), determinism."""

import pickle

import numpy as np
import pytest
from conftest import PARALLEL, SERIAL
from sklearn import manifold
from sklearn.base import clone
from sklearn.datasets import load_digits
from threadpoolctl import threadpool_limits

import rustyml
from rustyml import NotFittedError
from rustyml.machine_learning import TSNE


def digits(n):
    X, y = load_digits(return_X_y=True)
    return X[:n], y[:n]


@pytest.mark.parametrize("method,n", [("barnes_hut", 500), ("exact", 200)])
def test_trustworthiness_close_to_sklearn(method, n):
    X, _ = digits(n)
    ours = TSNE(method=method, random_state=0)
    ref = manifold.TSNE(method=method, random_state=0)
    z = ours.fit_transform(X)
    # scikit-learn's OpenMP threads spin badly on a busy machine; one thread keeps it quick
    with threadpool_limits(limits=1):
        zr = ref.fit_transform(X)
    t = manifold.trustworthiness(X, z, n_neighbors=5)
    tr = manifold.trustworthiness(X, zr, n_neighbors=5)
    # Same algorithm and schedule, different arithmetic (f64 everywhere, another tree): the
    # embeddings differ, their quality should not.
    assert abs(t - tr) <= 0.02, (t, tr)
    assert t > 0.95
    assert ours.learning_rate_ == ref.learning_rate_
    # KL divergence of the same objective: within 10% of scikit-learn's.
    assert ours.kl_divergence_ == pytest.approx(ref.kl_divergence_, rel=0.1)
    assert ours.embedding_.shape == (n, 2)


def test_classes_stay_apart_in_3d():
    X, y = digits(300)
    z = TSNE(n_components=3, random_state=0).fit_transform(X)
    # 1-nearest-neighbour label agreement in the embedding (sklearn's reaches ~0.98 here)
    d = ((z[:, None, :] - z[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(d, np.inf)
    assert np.mean(y[d.argmin(1)] == y) > 0.9


def test_random_state_and_thread_count_do_not_change_results(gate):
    X, _ = digits(150)
    kw = {"init": "random", "random_state": 7, "perplexity": 20, "max_iter": 300}
    a = TSNE(**kw).fit_transform(X)
    b = TSNE(**kw).fit_transform(X)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, TSNE(**{**kw, "random_state": 8}).fit_transform(X))
    gate(rustyml.tuning.reduction, "scan_f64", SERIAL)
    serial = TSNE(**kw).fit_transform(X)
    gate(rustyml.tuning.reduction, "scan_f64", PARALLEL)
    parallel = TSNE(**kw).fit_transform(X)
    np.testing.assert_array_equal(serial, a)
    np.testing.assert_array_equal(parallel, a)


def test_bad_input_raises_clear_errors():
    X, _ = digits(20)
    with pytest.raises(ValueError, match="perplexity"):
        TSNE(perplexity=20).fit(X)
    with pytest.raises(ValueError, match="unknown method"):
        TSNE(method="fft", perplexity=5).fit(X)
    with pytest.raises(ValueError, match="unknown init"):
        TSNE(init="spectral", perplexity=5).fit(X)
    with pytest.raises(ValueError, match="barnes_hut"):
        TSNE(n_components=4, perplexity=5).fit(X)
    with pytest.raises(ValueError, match="max_iter"):
        TSNE(max_iter=100, perplexity=5).fit(X)
    with pytest.raises(ValueError, match="learning_rate"):
        TSNE(learning_rate="fast", perplexity=5).fit(X)
    with pytest.raises(ValueError, match="NaN"):
        TSNE(perplexity=1).fit(np.array([[np.nan, 1.0], [1.0, 2.0], [2.0, 3.0]]))
    with pytest.raises(ValueError, match="empty"):
        TSNE().fit(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="n_components"):
        TSNE(n_components=-1, perplexity=5).fit(X)
    with pytest.raises(NotFittedError):
        _ = TSNE().embedding_


def test_clone_pickle_save(tmp_path):
    X, _ = digits(60)
    est = TSNE(perplexity=10, random_state=0, max_iter=250)
    assert clone(est).get_params() == est.get_params()
    est.fit(X)
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.embedding_, est.embedding_)
    assert back.kl_divergence_ == est.kl_divergence_
    est.save(tmp_path / "tsne.bin")
    assert TSNE.load(tmp_path / "tsne.bin").n_iter_ == est.n_iter_
