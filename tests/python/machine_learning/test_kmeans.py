"""KMeans against scikit-learn's KMeans (Lloyd)."""

import pickle

import numpy as np
import pytest
from conftest import PARALLEL, SERIAL
from scipy.spatial.distance import cdist
from sklearn import cluster
from sklearn.base import clone
from sklearn.datasets import load_digits, load_iris, make_blobs
from sklearn.metrics import adjusted_rand_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from rustyml import NotFittedError, tuning
from rustyml.machine_learning import KMeans


def datasets():
    iris = load_iris().data
    blobs, _ = make_blobs(n_samples=600, n_features=5, centers=6, cluster_std=1.5, random_state=0)
    digits = load_digits().data
    return {"iris": (iris, 3), "blobs": (blobs, 6), "digits": (digits, 10)}


@pytest.mark.parametrize("name", ["iris", "blobs", "digits"])
def test_lloyd_from_the_same_centers_matches_sklearn(name):
    # Lloyd's algorithm is deterministic from given centers: labels, iterations and centers
    # must agree with scikit-learn's (up to the rounding of the sums).
    X, k = datasets()[name]
    init = X[np.random.default_rng(0).choice(len(X), k, replace=False)]
    ours = KMeans(k, init=init, n_init=1, tol=1e-6).fit(X)
    ref = cluster.KMeans(k, init=init, n_init=1, tol=1e-6, algorithm="lloyd").fit(X)
    np.testing.assert_array_equal(ours.labels_, ref.labels_)
    assert ours.n_iter_ == ref.n_iter_
    # centers are means of the same sets: equal up to a few ulps of the coordinates
    np.testing.assert_allclose(ours.cluster_centers_, ref.cluster_centers_, rtol=1e-12, atol=1e-12)
    assert ours.inertia_ == pytest.approx(ref.inertia_, rel=1e-12)


@pytest.mark.parametrize("init", ["k-means++", "random"])
@pytest.mark.parametrize("name", ["iris", "blobs", "digits"])
def test_inertia_within_one_percent_of_sklearn(name, init):
    X, k = datasets()[name]
    ours = KMeans(k, init=init, n_init=10, random_state=0).fit(X)
    ref = cluster.KMeans(k, init=init, n_init=10, random_state=0).fit(X)
    # different random draws: the best of 10 runs must be as good as scikit-learn's within 1%
    assert ours.inertia_ <= ref.inertia_ * 1.01, (ours.inertia_, ref.inertia_)
    # the reported inertia is the inertia of the reported centers and labels
    d = cdist(X, ours.cluster_centers_, "sqeuclidean")
    assert ours.inertia_ == pytest.approx(d[np.arange(len(X)), ours.labels_].sum(), rel=1e-10)
    np.testing.assert_array_equal(ours.labels_, d.argmin(axis=1))


def test_well_separated_blobs_are_recovered_exactly():
    X, y = make_blobs(n_samples=2000, n_features=8, centers=7, cluster_std=0.5, random_state=3)
    for init in ["k-means++", "random"]:
        km = KMeans(7, init=init, random_state=1).fit(X)
        assert adjusted_rand_score(y, km.labels_) == 1.0


def test_random_state_reproducible_and_auto_is_one_run():
    X, _ = make_blobs(n_samples=500, n_features=4, centers=5, random_state=2)
    a = KMeans(5, random_state=42).fit(X)
    b = KMeans(5, random_state=42).fit(X)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    auto = KMeans(5, n_init="auto", random_state=7).fit(X)
    one = KMeans(5, n_init=1, random_state=7).fit(X)
    np.testing.assert_array_equal(auto.cluster_centers_, one.cluster_centers_)


def test_gates_do_not_change_results(gate):
    X, _ = make_blobs(n_samples=3000, n_features=6, centers=5, random_state=4)
    runs = []
    for value in (SERIAL, PARALLEL):
        gate(tuning.reduction, "scan_f64", value)
        gate(tuning.reduction, "sum_f64", value)
        km = KMeans(5, n_init=3, random_state=9).fit(X)
        runs.append((km.cluster_centers_, km.labels_, km.inertia_, km.predict(X)))
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)


def test_predict_transform_score_against_direct_computation():
    X, _ = make_blobs(n_samples=400, n_features=3, centers=4, random_state=5)
    Xnew = np.random.default_rng(1).normal(size=(50, 3)) * 5
    km = KMeans(4, random_state=0).fit(X)
    d = cdist(Xnew, km.cluster_centers_)
    np.testing.assert_allclose(km.transform(Xnew), d, rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(km.predict(Xnew), d.argmin(axis=1))
    assert km.predict(Xnew).dtype == np.int32 and km.labels_.dtype == np.int32
    assert km.score(Xnew) == pytest.approx(-(d.min(axis=1) ** 2).sum(), rel=1e-10)
    np.testing.assert_array_equal(km.fit_predict(X), km.labels_)
    np.testing.assert_allclose(km.fit_transform(X), cdist(X, km.cluster_centers_), atol=1e-10)
    # float32 input is accepted
    np.testing.assert_array_equal(km.predict(Xnew.astype(np.float32)), km.predict(Xnew))


def test_sklearn_conventions_and_persistence(tmp_path):
    X = load_iris().data
    est = KMeans(3, n_init=2, random_state=0)
    assert clone(est).get_params() == est.get_params()
    assert "n_clusters=3" in repr(est)
    assert "init=array(" in repr(KMeans(2, init=np.zeros((2, 4))))
    pipe = make_pipeline(StandardScaler(), KMeans(3, random_state=0)).fit(X)
    assert pipe.predict(X).shape == (150,)
    km = est.fit(X)
    back = pickle.loads(pickle.dumps(km))
    np.testing.assert_array_equal(back.predict(X), km.predict(X))
    np.testing.assert_array_equal(back.cluster_centers_, km.cluster_centers_)
    path = tmp_path / "km.bin"
    km.save(path)
    assert KMeans.load(path).inertia_ == km.inertia_
    with pytest.raises(NotFittedError):
        KMeans(3).predict(X)


@pytest.mark.parametrize(
    "params,X,match",
    [
        ({}, np.ones((0, 2)), "empty"),
        ({"n_clusters": 2}, np.array([[1.0, 2.0], [np.nan, 1.0], [0.0, 0.0]]), "NaN or infinity"),
        ({"n_clusters": 2}, np.array([[1.0, 2.0], [np.inf, 1.0], [0.0, 0.0]]), "NaN or infinity"),
        ({"n_clusters": 5}, np.ones((3, 2)), "n_samples=3 should be >= n_clusters=5"),
        ({"n_clusters": 0}, np.ones((3, 2)), "n_clusters"),
        ({"n_clusters": 2, "init": "kmeans"}, np.ones((3, 2)), "init must be"),
        ({"n_clusters": 2, "init": np.ones((3, 2))}, np.ones((3, 2)), "init centers have shape"),
        ({"n_clusters": 2, "n_init": 0}, np.ones((3, 2)), "n_init"),
        ({"n_clusters": 2, "n_init": "many"}, np.ones((3, 2)), "n_init"),
        ({"n_clusters": 2, "max_iter": 0}, np.ones((3, 2)), "max_iter"),
        ({"n_clusters": 2, "tol": -1.0}, np.ones((3, 2)), "tol"),
        ({"n_clusters": 2, "random_state": -1}, np.ones((3, 2)), "random_state"),
    ],
)
def test_bad_input_is_refused(params, X, match):
    with pytest.raises(ValueError, match=match):
        KMeans(**params).fit(X)


def test_predict_checks_features():
    km = KMeans(2, random_state=0).fit(np.array([[0.0, 0.0], [1.0, 1.0], [5.0, 5.0]]))
    with pytest.raises(ValueError, match="features"):
        km.predict(np.ones((2, 3)))
