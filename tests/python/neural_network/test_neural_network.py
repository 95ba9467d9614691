"""Keras-style networks: values against NumPy references, optimizer trajectories against the
published update rules, convergence, persistence, reproducibility and bad input."""

import os
import subprocess
import sys

import numpy as np
import pytest

from rustyml.neural_network import (
    MLPClassifier,
    MLPRegressor,
    Sequential,
    callbacks,
    layers,
    optimizers,
)


def _mlp(seed=0, hidden=16, n_in=4, n_out=3, out_act="softmax"):
    return Sequential(
        [
            layers.Dense(hidden, activation="relu", input_shape=(n_in,)),
            layers.Dense(n_out, activation=out_act),
        ],
        seed=seed,
    )


def test_dense_forward_matches_numpy_and_weights_have_keras_shapes():
    rng = np.random.default_rng(0)
    model = _mlp()
    kernel0, bias0, kernel1, bias1 = model.get_weights()
    assert kernel0.shape == (4, 16) and bias0.shape == (16,)
    assert kernel1.shape == (16, 3) and bias1.shape == (3,)
    new = [rng.standard_normal(w.shape).astype(np.float32) for w in model.get_weights()]
    model.set_weights(new)
    x = rng.standard_normal((7, 4)).astype(np.float32)
    h = np.maximum(x @ new[0] + new[1], 0)
    z = h @ new[2] + new[3]
    ref = np.exp(z - z.max(axis=1, keepdims=True))
    ref /= ref.sum(axis=1, keepdims=True)
    # f32 products of length <= 16: relative rounding well under 1e-5 of the outputs (<= 1).
    np.testing.assert_allclose(model.predict(x), ref, rtol=0, atol=1e-5)


def _linear_model(opt):
    model = Sequential([layers.Dense(2, input_shape=(3,))], seed=1)
    model.compile(optimizer=opt, loss="mse")
    return model


def _mse_grads(x, t, w, b):
    # Keras's MSE: the mean over every output element.
    err = x @ w + b - t
    g = 2.0 * err / err.size
    return x.T @ g, g.sum(axis=0)


@pytest.mark.parametrize(
    "make_opt, update",
    [
        (
            lambda: optimizers.SGD(0.1, momentum=0.9),
            "momentum",
        ),
        (lambda: optimizers.Adam(0.01), "adam"),
    ],
)
def test_optimizer_trajectory_matches_published_update_rule(make_opt, update):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 3)).astype(np.float32)
    t = rng.standard_normal((8, 2)).astype(np.float32)
    model = _linear_model(make_opt())
    w, b = (a.astype(np.float64) for a in model.get_weights())
    state = {
        "vw": np.zeros_like(w),
        "vb": np.zeros_like(b),
        "mw": np.zeros_like(w),
        "mb": np.zeros_like(b),
        "sw": np.zeros_like(w),
        "sb": np.zeros_like(b),
    }
    for step in range(1, 4):
        model.fit(x, t, batch_size=8, epochs=1, shuffle=False, verbose=0)
        gw, gb = _mse_grads(x.astype(np.float64), t, w, b)
        if update == "momentum":  # v = m v - lr g; p += v
            state["vw"] = 0.9 * state["vw"] - 0.1 * gw
            state["vb"] = 0.9 * state["vb"] - 0.1 * gb
            w, b = w + state["vw"], b + state["vb"]
        else:  # Kingma & Ba: bias-corrected moments
            for p, g, m, s in (("w", gw, "mw", "sw"), ("b", gb, "mb", "sb")):
                state[m] = 0.9 * state[m] + 0.1 * g
                state[s] = 0.999 * state[s] + 0.001 * g * g
                mh = state[m] / (1 - 0.9**step)
                sh = state[s] / (1 - 0.999**step)
                delta = 0.01 * mh / (np.sqrt(sh) + 1e-7)
                if p == "w":
                    w = w - delta
                else:
                    b = b - delta
    got_w, got_b = model.get_weights()
    # Three f32 steps from f32 weights: errors of a few ulps of the weights (|w| ~ 1).
    np.testing.assert_allclose(got_w, w, atol=2e-5)
    np.testing.assert_allclose(got_b, b, atol=2e-5)


def test_train_on_batch_is_one_sgd_step_on_the_whole_batch():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 3)).astype(np.float32)
    t = rng.standard_normal((5, 2)).astype(np.float32)
    model = _linear_model(optimizers.SGD(0.05))
    w, b = (a.astype(np.float64) for a in model.get_weights())
    pred = x.astype(np.float64) @ w + b
    loss = model.train_on_batch(x, t)
    # the loss reported is the batch's mean squared error before the step
    assert loss == pytest.approx(np.mean((pred - t) ** 2), rel=1e-5)
    gw, gb = _mse_grads(x.astype(np.float64), t, w, b)
    got_w, got_b = model.get_weights()
    np.testing.assert_allclose(got_w, w - 0.05 * gw, atol=1e-6)
    np.testing.assert_allclose(got_b, b - 0.05 * gb, atol=1e-6)
    with pytest.raises(ValueError, match="different numbers of samples"):
        model.train_on_batch(x, t[:4])


def _digits():
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    X = (X / 16.0).astype(np.float32)
    return train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)


def test_mlp_learns_digits_to_97_percent():
    xtr, xte, ytr, yte = _digits()
    model = Sequential(
        [
            layers.Dense(128, activation="relu", input_shape=(64,)),
            layers.Dropout(0.1),
            layers.Dense(10, activation="softmax"),
        ],
        seed=0,
    )
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(xtr, ytr, epochs=40, batch_size=32, validation_split=0.1, verbose=0)
    assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    assert len(history.history["loss"]) == 40
    assert history.history["loss"][-1] < history.history["loss"][0]
    acc = np.mean(np.argmax(model.predict(xte), axis=1) == yte)
    assert acc >= 0.97, acc
    _loss, acc_eval = model.evaluate(xte, yte)
    assert acc_eval == pytest.approx(acc)


def test_regression_reaches_the_noise_floor():
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (2000, 2)).astype(np.float32)
    noise = 0.05
    y = (np.sin(2 * x[:, 0]) + x[:, 1] ** 2 + noise * rng.standard_normal(2000)).astype(np.float32)
    model = Sequential(
        [layers.Dense(64, activation="tanh", input_shape=(2,)), layers.Dense(1)], seed=0
    )
    model.compile(optimizer=optimizers.Adam(0.01), loss="mse")
    model.fit(x, y, epochs=150, batch_size=100, verbose=0)
    mse = model.evaluate(x, y)
    # The noise variance is 0.0025; a smooth 2-D target is learnable to within 2x of it.
    assert mse < 2 * noise**2, mse


def test_save_load_predicts_bit_identically_and_refuses_damaged_files(tmp_path):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((20, 4)).astype(np.float32)
    model = _mlp()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(x, rng.integers(0, 3, 20), epochs=2, verbose=0)
    path = tmp_path / "model.safetensors"
    model.save(path)
    same = Sequential.load(path)
    assert np.array_equal(same.predict(x), model.predict(x))
    assert [w.shape for w in same.get_weights()] == [w.shape for w in model.get_weights()]
    data = path.read_bytes()
    truncated = tmp_path / "truncated.safetensors"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="safetensors"):
        Sequential.load(truncated)
    garbage = tmp_path / "garbage.safetensors"
    garbage.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json at all}")
    with pytest.raises(ValueError):
        Sequential.load(garbage)


def test_weights_are_readable_by_a_plain_safetensors_reader(tmp_path):
    # The format is documented: 8-byte little-endian header length, JSON header, raw data.
    import json
    import struct

    model = _mlp()
    path = tmp_path / "m.safetensors"
    model.save(path)
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    assert "__metadata__" in header and "config" in header["__metadata__"]
    info = header["weight_0000"]
    start, end = info["data_offsets"]
    kernel = np.frombuffer(raw[8 + n + start : 8 + n + end], dtype="<f4").reshape(info["shape"])
    assert np.array_equal(kernel, model.get_weights()[0])


def _train_once(seed):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((64, 4)).astype(np.float32)
    y = rng.integers(0, 3, 64)
    model = Sequential(
        [
            layers.Dense(32, activation="relu", input_shape=(4,)),
            layers.Dropout(0.3),
            layers.Dense(3, activation="softmax"),
        ],
        seed=seed,
    )
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(x, y, epochs=3, batch_size=10, verbose=0)
    return model.get_weights()


def test_same_seed_same_weights_bit_for_bit():
    a, b = _train_once(7), _train_once(7)
    assert all(np.array_equal(u, v) for u, v in zip(a, b))
    c = _train_once(8)
    assert not all(np.array_equal(u, v) for u, v in zip(a, c))


_THREADS_SCRIPT = """
import numpy as np, sys
sys.path.insert(0, {testdir!r})
from test_neural_network import _train_once
import rustyml
gates = {gates!r}
if gates is not None:
    for family, names in gates.items():
        mod = getattr(rustyml.tuning, family)
        for name in names:
            getattr(mod, "set_" + name)({value})
np.save(sys.argv[1], np.concatenate([w.ravel() for w in _train_once(11)]))
"""


def test_training_is_bitwise_identical_across_thread_counts_and_gate_settings(tmp_path):
    import os

    import rustyml

    nn_gates = {}
    for family in ("elementwise", "reduction", "norm"):
        mod = getattr(rustyml.tuning, family, None)
        if mod is None:
            continue
        names = [
            n[4:] for n in dir(mod) if n.startswith("set_") and n.endswith(("f32", "fused_slice"))
        ]
        if names:
            nn_gates[family] = names
    runs = []
    for threads, gates, value in ((1, None, 0), (2, nn_gates, 0), (2, nn_gates, 2**63 - 1)):
        out = tmp_path / f"w{len(runs)}.npy"
        script = _THREADS_SCRIPT.format(testdir=os.path.dirname(__file__), gates=gates, value=value)
        env = dict(os.environ, RAYON_NUM_THREADS=str(threads))
        subprocess.run([sys.executable, "-c", script, str(out)], check=True, env=env)
        runs.append(np.load(out))
    assert np.array_equal(runs[0], runs[1]) and np.array_equal(runs[0], runs[2])


def test_early_stopping_restores_best_weights_and_history_records_epochs():
    xtr, xte, ytr, yte = _digits()
    model = Sequential(
        [
            layers.Dense(32, activation="relu", input_shape=(64,)),
            layers.Dense(10, activation="softmax"),
        ],
        seed=0,
    )
    # A learning rate this high makes validation loss bounce, so patience triggers.
    model.compile(optimizer=optimizers.SGD(2.0), loss="sparse_categorical_crossentropy")
    stop = callbacks.EarlyStopping(monitor="val_loss", patience=2, restore_best_weights=True)
    seen = []

    class Recorder(callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            seen.append(logs["val_loss"])

    history = model.fit(
        xtr,
        ytr,
        epochs=50,
        batch_size=64,
        validation_data=(xte, yte),
        callbacks=[stop, Recorder()],
        verbose=0,
    )
    assert len(history.history["val_loss"]) == len(seen) < 50
    assert model.evaluate(xte, yte) == pytest.approx(min(seen), rel=1e-5)


def test_learning_rate_scheduler_sets_the_rate_each_epoch():
    model = _linear_model(optimizers.SGD(0.1))
    rates = []

    class Spy(callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            rates.append(self.model.learning_rate)

    x = np.ones((4, 3), np.float32)
    model.fit(
        x,
        np.zeros((4, 2), np.float32),
        epochs=3,
        verbose=0,
        callbacks=[callbacks.LearningRateScheduler(lambda e, lr: 0.1 / (e + 1)), Spy()],
    )
    assert rates == pytest.approx([0.1, 0.05, 0.1 / 3])


def test_verbose_progress_prints_keras_style_lines(capsys):
    model = _linear_model("sgd")
    x = np.ones((10, 3), np.float32)
    model.fit(x, np.zeros((10, 2), np.float32), epochs=2, batch_size=4, verbose=2)
    out = capsys.readouterr().out
    assert "Epoch 1/2" in out and "Epoch 2/2" in out and "3/3" in out and "loss:" in out


@pytest.mark.parametrize(
    "action, match",
    [
        (lambda m, x, y: m.fit(x[:, :3], y), "per-sample shape"),
        (lambda m, x, y: m.fit(np.where(x > 0, np.nan, x), y), "NaN"),
        (lambda m, x, y: m.fit(x, y + 3), r"labels must be in \[0, 3\)"),
        (lambda m, x, y: m.fit(x, y, batch_size=0), "batch_size"),
        (lambda m, x, y: m.compile(optimizer="nope", loss="mse"), "unknown optimizer"),
        (lambda m, x, y: m.compile(optimizer="adam", loss="nope"), "unknown loss"),
    ],
)
def test_bad_input_is_a_value_error_and_leaves_the_model_as_it_was(action, match):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((12, 4)).astype(np.float32)
    y = rng.integers(0, 3, 12)
    model = _mlp()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    before = model.get_weights()
    with pytest.raises(ValueError, match=match):
        action(model, x, y)
    assert all(np.array_equal(a, b) for a, b in zip(before, model.get_weights()))


def test_fit_before_compile_and_unknown_activation_are_refused():
    model = _mlp()
    with pytest.raises(ValueError, match="compile"):
        model.fit(np.zeros((2, 4), np.float32), np.zeros(2))
    bad = Sequential([layers.Dense(3, activation="nope", input_shape=(2,))])
    with pytest.raises(ValueError, match="activation"):
        bad.build()


def test_a_layer_that_does_not_fit_is_refused_naming_both_layers():
    model = Sequential([layers.Dense(4, input_shape=(3,)), layers.Reshape((3, 3)), layers.Dense(2)])
    with pytest.raises(ValueError, match=r"layer 1 \(Reshape\).*layer 0 \(Dense\)"):
        model.build()


def test_set_weights_refuses_wrong_shapes_without_changing_anything():
    model = _mlp()
    before = model.get_weights()
    bad = [w.copy() for w in before]
    bad[2] = np.zeros((5, 3), np.float32)
    with pytest.raises(ValueError, match="shape"):
        model.set_weights(bad)
    assert all(np.array_equal(a, b) for a, b in zip(before, model.get_weights()))


def test_mlp_estimators_fit_into_scikit_learn_tools():
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    xtr, xte, ytr, yte = _digits()
    search = GridSearchCV(
        make_pipeline(StandardScaler(), MLPClassifier(max_iter=30, random_state=0)),
        {"mlpclassifier__hidden_layer_sizes": [(32,), (64,)]},
        cv=2,
    )
    search.fit(xtr, ytr)
    assert search.score(xte, yte) > 0.93
    clf = search.best_estimator_[-1]
    proba = clf.predict_proba(StandardScaler().fit(xtr).transform(xte))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-5)

    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (300, 3))
    y = x @ np.array([1.0, -2.0, 0.5]) + 0.3
    reg = MLPRegressor(
        hidden_layer_sizes=(32,), max_iter=200, learning_rate_init=0.01, random_state=0
    ).fit(x, y)
    assert reg.score(x, y) > 0.99
    assert reg.get_params()["hidden_layer_sizes"] == (32,)


def test_mlp_classifier_pickles_and_refuses_continuous_targets(tmp_path):
    import pickle

    xtr, xte, ytr, _ = _digits()
    clf = MLPClassifier(hidden_layer_sizes=(16,), max_iter=5, random_state=0).fit(xtr, ytr)
    again = pickle.loads(pickle.dumps(clf))
    assert np.array_equal(again.predict_proba(xte), clf.predict_proba(xte))
    with pytest.raises(ValueError, match="Unknown label type"):
        MLPClassifier(max_iter=1).fit(xtr, ytr + 0.5)


def test_batch_and_layer_normalization_inference_match_numpy():
    rng = np.random.default_rng(9)
    model = Sequential(
        [
            layers.Dense(6, input_shape=(5,)),
            layers.BatchNormalization(epsilon=1e-3),
            layers.LayerNormalization(epsilon=1e-3),
            layers.Identity(),
        ],
        seed=0,
    )
    weights = model.get_weights()
    # Keras order and shapes: kernel, bias, then gamma, beta, moving mean, moving variance.
    assert [w.shape for w in weights] == [(5, 6), (6,), (6,), (6,), (6,), (6,), (6,), (6,)]
    new = [rng.standard_normal(w.shape).astype(np.float32) for w in weights]
    new[5] = np.abs(new[5]) + 0.5  # a variance
    model.set_weights(new)
    x = rng.standard_normal((9, 5)).astype(np.float32)
    z = x @ new[0] + new[1]
    z = new[2] * (z - new[4]) / np.sqrt(new[5] + 1e-3) + new[3]
    mu, var = z.mean(axis=1, keepdims=True), z.var(axis=1, keepdims=True)
    z = new[6] * (z - mu) / np.sqrt(var + 1e-3) + new[7]
    # Normalised values are O(1); f32 rounding through three stages stays below 1e-4.
    np.testing.assert_allclose(model.predict(x), z, atol=1e-4)


def test_dropout_layers_are_identity_at_inference_and_active_in_training():
    x = np.ones((4, 6, 6, 3), np.float32)
    model = Sequential([layers.SpatialDropout2D(0.5, input_shape=(6, 6, 3)), layers.Flatten()])
    assert np.array_equal(model.predict(x), x.reshape(4, -1))
    model.compile(optimizer="sgd", loss="mse")
    # Training still runs through the layer (no weights, so nothing changes).
    model.fit(x, np.zeros((4, 108), np.float32), epochs=1, verbose=0)
    assert model.get_weights() == []


def test_every_damaged_byte_of_a_saved_model_is_refused_or_harmless(tmp_path):
    # Any single flipped byte (header length, JSON header, metadata, tensor data): load raises
    # ValueError/OSError, or the model predicts finite values. NaN or infinity in a tensor is
    # refused at load, so it never reaches a prediction silently.
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 4)).astype(np.float32)
    model = Sequential(
        [
            layers.Dense(3, activation="relu", input_shape=(4,)),
            layers.BatchNormalization(),
            layers.Dense(2),
        ],
        seed=0,
    )
    model.compile(optimizer="adam", loss="mse")
    model.fit(x, rng.standard_normal((8, 2)).astype(np.float32), epochs=1, verbose=0)
    path = tmp_path / "m.safetensors"
    model.save(path)
    good = path.read_bytes()
    damaged = tmp_path / "damaged.safetensors"
    step = max(1, len(good) // 600)
    loaded = 0
    for i in range(0, len(good), step):
        for flip in (0x01, 0x80, 0xFF):
            data = bytearray(good)
            data[i] ^= flip
            damaged.write_bytes(bytes(data))
            try:
                same = Sequential.load(damaged)
            except (ValueError, OSError):
                continue
            loaded += 1
            assert np.isfinite(same.predict(x)).all(), (i, flip)
    assert loaded > 0  # flips inside the weights give other finite weights: still loadable


def test_training_metrics_are_keras_running_averages_of_the_pre_step_batch_outputs():
    # Keras reports a training metric as the batch-size-weighted mean over the epoch of each
    # batch's value on that batch's training-mode output, computed before the batch's step.
    # Oracle: replay the same batches (no shuffling) step by step with train_on_batch on a
    # twin model, measuring each batch with predict before its step (no dropout, so the
    # training-mode and inference outputs agree).
    rng = np.random.default_rng(5)
    x = rng.standard_normal((50, 4)).astype(np.float32)
    y = rng.integers(0, 3, 50)

    def make():
        m = _mlp(seed=3)
        m.compile(
            optimizer=optimizers.SGD(0.5),
            loss="sparse_categorical_crossentropy",
            metrics=["accuracy", "mse"],
        )
        return m

    model, twin = make(), make()
    history = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    for epoch in range(2):
        correct, squared, count = 0.0, 0.0, 0
        for start in range(0, 50, 16):
            xb, yb = x[start : start + 16], y[start : start + 16]
            out = twin.predict(xb)
            correct += np.sum(np.argmax(out, axis=1) == yb)
            squared += np.mean((yb.reshape(out.shape[0], -1).astype(np.float32) - out) ** 2) * len(
                xb
            )
            count += len(xb)
            twin.train_on_batch(xb, yb)
        assert history.history["accuracy"][epoch] == pytest.approx(correct / count, abs=1e-12)
        # float32 outputs: the mean of a few hundred terms agrees to ~1e-6 relative
        assert history.history["mse"][epoch] == pytest.approx(squared / count, rel=1e-5)
    # weights after fit equal the replayed ones: the metric pass changed nothing
    assert all(np.array_equal(a, b) for a, b in zip(model.get_weights(), twin.get_weights()))


def test_count_params_and_summary_match_keras_before_any_training():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    keras = pytest.importorskip("keras")
    ours = Sequential(
        [
            layers.Conv2D(4, 3, input_shape=(8, 8, 2)),
            layers.BatchNormalization(),
            layers.Flatten(),
            layers.Dense(5, use_bias=False),
            layers.Dense(3),
        ]
    )
    theirs = keras.Sequential(
        [
            keras.Input((8, 8, 2)),
            keras.layers.Conv2D(4, 3),
            keras.layers.BatchNormalization(),
            keras.layers.Flatten(),
            keras.layers.Dense(5, use_bias=False),
            keras.layers.Dense(3),
        ]
    )
    # BatchNormalization's moving statistics count, as in Keras; nothing has been trained
    assert ours.count_params() == theirs.count_params()
    lines = []
    ours.summary(print_fn=lines.append)
    assert lines[-4] == f"Total params: {theirs.count_params():,}"
    # the moving statistics are Keras's non-trainable weights
    n_trainable = sum(int(np.prod(w.shape)) for w in theirs.trainable_weights)
    assert lines[-3] == f"Trainable params: {n_trainable:,}"
    assert lines[-2] == f"Non-trainable params: {theirs.count_params() - n_trainable:,}"


def test_dense_without_bias_matches_keras_and_never_grows_one():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    keras = pytest.importorskip("keras")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 4)).astype(np.float32)
    y = rng.standard_normal((6, 3)).astype(np.float32)
    theirs = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, use_bias=False)])
    ours = Sequential([layers.Dense(3, use_bias=False, input_shape=(4,))], seed=0)
    kernel = rng.uniform(-1, 1, (4, 3)).astype(np.float32)
    theirs.set_weights([kernel])
    ours.set_weights([kernel])  # Keras's list: the kernel alone
    assert [w.shape for w in ours.get_weights()] == [(4, 3)]
    np.testing.assert_allclose(ours.predict(x), x @ kernel, rtol=1e-6, atol=1e-6)
    assert ours.count_params() == theirs.count_params() == 12
    ours.compile(optimizer=optimizers.SGD(0.1), loss="mse")
    ours.fit(x, y, epochs=3, batch_size=6, verbose=0)
    # still no bias: the output stays linear through the origin
    (w,) = ours.get_weights()
    np.testing.assert_allclose(ours.predict(x), x @ w, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(ours.predict(np.zeros((1, 4), np.float32)), 0.0)


def test_the_python_and_rust_epoch_loops_train_on_the_same_shuffled_batches():
    """``Sequential.fit(shuffle=True)`` (epochs run here, batches in the native step loop) and
    the crate's ``Sequential::fit_with_batches`` take their batches from one epoch order, so
    the same model, data and seed end with the same weights, bit for bit, whichever door."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((37, 4)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 37)]

    def model():
        m = _mlp(seed=11)
        m.compile(optimizer=optimizers.SGD(learning_rate=0.1, momentum=0.9), loss="mse")
        m.build()
        return m

    python_door = model()
    history = python_door.fit(x, y, batch_size=8, epochs=3, shuffle=True, verbose=0)
    rust_door = model()
    losses = rust_door._native.fit_with_batches(x, y, 3, 8)
    for a, b in zip(python_door.get_weights(), rust_door.get_weights()):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(np.float32(history.history["loss"]), np.float32(losses))
    # the order is really shuffled: in-order batches train to other weights
    in_order = model()
    in_order.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
    assert any(
        not np.array_equal(a, b) for a, b in zip(in_order.get_weights(), python_door.get_weights())
    )


def test_predictions_from_two_threads_do_not_wait_for_each_other_but_writes_do():
    """Inference takes the model's read lock: a predict started while another call holds it
    completes (behind an exclusive lock it would wait until the holder gives up); a write
    (set_weights) never runs while a reader holds the lock, and completes once it lets go."""
    import threading

    model = _mlp(seed=2)
    model.build()
    x = np.ones((5, 4), dtype=np.float32)
    expected = model.predict(x)
    weights = model.get_weights()
    holding, predicted, wrote, release = (threading.Event() for _ in range(4))
    results, errors = {}, []

    def hold():
        def inside():
            holding.set()
            # the other reader finishes while this one holds the lock
            results["predicted_meanwhile"] = predicted.wait(timeout=60)
            release.wait(timeout=60)
            results["wrote_meanwhile"] = wrote.is_set()

        model._native._hold_read_lock(inside)

    def read():
        holding.wait(timeout=60)
        results["prediction"] = model.predict(x)
        predicted.set()

    def write():
        predicted.wait(timeout=60)
        model.set_weights(weights)
        wrote.set()

    def guarded(fn):
        def run():
            try:
                fn()
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)
                predicted.set()
                release.set()

        return run

    threads = [threading.Thread(target=guarded(f)) for f in (hold, read, write)]
    for t in threads:
        t.start()
    predicted.wait(timeout=60)
    release.set()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    assert results["predicted_meanwhile"]
    assert not results["wrote_meanwhile"] and wrote.is_set()
    np.testing.assert_array_equal(results["prediction"], expected)
