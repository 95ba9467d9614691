"""GELU, SiLU (``swish``) and Mish in the Keras door, against Keras 3 (JAX) as the oracle:
the ``keras.activations`` functions on arrays, the layers that take an activation, config
round trips, and a few training steps with identical initial weights.

Tolerances, from float32 analysis (unit roundoff u = 2^-24 ~ 6e-8):

* Functions on arrays: both sides evaluate the same formula in float32 with different
  primitives (our erfc / exp against XLA's erf / exp / tanh, each within a few ulps), so the
  results differ by a few u relative: RTOL_FN = 2e-6 (~30 u). Keras computes GELU's left tail
  as ``x (1 + erf(x/√2)) / 2``, which cancels: its absolute error there is about
  ``|x| u`` (~1e-6 at |x| = 12), while ours (``erfc``) keeps its relative accuracy; the same
  cancellation hits the ``1 + tanh`` of Keras's approximate GELU. ATOL_FN = 2e-6 covers it.
* Training: the forward pass differs per layer by the summation order of dot products of
  <= 50 terms (~sqrt(50) u relative) plus the activations' few u; gradients go through the
  same chain backwards, and a few SGD/Adam steps carry those differences along (Adam, whose
  step is ~lr * sign(g), amplifies a relative gradient difference by at most ~1/(1 - beta2)
  in the worst case, far less for gradients well above epsilon). Over 6 steps that stays
  below ~1e-5 relative per weight: RTOL = 5e-5, ATOL = 5e-6 for weights near 0. A wrong
  derivative (e.g. sigmoid's instead of SiLU's) moves the weights by ~1e-2 after one step.
"""

import json
import os

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")
keras = pytest.importorskip("keras")

import rustyml.keras as rk

RTOL_FN, ATOL_FN = 2e-6, 2e-6
RTOL, ATOL = 5e-5, 5e-6

SMOOTH = ["gelu", "silu", "swish", "mish"]


def _grid():
    dense = np.linspace(-12.0, 12.0, 4001, dtype=np.float32)
    tails = np.array(
        [-1e4, -100.0, -87.5, -40.0, -20.0, 20.0, 40.0, 87.5, 100.0, 1e4], dtype=np.float32
    )
    tiny = np.array([0.0, -0.0, 1e-30, -1e-30, 1e-7, -1e-7], dtype=np.float32)
    return np.concatenate([dense, tails, tiny])


@pytest.mark.parametrize("name", SMOOTH)
def test_functions_on_arrays_match_keras_and_stay_finite(name):
    x = _grid()
    ours = getattr(rk.activations, name)(x)
    theirs = np.asarray(getattr(keras.activations, name)(x))
    assert ours.dtype == np.float32 and ours.shape == x.shape
    assert np.all(np.isfinite(ours)), x[~np.isfinite(ours)]
    np.testing.assert_allclose(ours, theirs, rtol=RTOL_FN, atol=ATOL_FN)
    # far right the function is x itself; far left it vanishes
    big = np.array([100.0, -100.0], np.float32)
    np.testing.assert_allclose(getattr(rk.activations, name)(big), [100.0, 0.0], atol=1e-30)


def test_gelu_approximate_and_shapes_match_keras():
    x = _grid()[:4016].reshape(-1, 2)
    for approximate in (False, True):
        ours = rk.activations.gelu(x, approximate=approximate)
        theirs = np.asarray(keras.activations.gelu(x, approximate=approximate))
        assert ours.shape == x.shape
        np.testing.assert_allclose(ours, theirs, rtol=RTOL_FN, atol=ATOL_FN)
    # the two forms differ visibly, so the flag is honoured
    assert abs(rk.activations.gelu(1.0) - rk.activations.gelu(1.0, approximate=True)) > 1e-5
    # a float64 list and a scalar come back as float32 of the same shape
    assert rk.activations.silu([[1.0, -2.0]]).shape == (1, 2)
    np.testing.assert_allclose(
        rk.activations.mish(2.0), np.asarray(keras.activations.mish(np.float32(2.0))), rtol=2e-6
    )
    assert rk.activations.swish is rk.activations.silu
    with pytest.raises(TypeError, match="approximate"):
        rk.activations.gelu(x, approximate="yes")


@pytest.mark.parametrize(
    "argument", ["gelu", "silu", "swish", "mish", "gelu_fn", "silu_fn", "swish_fn", "mish_fn"]
)
def test_layers_write_the_activation_name_keras_writes(argument):
    def value(module):
        if argument.endswith("_fn"):
            return getattr(module.activations, argument[:-3])
        return argument

    for make in (
        lambda K: K.layers.Dense(3, activation=value(K)),
        lambda K: K.layers.Conv2D(2, 3, activation=value(K)),
        lambda K: K.layers.DepthwiseConv2D(3, activation=value(K)),
        lambda K: K.layers.SeparableConv2D(2, 3, activation=value(K)),
        lambda K: K.layers.Activation(value(K)),
    ):
        assert make(rk).get_config()["activation"] == make(keras).get_config()["activation"]


def test_a_foreign_callable_is_refused_and_recurrent_layers_refuse_the_smooth_ones():
    with pytest.raises(TypeError, match="activation"):
        rk.layers.Dense(3, activation=lambda x: x)
    for layer in (
        rk.layers.SimpleRNN(3, activation="gelu"),
        rk.layers.LSTM(3, recurrent_activation="silu"),
        rk.layers.GRU(3, activation=rk.activations.mish),
    ):
        model = rk.Sequential([rk.Input((4, 2)), layer])
        with pytest.raises(ValueError, match="not supported as a recurrent"):
            model.build()


def _build(K, seed_weights=True):
    model = K.Sequential(
        [
            K.Input((6, 6, 2)),
            K.layers.Conv2D(3, 3, activation="gelu"),
            K.layers.DepthwiseConv2D(2, activation="swish"),
            K.layers.Flatten(),
            K.layers.Dense(5, activation=K.activations.mish),
            K.layers.Activation("silu"),
            K.layers.Dense(4),
            K.layers.Activation("gelu"),
            K.layers.Dense(1),
        ]
    )
    return model


def _weights(model):
    rng = np.random.default_rng(7)
    return [rng.uniform(-0.6, 0.6, w.shape).astype(np.float32) for w in model.get_weights()]


def _data():
    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, (8, 6, 6, 2)).astype(np.float32)
    y = rng.standard_normal((8, 1)).astype(np.float32)
    return x, y


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_training_matches_keras(optimizer):
    x, y = _data()
    theirs, ours = _build(keras), _build(rk)
    weights = _weights(theirs)
    theirs.set_weights(weights)
    ours.set_weights(weights)

    def make(K):
        if optimizer == "sgd":
            return K.optimizers.SGD(learning_rate=0.05)
        return K.optimizers.Adam(learning_rate=0.01)

    theirs.compile(optimizer=make(keras), loss="mse")
    ours.compile(optimizer=make(rk), loss="mse")
    np.testing.assert_allclose(
        ours.predict(x, verbose=0), theirs.predict(x, verbose=0), rtol=RTOL, atol=ATOL
    )
    kh = theirs.fit(x, y, batch_size=4, epochs=3, shuffle=False, verbose=0)
    oh = ours.fit(x, y, batch_size=4, epochs=3, shuffle=False, verbose=0)
    np.testing.assert_allclose(oh.history["loss"], kh.history["loss"], rtol=RTOL)
    moved = 0.0
    for o, k, w0 in zip(ours.get_weights(), theirs.get_weights(), weights):
        np.testing.assert_allclose(o, k, rtol=RTOL, atol=ATOL)
        moved = max(moved, float(np.max(np.abs(k - w0))))
    assert moved > 1e-3  # the comparison is not between untrained weights


def test_configs_and_files_round_trip_both_ways(tmp_path):
    x, _ = _data()
    km = _build(keras)
    km.set_weights(_weights(km))
    want = np.asarray(km.predict(x, verbose=0))

    # Keras's JSON and .keras archive load here and predict what Keras predicts
    from_json = rk.models.model_from_json(km.to_json())
    from_json.set_weights(km.get_weights())
    np.testing.assert_allclose(from_json.predict(x, verbose=0), want, rtol=RTOL, atol=ATOL)
    km.save(tmp_path / "k.keras")
    loaded = rk.models.load_model(tmp_path / "k.keras")
    np.testing.assert_allclose(loaded.predict(x, verbose=0), want, rtol=RTOL, atol=ATOL)

    # ours load in Keras with the names Keras writes ("silu" for "swish")
    names = [
        layer["config"].get("activation")
        for layer in json.loads(loaded.to_json())["config"]["layers"]
    ]
    assert [n for n in names if n not in (None, "linear")] == [
        "gelu",
        "silu",
        "mish",
        "silu",
        "gelu",
    ]
    loaded.save(tmp_path / "r.keras")
    back = keras.saving.load_model(tmp_path / "r.keras")
    np.testing.assert_allclose(np.asarray(back.predict(x, verbose=0)), want, rtol=RTOL, atol=ATOL)
    again = keras.models.model_from_json(loaded.to_json())
    again.set_weights(km.get_weights())
    np.testing.assert_allclose(np.asarray(again.predict(x, verbose=0)), want, rtol=RTOL, atol=ATOL)
