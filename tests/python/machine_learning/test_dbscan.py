"""DBSCAN against scikit-learn's DBSCAN: identical labels, cores and components."""

import pickle

import numpy as np
import pytest
from conftest import PARALLEL, SERIAL
from sklearn import cluster
from sklearn.base import clone
from sklearn.datasets import load_digits, load_iris, make_blobs, make_moons
from sklearn.preprocessing import StandardScaler

from rustyml import NotFittedError, tuning
from rustyml.machine_learning import DBSCAN


def check_same(X, **params):
    ours = DBSCAN(**params).fit(X)
    ref = cluster.DBSCAN(**params).fit(X)
    np.testing.assert_array_equal(ours.labels_, ref.labels_)
    np.testing.assert_array_equal(ours.core_sample_indices_, ref.core_sample_indices_)
    np.testing.assert_array_equal(ours.components_, ref.components_)
    return ours


BLOBS = make_blobs(n_samples=1500, centers=5, cluster_std=0.8, random_state=0)[0]
MOONS = make_moons(n_samples=1000, noise=0.08, random_state=1)[0]
IRIS = StandardScaler().fit_transform(load_iris().data)
BLOBS3 = make_blobs(n_samples=800, n_features=3, centers=4, random_state=2)[0]
BLOBS6 = make_blobs(n_samples=800, n_features=6, centers=4, random_state=3)[0]


@pytest.mark.parametrize(
    "X,eps,min_samples",
    [
        (BLOBS, 0.3, 5),
        (BLOBS, 0.5, 10),
        (BLOBS, 1.0, 30),
        (MOONS, 0.1, 5),
        (MOONS, 0.2, 8),
        (IRIS, 0.5, 5),
        (IRIS, 0.8, 4),
        (BLOBS3, 0.7, 5),
        (BLOBS6, 1.5, 5),
        (BLOBS6, 2.5, 12),
    ],
)
def test_euclidean_labels_identical_to_sklearn(X, eps, min_samples):
    labels = check_same(X, eps=eps, min_samples=min_samples).labels_
    assert labels.dtype == np.int64


@pytest.mark.parametrize(
    "metric,p,eps", [("manhattan", None, 0.5), ("minkowski", 3, 0.3), ("minkowski", 1, 0.5)]
)
@pytest.mark.parametrize("name", ["blobs", "iris", "blobs6"])
def test_other_metrics_identical_to_sklearn(name, metric, p, eps):
    X = {"blobs": BLOBS, "iris": IRIS, "blobs6": BLOBS6}[name]
    eps = eps * (3 if name == "blobs6" else 1)
    check_same(X, eps=eps, min_samples=5, metric=metric, p=p)


def test_digits_high_dimensional():
    # 64 integer features: squared distances are exact integers, eps**2 = 400 is hit exactly
    X = load_digits().data
    for eps, ms in [(20.0, 5), (22.0, 10), (18.0, 3)]:
        labels = check_same(X, eps=eps, min_samples=ms).labels_
        assert labels.max() >= 1


def test_points_at_exactly_eps_are_neighbours_like_sklearn():
    g = np.array([(i, j) for i in range(12) for j in range(12)], dtype=float)
    # 2-D and 3-D take the grid, 4-D the product screening with exact re-measurement
    for X in (
        g,
        np.column_stack([g, np.zeros(len(g))]),
        np.column_stack([g, np.zeros((len(g), 2))]),
    ):
        check_same(X, eps=1.0, min_samples=5)
        check_same(X, eps=1.0, min_samples=3, metric="manhattan")


def test_one_dimensional_and_duplicates():
    X = np.repeat(np.random.default_rng(0).normal(size=(200, 1)).round(2), 2, axis=0)
    check_same(X, eps=0.05, min_samples=4)


def test_gates_do_not_change_labels(gate):
    for X in (BLOBS, BLOBS6):
        runs = []
        for value in (SERIAL, PARALLEL):
            gate(tuning.reduction, "scan_f64", value)
            db = DBSCAN(eps=0.6, min_samples=6).fit(X)
            runs.append((db.labels_, db.core_sample_indices_))
        np.testing.assert_array_equal(runs[0][0], runs[1][0])
        np.testing.assert_array_equal(runs[0][1], runs[1][1])


def test_conventions_and_persistence(tmp_path):
    est = DBSCAN(eps=0.3, min_samples=4)
    assert clone(est).get_params() == est.get_params()
    labels = est.fit_predict(MOONS)
    np.testing.assert_array_equal(labels, est.labels_)
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.labels_, est.labels_)
    est.save(tmp_path / "db.bin")
    np.testing.assert_array_equal(DBSCAN.load(tmp_path / "db.bin").labels_, labels)
    with pytest.raises(NotFittedError):
        _ = DBSCAN().labels_


@pytest.mark.parametrize(
    "params,X,match",
    [
        ({"eps": 0.0}, IRIS, "eps must be"),
        ({"eps": -1.0}, IRIS, "eps must be"),
        ({"eps": float("nan")}, IRIS, "eps must be"),
        ({"min_samples": 0}, IRIS, "min_samples"),
        ({"metric": "cosine"}, IRIS, "unknown metric"),
        (
            {"metric": "minkowski", "p": 0.5},
            IRIS,
            "p must be a finite number >= 1 for the minkowski metric",
        ),
        ({}, np.ones((0, 2)), "empty"),
        ({}, np.array([[0.0, np.nan]]), "NaN or infinity"),
        ({}, np.array([[0.0, np.inf]]), "NaN or infinity"),
    ],
)
def test_bad_input_is_refused(params, X, match):
    with pytest.raises(ValueError, match=match):
        DBSCAN(**params).fit(X)
