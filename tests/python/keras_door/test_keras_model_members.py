"""Keras's per-batch calls and model members (``train_on_batch``, ``test_on_batch``,
``predict_on_batch``, ``get_layer``, ``weights``, ``trainable_weights``) on Sequential and
functional models, against Keras 3 itself (JAX backend) built with the same weights.

Tolerance: both sides compute in float32 (u = 2^-24); a step rounds each weight a few tens
of times through dot products of length <= 8 and the update, and the libraries order those
operations differently; over the 3 steps here the relative difference stays below ~3 * 40 u
~ 7e-6: rtol = 2e-5 (with atol = 1e-6 for values near 0). The behaviours checked (a missing
step, metrics from another batch or after the step, the wrong batch size) differ by far
more than that.
"""

import os

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")
keras = pytest.importorskip("keras")

import rustyml.keras as rkeras

RTOL, ATOL = 2e-5, 1e-6


def _data(seed=0, n=8):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 3)).astype(np.float32)
    y = rng.standard_normal((n, 2)).astype(np.float32)
    return x, y


def _weights(seed=1):
    rng = np.random.default_rng(seed)
    return [
        rng.uniform(-0.8, 0.8, (3, 4)).astype(np.float32),
        rng.uniform(-0.5, 0.5, (4,)).astype(np.float32),
        rng.uniform(-0.8, 0.8, (4, 2)).astype(np.float32),
        rng.uniform(-0.5, 0.5, (2,)).astype(np.float32),
    ]


def _sequential(lib):
    m = lib.Sequential(
        [
            lib.Input((3,)),
            lib.layers.Dense(4, activation="tanh", name="hidden"),
            lib.layers.Dense(2, name="out"),
        ]
    )
    m.set_weights(_weights())
    return m


def _functional(lib):
    i = lib.Input((3,))
    h = lib.layers.Dense(4, activation="tanh", name="hidden")(i)
    o = lib.layers.Dense(2, name="out")(h)
    m = lib.Model(i, o)
    m.set_weights(_weights())
    return m


def _two_outputs(lib):
    i = lib.Input((3,))
    h = lib.layers.Dense(4, activation="tanh", name="hidden")(i)
    a = lib.layers.Dense(1, name="a")(h)
    b = lib.layers.Dense(1, name="b")(h)
    m = lib.Model(i, [a, b])
    w = _weights()
    m.set_weights([w[0], w[1], w[2][:, :1], w[3][:1], w[2][:, 1:], w[3][1:]])
    return m


@pytest.mark.parametrize("build", [_sequential, _functional], ids=["sequential", "functional"])
@pytest.mark.parametrize("metrics", [[], ["mae"]], ids=["loss-only", "with-metric"])
def test_batch_calls_match_keras(build, metrics):
    x, y = _data()
    sw = np.linspace(0.5, 2.0, len(x)).astype(np.float32)
    theirs, ours = build(keras), build(rkeras)
    for m in (theirs, ours):
        m.compile(keras_opt(m), "mse", metrics=metrics)
    for batch in (slice(0, 4), slice(4, 8), slice(0, 8)):
        t = theirs.train_on_batch(x[batch], y[batch])
        o = ours.train_on_batch(x[batch], y[batch])
        # Keras returns a bare loss without metrics, [loss, *metrics] with them
        assert isinstance(o, list) == isinstance(t, list)
        np.testing.assert_allclose(o, t, rtol=RTOL, atol=ATOL)
    for a, b in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(
        ours.train_on_batch(x, y, sample_weight=sw),
        theirs.train_on_batch(x, y, sample_weight=sw),
        rtol=RTOL,
        atol=ATOL,
    )
    t = theirs.test_on_batch(x, y, return_dict=True)
    o = ours.test_on_batch(x, y, return_dict=True)
    # Keras returns the dict's names sorted
    assert list(o) == list(t)
    np.testing.assert_allclose(list(o.values()), list(t.values()), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(
        ours.test_on_batch(x, y, sample_weight=sw),
        theirs.test_on_batch(x, y, sample_weight=sw),
        rtol=RTOL,
        atol=ATOL,
    )
    np.testing.assert_allclose(
        ours.predict_on_batch(x), np.asarray(theirs.predict_on_batch(x)), rtol=RTOL, atol=ATOL
    )


def keras_opt(model):
    lib = keras if isinstance(model, keras.Model) else rkeras
    return lib.optimizers.SGD(learning_rate=0.1, momentum=0.5)


def test_train_on_batch_with_two_outputs_lists_each_loss_as_keras_does():
    x, y = _data()
    theirs, ours = _two_outputs(keras), _two_outputs(rkeras)
    for m in (theirs, ours):
        m.compile(keras_opt(m), ["mse", "mae"])
    ys = [y[:, :1], y[:, 1:]]
    t = theirs.train_on_batch(x, ys, return_dict=True)
    o = ours.train_on_batch(x, ys, return_dict=True)
    # Keras returns the dict's names sorted
    assert list(o) == list(t)
    np.testing.assert_allclose(list(o.values()), list(t.values()), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(
        ours.test_on_batch(x, ys), theirs.test_on_batch(x, ys), rtol=RTOL, atol=ATOL
    )


@pytest.mark.parametrize("build", [_sequential, _functional], ids=["sequential", "functional"])
def test_weight_lists_and_get_layer_follow_keras(build):
    theirs, ours = build(keras), build(rkeras)
    ours.get_layer("hidden").trainable = False
    theirs.get_layer("hidden").trainable = False
    for name in ("weights", "trainable_weights", "non_trainable_weights"):
        t = [np.asarray(v) for v in getattr(theirs, name)]
        o = getattr(ours, name)
        assert [a.shape for a in o] == [a.shape for a in t], name
        for a, b in zip(o, t):
            np.testing.assert_array_equal(a, b)
    assert ours.get_layer("out").name == "out"
    # Keras counts an InputLayer among a functional model's layers, not a Sequential's
    assert ours.get_layer(index=-1).name == theirs.get_layer(index=-1).name == "out"
    # (automatic names count the layers made so far in the process: compare the kinds)
    first_ours, first_theirs = ours.get_layer(index=0), theirs.get_layer(index=0)
    assert type(first_ours).__name__ == type(first_theirs).__name__
    assert first_ours is ours.layers[0]
    with pytest.raises(ValueError, match="No such layer: nope"):
        ours.get_layer("nope")
    with pytest.raises(ValueError, match="out of range"):
        ours.get_layer(index=7)
    with pytest.raises(ValueError, match="name or an index"):
        ours.get_layer()


def test_a_refused_train_on_batch_changes_nothing():
    x, y = _data()
    ours = _functional(rkeras)
    ours.compile(keras_opt(ours), "mse")
    before = ours.get_weights()
    with pytest.raises(ValueError):
        ours.train_on_batch(x, y[:5])
    with pytest.raises(ValueError, match="sample_weight and class_weight"):
        ours.train_on_batch(x, y, sample_weight=np.ones(8), class_weight={0: 1.0})
    for a, b in zip(ours.get_weights(), before):
        np.testing.assert_array_equal(a, b)
