"""Networks cross process boundaries: a built, compiled and trained ``Sequential`` (and the MLP
estimators over it) survive ``pickle``, ``copy``, ``joblib`` and ``cloudpickle`` with their
architecture, weights, optimizer state and compile settings, so that a copy predicts with the
original's bits, in this process or another, and continues training exactly as the original
would. Damaged pickles are refused."""

import copy
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

from rustyml.neural_network import MLPClassifier, MLPRegressor, Sequential, layers, optimizers


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 4)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, n)]
    return x, y


def _trained(seed=3):
    model = Sequential(
        [
            layers.Dense(8, activation="tanh", input_shape=(4,), name="hidden"),
            layers.Dense(3, activation="softmax"),
        ],
        seed=seed,
    )
    model.compile(optimizer=optimizers.Adam(learning_rate=0.01), loss="mse", metrics=["mae"])
    x, y = _data()
    model.fit(x, y, batch_size=8, epochs=2, verbose=0)
    return model


def _copiers():
    import joblib

    def via_joblib(model, tmp):
        joblib.dump(model, tmp / "m.joblib")
        return joblib.load(tmp / "m.joblib")

    out = {
        "pickle": lambda m, _: pickle.loads(pickle.dumps(m)),
        "copy": lambda m, _: copy.copy(m),
        "deepcopy": lambda m, _: copy.deepcopy(m),
        "joblib": via_joblib,
    }
    try:
        import cloudpickle
    except ImportError:
        pass
    else:
        out["cloudpickle"] = lambda m, _: pickle.loads(cloudpickle.dumps(m))
    return out


def _assert_same_weights(a, b):
    wa, wb = a.get_weights(), b.get_weights()
    assert len(wa) == len(wb)
    for u, v in zip(wa, wb):
        np.testing.assert_array_equal(u, v)


def test_copies_predict_and_continue_training_with_the_original_s_bits(tmp_path):
    x, y = _data()
    model = _trained()
    copies = {name: fn(model, tmp_path) for name, fn in _copiers().items()}
    expected = model.predict(x)
    for name, other in copies.items():
        assert other is not model and other._native is not model._native, name
        np.testing.assert_array_equal(other.predict(x), expected)
        assert other.get_config() == model.get_config()
        assert optimizers.serialize(other.optimizer) == optimizers.serialize(model.optimizer)
        assert other.loss.name == model.loss.name
        assert other.evaluate(x, y, return_dict=True) == model.evaluate(x, y, return_dict=True)
    # a fresh optimizer (same weights, moments and step count back at zero) trains elsewhere:
    # the copies below match the original only because they carry its optimizer state
    fresh = Sequential.from_config(model.get_config())
    fresh.compile(optimizer=optimizers.Adam(learning_rate=0.01), loss="mse")
    fresh.build()
    fresh.set_weights(model.get_weights())
    fresh.fit(x, y, batch_size=8, epochs=3, initial_epoch=2, verbose=0)
    model.fit(x, y, batch_size=8, epochs=3, initial_epoch=2, verbose=0)
    assert any(not np.array_equal(a, b) for a, b in zip(fresh.get_weights(), model.get_weights()))
    for name, other in copies.items():
        history = other.fit(x, y, batch_size=8, epochs=3, initial_epoch=2, verbose=0)
        assert set(history.history) == {"loss", "mae"}, name
        _assert_same_weights(other, model)


_CHILD = """
import pickle, sys
import numpy as np
with open(sys.argv[1], "rb") as fh:
    model = pickle.load(fh)
x = np.load(sys.argv[2])
y = np.load(sys.argv[3])
np.save(sys.argv[4], model.predict(x))
model.fit(x, y, batch_size=8, epochs=3, initial_epoch=2, verbose=0)
np.savez(sys.argv[5], *model.get_weights())
"""


def test_a_pickled_model_predicts_and_trains_with_the_same_bits_in_another_process(tmp_path):
    x, y = _data()
    model = _trained()
    paths = [tmp_path / name for name in ("m.pkl", "x.npy", "y.npy", "p.npy", "w.npz")]
    with open(paths[0], "wb") as fh:
        pickle.dump(model, fh)
    np.save(paths[1], x)
    np.save(paths[2], y)
    subprocess.run([sys.executable, "-c", _CHILD, *map(str, paths)], check=True, env=os.environ)
    np.testing.assert_array_equal(np.load(paths[3]), model.predict(x))
    model.fit(x, y, batch_size=8, epochs=3, initial_epoch=2, verbose=0)
    child = np.load(paths[4])
    for i, w in enumerate(model.get_weights()):
        np.testing.assert_array_equal(child[f"arr_{i}"], w)


def test_unbuilt_and_uncompiled_models_pickle_too():
    x, y = _data()
    unbuilt = Sequential([layers.Dense(3, activation="relu"), layers.Dense(2)], seed=5, name="u")
    again = pickle.loads(pickle.dumps(unbuilt))
    assert again._native is None and again.get_config() == unbuilt.get_config()
    np.testing.assert_array_equal(again.predict(x), unbuilt.predict(x))

    built = Sequential([layers.Dense(3, input_shape=(4,))])  # unseeded: weights are random
    built.build()
    again = copy.deepcopy(built)
    np.testing.assert_array_equal(again.predict(x), built.predict(x))

    compiled = Sequential([layers.Dense(3, input_shape=(4,))], seed=1)
    compiled.compile(optimizer="sgd", loss="mse")
    again = pickle.loads(pickle.dumps(compiled))
    assert again._native is None
    compiled.fit(x, y, batch_size=16, epochs=2, verbose=0)
    again.fit(x, y, batch_size=16, epochs=2, verbose=0)
    _assert_same_weights(again, compiled)


def test_frozen_layers_and_a_changed_learning_rate_survive():
    x, y = _data()
    model = _trained()
    model.layers[0].trainable = False
    model.compile(optimizer=optimizers.SGD(learning_rate=0.05, momentum=0.9), loss="mse")
    model.fit(x, y, batch_size=8, epochs=1, verbose=0)
    model.learning_rate = 0.02
    again = pickle.loads(pickle.dumps(model))
    assert not again.layers[0].trainable and again.learning_rate == pytest.approx(0.02)
    frozen = model.get_weights()[:2]
    for m in (model, again):
        m.fit(x, y, batch_size=8, epochs=2, initial_epoch=1, verbose=0)
        for a, b in zip(m.get_weights()[:2], frozen):
            np.testing.assert_array_equal(a, b)
    _assert_same_weights(again, model)


def test_a_model_with_dropout_continues_with_the_same_masks():
    x, y = _data()
    model = Sequential(
        [
            layers.Dense(8, activation="relu", input_shape=(4,)),
            layers.Dropout(0.4),
            layers.GaussianNoise(0.1),
            layers.Dense(3),
        ],
        seed=9,
    )
    model.compile(optimizer="rmsprop", loss="mse")
    model.fit(x, y, batch_size=8, epochs=1, verbose=0)
    again = pickle.loads(pickle.dumps(model))
    for m in (model, again):
        m.fit(x, y, batch_size=8, epochs=2, initial_epoch=1, verbose=0)
    _assert_same_weights(again, model)


def test_damaged_pickles_are_refused_with_a_value_error():
    model = _trained()
    state = model.__getstate__()
    blob = state["state"]
    damaged = {
        "truncated": blob[: len(blob) // 2],
        "flipped weight byte": blob[:-5] + bytes([blob[-5] ^ 0x01]) + blob[-4:],
        "flipped header": bytes([blob[0] ^ 0x20]) + blob[1:],
        "empty": b"",
    }
    for data in damaged.values():
        with pytest.raises(ValueError, match="damaged"):
            Sequential.__new__(Sequential).__setstate__(dict(state, state=data))
    with pytest.raises(ValueError, match="not a pickled rustyml Sequential"):
        Sequential.__new__(Sequential).__setstate__({"format": "something else"})
    # a byte flipped inside the pickle's copy of the state is refused the same way
    raw = pickle.dumps(model)
    at = raw.find(blob[-64:])
    assert at > 0
    bad = bytearray(raw)
    bad[at + 10] ^= 0x04
    with pytest.raises(ValueError, match="damaged"):
        pickle.loads(bytes(bad))


def test_mlp_estimators_pickle_with_their_optimizer_state(tmp_path):
    import joblib

    rng = np.random.default_rng(1)
    x = rng.standard_normal((60, 5))
    labels = (x[:, 0] + x[:, 1] > 0).astype(int)

    def fitted(cls):
        est = cls(hidden_layer_sizes=(6,), max_iter=3, batch_size=16, random_state=0)
        return est.fit(x, labels if cls is MLPClassifier else x[:, 0])

    def via_joblib(est):
        joblib.dump(est, tmp_path / "est.joblib")
        return joblib.load(tmp_path / "est.joblib")

    for cls, copier in (
        (MLPClassifier, via_joblib),
        (MLPClassifier, copy.deepcopy),
        (MLPRegressor, lambda est: pickle.loads(pickle.dumps(est))),
    ):
        est = fitted(cls)
        again = copier(est)
        predict = est.predict_proba if hasattr(est, "predict_proba") else est.predict
        np.testing.assert_array_equal(
            (again.predict_proba if hasattr(again, "predict_proba") else again.predict)(x),
            predict(x),
        )
        assert again.get_params() == est.get_params() and again.loss_curve_ == est.loss_curve_
        xs = x.astype(np.float32)
        ys = est.model_.predict(xs)  # any targets of the model's kind
        if est.model_.loss.name == "sparse_categorical_crossentropy":
            ys = ys.argmax(axis=1)
        for m in (again.model_, est.model_):
            m.fit(xs, ys, batch_size=16, epochs=4, initial_epoch=3, verbose=0)
        _assert_same_weights(again.model_, est.model_)


def test_mlp_pickled_by_an_older_rustyml_still_loads():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((30, 3))
    reg = MLPRegressor(hidden_layer_sizes=(4,), max_iter=2, batch_size=8, random_state=0)
    reg.fit(x, x[:, 1])
    # the dict the previous __getstate__ wrote: config, weights and compile settings
    state = {k: v for k, v in reg.__dict__.items() if k != "model_"}
    state["_model_config"] = reg.model_.get_config()
    state["_model_weights"] = reg.model_.get_weights()
    state["_model_compile"] = reg.model_._compiled[:2]
    old = MLPRegressor.__new__(MLPRegressor)
    old.__setstate__(state)
    np.testing.assert_array_equal(old.predict(x), reg.predict(x))


def _as_one_module_pickle(data):
    """A protocol-2 pickle rewritten to name every layer class as
    ``rustyml.neural_network.layers.<Class>``, as pickles written while the layers were one
    module (before their split into family modules) name them."""
    import re

    return re.sub(
        rb"crustyml\.neural_network\.layers\.[a-z_]+\n", b"crustyml.neural_network.layers\n", data
    )


def test_layers_pickled_under_the_one_module_path_still_load():
    # every layer class, as the GLOBAL opcode of an older pickle names it
    for name in layers.__all__:
        obj = getattr(layers, name)
        if isinstance(obj, type):
            old = b"crustyml.neural_network.layers\n" + name.encode() + b"\n."
            assert pickle.loads(old) is obj

    # layers themselves (a model pickles their configs, not the objects), one per family, an
    # adapted Normalization among them
    rng = np.random.default_rng(5)
    x = rng.standard_normal((12, 6, 3)).astype(np.float32)
    norm = layers.Normalization(input_shape=(6, 3))
    norm.adapt(x)

    def stack():
        return [
            norm,
            layers.Conv1D(4, 2, padding="causal"),
            layers.BatchNormalization(),
            layers.Dropout(0.25),
            layers.LSTM(5, return_sequences=True),
            layers.TimeDistributed(layers.Dense(3)),
            layers.Bidirectional(layers.GRU(3)),
            layers.Dense(2, activation="tanh"),
            layers.ReLU(),
        ]

    data = pickle.dumps(stack(), protocol=2)
    old = _as_one_module_pickle(data)
    assert b"crustyml.neural_network.layers.core\n" in data
    assert b"crustyml.neural_network.layers.core\n" not in old
    loaded = pickle.loads(old)
    assert [type(a) for a in loaded] == [type(b) for b in stack()]
    assert [a.get_config() for a in loaded] == [b.get_config() for b in stack()]
    np.testing.assert_array_equal(loaded[0]._adapted[0], norm._adapted[0])
    np.testing.assert_array_equal(loaded[0]._adapted[1], norm._adapted[1])
    # the same seed draws the same weights: equal bits only if the loaded layers are the same
    ours, theirs = Sequential(loaded, seed=4), Sequential(stack(), seed=4)
    np.testing.assert_array_equal(ours.predict(x, verbose=0), theirs.predict(x, verbose=0))
