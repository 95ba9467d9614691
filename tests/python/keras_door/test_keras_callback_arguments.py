"""``EarlyStopping(baseline=, verbose=)`` and ``ModelCheckpoint(save_weights_only=,
verbose=, initial_value_threshold=, save_freq=)`` against Keras 3 itself (JAX backend):
the same model and data trained in both, the callbacks must stop at the same epoch, save
at the same epochs and print the same messages.

The losses of the two libraries agree to ~1e-6 relative (see test_keras_optimizers.py);
the thresholds below sit far from every epoch's loss, so the decisions are the same.
"""

import os

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")
keras = pytest.importorskip("keras")

import rustyml.keras as rkeras


def _model(lib):
    rng = np.random.default_rng(2)
    m = lib.Sequential([lib.Input((3,)), lib.layers.Dense(1)])
    m.set_weights([rng.uniform(-1, 1, (3, 1)).astype(np.float32), np.zeros(1, np.float32)])
    m.compile(lib.optimizers.SGD(learning_rate=0.05), "mse")
    return m


def _data():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((32, 3)).astype(np.float32)
    return x, x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3


def _fit(lib, callbacks, epochs=6):
    x, y = _data()
    m = _model(lib)
    h = m.fit(x, y, batch_size=8, epochs=epochs, shuffle=False, verbose=0, callbacks=callbacks)
    return m, h


def _early_stopping_run(lib, baseline, capsys):
    # losses ~3.0, 1.6, 0.84, 0.44, 0.24, 0.13: with min_delta 0.5 the 4th and 6th epochs
    # are no progress, and an improvement resets the patience only once it beats the
    # baseline (by min_delta)
    cb = lib.callbacks.EarlyStopping(
        monitor="loss",
        patience=2,
        min_delta=0.5,
        baseline=baseline,
        verbose=1,
        restore_best_weights=True,
    )
    model, h = _fit(lib, [cb])
    printed = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    return (len(h.history["loss"]), cb.stopped_epoch, cb.best_epoch, printed), model


@pytest.mark.parametrize("baseline", [None, 0.01, 1.5])
def test_early_stopping_baseline_and_messages_follow_keras(baseline, capsys):
    theirs, their_model = _early_stopping_run(keras, baseline, capsys)
    ours, our_model = _early_stopping_run(rkeras, baseline, capsys)
    assert ours == theirs
    for a, b in zip(our_model.get_weights(), their_model.get_weights()):
        np.testing.assert_allclose(a, np.asarray(b), rtol=2e-5, atol=1e-6)


def test_the_baseline_cases_tell_the_rules_apart(capsys):
    """Without a baseline Keras trains all 6 epochs; a baseline never beaten stops it."""
    runs = [_early_stopping_run(keras, b, capsys)[0][0] for b in (None, 0.01)]
    assert runs[0] != runs[1]


def test_model_checkpoint_saves_weights_at_keras_epochs(tmp_path, capsys):
    saved, printed = {}, {}
    losses = _fit(keras, [])[1].history["loss"]
    # a threshold between the 3rd and 4th epoch's losses: saving starts at epoch 4
    threshold = float(np.sqrt(losses[2] * losses[3]))
    for lib in (keras, rkeras):
        folder = tmp_path / lib.__name__
        pattern = str(folder / "w-{epoch:02d}.weights.h5")
        cb = lib.callbacks.ModelCheckpoint(
            pattern,
            monitor="loss",
            verbose=1,
            save_best_only=True,
            save_weights_only=True,
            initial_value_threshold=threshold,
        )
        model, _ = _fit(lib, [cb])
        saved[lib.__name__] = sorted(os.listdir(folder))
        printed[lib.__name__] = [
            line.replace(str(folder), "<dir>")
            for line in capsys.readouterr().out.splitlines()
            if line.strip()
        ]
        # the last file holds the last epoch's weights, readable by Keras's load_weights
        reader = _model(keras)
        reader.load_weights(str(folder / saved[lib.__name__][-1]))
        for a, b in zip(reader.get_weights(), model.get_weights()):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-5, atol=1e-6)
    assert saved["rustyml.keras"] == saved["keras"] == [f"w-{e:02d}.weights.h5" for e in (4, 5, 6)]
    # the printed values agree to Keras's 5 decimals except where the float32 losses round
    # differently; compare the messages' words and epochs
    strip = [
        [" ".join(w for w in line.split() if not w[:1].isdigit()) for line in lines]
        for lines in (printed["rustyml.keras"], printed["keras"])
    ]
    assert strip[0] == strip[1]


def test_model_checkpoint_arguments_are_checked_as_keras_checks_them(tmp_path):
    with pytest.raises(ValueError, match="must end in `.weights.h5`"):
        rkeras.callbacks.ModelCheckpoint(str(tmp_path / "w.h5"), save_weights_only=True)
    with pytest.raises(ValueError, match="Unrecognized save_freq"):
        rkeras.callbacks.ModelCheckpoint(str(tmp_path / "m.keras"), save_freq="batch")
    with pytest.raises(NotImplementedError, match="save_freq"):
        rkeras.callbacks.ModelCheckpoint(str(tmp_path / "m.keras"), save_freq=10)
