"""MeanShift against scikit-learn's MeanShift."""

import pickle

import numpy as np
import pytest
from conftest import PARALLEL, SERIAL
from sklearn import cluster
from sklearn.base import clone
from sklearn.datasets import load_iris, make_blobs

from rustyml import NotFittedError, tuning
from rustyml.machine_learning import MeanShift, estimate_bandwidth

BLOBS = make_blobs(n_samples=300, centers=4, cluster_std=0.7, random_state=0)[0]
BLOBS3 = make_blobs(n_samples=250, n_features=3, centers=3, random_state=1)[0]
IRIS = load_iris().data


def check_close(X, **params):
    ours = MeanShift(**params).fit(X)
    ref = cluster.MeanShift(**params).fit(X)
    assert ours.cluster_centers_.shape == ref.cluster_centers_.shape
    # Same sample sets at every step; only the summation order of the means differs
    # (NumPy's pairwise sum vs a sequential one), a few ulps.
    np.testing.assert_allclose(ours.cluster_centers_, ref.cluster_centers_, rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(ours.labels_, ref.labels_)
    assert ours.n_iter_ == ref.n_iter_
    return ours, ref


@pytest.mark.parametrize("X", [BLOBS, BLOBS3, IRIS], ids=["blobs", "blobs3", "iris"])
def test_estimated_bandwidth_matches_sklearn(X):
    for q in (0.3, 0.1, 0.5):
        ours = estimate_bandwidth(X, quantile=q)
        assert ours == pytest.approx(cluster.estimate_bandwidth(X, quantile=q), rel=1e-12)


@pytest.mark.parametrize("X", [BLOBS, BLOBS3, IRIS], ids=["blobs", "blobs3", "iris"])
def test_default_fit_matches_sklearn(X):
    ours, _ = check_close(X)
    assert ours.bandwidth_ == pytest.approx(cluster.estimate_bandwidth(X), rel=1e-12)


def test_given_bandwidth_bin_seeding_and_cluster_all():
    check_close(BLOBS, bandwidth=1.0)
    check_close(BLOBS, bandwidth=1.5, bin_seeding=True)
    check_close(BLOBS3, bandwidth=2.0, bin_seeding=True, min_bin_freq=3)
    check_close(IRIS, bandwidth=0.6, cluster_all=False)
    seeds = BLOBS[::25]
    check_close(BLOBS, bandwidth=1.2, seeds=seeds)


def test_predict_matches_sklearn():
    ours, ref = check_close(BLOBS, bandwidth=1.3)
    Xnew = np.random.default_rng(0).uniform(-12, 12, size=(100, 2))
    np.testing.assert_array_equal(ours.predict(Xnew), ref.predict(Xnew))


def test_gates_do_not_change_results(gate):
    runs = []
    for scan, chunk, resident in [(SERIAL, 2**40, 0), (PARALLEL, 300 * 20, SERIAL)]:
        gate(tuning.reduction, "scan_f64", scan)
        gate(tuning.matmul, "chunk_elems", chunk)
        gate(tuning.matmul, "cache_resident_max_bytes", resident)
        ms = MeanShift().fit(BLOBS)
        runs.append((ms.cluster_centers_, ms.labels_, ms.n_iter_))
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)


def test_conventions_and_persistence(tmp_path):
    est = MeanShift(bandwidth=1.5)
    assert clone(est).get_params() == est.get_params()
    labels = est.fit_predict(BLOBS)
    np.testing.assert_array_equal(labels, est.labels_)
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.cluster_centers_, est.cluster_centers_)
    est.save(tmp_path / "ms.bin")
    np.testing.assert_array_equal(MeanShift.load(tmp_path / "ms.bin").predict(BLOBS), labels)
    with pytest.raises(NotFittedError):
        MeanShift().predict(BLOBS)


@pytest.mark.parametrize(
    "params,X,match",
    [
        ({"bandwidth": 0.0}, IRIS, "bandwidth must be"),
        ({"bandwidth": -1.0}, IRIS, "bandwidth must be"),
        ({"min_bin_freq": 0}, IRIS, "min_bin_freq"),
        ({"seeds": np.ones((2, 3))}, IRIS, "seeds have 3 features"),
        ({"bandwidth": 0.1, "seeds": np.full((1, 4), 100.0)}, IRIS, "No point was within"),
        ({}, np.ones((0, 2)), "empty"),
        ({}, np.array([[0.0, np.nan]]), "NaN or infinity"),
    ],
)
def test_bad_input_is_refused(params, X, match):
    with pytest.raises(ValueError, match=match):
        MeanShift(**params).fit(X)
    with pytest.raises(ValueError, match="quantile"):
        estimate_bandwidth(IRIS, quantile=2.0)
