"""IsolationForest against scikit-learn's IsolationForest."""

import pickle

import numpy as np
import pytest
from conftest import PARALLEL, SERIAL
from sklearn import ensemble
from sklearn.base import clone
from sklearn.metrics import roc_auc_score

from rustyml import NotFittedError, tuning
from rustyml.machine_learning import IsolationForest


def _synthetic(seed=0, n=1000, outliers=50, d=4):
    rng = np.random.default_rng(seed)
    inliers = rng.normal(size=(n, d))
    far = rng.uniform(-6, 6, size=(outliers, d))
    far = far[np.linalg.norm(far, axis=1) > 4][:outliers]
    X = np.vstack([inliers, far])
    truth = np.r_[np.zeros(n), np.ones(len(far))]
    return X, truth


def test_outlier_detection_matches_sklearn_roc_auc():
    X, truth = _synthetic()
    ours, ref = [], []
    for seed in range(5):
        ours.append(
            roc_auc_score(truth, -IsolationForest(random_state=seed).fit(X).score_samples(X))
        )
        sk = ensemble.IsolationForest(random_state=seed).fit(X)
        ref.append(roc_auc_score(truth, -sk.score_samples(X)))
    # Two independent random forests on the same data: AUCs over five seeds agree closely.
    assert abs(np.mean(ours) - np.mean(ref)) < 0.01
    assert np.mean(ours) > 0.95


def test_scores_agree_with_sklearns_in_distribution():
    X, _ = _synthetic(1)
    ours = IsolationForest(n_estimators=300, random_state=0).fit(X).score_samples(X)
    ref = ensemble.IsolationForest(n_estimators=300, random_state=0).fit(X).score_samples(X)
    # Same estimator, different random draws: per-sample scores differ by Monte-Carlo noise
    # of 300 trees (a few 1e-3), and rank the samples alike.
    assert np.abs(ours - ref).mean() < 0.01
    assert np.corrcoef(ours, ref)[0, 1] > 0.98


def test_contamination_offset_and_predict_follow_sklearns_definitions():
    X, _ = _synthetic(2)
    model = IsolationForest(contamination=0.05, random_state=0).fit(X)
    scores = model.score_samples(X)
    assert model.offset_ == pytest.approx(np.percentile(scores, 5.0), abs=1e-15)
    np.testing.assert_array_equal(model.decision_function(X), scores - model.offset_)
    pred = model.predict(X)
    assert pred.dtype == np.int64 and set(np.unique(pred)) <= {-1, 1}
    np.testing.assert_array_equal(pred, np.where(scores - model.offset_ < 0, -1, 1))
    assert abs(np.mean(pred == -1) - 0.05) < 0.002
    ref = ensemble.IsolationForest(contamination=0.05, random_state=0).fit(X)
    assert np.mean(pred == ref.predict(X)) > 0.97
    auto = IsolationForest(random_state=0).fit(X)
    assert auto.offset_ == -0.5
    assert np.array_equal(IsolationForest(random_state=0).fit_predict(X), auto.predict(X))


@pytest.mark.parametrize("max_samples,used", [("auto", 256), (100, 100), (5000, 1000), (0.5, 500)])
def test_max_samples_like_sklearn(max_samples, used):
    X = np.random.default_rng(3).normal(size=(1000, 2))
    model = IsolationForest(n_estimators=5, max_samples=max_samples, random_state=0).fit(X)
    assert model.max_samples_ == used


def test_random_state_and_gates_give_identical_results(gate):
    X, _ = _synthetic(4, n=3000)
    runs = []
    for value in (SERIAL, PARALLEL):
        gate(tuning.tree, "traversal_min_visits", value)
        model = IsolationForest(contamination=0.1, random_state=7).fit(X)
        runs.append((model.score_samples(X).tobytes(), model.offset_))
    assert runs[0] == runs[1]
    other = IsolationForest(contamination=0.1, random_state=8).fit(X)
    assert other.score_samples(X).tobytes() != runs[0][0]


def test_conventions_and_persistence(tmp_path):
    X, _ = _synthetic(5)
    model = IsolationForest(n_estimators=20, contamination=0.1, random_state=1).fit(X)
    assert clone(model).get_params() == model.get_params()
    back = pickle.loads(pickle.dumps(model))
    assert np.array_equal(back.decision_function(X), model.decision_function(X))
    model.save(tmp_path / "iforest.bin")
    assert IsolationForest.load(tmp_path / "iforest.bin").offset_ == model.offset_


@pytest.mark.parametrize(
    "kwargs,X,exc,match",
    [
        ({}, np.ones((0, 2)), ValueError, "empty"),
        ({}, np.array([[1.0, np.nan]]), ValueError, "NaN or infinity"),
        ({"n_estimators": 0}, np.ones((4, 2)), ValueError, "n_estimators"),
        ({"max_samples": 0}, np.ones((4, 2)), ValueError, "max_samples"),
        ({"max_samples": 1.5}, np.ones((4, 2)), ValueError, "max_samples"),
        ({"max_samples": "all"}, np.ones((4, 2)), ValueError, "max_samples"),
        ({"contamination": 0.7}, np.ones((4, 2)), ValueError, "contamination"),
        ({"contamination": "high"}, np.ones((4, 2)), ValueError, "contamination"),
        ({"random_state": -1}, np.ones((4, 2)), ValueError, "random_state"),
    ],
)
def test_bad_input_is_refused(kwargs, X, exc, match):
    with pytest.raises(exc, match=match):
        IsolationForest(**kwargs).fit(X)


def test_predict_before_fit_and_feature_mismatch():
    with pytest.raises(NotFittedError):
        IsolationForest().predict(np.ones((1, 2)))
    model = IsolationForest(n_estimators=3, random_state=0).fit(
        np.random.default_rng(0).normal(size=(20, 2))
    )
    with pytest.raises(ValueError, match="features"):
        model.score_samples(np.ones((1, 3)))
