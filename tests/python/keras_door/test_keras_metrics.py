"""Keras's metric objects against Keras 3 itself (JAX backend): standalone (two batches
through ``update_state``, then ``result``; ``reset_state``) and in ``compile(metrics=[...])``
(History's names and per-epoch values, validation included).

Tolerance: Keras accumulates in float32 (totals, counts, confusion counts), we in float64; over
at most a few hundred values the float32 sums carry a relative error of at most n u ~ 2e-5
(u = 2^-24, n <= 300), so rtol = 2e-5. Thresholded metrics compare predictions with
thresholds; the random predictions used never sit within rounding distance of one.
"""

import os

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")
keras = pytest.importorskip("keras")

from rustyml.neural_network import Sequential, layers, metrics, optimizers

RTOL = 2e-5


def _clear_names():
    """Both libraries number default names per session ("auc", then "auc_1"): start both
    from a clean session so that each test's names compare."""
    keras.backend.clear_session()
    metrics._reset_names()


def _batches(kind, rng, n=24, classes=4):
    if kind == "binary":
        y = (rng.uniform(size=(n, 1)) < 0.4).astype(np.float32)
        p = rng.uniform(size=(n, 1)).astype(np.float32)
    elif kind == "multi_binary":
        y = (rng.uniform(size=(n, 3)) < 0.5).astype(np.float32)
        p = rng.uniform(size=(n, 3)).astype(np.float32)
    elif kind == "one_hot":
        y = np.eye(classes, dtype=np.float32)[rng.integers(0, classes, n)]
        p = rng.dirichlet(np.ones(classes), n).astype(np.float32)
    elif kind == "sparse":
        y = rng.integers(0, classes, (n, 1)).astype(np.float32)
        p = rng.dirichlet(np.ones(classes), n).astype(np.float32)
    elif kind == "exact":
        y = rng.integers(0, 3, (n, 2)).astype(np.float32)
        p = np.where(rng.uniform(size=(n, 2)) < 0.5, y, y + 1).astype(np.float32)
    else:
        y = rng.standard_normal((n, 2)).astype(np.float32)
        p = rng.standard_normal((n, 2)).astype(np.float32)
    return [(y[: n // 3], p[: n // 3]), (y[n // 3 :], p[n // 3 :])]


CASES = {
    "Accuracy": (lambda m: m.Accuracy(), "exact"),
    "BinaryAccuracy": (lambda m: m.BinaryAccuracy(threshold=0.3), "multi_binary"),
    "CategoricalAccuracy": (lambda m: m.CategoricalAccuracy(), "one_hot"),
    "SparseCategoricalAccuracy": (lambda m: m.SparseCategoricalAccuracy(), "sparse"),
    "TopKCategoricalAccuracy": (lambda m: m.TopKCategoricalAccuracy(k=2), "one_hot"),
    "AUC": (lambda m: m.AUC(), "binary"),
    "AUC_multi_column": (lambda m: m.AUC(num_thresholds=50), "multi_binary"),
    "AUC_PR": (lambda m: m.AUC(curve="PR"), "binary"),
    "AUC_PR_majoring": (lambda m: m.AUC(curve="PR", summation_method="majoring"), "binary"),
    "AUC_logits": (lambda m: m.AUC(from_logits=True), "regression"),
    "Precision": (lambda m: m.Precision(), "multi_binary"),
    "Precision_thresholds": (lambda m: m.Precision(thresholds=[0.2, 0.7]), "binary"),
    "Recall": (lambda m: m.Recall(), "multi_binary"),
    "Recall_class_id": (lambda m: m.Recall(class_id=1), "multi_binary"),
    "MeanAbsoluteError": (lambda m: m.MeanAbsoluteError(), "regression"),
    "MeanSquaredError": (lambda m: m.MeanSquaredError(), "regression"),
    "RootMeanSquaredError": (lambda m: m.RootMeanSquaredError(), "regression"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_standalone_metric_matches_keras(case):
    make, kind = CASES[case]
    batches = _batches(kind, np.random.default_rng(3))
    if case == "AUC_logits":
        batches = [((y > 0).astype(np.float32), p) for y, p in batches]
    _clear_names()
    ours, theirs = make(metrics), make(keras.metrics)
    assert ours.name == theirs.name
    for y, p in batches:
        ours.update_state(y, p)
        theirs.update_state(y, p)
    np.testing.assert_allclose(ours.result(), np.asarray(theirs.result()), rtol=RTOL, atol=1e-7)
    # with weights
    ours.reset_state()
    theirs.reset_state()
    np.testing.assert_allclose(ours.result(), np.asarray(theirs.result()), atol=0)
    w = np.random.default_rng(4).uniform(0.1, 2.0, len(batches[1][0])).astype(np.float32)
    ours.update_state(*batches[1], sample_weight=w)
    theirs.update_state(*batches[1], sample_weight=w)
    np.testing.assert_allclose(ours.result(), np.asarray(theirs.result()), rtol=RTOL, atol=1e-7)


def test_metric_objects_in_compile_log_keras_names_and_values():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((24, 4)).astype(np.float32)
    y = (x[:, :1] + 0.5 * rng.standard_normal((24, 1)) > 0).astype(np.float32)
    vx, vy = x[:8] * 0.9, y[:8]
    weights = [
        rng.uniform(-0.8, 0.8, (4, 5)).astype(np.float32),
        rng.uniform(-0.5, 0.5, 5).astype(np.float32),
        rng.uniform(-0.8, 0.8, (5, 1)).astype(np.float32),
        np.zeros(1, np.float32),
    ]

    def metric_list(m):
        return [m.AUC(), m.Precision(), m.Recall(name="rec"), m.BinaryAccuracy(), "recall"]

    _clear_names()
    theirs = keras.Sequential(
        [
            keras.Input((4,)),
            keras.layers.Dense(5, activation="tanh"),
            keras.layers.Dense(1, activation="sigmoid"),
        ]
    )
    theirs.set_weights(weights)
    theirs.compile(
        keras.optimizers.SGD(0.2), "binary_crossentropy", metrics=metric_list(keras.metrics)
    )
    ours = Sequential(
        [
            layers.Dense(5, activation="tanh", input_shape=(4,)),
            layers.Dense(1, activation="sigmoid"),
        ],
        seed=0,
    )
    ours.set_weights(weights)
    ours.compile(optimizers.SGD(0.2), "binary_crossentropy", metrics=metric_list(metrics))
    kw = {"epochs": 3, "batch_size": 8, "shuffle": False, "verbose": 0, "validation_data": (vx, vy)}
    h_theirs, h_ours = theirs.fit(x, y, **kw).history, ours.fit(x, y, **kw).history
    assert sorted(h_ours) == sorted(h_theirs)
    assert {"auc", "precision", "rec", "recall", "binary_accuracy", "val_auc"} <= set(h_ours)
    # a second AUC in the same session is "auc_1" in both
    assert metrics.AUC().name == keras.metrics.AUC().name == "auc_1"
    for key in h_theirs:
        np.testing.assert_allclose(h_ours[key], h_theirs[key], rtol=RTOL, atol=1e-6, err_msg=key)
    got = ours.evaluate(vx, vy, return_dict=True)
    want = theirs.evaluate(vx, vy, verbose=0, return_dict=True)
    for key in want:
        assert got[key] == pytest.approx(want[key], rel=RTOL, abs=1e-6), key


def test_bad_metric_arguments():
    with pytest.raises(ValueError, match="k must be"):
        metrics.TopKCategoricalAccuracy(k=0)
    with pytest.raises(ValueError, match="num_thresholds"):
        metrics.AUC(num_thresholds=1)
    with pytest.raises(NotImplementedError, match="multi_label"):
        metrics.AUC(multi_label=True)
