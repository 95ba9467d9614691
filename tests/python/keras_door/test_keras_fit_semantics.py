"""Sequential's training loop against Keras 3 (JAX backend) itself: the "accuracy" variant it
picks, EarlyStopping's restore at the end of training, a live ``optimizer.learning_rate``,
frozen layers, the compiled metrics surviving save/load, and weighted validation data."""

import os

import numpy as np
import pytest

from rustyml.neural_network import Sequential, callbacks, layers, optimizers

os.environ.setdefault("KERAS_BACKEND", "jax")
keras = pytest.importorskip("keras")


def _pair(units, activation, n_in=4, seed=0):
    """Our model and Keras's with the same weights."""
    ours = Sequential([layers.Dense(units, activation=activation, input_shape=(n_in,))], seed=seed)
    theirs = keras.Sequential(
        [keras.Input((n_in,)), keras.layers.Dense(units, activation=activation)]
    )
    rng = np.random.default_rng(seed)
    w = [
        rng.standard_normal((n_in, units)).astype(np.float32),
        (0.1 * rng.standard_normal(units)).astype(np.float32),
    ]
    ours.set_weights(w)
    theirs.set_weights(w)
    return ours, theirs


def _keras_loss(name, from_logits):
    if name == "binary_crossentropy":
        return keras.losses.BinaryCrossentropy(from_logits=from_logits)
    if name == "categorical_crossentropy":
        return keras.losses.CategoricalCrossentropy(from_logits=from_logits)
    if name == "sparse_categorical_crossentropy":
        return keras.losses.SparseCategoricalCrossentropy(from_logits=from_logits)
    return name


def _our_loss(name, from_logits):
    if from_logits:
        from rustyml.neural_network import losses

        return {
            "binary_crossentropy": losses.BinaryCrossentropy,
            "categorical_crossentropy": losses.CategoricalCrossentropy,
        }[name](from_logits=True)
    return name


def _rows_away_from(pred, threshold, margin=1e-3):
    """Rows whose every output is at least ``margin`` from ``threshold`` (float32 outputs of
    the two libraries may differ by a few ulps; a value at the threshold could flip)."""
    return np.all(np.abs(pred - threshold) > margin, axis=tuple(range(1, pred.ndim)))


@pytest.mark.parametrize(
    "loss, units, activation, from_logits, targets",
    [
        ("binary_crossentropy", 3, "sigmoid", False, "binary"),
        ("binary_crossentropy", 1, "sigmoid", False, "binary"),
        ("binary_crossentropy", 1, None, True, "binary"),
        ("binary_crossentropy", 3, None, True, "binary"),
        ("mse", 3, None, False, "binary"),
        ("mse", 1, None, False, "binary"),
        ("mae", 2, None, False, "onehot"),
        ("categorical_crossentropy", 3, "softmax", False, "onehot"),
        ("sparse_categorical_crossentropy", 3, "softmax", False, "sparse"),
    ],
)
def test_accuracy_is_the_variant_keras_picks(loss, units, activation, from_logits, targets):
    ours, theirs = _pair(units, activation)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((200, 4)).astype(np.float32)
    pred = theirs.predict(x, verbose=0)
    # logits in (0, 0.5) are where thresholding at 0 (the old choice) and at 0.5 differ
    keep = _rows_away_from(pred, 0.5) & _rows_away_from(pred, 0.0)
    x, pred = x[keep], pred[keep]
    if targets == "binary":
        y = (rng.random((len(x), units)) < 0.5).astype(np.float32)
        if units == 1:
            y = y[:, 0]
    elif targets == "onehot":
        y = np.eye(units, dtype=np.float32)[rng.integers(0, units, len(x))]
    else:
        y = rng.integers(0, units, len(x))
    ours.compile("sgd", _our_loss(loss, from_logits), metrics=["accuracy"])
    theirs.compile("sgd", _keras_loss(loss, from_logits), metrics=["accuracy"])
    got = ours.evaluate(x, y, return_dict=True)["accuracy"]
    want = theirs.evaluate(x, y, verbose=0, return_dict=True)["accuracy"]
    # counts of equal decisions over the same samples: exact up to Keras's float32 mean
    assert got == pytest.approx(want, abs=1e-6)


def test_acc_alias_is_logged_under_the_name_given_as_keras_does():
    ours, theirs = _pair(1, "sigmoid")
    x = np.random.default_rng(2).standard_normal((16, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.float32)
    ours.compile("sgd", "binary_crossentropy", metrics=["acc"])
    theirs.compile("sgd", "binary_crossentropy", metrics=["acc"])
    assert set(ours.evaluate(x, y, return_dict=True)) == set(
        theirs.evaluate(x, y, verbose=0, return_dict=True)
    )


class _Scores(callbacks.Callback):
    """Puts a fixed monitored value into the logs of every epoch and records the weights
    each epoch ends with (listed before EarlyStopping, as in Keras)."""

    def __init__(self, scores):
        self.scores, self.weights = scores, []

    def on_epoch_end(self, epoch, logs=None):
        logs["score"] = self.scores[epoch]
        self.weights.append(self.model.get_weights())


def test_early_stopping_restores_the_best_weights_when_training_runs_to_the_end():
    x = np.random.default_rng(3).standard_normal((32, 4)).astype(np.float32)
    y = x @ np.ones((4, 1), np.float32)
    m = Sequential([layers.Dense(1, input_shape=(4,))], seed=0)
    m.compile(optimizers.SGD(learning_rate=0.05), "mse")
    scores = _Scores([3.0, 1.0, 2.0, 2.5])
    stop = callbacks.EarlyStopping(
        monitor="score", mode="min", patience=10, restore_best_weights=True
    )
    m.fit(x, y, epochs=4, verbose=0, callbacks=[scores, stop])
    assert stop.stopped_epoch == 0  # ran to the end
    for got, want in zip(m.get_weights(), scores.weights[1]):
        np.testing.assert_array_equal(got, want)

    # Keras itself does the same with the same callbacks' semantics
    km = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    km.compile(keras.optimizers.SGD(learning_rate=0.05), "mse")

    class KScores(keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.weights = []

        def on_epoch_end(self, epoch, logs=None):
            logs["score"] = [3.0, 1.0, 2.0, 2.5][epoch]
            self.weights.append(self.model.get_weights())

    ks = KScores()
    kstop = keras.callbacks.EarlyStopping(
        monitor="score", mode="min", patience=10, restore_best_weights=True
    )
    km.fit(x, y, epochs=4, verbose=0, callbacks=[ks, kstop])
    for got, want in zip(km.get_weights(), ks.weights[1]):
        np.testing.assert_array_equal(got, want)


def test_setting_optimizer_learning_rate_after_compile_changes_training():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((32, 4)).astype(np.float32)
    y = rng.standard_normal((32, 1)).astype(np.float32)

    def trained(set_after):
        m = Sequential([layers.Dense(1, input_shape=(4,))], seed=0)
        m.compile(optimizers.Adam(learning_rate=0.001 if set_after else 0.05), "mse")
        if set_after:
            m.optimizer.learning_rate = 0.05
        m.fit(x, y, epochs=3, batch_size=8, verbose=0)
        return m

    late, early = trained(True), trained(False)
    for a, b in zip(late.get_weights(), early.get_weights()):
        np.testing.assert_array_equal(a, b)
    # reads back the float32 value the model trains with
    assert late.optimizer.learning_rate == pytest.approx(0.05)
    assert late.learning_rate == pytest.approx(0.05, rel=1e-7)
    # the model's setter reaches the optimizer too, and the optimizer's type is unchanged
    late.learning_rate = 0.02
    assert late.optimizer.learning_rate == pytest.approx(0.02)
    assert isinstance(late.optimizer, optimizers.Adam)
    assert type(late.optimizer).__name__ == "Adam"
    with pytest.raises(ValueError):
        late.optimizer.learning_rate = -1.0
    assert late.learning_rate == pytest.approx(0.02, rel=1e-7)


def _frozen_pair():
    m = Sequential(
        [layers.Dense(3, input_shape=(4,)), layers.Dense(2)],
        seed=0,
    )
    k = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3), keras.layers.Dense(2)])
    k.set_weights(m.get_weights())
    return m, k


def test_frozen_layer_gets_no_update_and_counts_as_non_trainable_like_keras():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((32, 4)).astype(np.float32)
    y = rng.standard_normal((32, 2)).astype(np.float32)
    m, k = _frozen_pair()
    # frozen after compile, before the first fit: Keras honours it (its step is built then)
    m.compile(optimizers.Adam(learning_rate=0.01), "mse")
    k.compile(keras.optimizers.Adam(learning_rate=0.01), "mse")
    m.layers[0].trainable = False
    k.layers[0].trainable = False
    before = m.get_weights()
    m.fit(x, y, epochs=2, batch_size=8, verbose=0, shuffle=False)
    k.fit(x, y, epochs=2, batch_size=8, verbose=0, shuffle=False)
    after = m.get_weights()
    # no step on the frozen layer
    np.testing.assert_array_equal(after[0], before[0])
    np.testing.assert_array_equal(after[1], before[1])
    assert not np.array_equal(after[2], before[2])
    # the trained layer follows Keras (float32 steps; 8 Adam updates of lr 0.01, each
    # rounding at ~1e-7 relative)
    for got, want in zip(after, k.get_weights()):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert [w.shape for w in m.non_trainable_weights] == [
        tuple(w.shape) for w in k.non_trainable_weights
    ]
    assert [w.shape for w in m.trainable_weights] == [tuple(w.shape) for w in k.trainable_weights]
    lines = []
    m.summary(print_fn=lines.append)
    assert "Trainable params: 8" in lines and "Non-trainable params: 15" in lines


def test_frozen_layer_gets_no_weight_decay():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((16, 4)).astype(np.float32)
    y = rng.standard_normal((16, 2)).astype(np.float32)
    m, _ = _frozen_pair()
    m.layers[0].trainable = False
    m.compile(optimizers.AdamW(learning_rate=0.1, weight_decay=0.5), "mse")
    before = m.get_weights()
    m.fit(x, y, epochs=3, batch_size=4, verbose=0)
    np.testing.assert_array_equal(m.get_weights()[0], before[0])


def test_trainable_change_after_training_needs_a_recompile():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((16, 4)).astype(np.float32)
    y = rng.standard_normal((16, 2)).astype(np.float32)
    m, _ = _frozen_pair()
    m.compile("sgd", "mse")
    m.fit(x, y, verbose=0)
    m.layers[0].trainable = False
    before = m.get_weights()
    # Keras 3 refuses to train on with a changed set of trainable weights until compile
    with pytest.raises(ValueError, match="compile"):
        m.fit(x, y, verbose=0)
    for a, b in zip(before, m.get_weights()):
        np.testing.assert_array_equal(a, b)
    m.compile("sgd", "mse")
    m.fit(x, y, verbose=0)
    after = m.get_weights()
    np.testing.assert_array_equal(after[0], before[0])
    assert not np.array_equal(after[2], before[2])


def test_load_restores_compiled_metrics_and_frozen_layers(tmp_path):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((20, 4)).astype(np.float32)
    y = rng.integers(0, 3, 20)
    m = Sequential([layers.Dense(3, activation="softmax", input_shape=(4,))], seed=0)
    m.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy", "mse"])
    m.fit(x, y, epochs=1, verbose=0)
    want = m.evaluate(x, y)
    assert isinstance(want, list) and len(want) == 3
    m.save(tmp_path / "m.safetensors")
    back = Sequential.load(tmp_path / "m.safetensors")
    assert back.evaluate(x, y) == want
    assert set(back.fit(x, y, epochs=1, verbose=0).history) == {"loss", "accuracy", "mse"}


def test_weighted_validation_data_gives_keras_weighted_val_loss():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((16, 4)).astype(np.float32)
    y = rng.standard_normal((16, 2)).astype(np.float32)
    vx = rng.standard_normal((10, 4)).astype(np.float32)
    vy = rng.standard_normal((10, 2)).astype(np.float32)
    vw = rng.random(10).astype(np.float32) * 3
    m, k = _frozen_pair()
    m.compile(optimizers.SGD(learning_rate=0.01), "mse")
    k.compile(keras.optimizers.SGD(learning_rate=0.01), "mse")
    got = m.fit(x, y, batch_size=16, epochs=1, verbose=0, validation_data=(vx, vy, vw))
    want = k.fit(x, y, batch_size=16, epochs=1, verbose=0, validation_data=(vx, vy, vw))
    unweighted = m.evaluate(vx, vy)
    # one SGD step of float32 arithmetic in each library: agreement to float32 rounding
    assert got.history["val_loss"][0] == pytest.approx(want.history["val_loss"][0], rel=1e-5)
    assert abs(got.history["val_loss"][0] - unweighted) > 1e-3
