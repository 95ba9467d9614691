"""Sequential's training doors under stress: calls into the model from inside its own fit
(metrics, callbacks) finish instead of deadlocking, a diverging step is refused and undone, a
failed call leaves the model as it was, and bad arguments are clear errors."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from rustyml.neural_network import Sequential, layers, optimizers

# generous: each scenario trains a few batches of a tiny model; only a deadlock gets near it
DEADLOCK_GUARD_S = 120


def _model(seed=0, n_in=4, n_out=3, input_shape=True):
    kw = {"input_shape": (n_in,)} if input_shape else {}
    return Sequential(
        [layers.Dense(8, activation="relu", **kw), layers.Dense(n_out, activation="softmax")],
        seed=seed,
    )


def _data(n=24, n_in=4, n_out=3, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, n_in)).astype(np.float32)
    return x, rng.integers(0, n_out, n)


# -- A: calls into the model from inside fit -----------------------------------------------

_REENTRANT_SCRIPT = textwrap.dedent(
    """
    import sys, tempfile, os
    import numpy as np
    from rustyml.neural_network import Sequential, layers, callbacks
    rng = np.random.default_rng(0)
    x = rng.standard_normal((24, 4)).astype(np.float32)
    y = rng.integers(0, 3, 24)
    m = Sequential([layers.Dense(8, activation="relu", input_shape=(4,)),
                    layers.Dense(3, activation="softmax")], seed=0)
    tmp = tempfile.mkdtemp()
    calls = {
        "predict": lambda: m.predict(x[:2]).shape[0],
        "get_weights": lambda: len(m.get_weights()),
        "set_weights": lambda: m.set_weights(m.get_weights()) or 1,
        "evaluate": lambda: m.evaluate(x, y)[0],
        "count_params": lambda: m.count_params(),
        "summary": lambda: m.summary(print_fn=lambda s: None) or 1,
        "learning_rate": lambda: m.learning_rate,
        "set_learning_rate": lambda: setattr(m, "learning_rate", m.learning_rate) or 1,
        "save": lambda: m.save(os.path.join(tmp, "m.safetensors")) or 1,
        "trainable_weights": lambda: len(m.trainable_weights),
    }
    name = sys.argv[1]
    where = sys.argv[2]
    seen = []
    if where == "metric":
        m.compile("adam", "sparse_categorical_crossentropy",
                  metrics=[lambda t, p: seen.append(calls[name]()) or 1.0])
        m.fit(x, y, batch_size=8, epochs=2, verbose=0)
    else:
        class CB(callbacks.Callback):
            def on_epoch_end(self, epoch, logs=None):
                seen.append(calls[name]())
        m.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
        m.fit(x, y, batch_size=8, epochs=2, verbose=0, callbacks=[CB()])
    # the metric runs once per batch (3 batches, 2 epochs); the callback once per epoch
    assert len(seen) >= 2, seen
    print("DONE", name, where, len(seen))
    """
)


def _run_guarded(args):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _REENTRANT_SCRIPT, *args],
            check=False,
            capture_output=True,
            text=True,
            timeout=DEADLOCK_GUARD_S,
            env=env,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{args}: fit did not return within {DEADLOCK_GUARD_S} s (deadlock)")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "DONE" in proc.stdout


@pytest.mark.parametrize(
    "call",
    [
        "predict",
        "get_weights",
        "set_weights",
        "count_params",
        "summary",
        "learning_rate",
        "set_learning_rate",
        "save",
        "trainable_weights",
    ],
)
def test_a_metric_may_call_into_the_model_during_fit(call):
    _run_guarded([call, "metric"])


@pytest.mark.parametrize("call", ["predict", "get_weights", "evaluate", "save"])
def test_a_callback_may_call_into_the_model_during_fit(call):
    _run_guarded([call, "callback"])


def test_fit_from_inside_fit_is_a_runtime_error_not_a_deadlock():
    script = textwrap.dedent(
        """
        import numpy as np
        from rustyml.neural_network import Sequential, layers, callbacks
        x = np.random.default_rng(0).standard_normal((16, 4)).astype(np.float32)
        y = np.zeros(16, dtype=int)
        m = Sequential([layers.Dense(3, activation="softmax", input_shape=(4,))], seed=0)
        errors = []
        def metric(t, p):
            for call in (lambda: m.fit(x, y, verbose=0), lambda: m.train_on_batch(x, y)):
                try:
                    call()
                except RuntimeError as e:
                    errors.append(str(e))
            return 0.0
        m.compile("sgd", "sparse_categorical_crossentropy", metrics=[metric])
        m.fit(x, y, batch_size=8, epochs=1, verbose=0)
        class CB(callbacks.Callback):
            def on_epoch_end(self, epoch, logs=None):
                try:
                    m.fit(x, y, verbose=0)
                except RuntimeError as e:
                    errors.append(str(e))
        m.compile("sgd", "sparse_categorical_crossentropy")
        m.fit(x, y, epochs=1, verbose=0, callbacks=[CB()])
        assert len(errors) == 5, errors
        assert all("inside" in e for e in errors), errors
        # and the model still trains afterwards
        m.fit(x, y, epochs=1, verbose=0)
        print("DONE")
        """
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    try:
        proc = subprocess.run(
            [sys.executable, "-c", script],
            check=False,
            capture_output=True,
            text=True,
            timeout=DEADLOCK_GUARD_S,
            env=env,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("nested fit deadlocked")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "DONE" in proc.stdout


# -- G: divergence and failed calls ----------------------------------------------------------


def _regressor(seed=0):
    return Sequential([layers.Dense(1, input_shape=(2,))], seed=seed)


def test_a_step_diverging_in_the_last_batch_is_an_error_and_is_undone():
    # SGD with a learning rate of 1e36 on inputs of 1e3: the first (and only) step puts the
    # weights near 1e36 * 1e6 -> inf, while the loss it reports (before the step) is finite
    x = np.full((4, 2), 1e3, dtype=np.float32)
    y = np.ones(4, dtype=np.float32)
    for call in ("fit", "train_on_batch"):
        m = _regressor()
        m.compile(optimizers.SGD(learning_rate=1e36), "mse")
        before = m.get_weights()
        with pytest.raises(ValueError, match="weights became NaN or infinite at batch 0"):
            if call == "fit":
                m.fit(x, y, batch_size=4, epochs=1, verbose=0)
            else:
                m.train_on_batch(x, y)
        for a, b in zip(before, m.get_weights()):
            np.testing.assert_array_equal(a, b)
        assert np.isfinite(m.predict(x)).all()


def test_a_diverging_fit_restores_weights_and_optimizer_state_from_before_the_call():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((16, 2)).astype(np.float32)
    y = rng.standard_normal(16).astype(np.float32)
    bad_x = x.copy()
    bad_x[12] = 1e30  # its squared error overflows float32: the loss of batch 1 is inf
    a, b = _regressor(), _regressor()
    for m in (a, b):
        m.compile(optimizers.Adam(learning_rate=0.01), "mse")
        m.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False)
    with pytest.raises(ValueError, match="loss became inf at batch 1"):
        # batch 0 steps (changing Adam's moments and the weights), batch 1 diverges
        a.fit(bad_x, y, batch_size=8, epochs=1, verbose=0, shuffle=False)
    # a continues exactly as b, which never saw the failed call: the weights and the Adam
    # moments and step count are all back
    for m in (a, b):
        m.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False)
    for wa, wb in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_array_equal(wa, wb)


def test_a_failed_first_fit_leaves_the_model_unbuilt():
    m = _model(input_shape=False)
    m.compile("adam", "sparse_categorical_crossentropy")
    x3 = np.zeros((6, 3), dtype=np.float32)
    with pytest.raises(ValueError):
        m.fit(x3, np.zeros((6, 2, 2)), verbose=0)  # refused labels
    with pytest.raises(ValueError):
        m.predict(np.zeros((2, 3), dtype=complex))
    x, y = _data(n_in=4)
    m.fit(x, y, epochs=1, verbose=0)  # the model is built for these samples now
    assert m.get_weights()[0].shape == (4, 8)


# -- H: argument handling --------------------------------------------------------------------


def _compiled():
    m = _model()
    m.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


def test_numpy_integers_are_accepted_for_counts():
    x, y = _data()
    m = _compiled()
    h = m.fit(
        x, y, batch_size=np.int64(8), epochs=np.int32(2), initial_epoch=np.uint8(0), verbose=0
    )
    assert len(h.history["loss"]) == 2
    assert len(m.evaluate(x, y, batch_size=np.int64(5))) == 2
    assert m.predict(x, batch_size=np.int16(7)).shape == (24, 3)
    Sequential([layers.Dense(1)], seed=np.uint64(2**64 - 1)).build(np.array([3]))


@pytest.mark.parametrize(
    "call",
    [
        lambda m, x, y: m.fit(x, y, batch_size=2**64, verbose=0),
        lambda m, x, y: m.fit(x, y, batch_size=0, verbose=0),
        lambda m, x, y: m.fit(x, y, batch_size=True, verbose=0),
        lambda m, x, y: m.fit(x, y, epochs=2**64, verbose=0),
        lambda m, x, y: m.fit(x, y, initial_epoch=-1, verbose=0),
        lambda m, x, y: m.fit(x, y, initial_epoch=2**64, verbose=0),
        lambda m, x, y: m.fit(x, y, validation_split="0.5", verbose=0),
        lambda m, x, y: m.fit(x, y, validation_data=(x,), verbose=0),
        lambda m, x, y: m.fit(x, y, validation_data=(x, y, None, None), verbose=0),
        lambda m, x, y: m.evaluate(x, y, batch_size=-1),
        lambda m, x, y: m.evaluate(x, y, batch_size=1.5),
        lambda m, x, y: m.evaluate(x, y, batch_size="8"),
        lambda m, x, y: m.predict(x, batch_size=2**64),
        lambda m, x, y: m.fit(x.astype(complex) + 1j, y, verbose=0),
        lambda m, x, y: m.predict(x.astype(np.complex64)),
        lambda m, x, y: m.evaluate(x.astype(complex), y),
        lambda m, x, y: m.train_on_batch(x.astype(complex), y),
    ],
)
def test_bad_arguments_are_value_errors_and_change_nothing(call):
    x, y = _data()
    m = _compiled()
    before = m.get_weights()
    with pytest.raises(ValueError):
        call(m, x, y)
    for a, b in zip(before, m.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_complex_targets_are_refused():
    x, _ = _data()
    m = Sequential([layers.Dense(2, input_shape=(4,))], seed=0)
    m.compile("sgd", "mse")
    y = np.ones((24, 2)) + 1j
    with pytest.raises(ValueError, match="complex"):
        m.fit(x, y, verbose=0)
    with pytest.raises(ValueError, match="complex"):
        m.evaluate(x, y)


@pytest.mark.parametrize(
    "bad",
    [
        lambda: Sequential([layers.Dense(1)], seed=2**64),
        lambda: Sequential([layers.Dense(1)], seed=-1),
        lambda: Sequential([layers.Dense(1)], seed=1.5),
        lambda: Sequential([layers.Dense(1)]).build((-4,)),
        lambda: Sequential([layers.Dense(1)]).build((0,)),
        lambda: Sequential([layers.Dense(1)]).build((2**64,)),
    ],
)
def test_bad_construction_arguments_are_value_errors(bad):
    with pytest.raises(ValueError):
        bad()


@pytest.mark.parametrize("cbs", [["x"], [3], "x", [object()]])
def test_callbacks_that_are_not_callbacks_are_refused(cbs):
    x, y = _data()
    m = _compiled()
    with pytest.raises(TypeError, match="Callback"):
        m.fit(x, y, callbacks=cbs, verbose=0)
