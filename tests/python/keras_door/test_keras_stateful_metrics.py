"""Metric objects that keep state over an epoch (AUC, Precision) in ``fit``'s history, on a
Sequential and on a functional model, against Keras 3 itself (JAX backend) built with the
same weights and fed the same batches (no shuffling).

Keras accumulates such a metric's state batch by batch: the epoch's AUC is the AUC of every
batch's training-mode output pooled, not a mean of per-batch AUCs. Those two differ by
O(0.1) on the data here (checked in the test itself, so it can tell them apart).

Tolerance: the outputs agree to float32 rounding (relative ~1e-6 after the few steps here,
see test_keras_model_members.py). Both metrics are step functions of the scores (AUC through
Keras's 200 thresholds, precision through 0.5), so equal-to-rounding scores give equal
values unless a score lies within ~1e-6 of a threshold, which these data do not; the loss
agrees to ~1e-6. atol = 1e-4 covers the rounding and is far below the O(0.1) gap between a
pooled and a batch-averaged AUC.
"""

import os

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")
keras = pytest.importorskip("keras")

import rustyml.keras as rkeras

ATOL = 1e-4


def _data():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((24, 3)).astype(np.float32)
    y = (x[:, :1] + 0.7 * rng.standard_normal((24, 1)) > 0).astype(np.float32)
    return x, y


def _weights():
    rng = np.random.default_rng(4)
    return [
        rng.uniform(-0.8, 0.8, (3, 4)).astype(np.float32),
        rng.uniform(-0.5, 0.5, (4,)).astype(np.float32),
        rng.uniform(-0.8, 0.8, (4, 1)).astype(np.float32),
        rng.uniform(-0.5, 0.5, (1,)).astype(np.float32),
    ]


def _sequential(lib):
    return lib.Sequential(
        [
            lib.Input((3,)),
            lib.layers.Dense(4, activation="tanh"),
            lib.layers.Dense(1, activation="sigmoid"),
        ]
    )


def _functional(lib):
    i = lib.Input((3,))
    h = lib.layers.Dense(4, activation="tanh")(i)
    o = lib.layers.Dense(1, activation="sigmoid")(h)
    return lib.Model(i, o)


@pytest.mark.parametrize("build", [_sequential, _functional], ids=["sequential", "functional"])
def test_epoch_values_of_metric_objects_match_keras(build):
    x, y = _data()
    history = {}
    for lib in (keras, rkeras):
        model = build(lib)
        model.set_weights(_weights())
        model.compile(
            optimizer=lib.optimizers.SGD(learning_rate=0.1),
            loss="binary_crossentropy",
            metrics=[lib.metrics.AUC(name="auc"), lib.metrics.Precision(name="precision")],
        )
        history[lib] = model.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0).history
    ours, theirs = history[rkeras], history[keras]
    for name in ("loss", "auc", "precision"):
        np.testing.assert_allclose(ours[name], theirs[name], atol=ATOL, err_msg=name)


def test_pooled_auc_differs_from_a_mean_of_batch_aucs():
    # the distinction the test above relies on, on the same data and weights
    x, y = _data()
    model = _sequential(keras)
    model.set_weights(_weights())
    scores = np.asarray(model.predict(x, verbose=0))
    pooled = keras.metrics.AUC()
    pooled.update_state(y, scores)
    per_batch = []
    for b in range(3):
        m = keras.metrics.AUC()
        m.update_state(y[8 * b : 8 * b + 8], scores[8 * b : 8 * b + 8])
        per_batch.append(float(m.result()))
    assert abs(float(pooled.result()) - np.mean(per_batch)) > 10 * ATOL
