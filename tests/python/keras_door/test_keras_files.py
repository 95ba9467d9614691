"""Keras 3's own model files: ``.keras`` archives and ``.weights.h5`` files, both ways.

Every model below is built by one function from a ``keras``-like module, run once with
Keras 3 (JAX) and once with ``rustyml.keras``. The oracle is Keras: a file Keras writes must
load here and predict what Keras predicts; a file rustyml writes must load in Keras and
predict there what rustyml predicts.

Tolerance: the two libraries compute the same float32 forward pass with different
summation orders. Each output is a chain of at most a few layers of dot products of at most
~100 terms with weights and activations of order 1, so each layer differs by at most about
``n * eps32 * sum|a_i b_i|`` ~ ``100 * 6e-8 * 10`` = 6e-5 in the worst case (typically
``sqrt(n) * eps`` ~ 1e-6); recurrent layers over 5 steps and normalisations dividing by a
standard deviation of ~0.3 amplify that by at most ~10. ``ATOL = RTOL = 1e-4`` bounds this
while any wrong weight (values drawn uniformly in [-0.8, 0.8]) moves outputs by ~0.1.
"""

import json
import os
import zipfile

os.environ.setdefault("KERAS_BACKEND", "jax")

import numpy as np
import pytest

keras = pytest.importorskip("keras")
pytest.importorskip("h5py")

import rustyml.keras as rk
from rustyml.keras import _keras_format

ATOL = RTOL = 1e-4


def _seq(K, *layers, shape):
    return K.Sequential([K.Input(shape), *layers])


def _floats(*shape):
    def make(rng):
        return rng.uniform(-1, 1, (4, *shape)).astype("float32")

    return make


def _tokens(rng):
    x = rng.integers(1, 10, (4, 6))
    x[0, 4:] = 0  # padding, masked by mask_zero
    x[2, 2:] = 0
    return x.astype("float32")


def _padded_steps(rng):
    x = rng.uniform(-1, 1, (4, 5, 3)).astype("float32")
    x[1, 3:] = 0.0  # steps Masking skips
    return x


MODELS = {
    "dense_regularized": (
        lambda K: _seq(
            K,
            K.layers.Dense(
                5,
                activation="relu",
                kernel_regularizer=K.regularizers.L2(0.01),
                bias_regularizer=K.regularizers.L1(0.02),
                activity_regularizer=K.regularizers.L1L2(l1=0.01, l2=0.02),
            ),
            K.layers.Dense(3, activation="softmax", use_bias=False),
            shape=(4,),
        ),
        _floats(4),
    ),
    "initializers": (
        lambda K: _seq(
            K,
            K.layers.Dense(
                4,
                kernel_initializer=K.initializers.HeNormal(seed=1),
                bias_initializer="ones",
            ),
            K.layers.Dense(2, kernel_initializer="glorot_normal"),
            shape=(3,),
        ),
        _floats(3),
    ),
    "conv1d": (
        lambda K: _seq(
            K,
            K.layers.Conv1D(4, 3, padding="same", activation="relu"),
            K.layers.Conv1D(3, 2, padding="causal", dilation_rate=2),
            K.layers.Conv1DTranspose(2, 3, strides=2),
            K.layers.MaxPooling1D(2),
            K.layers.AveragePooling1D(2, padding="same"),
            K.layers.GlobalAveragePooling1D(),
            shape=(8, 3),
        ),
        _floats(8, 3),
    ),
    "conv2d": (
        lambda K: _seq(
            K,
            K.layers.Conv2D(3, 3, strides=(1, 2), padding="same", activation="tanh"),
            K.layers.Conv2DTranspose(2, 2, strides=2),
            K.layers.MaxPooling2D(),
            K.layers.ZeroPadding2D(1),
            K.layers.Cropping2D(((1, 0), (0, 1))),
            K.layers.UpSampling2D(2),
            K.layers.AveragePooling2D(2),
            K.layers.Flatten(),
            K.layers.Dense(2),
            shape=(6, 6, 2),
        ),
        _floats(6, 6, 2),
    ),
    "conv3d": (
        lambda K: _seq(
            K,
            K.layers.Conv3D(2, 2, activation="relu"),
            K.layers.Conv3DTranspose(2, 2),
            K.layers.MaxPooling3D(2),
            K.layers.GlobalMaxPooling3D(),
            shape=(4, 4, 4, 1),
        ),
        _floats(4, 4, 4, 1),
    ),
    "depthwise_separable_2d": (
        lambda K: _seq(
            K,
            K.layers.DepthwiseConv2D(3, depth_multiplier=2, padding="same"),
            K.layers.SeparableConv2D(4, 3, activation="relu"),
            K.layers.GlobalAveragePooling2D(),
            shape=(6, 6, 3),
        ),
        _floats(6, 6, 3),
    ),
    "depthwise_separable_1d": (
        lambda K: _seq(
            K,
            K.layers.DepthwiseConv1D(3),
            K.layers.SeparableConv1D(2, 3, depth_multiplier=2),
            K.layers.GlobalMaxPooling1D(),
            shape=(10, 3),
        ),
        _floats(10, 3),
    ),
    "batch_and_layer_normalization": (
        lambda K: _seq(
            K,
            K.layers.Dense(4),
            K.layers.BatchNormalization(momentum=0.9, epsilon=1e-2),
            K.layers.Reshape((2, 2)),
            K.layers.LayerNormalization(),
            K.layers.UnitNormalization(),
            K.layers.Flatten(),
            K.layers.Dense(1),
            shape=(5,),
        ),
        _floats(5),
    ),
    "embedding_mask_zero_lstm": (
        lambda K: _seq(
            K,
            K.layers.Embedding(10, 4, mask_zero=True),
            K.layers.LSTM(3),
            shape=(6,),
        ),
        _tokens,
    ),
    "simple_rnn_gru": (
        lambda K: _seq(
            K,
            K.layers.SimpleRNN(4, return_sequences=True),
            K.layers.GRU(3, return_sequences=True, go_backwards=True),
            K.layers.GRU(2, reset_after=False),
            shape=(5, 3),
        ),
        _floats(5, 3),
    ),
    "bidirectional": (
        lambda K: _seq(
            K,
            K.layers.Bidirectional(K.layers.LSTM(3, return_sequences=True)),
            K.layers.Bidirectional(K.layers.GRU(2), merge_mode="sum"),
            shape=(5, 3),
        ),
        _floats(5, 3),
    ),
    "time_distributed": (
        lambda K: _seq(
            K,
            K.layers.TimeDistributed(K.layers.Dense(3, activation="relu")),
            K.layers.TimeDistributed(K.layers.Dense(2)),
            K.layers.Flatten(),
            shape=(4, 5),
        ),
        _floats(4, 5),
    ),
    "masking_dropout_noise": (
        lambda K: _seq(
            K,
            K.layers.Masking(0.0),
            K.layers.SimpleRNN(3, return_sequences=True),
            K.layers.Dropout(0.3),
            K.layers.SpatialDropout1D(0.2),
            K.layers.GaussianNoise(0.1),
            K.layers.GaussianDropout(0.1),
            K.layers.LSTM(2),
            shape=(5, 3),
        ),
        _padded_steps,
    ),
    "border_and_group_norm_1d": (
        lambda K: _seq(
            K,
            K.layers.ZeroPadding1D((1, 2)),
            K.layers.Cropping1D((1, 0)),
            K.layers.UpSampling1D(2),
            K.layers.GroupNormalization(groups=2),
            K.layers.PReLU(shared_axes=[1]),
            K.layers.Identity(),
            K.layers.GlobalAveragePooling1D(),
            shape=(4, 4),
        ),
        _floats(4, 4),
    ),
    "preprocessing_and_activations": (
        lambda K: _seq(
            K,
            K.layers.Rescaling(0.5, offset=0.25),
            K.layers.Normalization(),
            K.layers.Normalization(mean=[0.1, 0.2, 0.3], variance=[1.0, 2.0, 0.5]),
            K.layers.Dense(4),
            K.layers.LeakyReLU(0.2),
            K.layers.PReLU(),
            K.layers.ELU(0.5),
            K.layers.Activation("sigmoid"),
            K.layers.RepeatVector(2),
            K.layers.Permute((2, 1)),
            K.layers.ReLU(),
            K.layers.Flatten(),
            K.layers.Softmax(),
            shape=(3,),
        ),
        _floats(3),
    ),
}


def _merge_model(K):
    a, b = K.Input((4,), name="left"), K.Input((4,), name="right")
    # two branches with layers of one shape: their order in the file must be Keras's
    da = K.layers.Dense(3, activation="tanh", name="branch_a")(a)
    db = K.layers.Dense(3, activation="tanh", name="branch_b")(b)
    merged = [
        K.layers.Add(name="add")([da, db]),
        K.layers.Subtract(name="subtract")([da, db]),
        K.layers.Multiply(name="multiply")([da, db]),
        K.layers.Average(name="average")([da, db]),
        K.layers.Maximum(name="maximum")([da, db]),
        K.layers.Minimum(name="minimum")([da, db]),
        K.layers.Dot(axes=1, name="dot")([da, db]),
    ]
    joined = K.layers.Concatenate(name="joined")(merged)
    shared = K.layers.Dense(2, name="shared")
    out1 = shared(joined)
    widened = K.layers.Dense(19, name="widen")(da)
    side = K.layers.Concatenate(name="side")([shared(widened), db])
    out2 = K.layers.Dense(1, name="head")(side)
    return K.Model([a, b], [out1, out2])


def _merge_inputs(rng):
    return [rng.uniform(-1, 1, (4, 4)).astype("float32") for _ in range(2)]


MODELS["functional_merges"] = (_merge_model, _merge_inputs)


def _masks_model(K):
    # Keras records the masks of Embedding(mask_zero) and Masking as operations in the graph
    tokens = K.Input((6,), name="tokens")
    steps = K.Input((5, 3), name="steps")
    a = K.layers.LSTM(3, name="lstm_tokens")(
        K.layers.Embedding(10, 4, mask_zero=True, name="embed")(tokens)
    )
    b = K.layers.GRU(2, name="gru_steps")(K.layers.Masking(0.0)(steps))
    return K.Model({"tokens": tokens, "steps": steps}, {"joined": K.layers.Concatenate()([a, b])})


def _masks_inputs(rng):
    return {"tokens": _tokens(rng), "steps": _padded_steps(rng)}


MODELS["functional_masks"] = (_masks_model, _masks_inputs)


def _randomize(model, rng):
    """Every weight of a Keras model drawn afresh (variances positive, counts > 0)."""
    arrays = []
    for w in model.weights:
        shape = tuple(w.shape)
        if "variance" in w.path:
            a = rng.uniform(0.5, 1.5, shape)
        elif w.path.endswith("count"):
            a = np.full(shape, 10.0)
        else:
            a = rng.uniform(-0.8, 0.8, shape)
        arrays.append(a.astype("float32"))
    model.set_weights(arrays)
    for layer in model.layers:
        if hasattr(layer, "finalize_state"):
            # Keras's Normalization reads its statistics' variables when finalized (as
            # loading does), not on set_weights
            layer.finalize_state()


def _keras_predict(model, x):
    # an eager call: Keras's predict compiles the model first, which costs seconds here
    out = model(x, training=False)
    if isinstance(out, dict):
        return {k: np.asarray(v) for k, v in out.items()}
    return [np.asarray(o) for o in out] if isinstance(out, (list, tuple)) else np.asarray(out)


def _close(a, b):
    if isinstance(a, dict):
        assert sorted(a) == sorted(b)
        for k in a:
            _close(a[k], b[k])
        return
    if isinstance(a, list):
        assert len(a) == len(b)
        for u, v in zip(a, b):
            _close(u, v)
        return
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), atol=ATOL, rtol=RTOL)


class _KerasCases:
    """Each table model built once in Keras with random weights, its inputs and its
    ``.keras`` archive (building a Keras model the first time costs seconds: JAX traces
    and compiles every new operation)."""

    def __init__(self, directory):
        self.directory = directory
        self.cases = {}

    def __getitem__(self, kind):
        if kind not in self.cases:
            build, inputs = MODELS[kind]
            rng = np.random.default_rng(sorted(MODELS).index(kind))
            km = build(keras)
            _randomize(km, rng)
            path = self.directory / f"{kind}.keras"
            km.save(path)
            self.cases[kind] = (km, inputs(rng), path)
        return self.cases[kind]


@pytest.fixture(scope="module")
def keras_cases(tmp_path_factory):
    return _KerasCases(tmp_path_factory.mktemp("keras_cases"))


def _copy_weights(reference, model):
    """Keras model ``reference``'s weights into the rustyml model of the same build."""
    if isinstance(reference, keras.Sequential):
        model.set_weights(reference.get_weights())
        return
    # by name: a functional model's layers may be listed in another order than Keras's
    for klayer in reference.layers:
        if klayer.weights:
            ours = next(lay for lay in model.layers if lay.name == klayer.name)
            ours.set_weights(klayer.get_weights())


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_keras_archive_loads_and_predicts_as_keras(kind, keras_cases):
    km, x, path = keras_cases[kind]
    model = rk.saving.load_model(path)
    _close(model.predict(x), _keras_predict(km, x))
    # rustyml.keras.models.load_model from a str path; each layer's weights as Keras's
    model = rk.models.load_model(str(path))
    for klayer in km.layers:
        ours = next(lay for lay in model.layers if lay.name == klayer.name)
        got = ours.get_weights()
        assert len(got) == len(klayer.weights)
        for a, b in zip(got, klayer.get_weights()):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_rustyml_archive_loads_in_keras(kind, keras_cases, tmp_path):
    reference, x, _ = keras_cases[kind]
    model = MODELS[kind][0](rk)
    _copy_weights(reference, model)
    ours = model.predict(x)
    path = tmp_path / "ours.keras"
    model.save(path)
    with zipfile.ZipFile(path) as zf:
        assert sorted(zf.namelist()) == ["config.json", "metadata.json", "model.weights.h5"]
    loaded = keras.saving.load_model(path)
    _close(_keras_predict(loaded, x), ours)
    _close(_keras_predict(loaded, x), _keras_predict(reference, x))


@pytest.mark.parametrize(
    "kind", ["functional_merges", "bidirectional", "preprocessing_and_activations"]
)
def test_weights_h5_both_ways(kind, keras_cases, tmp_path):
    km, x, archive = keras_cases[kind]
    km.save_weights(tmp_path / "k.weights.h5")
    model = MODELS[kind][0](rk)
    model.load_weights(tmp_path / "k.weights.h5")
    _close(model.predict(x), _keras_predict(km, x))
    # and back: rustyml's file into another Keras model of this build
    model.set_weights([w * 0.5 for w in model.get_weights()])
    model.save_weights(str(tmp_path / "r.weights.h5"))
    other = keras.saving.load_model(archive)
    other.load_weights(tmp_path / "r.weights.h5")
    _close(_keras_predict(other, x), model.predict(x))


def test_compile_settings_survive_from_keras(tmp_path):
    km = MODELS["dense_regularized"][0](keras)
    km.compile(
        optimizer=keras.optimizers.Adam(learning_rate=0.003, beta_1=0.8, amsgrad=True),
        loss=keras.losses.CategoricalCrossentropy(from_logits=False),
        metrics=["mae"],
    )
    rng = np.random.default_rng(3)
    _randomize(km, rng)
    x = rng.uniform(-1, 1, (16, 4)).astype("float32")
    y = np.eye(3, dtype="float32")[rng.integers(0, 3, 16)]
    km.save(tmp_path / "c.keras")
    model = rk.models.load_model(tmp_path / "c.keras")
    assert type(model.optimizer).__name__ == "Adam"
    assert model.optimizer.learning_rate == pytest.approx(0.003)
    assert model.optimizer.beta_1 == pytest.approx(0.8)
    assert model.optimizer.amsgrad is True
    assert model.loss.name == "categorical_crossentropy"
    # the loss includes the regularization penalties; both are float32 sums over 16 samples
    k_loss, k_mae = km.evaluate(x, y, verbose=0)
    ours = model.evaluate(x, y, batch_size=16)
    np.testing.assert_allclose(ours, [k_loss, k_mae], rtol=RTOL, atol=ATOL)
    uncompiled = rk.models.load_model(tmp_path / "c.keras", compile=False)
    assert uncompiled._compiled is None


def test_compile_settings_survive_to_keras(tmp_path):
    model = MODELS["functional_merges"][0](rk)
    schedule = rk.optimizers.schedules.ExponentialDecay(0.002, decay_steps=10, decay_rate=0.5)
    model.compile(
        optimizer=rk.optimizers.RMSprop(learning_rate=schedule, rho=0.8),
        loss=["mse", rk.losses.Huber(delta=0.5)],
        loss_weights=[1.0, 0.25],
        metrics=[["mae"], []],
    )
    rng = np.random.default_rng(4)
    x = _merge_inputs(rng)
    y = [rng.uniform(-1, 1, (4, 2)).astype("float32"), rng.uniform(-1, 1, (4, 1)).astype("float32")]
    model.save(tmp_path / "c.keras")
    loaded = keras.saving.load_model(tmp_path / "c.keras")
    config = loaded.optimizer.get_config()
    assert type(loaded.optimizer).__name__ == "RMSprop"
    assert config["learning_rate"]["class_name"] == "ExponentialDecay"
    assert config["learning_rate"]["config"]["initial_learning_rate"] == pytest.approx(0.002)
    assert config["learning_rate"]["config"]["decay_rate"] == pytest.approx(0.5)
    assert config["rho"] == pytest.approx(0.8)
    k_total = loaded.evaluate(x, y, verbose=0, return_dict=True)["loss"]
    ours = model.evaluate(x, y, return_dict=True)["loss"]
    np.testing.assert_allclose(ours, k_total, rtol=RTOL, atol=ATOL)
    # rustyml reads its own archive back compiled alike
    again = rk.models.load_model(tmp_path / "c.keras")
    assert again._compiled[3] == [1.0, 0.25]
    assert [lo.name for lo in again._compiled[2]] == ["mean_squared_error", "huber"]


def test_save_model_and_model_from_json(tmp_path, keras_cases):
    km = keras_cases["time_distributed"][0]
    model = rk.models.model_from_json(km.to_json())
    assert [type(lay).__name__ for lay in model.layers] == [type(lay).__name__ for lay in km.layers]
    model.set_weights(km.get_weights())
    x = _floats(4, 5)(np.random.default_rng(5))
    _close(model.predict(x), _keras_predict(km, x))
    rk.saving.save_model(model, tmp_path / "m.keras")
    _close(_keras_predict(keras.saving.load_model(tmp_path / "m.keras"), x), model.predict(x))
    # and rustyml's to_json read by Keras, for a Sequential and a functional model
    again = keras.models.model_from_json(model.to_json())
    again.set_weights(model.get_weights())
    _close(_keras_predict(again, x), model.predict(x))
    functional = MODELS["functional_merges"][0](rk)
    rebuilt = keras.models.model_from_json(functional.to_json())
    assert [lay.name for lay in rebuilt.layers] == [
        lay.name for lay in _keras_format.functional_layer_order(functional)
    ]
    assert (
        rk.models.model_from_json(functional.to_json()).get_config()["layers"]
        == (functional.get_config()["layers"])
    )


def test_layer_get_and_set_weights(keras_cases):
    model = MODELS["bidirectional"][0](rk)
    km = keras_cases["bidirectional"][0]
    model.set_weights(km.get_weights())
    for ours, theirs in zip(model.layers, km.layers, strict=True):
        got = ours.get_weights()
        assert [a.shape for a in got] == [tuple(w.shape) for w in theirs.weights]
        for a, b in zip(got, theirs.get_weights()):
            np.testing.assert_array_equal(a, b)
    before = model.get_weights()
    new = [np.zeros_like(a) for a in model.layers[1].get_weights()]
    model.layers[1].set_weights(new)
    after = model.get_weights()
    n_first = len(model.layers[0].get_weights())
    for a, b in zip(after[:n_first], before[:n_first]):
        np.testing.assert_array_equal(a, b)
    assert all(not a.any() for a in after[n_first:])
    with pytest.raises(ValueError, match="shape"):
        model.layers[1].set_weights([np.zeros((1, 1))] * len(new))
    with pytest.raises(ValueError, match="no weights yet"):
        rk.layers.Dense(2).get_weights()
    # a copy's layers answer for the copy
    import pickle

    copy = pickle.loads(pickle.dumps(model))
    copy.layers[1].set_weights([np.ones_like(a) for a in new])
    assert all(not a.any() for a in model.layers[1].get_weights())
    assert all((a == 1).all() for a in copy.layers[1].get_weights())


def test_safetensors_files_keep_their_behaviour(tmp_path):
    model = MODELS["dense_regularized"][0](rk)
    path = tmp_path / "m.safetensors"
    model.save(path)
    x = _floats(4)(np.random.default_rng(7))
    loaded = rk.models.load_model(path)
    np.testing.assert_array_equal(loaded.predict(x), model.predict(x))
    with open(path, "rb") as f:
        assert not f.read(4).startswith(b"PK")


# --- refusals and bad input ---------------------------------------------------------------


def _edit_config(src, dst, edit):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for name in zin.namelist():
            data = zin.read(name)
            if name == "config.json":
                config = json.loads(data)
                edit(config)
                data = json.dumps(config)
            zout.writestr(name, data)


@pytest.fixture
def dense_archive(keras_cases):
    return keras_cases["initializers"][2]


def test_refuses_unknown_layer_class(dense_archive, tmp_path):
    def edit(config):
        config["config"]["layers"][1]["class_name"] = "EinsumDense"

    _edit_config(dense_archive, tmp_path / "u.keras", edit)
    with pytest.raises(NotImplementedError, match="EinsumDense"):
        rk.models.load_model(tmp_path / "u.keras")


def test_refuses_non_neutral_key_naming_it(tmp_path):
    km = _seq(keras, keras.layers.Dense(2, kernel_constraint="non_neg", name="dc"), shape=(3,))
    km.save(tmp_path / "c.keras")
    with pytest.raises(NotImplementedError, match=r"kernel_constraint.*|dc"):
        rk.models.load_model(tmp_path / "c.keras")
    config = json.loads(_seq(keras, keras.layers.LSTM(2, name="st"), shape=(3, 2)).to_json())
    config["config"]["layers"][1]["config"]["stateful"] = True
    with pytest.raises(NotImplementedError, match=r"'st'.*stateful=True"):
        rk.models.model_from_json(json.dumps(config))


def test_bad_files(tmp_path, dense_archive, keras_cases):
    with pytest.raises(FileNotFoundError):
        rk.models.load_model(tmp_path / "missing.keras")
    (tmp_path / "junk.keras").write_bytes(b"not a zip at all")
    with pytest.raises(ValueError, match="not a zip"):
        rk.models.load_model(tmp_path / "junk.keras")
    # a weights file for another architecture: refused, the model unchanged
    model = MODELS["dense_regularized"][0](rk)
    before = model.get_weights()
    with pytest.raises(ValueError, match="shape|arrays"):
        model.load_weights(dense_archive)
    keras_cases["initializers"][0].save_weights(tmp_path / "other.weights.h5")
    with pytest.raises(ValueError, match="shape|arrays"):
        model.load_weights(tmp_path / "other.weights.h5")
    for a, b in zip(model.get_weights(), before, strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match=r"\.weights\.h5"):
        model.save_weights(tmp_path / "w.h5")


def test_frozen_layers_stay_frozen_both_ways(keras_cases, tmp_path):
    km = keras.saving.load_model(keras_cases["dense_regularized"][2])
    km.layers[0].trainable = False
    km.save(tmp_path / "f.keras")
    model = rk.models.load_model(tmp_path / "f.keras")
    assert [getattr(lay, "trainable", True) for lay in model.layers] == [False, True]
    model.layers[0].trainable = True
    model.layers[1].trainable = False
    model.save(tmp_path / "g.keras")
    again = keras.saving.load_model(tmp_path / "g.keras")
    assert [lay.trainable for lay in again.layers] == [True, False]


def test_missing_h5py_is_a_clear_import_error(monkeypatch, keras_cases):
    import sys

    path = keras_cases["initializers"][2]
    monkeypatch.setitem(sys.modules, "h5py", None)
    with pytest.raises(ImportError, match="needs h5py"):
        rk.models.load_model(path)


def test_damaged_archives(tmp_path, dense_archive):
    def rewrite(name, replace):
        with zipfile.ZipFile(dense_archive) as zin, zipfile.ZipFile(tmp_path / name, "w") as zout:
            for entry in zin.namelist():
                data = replace(entry, zin.read(entry))
                if data is not None:
                    zout.writestr(entry, data)
        return tmp_path / name

    no_config = rewrite("a.keras", lambda e, d: None if e == "config.json" else d)
    with pytest.raises(ValueError, match="config.json"):
        rk.models.load_model(no_config)
    bad_json = rewrite("b.keras", lambda e, d: b"{not json" if e == "config.json" else d)
    with pytest.raises(ValueError, match="config.json"):
        rk.models.load_model(bad_json)
    bad_h5 = rewrite("c.keras", lambda e, d: b"garbage" if e == "model.weights.h5" else d)
    with pytest.raises(ValueError, match="HDF5"):
        rk.models.load_model(bad_h5)
    no_weights = rewrite("d.keras", lambda e, d: None if e == "model.weights.h5" else d)
    with pytest.raises(NotImplementedError, match="model.weights.h5"):
        rk.models.load_model(no_weights)
