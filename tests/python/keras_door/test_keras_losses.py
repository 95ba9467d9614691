"""The Keras door's further losses against Keras 3 itself (JAX backend): the loss value of a
fixed model, and weights and History after a few SGD steps, for Huber, log-cosh, MAPE, MSLE,
KL divergence, the hinge family and cosine similarity, with both reductions.

Tolerance (as in test_keras_optimizers.py): float32 on both sides, a few tens of unit
roundoffs per step carried over at most 8 steps: rtol = 2e-5, atol = 1e-6. Every case uses
targets and predictions that put elements on both sides of each loss's kinks (Huber's delta,
the hinge margin, MSLE's floor at 0 via negative predictions), so a wrong branch, a missing
label conversion or a wrong reduction moves the numbers far beyond that.
"""

import os

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")
keras = pytest.importorskip("keras")

from rustyml.neural_network import Sequential, layers, losses, optimizers

RTOL, ATOL = 2e-5, 1e-6


def _weights(d, hidden, out, seed=1):
    rng = np.random.default_rng(seed)
    return [
        rng.uniform(-0.8, 0.8, (d, hidden)).astype(np.float32),
        rng.uniform(-0.5, 0.5, (hidden,)).astype(np.float32),
        rng.uniform(-0.8, 0.8, (hidden, out)).astype(np.float32),
        rng.uniform(-0.5, 0.5, (out,)).astype(np.float32),
    ]


def _models(out, out_act, keras_loss, our_loss, lr=0.1):
    weights = _weights(4, 5, out)
    theirs = keras.Sequential(
        [
            keras.Input((4,)),
            keras.layers.Dense(5, activation="tanh"),
            keras.layers.Dense(out, activation=out_act),
        ]
    )
    theirs.set_weights(weights)
    theirs.compile(optimizer=keras.optimizers.SGD(learning_rate=lr), loss=keras_loss)
    ours = Sequential(
        [
            layers.Dense(5, activation="tanh", input_shape=(4,)),
            layers.Dense(out, activation=out_act),
        ],
        seed=0,
    )
    ours.set_weights(weights)
    ours.compile(optimizer=optimizers.SGD(learning_rate=lr), loss=our_loss)
    return theirs, ours


def _targets(kind, n, out, rng):
    if kind == "regression":
        return (3.0 * rng.standard_normal((n, out))).astype(np.float32)
    if kind == "positive":
        return rng.uniform(0.0, 3.0, (n, out)).astype(np.float32)
    if kind == "binary":
        return (rng.uniform(size=(n, out)) < 0.5).astype(np.float32)
    if kind == "signs":
        return np.where(rng.uniform(size=(n, out)) < 0.5, -1.0, 1.0).astype(np.float32)
    if kind == "one_hot":
        return np.eye(out, dtype=np.float32)[rng.integers(0, out, n)]
    if kind == "distribution":
        p = rng.uniform(0.05, 1.0, (n, out))
        return (p / p.sum(axis=1, keepdims=True)).astype(np.float32)
    raise AssertionError(kind)


# name: (Keras class -> instance, outputs, output activation, target kind)
CASES = {
    "huber": (lambda m: m.Huber(), 1, None, "regression"),
    "huber_delta": (lambda m: m.Huber(delta=0.3), 2, None, "regression"),
    "huber_sum": (lambda m: m.Huber(reduction="sum"), 2, None, "regression"),
    "log_cosh": (lambda m: m.LogCosh(), 2, None, "regression"),
    "mape": (lambda m: m.MeanAbsolutePercentageError(), 1, None, "regression"),
    "msle": (lambda m: m.MeanSquaredLogarithmicError(), 2, None, "positive"),
    "kld": (lambda m: m.KLDivergence(), 3, "softmax", "distribution"),
    "kld_sum": (lambda m: m.KLDivergence(reduction="sum"), 3, "softmax", "distribution"),
    "hinge_binary_labels": (lambda m: m.Hinge(), 1, "tanh", "binary"),
    "hinge_signs": (lambda m: m.Hinge(), 2, None, "signs"),
    "squared_hinge": (lambda m: m.SquaredHinge(), 2, None, "binary"),
    "categorical_hinge": (lambda m: m.CategoricalHinge(), 3, None, "one_hot"),
    "cosine_similarity": (lambda m: m.CosineSimilarity(), 3, None, "regression"),
    "mse_sum": (lambda m: m.MeanSquaredError(reduction="sum"), 2, None, "regression"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_loss_value_and_training_match_keras(case):
    make, out, act, kind = CASES[case]
    rng = np.random.default_rng(7)
    x = rng.standard_normal((8, 4)).astype(np.float32)
    y = _targets(kind, 8, out, rng)
    theirs, ours = _models(out, act, make(keras.losses), make(losses))
    want = float(theirs.evaluate(x, y, batch_size=8, verbose=0))
    got = ours.evaluate(x, y, batch_size=8)
    assert got == pytest.approx(want, rel=RTOL, abs=ATOL)
    h_theirs = theirs.fit(x, y, epochs=4, batch_size=4, shuffle=False, verbose=0)
    h_ours = ours.fit(x, y, epochs=4, batch_size=4, shuffle=False, verbose=0)
    for g, w in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(g, np.asarray(w), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(
        h_ours.history["loss"], h_theirs.history["loss"], rtol=RTOL, atol=ATOL
    )
    # the weights moved: the comparison is not of two untrained models
    assert not np.allclose(ours.get_weights()[2], _weights(4, 5, out)[2])


@pytest.mark.parametrize(
    "name, cls",
    [
        ("huber", "Huber"),
        ("log_cosh", "LogCosh"),
        ("mape", "MeanAbsolutePercentageError"),
        ("msle", "MeanSquaredLogarithmicError"),
        ("kld", "KLDivergence"),
        ("kl_divergence", "KLDivergence"),
        ("hinge", "Hinge"),
        ("squared_hinge", "SquaredHinge"),
        ("categorical_hinge", "CategoricalHinge"),
        ("cosine_similarity", "CosineSimilarity"),
    ],
)
def test_string_names_are_the_classes(name, cls):
    assert type(losses.get(name)).__name__ == cls
    assert keras.losses.get(name) is not None  # a name Keras accepts too


def test_loss_config_round_trips_and_bad_arguments_are_refused():
    loss = losses.get(losses.Huber(delta=0.5, reduction="sum").get_config())
    assert (type(loss), loss.delta, loss.reduction) == (losses.Huber, 0.5, "sum")
    with pytest.raises(ValueError, match="delta"):
        losses.Huber(delta=-1.0)
    with pytest.raises(ValueError, match="reduction"):
        losses.Hinge(reduction="none")
    with pytest.raises(NotImplementedError, match="axis"):
        losses.CosineSimilarity(axis=0)
