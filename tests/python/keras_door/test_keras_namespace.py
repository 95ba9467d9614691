"""rustyml.keras: Keras 3's namespace. Utilities are checked against Keras itself."""

import os

import numpy as np
import pytest

import rustyml.keras as rk
from rustyml.keras import layers

os.environ.setdefault("KERAS_BACKEND", "jax")


@pytest.fixture(scope="module")
def keras():
    return pytest.importorskip("keras")


def test_missing_keras_features_import_and_name_themselves_when_used():
    from rustyml.keras.layers import Lambda  # imports: a program's import block runs

    with pytest.raises(NotImplementedError, match=r"subclassing Model\) is not implemented"):
        rk.Model(inputs=None, outputs=None)
    with pytest.raises(NotImplementedError, match=r"keras\.layers\.Lambda is not implemented"):
        Lambda(lambda x: x)
    with pytest.raises(AttributeError, match=r"keras\.layers\.NoSuchLayer is not implemented"):
        _ = layers.NoSuchLayer
    with pytest.raises(NotImplementedError, match=r"keras\.optimizers\.Adadelta"):
        rk.optimizers.Adadelta(learning_rate=0.01)


def test_input_sets_the_sequential_input_shape_and_must_come_first():
    model = rk.Sequential([rk.Input(shape=(5,)), layers.Dense(3)])
    model.build()
    assert model.predict(np.zeros((2, 5), dtype=np.float32), verbose=0).shape == (2, 3)
    assert rk.Input(shape=(5,)).shape == (None, 5)
    assert rk.Input(batch_shape=(None, 2, 3)).shape == (None, 2, 3)
    with pytest.raises(ValueError, match="first entry"):
        rk.Sequential([layers.Dense(3, input_shape=(4,)), rk.Input(shape=(4,))])
    with pytest.raises(NotImplementedError, match="None"):
        rk.Input(shape=(None, 3))


def test_add_and_pop_on_a_built_model_keep_the_other_layers_weights():
    model = rk.Sequential([rk.Input(shape=(4,)), layers.Dense(3), layers.Dense(2)], seed=0)
    model.build()
    before = model.get_weights()
    popped = model.pop()
    assert isinstance(popped, layers.Dense) and popped.units == 2
    after_pop = model.get_weights()
    assert len(after_pop) == 2
    for a, b in zip(after_pop, before[:2]):
        np.testing.assert_array_equal(a, b)
    model.add(layers.Dense(6))
    grown = model.get_weights()
    assert [w.shape for w in grown] == [(4, 3), (3,), (3, 6), (6,)]
    for a, b in zip(grown[:2], before[:2]):
        np.testing.assert_array_equal(a, b)
    assert model.predict(np.ones((1, 4), dtype=np.float32), verbose=0).shape == (1, 6)


def test_a_failed_add_leaves_the_built_model_as_it_was():
    model = rk.Sequential([rk.Input(shape=(4,)), layers.Dense(3)], seed=0)
    model.build()
    before = model.get_weights()
    with pytest.raises(ValueError):
        model.add(layers.Reshape((7,)))  # 3 values cannot become 7
    assert len(model.layers) == 1
    for a, b in zip(model.get_weights(), before):
        np.testing.assert_array_equal(a, b)


def test_set_random_seed_makes_model_weights_reproducible():
    def weights():
        model = rk.Sequential([rk.Input(shape=(3,)), layers.Dense(4)])
        model.build()
        return model.get_weights()[0]

    rk.utils.set_random_seed(11)
    first = weights()
    rk.utils.set_random_seed(11)
    np.testing.assert_array_equal(weights(), first)
    rk.utils.set_random_seed(12)
    assert not np.array_equal(weights(), first)
    with pytest.raises(ValueError, match="non-negative integer"):
        rk.utils.set_random_seed(-1)


@pytest.mark.parametrize(
    "labels, num_classes",
    [([0, 2, 1], None), (np.array([[1], [0]]), 3), (np.array([[0, 1], [2, 2]]), None)],
)
def test_to_categorical_matches_keras(keras, labels, num_classes):
    ours = rk.utils.to_categorical(labels, num_classes)
    theirs = keras.utils.to_categorical(labels, num_classes)
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("padding", ["pre", "post"])
@pytest.mark.parametrize("truncating", ["pre", "post"])
@pytest.mark.parametrize("maxlen", [None, 3, 6])
def test_pad_sequences_matches_keras(keras, padding, truncating, maxlen):
    seqs = [[1, 2, 3, 4], [5], [], [6, 7, 8, 9, 10, 11]]
    ours = rk.utils.pad_sequences(
        seqs, maxlen=maxlen, padding=padding, truncating=truncating, value=-1
    )
    theirs = keras.utils.pad_sequences(
        seqs, maxlen=maxlen, padding=padding, truncating=truncating, value=-1
    )
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)


def test_normalize_matches_keras(keras):
    x = np.random.default_rng(0).standard_normal((5, 4))
    x[1] = 0.0
    for axis, order in ((-1, 2), (1, 1)):
        np.testing.assert_allclose(
            rk.utils.normalize(x, axis, order), keras.utils.normalize(x, axis, order), rtol=1e-12
        )


def test_load_model_refuses_legacy_h5_files_by_name(tmp_path):
    # Keras 3's .keras archives are read (tests/python/keras_door/test_keras_files.py); Keras 2's .h5
    # model files are not
    with pytest.raises(NotImplementedError, match=r"\.h5"):
        rk.models.load_model(tmp_path / "model.h5")


def test_saved_model_loads_through_keras_saving(tmp_path):
    model = rk.Sequential([rk.Input(shape=(3,)), layers.Dense(2)], seed=3)
    model.compile(optimizer="adam", loss="mse")
    x = np.random.default_rng(1).random((4, 3)).astype(np.float32)
    expected = model.predict(x, verbose=0)
    path = tmp_path / "m.safetensors"
    model.save(path)
    again = rk.saving.load_model(path)
    np.testing.assert_array_equal(again.predict(x, verbose=0), expected)


class _StubOptimizer:
    def __init__(self, learning_rate):
        self.learning_rate = learning_rate


class _StubModel:
    """What a callback sees of a model: Keras's reads ``optimizer.learning_rate``,
    rustyml's ``learning_rate``; both views share one value."""

    def __init__(self, learning_rate):
        self.optimizer = _StubOptimizer(learning_rate)
        self.stop_training = False

    @property
    def learning_rate(self):
        return self.optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        self.optimizer.learning_rate = value


def _drive(callback, values, monitor):
    model = _StubModel(0.1)
    callback.set_model(model)
    callback.on_train_begin({})
    rates, logged = [], []
    for epoch, value in enumerate(values):
        logs = {monitor: value, "loss": value + 1.0}
        callback.on_epoch_end(epoch, logs)
        rates.append(model.learning_rate)
        logged.append(logs.get("learning_rate"))
    callback.on_train_end({})
    return rates, logged


@pytest.mark.parametrize(
    "params",
    [
        {"patience": 2, "factor": 0.5},
        {"patience": 1, "factor": 0.2, "cooldown": 2, "min_lr": 0.01},
        {"patience": 3, "factor": 0.5, "min_delta": 0.05},
        {"monitor": "val_accuracy", "mode": "max", "patience": 2, "factor": 0.5},
    ],
)
def test_reduce_lr_on_plateau_follows_keras(keras, params):
    monitor = params.get("monitor", "val_loss")
    values = [1.0, 0.9, 0.95, 0.93, 0.96, 0.8, 0.81, 0.82, 0.79, 0.83, 0.84, 0.85, 0.78]
    if monitor == "val_accuracy":
        values = [1.0 - v for v in values]
    ours = _drive(rk.callbacks.ReduceLROnPlateau(**params), values, monitor)
    theirs = _drive(keras.callbacks.ReduceLROnPlateau(**params), values, monitor)
    assert ours == theirs
    with pytest.raises(ValueError, match="factor >= 1.0"):
        rk.callbacks.ReduceLROnPlateau(factor=1.0)


@pytest.mark.parametrize("append", [False, True])
def test_csv_logger_writes_what_keras_writes(keras, tmp_path, append):
    def run(cls, path):
        if append:
            path.write_text("epoch,loss,val_loss\n0,1.0,2.0\n")
        logger = cls(str(path), append=append)
        logger.set_model(_StubModel(0.1))
        logger.on_train_begin({})
        for epoch in range(3):
            logger.on_epoch_end(epoch, {"loss": 1.0 / (epoch + 1), "accuracy": 0.5 + epoch / 10})
        logger.on_train_end({})
        return path.read_text()

    ours = run(rk.callbacks.CSVLogger, tmp_path / "ours.csv")
    theirs = run(keras.callbacks.CSVLogger, tmp_path / "theirs.csv")
    assert ours == theirs
