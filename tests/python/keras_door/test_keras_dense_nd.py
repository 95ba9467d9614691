"""``Dense`` on inputs of rank > 2 applies its kernel to the last axis, as Keras 3 does, in
``Sequential`` and functional models, against Keras 3 itself (JAX backend) with the same
weights.

Tolerance: float32 on both sides; forward values are dot products of length <= 6 (a few u
= 2^-24 each) and three SGD steps carry a few tens of u per weight: rtol 2e-5, atol 1e-6.
Treating the sequence axis as features (or training on a flattened copy) differs by O(1).
"""

import os

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")
keras = pytest.importorskip("keras")

import rustyml.keras as rkeras

RTOL, ATOL = 2e-5, 1e-6


def _weights():
    rng = np.random.default_rng(3)
    return [
        rng.uniform(-0.6, 0.6, (3, 6)).astype(np.float32),
        rng.uniform(-0.2, 0.2, (6,)).astype(np.float32),
        rng.uniform(-0.6, 0.6, (6, 2)).astype(np.float32),
        rng.uniform(-0.2, 0.2, (2,)).astype(np.float32),
    ]


def _sequential(lib):
    m = lib.Sequential(
        [
            lib.Input((5, 3)),
            lib.layers.Dense(6, activation="relu"),
            lib.layers.Dense(2, activation="softmax"),
        ]
    )
    m.set_weights(_weights())
    return m


def _functional(lib):
    i = lib.Input((4, 5, 3))
    h = lib.layers.Dense(6, activation="tanh")(i)
    o = lib.layers.Dense(2)(h)
    m = lib.Model(i, o)
    m.set_weights(_weights())
    return m


@pytest.mark.parametrize("build", [_sequential, _functional], ids=["sequential", "functional"])
def test_dense_on_the_last_axis_matches_keras(build):
    theirs, ours = build(keras), build(rkeras)
    shape = (7, *theirs.input_shape[1:])
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    y = rng.uniform(size=(*shape[:-1], 2)).astype(np.float32)
    np.testing.assert_allclose(ours.predict(x), theirs.predict(x, verbose=0), RTOL, ATOL)
    for m in (theirs, ours):
        lib = keras if isinstance(m, keras.Model) else rkeras
        m.compile(lib.optimizers.SGD(learning_rate=0.1), "mse")
    ht = theirs.fit(x, y, batch_size=3, epochs=1, shuffle=False, verbose=0)
    ho = ours.fit(x, y, batch_size=3, epochs=1, shuffle=False, verbose=0)
    np.testing.assert_allclose(ho.history["loss"], ht.history["loss"], RTOL, ATOL)
    for a, b in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, np.asarray(b), RTOL, ATOL)
    assert ours.predict(x).shape == (*shape[:-1], 2)


def test_dense_refuses_an_input_whose_last_axis_does_not_fit():
    m = _sequential(rkeras)
    with pytest.raises(ValueError, match="per-sample shape"):
        m.predict(np.zeros((2, 5, 4), np.float32))
