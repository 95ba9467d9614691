"""``Rescaling``, ``Normalization`` (with ``adapt``) and ``TimeDistributed`` against Keras 3
itself (JAX backend): forward outputs on the same inputs and weights, ``adapt`` statistics,
a few full-batch SGD steps of a small model holding each layer from the same initial weights,
configs both ways, files, pickling, ``summary`` and the refusal of bad arguments.

Tolerances: both compute in float32 (u = 2^-24 ~ 6e-8). Rescaling and Normalization are one
or two roundings per element (exact agreement expected up to 1 ulp: rtol 2.4e-7). The
models are at most three layers with dot products of length <= 6, summed in different orders
by XLA and rustyml: a few tens of u per layer (~1e-6 over the depth), and each SGD step adds
the same again to the weights; 3 steps stay below 2e-5 relative, with atol 1e-6 for values
near 0. ``adapt`` statistics: rustyml sums in f64 and rounds once (0.5 u); Keras's NumPy
float32 pairwise sums over n <= 2000 values err by at most ~log2(n) u ~ 11 u relative on the
mean and, through ``x - mean`` on data of mean ~5 and spread ~2, ~(5/2)^2 * 11 u on the
variance: rtol 1e-5 covers both, while a variance with the wrong ddof (n vs n - 1) is off by
5e-4 or more.
"""

import json
import os
import pickle

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")
keras = pytest.importorskip("keras")

import rustyml.keras as rk
from rustyml.neural_network import layers as nn_layers

RTOL, ATOL = 2e-5, 1e-6
ULP = 2.4e-7
STEPS = 3


def _rng(seed):
    return np.random.default_rng(seed)


def _train_both(theirs, ours, x, y, lr=0.05, loss="mse"):
    """Same weights, then ``STEPS`` full-batch SGD steps in both; compares predictions, the
    loss history and the final weights."""
    ours.set_weights([np.asarray(w) for w in theirs.get_weights()])
    start = [np.array(w) for w in ours.get_weights()]
    np.testing.assert_allclose(ours.predict(x), theirs.predict(x, verbose=0), rtol=RTOL, atol=ATOL)
    theirs.compile(optimizer=keras.optimizers.SGD(lr), loss=loss)
    ours.compile(optimizer=rk.optimizers.SGD(lr), loss=loss)
    n = len(x)
    h_t = theirs.fit(x, y, batch_size=n, epochs=STEPS, shuffle=False, verbose=0)
    h_o = ours.fit(x, y, batch_size=n, epochs=STEPS, shuffle=False, verbose=0)
    np.testing.assert_allclose(h_o.history["loss"], h_t.history["loss"], rtol=RTOL, atol=ATOL)
    got, want = ours.get_weights(), theirs.get_weights()
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == np.shape(w)
        np.testing.assert_allclose(g, np.asarray(w, np.float32), rtol=RTOL, atol=ATOL)
    # training moved every trainable array (the first layer's kernel included: the gradient
    # went through the layer under test)
    assert not np.allclose(got[0], start[0])


# --- Rescaling ------------------------------------------------------------------------------


@pytest.mark.parametrize(("scale", "offset"), [(1 / 255, 0.0), (1 / 127.5, -1), (-3.5, 2.25)])
def test_rescaling_forward_matches_keras(scale, offset):
    x = _rng(0).uniform(0, 255, size=(5, 4, 3)).astype(np.float32)
    want = np.asarray(keras.layers.Rescaling(scale, offset)(x))
    model = rk.Sequential([rk.Input((4, 3)), rk.layers.Rescaling(scale, offset)])
    # one rounding each of the product and the sum (XLA may fuse them): an ulp or two of
    # the larger of |x * scale| and |offset|
    atol = ULP * max(np.abs(x * np.float32(scale)).max(), abs(offset))
    np.testing.assert_allclose(model.predict(x), want, rtol=0, atol=atol)


def _rescaling_model(k):
    return k.Sequential(
        [
            k.Input((6,)),
            k.layers.Dense(4, activation="tanh"),
            k.layers.Rescaling(-1.5, offset=0.25),
            k.layers.Dense(2),
        ]
    )


def test_rescaling_trains_like_keras():
    x = _rng(1).normal(size=(8, 6)).astype(np.float32)
    y = _rng(2).normal(size=(8, 2)).astype(np.float32)
    _train_both(_rescaling_model(keras), _rescaling_model(rk), x, y)


# --- Normalization --------------------------------------------------------------------------


def _data(shape, seed=3):
    return (_rng(seed).normal(size=shape) * 2.0 + 5.0).astype(np.float32)


@pytest.mark.parametrize(
    ("shape", "axis"),
    [((200, 4), -1), ((50, 3, 4), -1), ((50, 3, 4), 1), ((50, 3, 4), (1, 2)), ((60, 5), None)],
)
def test_adapt_statistics_and_forward_match_keras(shape, axis):
    data = _data(shape)
    theirs = keras.layers.Normalization(axis=axis)
    theirs.adapt(data)
    ours = rk.layers.Normalization(axis=axis)
    ours.adapt(data)
    mean, var = ours._adapted
    want_mean, want_var, count = theirs.get_weights()
    np.testing.assert_allclose(mean, want_mean, rtol=1e-5)
    np.testing.assert_allclose(var, want_var, rtol=1e-5)
    # the f64 oracle: every axis but the kept ones
    keep = () if axis is None else tuple(a % len(shape) for a in np.atleast_1d(axis))
    reduce = tuple(a for a in range(len(shape)) if a not in keep)
    np.testing.assert_allclose(mean, data.astype(np.float64).mean(axis=reduce), rtol=ULP)
    np.testing.assert_allclose(var, data.astype(np.float64).var(axis=reduce), rtol=1e-6)
    model = rk.Sequential([rk.Input(shape[1:]), ours])
    got = model.predict(data)
    assert [w.shape for w in model.get_weights()] == [w.shape for w in theirs.get_weights()]
    # forward with Keras's own statistics: one subtraction and one division
    model.set_weights(theirs.get_weights())
    np.testing.assert_allclose(model.predict(data), np.asarray(theirs(data)), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got, np.asarray(theirs(data)), rtol=1e-4, atol=1e-5)
    assert int(count) == 0


def test_adapt_on_batches_matches_keras_and_the_whole_array():
    data = _data((300, 3), seed=7)
    batches = [data[i : i + 64] for i in range(0, 300, 64)]
    # (Keras's own adapt on an iterable needs TensorFlow installed: compared with its adapt
    # on the concatenation, which is what the batches describe)
    theirs = keras.layers.Normalization()
    theirs.adapt(data)
    ours = rk.layers.Normalization()
    ours.adapt(iter([(b, None) for b in batches]))
    np.testing.assert_allclose(ours._adapted[0], theirs.get_weights()[0], rtol=1e-5)
    np.testing.assert_allclose(ours._adapted[1], theirs.get_weights()[1], rtol=1e-5)
    whole = rk.layers.Normalization()
    whole.adapt(data)
    np.testing.assert_allclose(ours._adapted[1], whole._adapted[1], rtol=1e-6)


@pytest.mark.parametrize("invert", [False, True])
def test_given_statistics_and_invert_match_keras(invert):
    x = _data((6, 3, 2))
    mean, variance = [1.0, -2.0], [4.0, 0.0]  # a zero variance meets the 1e-7 floor
    theirs = keras.layers.Normalization(mean=mean, variance=variance, invert=invert)
    want = np.asarray(theirs(x))
    ours = rk.layers.Normalization(mean=mean, variance=variance, invert=invert)
    model = rk.Sequential([rk.Input((3, 2)), ours])
    np.testing.assert_allclose(model.predict(x), want, rtol=1e-6)
    assert model.get_weights() == [] == theirs.get_weights()


def _normalization_model(k, data):
    norm = k.layers.Normalization()
    norm.adapt(data)
    return k.Sequential([k.Input((5,)), k.layers.Dense(3), norm, k.layers.Dense(1)])


def test_normalization_inside_a_model_trains_like_keras():
    # Normalization between two layers: the first Dense trains through its gradient; the
    # statistics come from data of the first layer's output scale (x @ W, W ~ Glorot)
    x = _rng(11).normal(size=(10, 5)).astype(np.float32)
    y = _rng(12).normal(size=(10, 1)).astype(np.float32)
    h = (x @ _rng(13).normal(scale=0.6, size=(5, 3)) + 0.5).astype(np.float32)
    _train_both(_normalization_model(keras, h), _normalization_model(rk, h), x, y)


def test_adapt_after_building_updates_the_model_and_the_functional_api():
    x = _data((40, 4), seed=5)
    norm = rk.layers.Normalization()
    inputs = rk.Input((4,))
    model = rk.Model(inputs, rk.layers.Dense(2)(norm(inputs)))
    seq = rk.Sequential([rk.Input((4,)), norm])
    seq.build()
    before = model.get_weights()
    assert np.all(before[0] == 0) and np.all(before[1] == 1)
    norm.adapt(x)
    for m in (model, seq):
        w = m.get_weights()
        np.testing.assert_allclose(w[0], x.astype(np.float64).mean(axis=0), rtol=1e-6)
        np.testing.assert_allclose(w[1], x.astype(np.float64).var(axis=0), rtol=1e-6)
    np.testing.assert_allclose(seq.predict(x).mean(axis=0), 0, atol=1e-5)
    lines = []
    model.summary(print_fn=lines.append)
    assert "Non-trainable params: 9" in "\n".join(lines)
    lines = []
    seq.summary(print_fn=lines.append)
    assert "Non-trainable params: 9" in "\n".join(lines)


# --- TimeDistributed ------------------------------------------------------------------------


def _td_model(k):
    return k.Sequential(
        [
            k.Input((5, 3)),
            k.layers.TimeDistributed(k.layers.Dense(4, activation="tanh")),
            k.layers.Flatten(),
            k.layers.Dense(2),
        ]
    )


def test_time_distributed_predicts_and_trains_like_keras():
    x = _rng(20).normal(size=(6, 5, 3)).astype(np.float32)
    y = _rng(21).normal(size=(6, 2)).astype(np.float32)
    theirs, ours = _td_model(keras), _td_model(rk)
    assert [w.shape for w in ours.get_weights()] == [w.shape for w in theirs.get_weights()]
    _train_both(theirs, ours, x, y)


def _td_conv_functional(k):
    inputs = k.Input((3, 6, 6, 2))
    h = k.layers.TimeDistributed(k.layers.Conv2D(3, 3, activation="relu"))(inputs)
    h = k.layers.TimeDistributed(k.layers.GlobalAveragePooling2D())(h)
    return k.Model(inputs, k.layers.Dense(1)(k.layers.Flatten()(h)))


def test_time_distributed_conv_in_the_functional_api_trains_like_keras():
    x = _rng(22).normal(size=(4, 3, 6, 6, 2)).astype(np.float32)
    y = _rng(23).normal(size=(4, 1)).astype(np.float32)
    _train_both(_td_conv_functional(keras), _td_conv_functional(rk), x, y)


# --- configs, files, pickling, summary ------------------------------------------------------


def _all_three(k, mean_given=False):
    norm = (
        k.layers.Normalization(mean=[1.0, 2.0, 3.0, 4.0], variance=[1.0, 4.0, 9.0, 16.0])
        if mean_given
        else k.layers.Normalization(axis=-1)
    )
    return k.Sequential(
        [
            k.Input((5, 4)),
            k.layers.Rescaling(0.5, offset=-1.0),
            norm,
            # (an initializer config Keras 3.15 writes for GlorotUniform holds input_axes /
            # output_axes, which rustyml's initializers do not take yet)
            k.layers.TimeDistributed(k.layers.Dense(3, kernel_initializer="ones")),
        ]
    )


@pytest.mark.parametrize("mean_given", [False, True])
def test_configs_keras_wrote_load_and_ours_load_in_keras(mean_given):
    theirs = _all_three(keras, mean_given)
    x = _data((3, 5, 4))
    for layer in theirs.layers:
        config = json.loads(json.dumps(layer.get_config()))
        ours = getattr(rk.layers, type(layer).__name__).from_config(config)
        if not isinstance(layer, keras.layers.TimeDistributed):
            # (a nested Dense config carries rustyml's own `seed`, which Keras's Dense lacks)
            back = type(layer).from_config(json.loads(json.dumps(ours.get_config())))
            assert type(back) is type(layer)
        for key in ("scale", "offset", "axis", "invert", "mean", "variance"):
            if key in config:
                assert ours.get_config()[key] == config[key] or list(
                    ours.get_config()[key]
                ) == list(config[key])
    ours_model = rk.Sequential(
        [rk.Input((5, 4))]
        + [
            getattr(rk.layers, type(lay).__name__).from_config(
                json.loads(json.dumps(lay.get_config()))
            )
            for lay in theirs.layers
        ]
    )
    ours_model.set_weights(theirs.get_weights())
    np.testing.assert_allclose(
        ours_model.predict(x), theirs.predict(x, verbose=0), rtol=1e-5, atol=1e-6
    )


def test_save_load_pickle_and_summary_keep_every_layer(tmp_path):
    model = _all_three(rk)
    model.layers[1].adapt(_data((30, 5, 4)) * 0.5 - 1.0)
    x = _data((3, 5, 4))
    model.build()
    want = model.predict(x)
    path = tmp_path / "m.safetensors"
    model.save(path)
    loaded = rk.Sequential.load(path)
    np.testing.assert_array_equal(loaded.predict(x), want)
    copy = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(copy.predict(x), want)
    layer_copy = pickle.loads(pickle.dumps(model.layers[1]))
    np.testing.assert_array_equal(layer_copy._adapted[0], model.layers[1]._adapted[0])
    lines = []
    model.summary(print_fn=lines.append)
    text = "\n".join(lines)
    for kind in ("Rescaling", "Normalization", "TimeDistributed"):
        assert kind in text
    # Keras's counts: 4 + 4 + 1 statistics, 4 * 3 + 3 for the Dense
    assert "Total params: 24" in text and "Non-trainable params: 9" in text
    assert "(None, 5, 3)" in text


# --- bad arguments ---------------------------------------------------------------------------


def test_bad_arguments_raise_value_errors_naming_them():
    with pytest.raises(ValueError, match="scale"):
        rk.layers.Rescaling(float("nan"))
    with pytest.raises(ValueError, match="offset"):
        rk.layers.Rescaling(1.0, offset=float("inf"))
    with pytest.raises(ValueError, match="axis"):
        rk.Sequential([rk.Input((3,)), rk.layers.Normalization(axis=2)]).build()
    with pytest.raises(ValueError, match="axis"):
        rk.layers.Normalization(axis=3).adapt(np.zeros((4, 3)))
    with pytest.raises(ValueError, match="mean and variance"):
        rk.layers.Normalization(mean=1.0)
    with pytest.raises(ValueError, match="variance"):
        rk.layers.Normalization(mean=1.0, variance=-1.0)
    norm = rk.layers.Normalization(input_shape=(4,))
    with pytest.raises(ValueError, match="adapt"):
        norm.adapt(np.zeros((5, 4, 2)))
    with pytest.raises(ValueError, match="adapt"):
        norm.adapt([np.zeros((5, 4)), np.zeros((5, 3))])
    assert norm._adapted is None
    norm.adapt(_data((6, 4)))
    seq = rk.Sequential([rk.Input((3,)), rk.layers.Normalization()])
    seq.layers[0]._adapted = norm._adapted
    with pytest.raises(ValueError, match="kept axes"):
        seq.build()
    with pytest.raises(ValueError, match="at least 3 axes"):
        rk.Sequential([rk.Input((4,)), rk.layers.TimeDistributed(rk.layers.Dense(2))]).build()
    with pytest.raises(ValueError, match="layer"):
        rk.layers.TimeDistributed("dense")
    inputs = rk.Input((4,))
    with pytest.raises(ValueError, match="at least 3 axes"):
        rk.layers.TimeDistributed(rk.layers.Dense(2))(inputs)


def test_time_distributed_takes_the_inner_layers_initializers():
    model = rk.Sequential(
        [rk.Input((2, 3)), rk.layers.TimeDistributed(rk.layers.Dense(2, kernel_initializer="ones"))]
    )
    np.testing.assert_array_equal(model.get_weights()[0], np.ones((3, 2), np.float32))


def test_layers_are_exported_and_no_longer_stand_ins():
    for name in ("Rescaling", "Normalization", "TimeDistributed"):
        assert getattr(rk.layers, name) is getattr(nn_layers, name)
