"""keras.regularizers and the layers' regularizer arguments against Keras 3 (JAX backend).

Every model is built by one function run once with ``keras`` and once with
``rustyml.keras``, gets Keras's initial weights, and trains a few mini-batch steps with
``shuffle=False``; losses (which hold the penalties in both libraries), evaluation losses and
weights are compared.

Tolerance: both compute in float32 (u = 2^-24 ~ 6e-8). A penalty is one sum of at most ~200
terms (XLA sums pairwise, rustyml in float64, then both round): a relative difference of a few
u. Its gradient, ``l1 * sign(w) + 2 l2 w`` (times ``1/batch`` for an output penalty), rounds
once or twice per element. So a regularized step differs from Keras by the same few tens of u
per weight as an unregularized one (see test_keras_optimizers.py): with at most 6 steps
rtol = 2e-5, atol = 1e-6 (values passing near 0). The recurrent layers run 3 time steps, each
one more product and activation per element, so their forward and backward passes round about
three times as often: rtol = 6e-5 there. A missing penalty, a penalty counted twice, an
activity penalty not divided by the batch, or the wrong sign at 0 moves the loss or the
weights by more than 1e-3 relative.
"""

import os
import pickle

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")
keras = pytest.importorskip("keras")

import rustyml.keras as rk
from rustyml.neural_network import regularizers as nn_regularizers

RTOL, ATOL = 2e-5, 1e-6
RNN_RTOL = 6e-5


def _rng(seed):
    return np.random.default_rng(seed)


def _layer(model, name):
    return next(layer for layer in model.layers if layer.name == name)


def _copy_weights(theirs, ours):
    arrays = []
    for layer in ours.layers:
        arrays += [np.asarray(w) for w in _layer(theirs, layer.name).get_weights()]
    ours.set_weights(arrays)


def _compare(build, x, y, optimizer, epochs=3, batch_size=4, loss="mse", rtol=RTOL):
    # fixed initial weights: L1's gradient jumps by 2 l1 where a weight or output crosses 0,
    # so a value landing within rounding of 0 could step apart; seeded cases do not
    keras.utils.set_random_seed(0)
    theirs, ours = build(keras), build(rk)
    _copy_weights(theirs, ours)
    theirs.compile(optimizer=optimizer(keras), loss=loss)
    ours.compile(optimizer=optimizer(rk), loss=loss)
    # evaluation before any training: the penalties of the initial weights
    e_t = theirs.evaluate(x, y, batch_size=batch_size, verbose=0)
    e_o = ours.evaluate(x, y, batch_size=batch_size, verbose=0)
    np.testing.assert_allclose(e_o, e_t, rtol=rtol, atol=ATOL, err_msg="evaluate")
    fit = {"epochs": epochs, "batch_size": batch_size, "shuffle": False, "verbose": 0}
    h_t = theirs.fit(x, y, **fit).history["loss"]
    h_o = ours.fit(x, y, **fit).history["loss"]
    np.testing.assert_allclose(h_o, h_t, rtol=rtol, atol=ATOL, err_msg="loss history")
    got = ours.get_weights()
    want = theirs.get_weights()
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=rtol, atol=ATOL)
    e_t = theirs.evaluate(x, y, batch_size=batch_size, verbose=0)
    e_o = ours.evaluate(x, y, batch_size=batch_size, verbose=0)
    np.testing.assert_allclose(e_o, e_t, rtol=rtol, atol=ATOL, err_msg="evaluate after")
    return theirs, ours


def _sgd(k):
    return k.optimizers.SGD(learning_rate=0.1)


def _adam(k):
    # epsilon 1e-2: see test_keras_optimizers.py (Adam's step is ~sign(g) for |g| >> eps)
    return k.optimizers.Adam(learning_rate=0.05, epsilon=1e-2)


# --- the regularizer objects ---------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.L1(),
        lambda m: m.L1(0.3),
        lambda m: m.L2(),
        lambda m: m.L2(l2=0.25),
        lambda m: m.L1L2(),
        lambda m: m.L1L2(l1=0.1),
        lambda m: m.L1L2(l1=0.1, l2=0.2),
        lambda m: m.l1(0.5),
        lambda m: m.l2(0.5),
        lambda m: m.l1_l2(l1=0.5, l2=0.125),
    ],
)
def test_objects_configs_and_penalties_are_keras(make):
    ours, theirs = make(rk.regularizers), make(keras.regularizers)
    # one set of classes behind both doors
    assert type(ours) is getattr(nn_regularizers, type(ours).__name__)
    assert type(ours).__name__ == type(theirs).__name__
    assert ours.get_config() == theirs.get_config()
    assert rk.regularizers.serialize(ours) == keras.regularizers.serialize(theirs)
    again = rk.regularizers.deserialize(keras.regularizers.serialize(theirs))
    assert again == ours
    assert type(ours).from_config(ours.get_config()) == ours
    x = _rng(0).standard_normal((7, 5)).astype(np.float32)
    np.testing.assert_allclose(ours(x), float(theirs(x)), rtol=1e-6)


@pytest.mark.parametrize("name", ["l1", "l2", "l1l2", "L1", "L2", "L1L2"])
def test_names_give_keras_defaults(name):
    ours, theirs = rk.regularizers.get(name), keras.regularizers.get(name)
    assert type(ours).__name__ == type(theirs).__name__
    assert ours.get_config() == theirs.get_config()
    assert (
        rk.layers.Dense(2, kernel_regularizer=name).get_config()["kernel_regularizer"]
        == (keras.layers.Dense(2, kernel_regularizer=name).get_config()["kernel_regularizer"])
    )


def test_bad_values_are_value_errors_naming_the_argument():
    for bad in (-1.0, float("nan"), float("inf"), "0.1", True):
        with pytest.raises(ValueError, match="l2"):
            rk.regularizers.L2(bad)
        with pytest.raises(ValueError, match="l1"):
            rk.regularizers.L1L2(l1=bad)
    # Keras 3 knows "l1l2", not "l1_l2"
    for name in ("l1_l2", "l3", "ridge"):
        with pytest.raises(ValueError, match="kernel_regularizer"):
            rk.layers.Dense(2, kernel_regularizer=name)
        with pytest.raises(ValueError):
            keras.layers.Dense(2, kernel_regularizer=name)
    with pytest.raises(ValueError, match="bias_regularizer"):
        rk.layers.Conv1D(2, 3, bias_regularizer={"class_name": "L2", "config": {"l2": -0.5}})
    with pytest.raises(ValueError, match="activity_regularizer"):
        rk.layers.Dense(2, activity_regularizer=lambda w: 0.0)
    # an argument the layer does not take, named
    with pytest.raises(TypeError, match="recurrent_regularizer"):
        rk.layers.Dense(2, recurrent_regularizer="l2")
    with pytest.raises(TypeError, match="activity_regularizer"):
        rk.layers.Flatten(activity_regularizer="l2")
    with pytest.raises(NotImplementedError, match="OrthogonalRegularizer"):
        rk.regularizers.OrthogonalRegularizer(0.1)
    with pytest.raises(NotImplementedError, match="OrthogonalRegularizer"):
        rk.layers.Dense(2, kernel_regularizer="orthogonal_regularizer")
    with pytest.raises(ValueError, match="activity_regularizer"):
        rk.layers.Bidirectional(rk.layers.LSTM(2, activity_regularizer="l2"))


def test_a_native_config_with_an_unread_regularizer_is_refused():
    from rustyml import _native

    specs = '[{"class_name": "BatchNormalization", "config": {"momentum": 0.9, "epsilon": 0.001, "gamma_regularizer": "l2"}}]'
    with pytest.raises(ValueError, match="gamma_regularizer"):
        _native.neural_network.NativeSequential(specs, [3], 0)


# --- Sequential training against Keras ------------------------------------------------------


DENSE_CASES = {
    "kernel_l2": ({"kernel_regularizer": ("L2", 0.1)}, {}),
    "bias_l1_at_zero": ({"bias_regularizer": ("L1", 0.05)}, {"bias_regularizer": ("L1", 0.2)}),
    "kernel_l1l2_both_layers": (
        {"kernel_regularizer": ("L1L2", 0.02, 0.1)},
        {"kernel_regularizer": ("L1L2", 0.05, 0.3)},
    ),
    "activity_hidden_l1l2": ({"activity_regularizer": ("L1L2", 0.1, 0.2)}, {}),
    "activity_output_l2_and_kernel": (
        {},
        {"activity_regularizer": ("L2", 0.3), "kernel_regularizer": ("L1", 0.01)},
    ),
    "names": (
        {"kernel_regularizer": "l2", "activity_regularizer": "l1"},
        {"bias_regularizer": "l2"},
    ),
}


def _args(k, spec):
    out = {}
    for arg, value in spec.items():
        if isinstance(value, str):
            out[arg] = value
        elif value[0] == "L1L2":
            out[arg] = k.regularizers.L1L2(l1=value[1], l2=value[2])
        else:
            out[arg] = getattr(k.regularizers, value[0])(value[1])
    return out


def _dense_model(hidden_args, out_args):
    def build(k):
        return k.Sequential(
            [
                k.Input((4,)),
                k.layers.Dense(5, activation="tanh", name="hidden", **_args(k, hidden_args)),
                k.layers.Dense(1, name="out", **_args(k, out_args)),
            ]
        )

    return build


@pytest.mark.parametrize("optimizer", [_sgd, _adam], ids=["sgd", "adam"])
@pytest.mark.parametrize("case", sorted(DENSE_CASES))
def test_dense_sequential_trains_as_keras(case, optimizer):
    r = _rng(1)
    # 10 rows in batches of 4: the last batch of 2 shows the activity penalty's 1/batch
    x = r.standard_normal((10, 4)).astype(np.float32)
    y = r.standard_normal((10, 1)).astype(np.float32)
    _compare(_dense_model(*DENSE_CASES[case]), x, y, optimizer)


def test_one_step_loss_is_the_data_loss_plus_the_penalties():
    """One full-batch step by hand: the reported loss is the MSE plus l2 * sum(kernel^2) plus
    the activity penalty over the batch, and the kernel moves by the data gradient plus
    2 l2 kernel (NumPy in float64 as the oracle)."""

    model = rk.Sequential(
        [
            rk.Input((3,)),
            rk.layers.Dense(
                2,
                kernel_regularizer=rk.regularizers.L2(0.5),
                activity_regularizer=rk.regularizers.L1(0.25),
            ),
        ]
    )
    r = _rng(2)
    w = r.standard_normal((3, 2)).astype(np.float32)
    b = np.array([0.5, -0.25], np.float32)
    model.set_weights([w, b])
    x = r.standard_normal((6, 3)).astype(np.float32)
    y = r.standard_normal((6, 2)).astype(np.float32)
    model.compile(optimizer=rk.optimizers.SGD(0.1), loss="mse")
    out = x.astype(np.float64) @ w + b
    want_loss = (
        np.mean((out - y) ** 2)
        + 0.5 * np.sum(w.astype(np.float64) ** 2)
        + 0.25 * np.sum(np.abs(out)) / 6
    )
    g_out = 2 * (out - y) / out.size + 0.25 * np.where(out >= 0, 1.0, -1.0) / 6
    want_w = w - 0.1 * (x.T @ g_out + 2 * 0.5 * w)
    want_b = b - 0.1 * g_out.sum(axis=0)
    h = model.fit(x, y, batch_size=6, epochs=1, shuffle=False, verbose=0).history["loss"]
    np.testing.assert_allclose(h[0], want_loss, rtol=RTOL)
    got_w, got_b = model.get_weights()
    np.testing.assert_allclose(got_w, want_w, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(got_b, want_b, rtol=RTOL, atol=ATOL)


def _conv_model(k):
    return k.Sequential(
        [
            k.Input((7, 3)),
            k.layers.Conv1D(
                4,
                3,
                activation="relu",
                name="conv",
                kernel_regularizer=k.regularizers.L2(0.05),
                bias_regularizer=k.regularizers.L1(0.02),
                activity_regularizer=k.regularizers.L1L2(l1=0.01, l2=0.05),
            ),
            k.layers.Flatten(name="flat"),
            k.layers.Dense(1, name="out"),
        ]
    )


def _conv_transpose_model(k):
    return k.Sequential(
        [
            k.Input((4, 4, 2)),
            k.layers.Conv2DTranspose(
                2,
                2,
                strides=2,
                name="up",
                kernel_regularizer=k.regularizers.L2(0.02),
                activity_regularizer=k.regularizers.L2(0.1),
            ),
            k.layers.GlobalAveragePooling2D(name="gap"),
            k.layers.Dense(1, name="out"),
        ]
    )


def _separable_model(k):
    return k.Sequential(
        [
            k.Input((8, 3)),
            k.layers.SeparableConv1D(
                4,
                3,
                depth_multiplier=2,
                name="sep",
                depthwise_regularizer=k.regularizers.L2(0.1),
                pointwise_regularizer=k.regularizers.L1(0.02),
                bias_regularizer=k.regularizers.L2(0.3),
            ),
            k.layers.DepthwiseConv1D(
                2,
                name="dw",
                depthwise_regularizer=k.regularizers.L1L2(l1=0.01, l2=0.2),
                activity_regularizer=k.regularizers.L2(0.05),
            ),
            k.layers.Flatten(name="flat"),
            k.layers.Dense(1, name="out"),
        ]
    )


def _embedding_model(k):
    return k.Sequential(
        [
            k.Input((5,), dtype="int32"),
            k.layers.Embedding(
                9,
                3,
                name="emb",
                embeddings_regularizer=k.regularizers.L2(0.05),
                activity_regularizer=k.regularizers.L1(0.02),
            ),
            k.layers.Flatten(name="flat"),
            k.layers.Dense(1, name="out", bias_regularizer="l2"),
        ]
    )


# Adam on the transposed convolution is left out: its kernel gradient is a cancelling sum of
# 640 terms (10 rows x 64 positions, averaged), far below Adam's epsilon, where Adam's step is
# lr / epsilon = 5 times the gradient, rounding included: no float32 tolerance separates that
# from a wrong penalty. SGD checks the same penalties there.
@pytest.mark.parametrize(
    "build,shape,optimizer",
    [
        (_conv_model, (7, 3), _sgd),
        (_conv_model, (7, 3), _adam),
        (_conv_transpose_model, (4, 4, 2), _sgd),
        (_separable_model, (8, 3), _sgd),
        (_separable_model, (8, 3), _adam),
    ],
    ids=["conv1d-sgd", "conv1d-adam", "conv2d_transpose-sgd", "separable-sgd", "separable-adam"],
)
def test_convolutions_train_as_keras(build, shape, optimizer):
    r = _rng(3)
    x = r.standard_normal((10, *shape)).astype(np.float32)
    y = r.standard_normal((10, 1)).astype(np.float32)
    _compare(build, x, y, optimizer)


def test_embedding_trains_as_keras():
    r = _rng(4)
    x = r.integers(0, 9, (10, 5)).astype(np.float32)
    y = r.standard_normal((10, 1)).astype(np.float32)
    _compare(_embedding_model, x, y, _sgd)


@pytest.mark.parametrize("cell", ["SimpleRNN", "LSTM", "GRU"])
def test_recurrent_layers_train_as_keras(cell):
    # Keras 3's SimpleRNN takes activity_regularizer but never hands it on (it is ignored
    # and its config says null); rustyml applies it, checked below against NumPy
    activity = {} if cell == "SimpleRNN" else {"activity_regularizer": ("L2", 0.05)}

    def build(k):
        return k.Sequential(
            [
                k.Input((3, 2)),
                getattr(k.layers, cell)(
                    3,
                    name="rnn",
                    kernel_regularizer=k.regularizers.L2(0.1),
                    recurrent_regularizer=k.regularizers.L1(0.02),
                    bias_regularizer=k.regularizers.L1L2(l1=0.01, l2=0.1),
                    **_args(k, activity),
                ),
                k.layers.Dense(1, name="out"),
            ]
        )

    r = _rng(5)
    x = r.standard_normal((10, 3, 2)).astype(np.float32)
    y = r.standard_normal((10, 1)).astype(np.float32)
    _compare(build, x, y, _sgd, rtol=RNN_RTOL)


def test_simple_rnn_activity_penalty_is_the_mean_over_the_batch():
    """The evaluation loss with the activity penalty is the loss without it plus
    ``l2 * sum(h^2) / batch`` of the layer's output ``h`` (NumPy in float64)."""

    def build(activity):
        return rk.Sequential(
            [
                rk.Input((3, 2)),
                rk.layers.SimpleRNN(3, name="rnn", activity_regularizer=activity),
                rk.layers.Dense(1, name="out"),
            ]
        )

    r = _rng(12)
    x = r.standard_normal((10, 3, 2)).astype(np.float32)
    y = r.standard_normal((10, 1)).astype(np.float32)
    with_penalty, without = build(rk.regularizers.L2(0.05)), build(None)
    without.set_weights(with_penalty.get_weights())
    hidden = rk.Sequential([rk.Input((3, 2)), rk.layers.SimpleRNN(3)])
    hidden.set_weights(with_penalty.get_weights()[:3])
    h = hidden.predict(x).astype(np.float64)
    for m in (with_penalty, without):
        m.compile(optimizer="sgd", loss="mse")
    got = with_penalty.evaluate(x, y, batch_size=10, verbose=0)
    want = without.evaluate(x, y, batch_size=10, verbose=0) + 0.05 * np.sum(h**2) / 10
    np.testing.assert_allclose(got, want, rtol=RTOL)


def test_bidirectional_regularizes_both_directions_as_keras():
    def build(k):
        return k.Sequential(
            [
                k.Input((3, 2)),
                k.layers.Bidirectional(
                    k.layers.GRU(
                        2,
                        kernel_regularizer=k.regularizers.L2(0.1),
                        recurrent_regularizer=k.regularizers.L2(0.2),
                    ),
                    name="bi",
                ),
                k.layers.Dense(1, name="out"),
            ]
        )

    r = _rng(6)
    x = r.standard_normal((8, 3, 2)).astype(np.float32)
    y = r.standard_normal((8, 1)).astype(np.float32)
    _compare(build, x, y, _sgd, rtol=RNN_RTOL)


def test_a_frozen_layer_keeps_its_activity_penalty_but_not_its_weights():
    def build(k):
        model = _dense_model(
            {"kernel_regularizer": ("L2", 0.4), "activity_regularizer": ("L2", 0.2)},
            {"kernel_regularizer": ("L2", 0.1)},
        )(k)
        _layer(model, "hidden").trainable = False
        return model

    r = _rng(7)
    x = r.standard_normal((8, 4)).astype(np.float32)
    y = r.standard_normal((8, 1)).astype(np.float32)
    _compare(build, x, y, _sgd)


# --- the functional API ---------------------------------------------------------------------


def test_a_shared_layer_has_one_weight_penalty_and_its_last_calls_activity_penalty():
    """Keras 3's fit and evaluate (JAX) count a shared layer's weight penalty once and the
    output penalty of its last call only (eager ``model.losses`` would list both calls');
    the two calls' penalties differ here, so counting the first, both or neither fails."""

    def build(k):
        a = k.Input((4,), name="left")
        b = k.Input((4,), name="right")
        shared = k.layers.Dense(
            3,
            activation="tanh",
            name="encoder",
            kernel_regularizer=k.regularizers.L2(0.3),
            bias_regularizer=k.regularizers.L1(0.1),
            activity_regularizer=k.regularizers.L1L2(l1=0.05, l2=0.2),
        )
        h = k.layers.Concatenate(name="join")([shared(a), shared(b)])
        out = k.layers.Dense(1, name="out", kernel_regularizer=k.regularizers.L1(0.02))(h)
        return k.Model([a, b], out)

    r = _rng(8)
    xs = [
        r.standard_normal((10, 4)).astype(np.float32),
        r.standard_normal((10, 4)).astype(np.float32),
    ]
    y = r.standard_normal((10, 1)).astype(np.float32)
    for optimizer in (_sgd, _adam):
        _compare(build, xs, y, optimizer)


def test_two_outputs_report_unpenalized_output_losses():
    def build(k):
        x = k.Input((4,), name="x")
        h = k.layers.Dense(
            4, activation="tanh", name="h", kernel_regularizer=k.regularizers.L2(0.2)
        )(x)
        y1 = k.layers.Dense(1, name="y1", activity_regularizer=k.regularizers.L1(0.1))(h)
        y2 = k.layers.Dense(2, name="y2")(h)
        return k.Model(x, [y1, y2])

    r = _rng(9)
    x = r.standard_normal((8, 4)).astype(np.float32)
    ys = [
        r.standard_normal((8, 1)).astype(np.float32),
        r.standard_normal((8, 2)).astype(np.float32),
    ]
    keras.utils.set_random_seed(0)
    theirs, ours = build(keras), build(rk)
    _copy_weights(theirs, ours)
    kwargs = {"loss": ["mse", "mse"], "loss_weights": [0.5, 2.0]}
    theirs.compile(optimizer=keras.optimizers.SGD(0.1), **kwargs)
    ours.compile(optimizer=rk.optimizers.SGD(0.1), **kwargs)
    fit = {"batch_size": 4, "epochs": 2, "shuffle": False, "verbose": 0}
    h_t, h_o = theirs.fit(x, ys, **fit).history, ours.fit(x, ys, **fit).history
    assert set(h_o) == set(h_t)
    for key in h_t:
        np.testing.assert_allclose(h_o[key], h_t[key], rtol=RTOL, atol=ATOL, err_msg=key)
    e_t = theirs.evaluate(x, ys, batch_size=4, verbose=0)
    e_o = ours.evaluate(x, ys, batch_size=4, verbose=0)
    np.testing.assert_allclose(e_o, e_t, rtol=RTOL, atol=ATOL)


# --- configs, files and pickles -------------------------------------------------------------


def test_layer_configs_round_trip_in_keras_form():
    ours = rk.layers.LSTM(
        3,
        kernel_regularizer=rk.regularizers.L1L2(l1=0.1, l2=0.2),
        recurrent_regularizer="l2",
        activity_regularizer=rk.regularizers.L1(0.5),
    )
    theirs = keras.layers.LSTM(
        3,
        kernel_regularizer=keras.regularizers.L1L2(l1=0.1, l2=0.2),
        recurrent_regularizer="l2",
        activity_regularizer=keras.regularizers.L1(0.5),
    )
    got, want = ours.get_config(), theirs.get_config()
    for key in (
        "kernel_regularizer",
        "recurrent_regularizer",
        "bias_regularizer",
        "activity_regularizer",
    ):
        assert got[key] == want[key], key
    again = rk.layers.LSTM.from_config(got)
    assert again.get_config() == got
    assert again.kernel_regularizer == rk.regularizers.L1L2(l1=0.1, l2=0.2)
    # and Keras reads our config
    assert (
        keras.layers.LSTM.from_config(
            {k: got[k] for k in ("units", "kernel_regularizer", "activity_regularizer")}
        ).get_config()["kernel_regularizer"]
        == want["kernel_regularizer"]
    )


def _trained_pair():
    build = _dense_model(
        {"kernel_regularizer": ("L1L2", 0.02, 0.1), "activity_regularizer": ("L2", 0.1)},
        {"bias_regularizer": ("L1", 0.05)},
    )
    model = build(rk)
    model.compile(optimizer=rk.optimizers.Adam(0.05), loss="mse")
    r = _rng(10)
    x = r.standard_normal((12, 4)).astype(np.float32)
    y = r.standard_normal((12, 1)).astype(np.float32)
    model.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0)
    return model, x, y


def _bits(model):
    return [w.tobytes() for w in model.get_weights()]


def test_from_config_pickle_and_files_keep_the_regularizers(tmp_path):
    model, x, y = _trained_pair()
    config = model.get_config()
    hidden = next(c["config"] for c in config["layers"] if c["config"].get("name") == "hidden")
    assert hidden["kernel_regularizer"] == keras.regularizers.serialize(
        keras.regularizers.L1L2(l1=0.02, l2=0.1)
    )
    rebuilt = type(model).from_config(config)
    rebuilt.set_weights(model.get_weights())
    rebuilt.compile(optimizer=rk.optimizers.SGD(0.1), loss="mse")
    assert _layer(rebuilt, "hidden").activity_regularizer == rk.regularizers.L2(0.1)
    # the evaluation loss holds every penalty: equal bits mean equal regularizers
    assert rebuilt.evaluate(x, y, verbose=0) == model.evaluate(x, y, verbose=0)
    path = tmp_path / "model.safetensors"
    model.save(str(path))
    loaded = rk.models.load_model(str(path))
    assert loaded.evaluate(x, y, verbose=0) == model.evaluate(x, y, verbose=0)
    assert _layer(loaded, "out").bias_regularizer == rk.regularizers.L1(0.05)
    # a pickle carries the optimizer state too: training continues bit for bit
    copy = pickle.loads(pickle.dumps(model))
    fit = {"batch_size": 4, "epochs": 2, "shuffle": False, "verbose": 0}
    h = model.fit(x, y, **fit).history["loss"]
    assert copy.fit(x, y, **fit).history["loss"] == h
    assert _bits(copy) == _bits(model)


def test_data_parallel_shards_sum_to_the_batch_gradient_and_share_one_is_a_step():
    model, x, y = _trained_pair()
    twin = pickle.loads(pickle.dumps(model))
    loss, whole = model.compute_gradients(x, y, 1.0)
    _, a = model.compute_gradients(x[:5], y[:5], 5 / 12)
    _, b = model.compute_gradients(x[5:], y[5:], 7 / 12)
    for w, ga, gb in zip(whole, a, b):
        np.testing.assert_allclose(ga + gb, w, rtol=1e-5, atol=1e-7)
    # share 1 applied is a training step, bit for bit
    model.apply_gradients(whole)
    twin.fit(x, y, batch_size=12, epochs=1, shuffle=False, verbose=0)
    assert _bits(model) == _bits(twin)
    assert np.isfinite(loss)
