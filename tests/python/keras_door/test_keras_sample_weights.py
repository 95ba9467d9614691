"""Per-sample loss weights (``fit(sample_weight=, class_weight=)``, weighted validation and
``evaluate``), ``validation_freq`` and ``TerminateOnNaN`` against Keras 3 (JAX backend)
itself, for ``Sequential`` and the functional ``Model``: the same initial weights, unshuffled
batches, and the loss histories and final weights compared.

Tolerances: every quantity is float32 arithmetic in both libraries over a few dozen SGD steps
of a two-layer network with a small learning rate; each step's rounding is a few ulps
relative (~1e-6) and the steps do not amplify it much, so losses agree to 1e-5 relative and
weights of order 1 to 1e-5 absolute."""

import os
import pickle

import numpy as np
import pytest

import rustyml.keras as rk
from rustyml.neural_network import Sequential, callbacks, layers, optimizers

os.environ.setdefault("KERAS_BACKEND", "jax")
keras = pytest.importorskip("keras")

LOSS_RTOL = 1e-5
WEIGHT_ATOL = 1e-5


def _weights(n_in, hidden, n_out, seed):
    rng = np.random.default_rng(seed)
    return [
        (0.5 * rng.standard_normal((n_in, hidden))).astype(np.float32),
        (0.1 * rng.standard_normal(hidden)).astype(np.float32),
        (0.5 * rng.standard_normal((hidden, n_out))).astype(np.float32),
        (0.1 * rng.standard_normal(n_out)).astype(np.float32),
    ]


def _sequential_pair(n_out, activation, loss, n_in=4, hidden=5, seed=0, lr=0.05):
    """Our Sequential and Keras's, same weights, both compiled with SGD and ``loss``."""
    w = _weights(n_in, hidden, n_out, seed)
    ours = Sequential(
        [
            layers.Dense(hidden, activation="tanh", input_shape=(n_in,)),
            layers.Dense(n_out, activation=activation),
        ],
        seed=seed,
    )
    theirs = keras.Sequential(
        [
            keras.Input((n_in,)),
            keras.layers.Dense(hidden, activation="tanh"),
            keras.layers.Dense(n_out, activation=activation),
        ]
    )
    ours.set_weights(w)
    theirs.set_weights(w)
    ours.compile(optimizers.SGD(learning_rate=lr), loss)
    theirs.compile(keras.optimizers.SGD(learning_rate=lr), loss)
    return ours, theirs


def _targets(kind, n, n_out, rng):
    if kind == "regression":
        return rng.standard_normal((n, n_out)).astype(np.float32)
    if kind == "sparse":
        return rng.integers(0, n_out, n)
    if kind == "onehot":
        return np.eye(n_out, dtype=np.float32)[rng.integers(0, n_out, n)]
    return rng.integers(0, 2, (n, n_out)).astype(np.float32)


CASES = [
    ("mse", 2, None, "regression"),
    ("categorical_crossentropy", 3, "softmax", "onehot"),
    ("sparse_categorical_crossentropy", 3, "softmax", "sparse"),
    ("binary_crossentropy", 2, "sigmoid", "binary"),
    ("huber", 2, None, "regression"),
]


def _assert_same_training(got, want, ours, theirs):
    for key in want.history:
        assert key in got.history, key
        np.testing.assert_allclose(got.history[key], want.history[key], rtol=LOSS_RTOL)
    assert set(got.history) == set(want.history)
    for a, b in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, np.asarray(b), rtol=0, atol=WEIGHT_ATOL)


@pytest.mark.parametrize("loss, n_out, activation, kind", CASES)
def test_sample_weight_trains_as_keras(loss, n_out, activation, kind):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((40, 4)).astype(np.float32)
    y = _targets(kind, 40, n_out, rng)
    sw = (rng.random(40) * 3).astype(np.float32)
    sw[::7] = 0.0
    ours, theirs = _sequential_pair(n_out, activation, loss)
    kw = {"batch_size": 8, "epochs": 3, "verbose": 0, "shuffle": False, "sample_weight": sw}
    got = ours.fit(x, y, **kw)
    want = theirs.fit(x, y, **kw)
    _assert_same_training(got, want, ours, theirs)
    # and the weights made a difference
    plain, _ = _sequential_pair(n_out, activation, loss)
    unweighted = plain.fit(x, y, batch_size=8, epochs=3, verbose=0, shuffle=False)
    assert abs(unweighted.history["loss"][0] - got.history["loss"][0]) > 1e-4


@pytest.mark.parametrize("kind", ["sparse", "onehot"])
def test_class_weight_trains_as_keras_and_weights_only_the_training_split(kind):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((50, 4)).astype(np.float32)
    y = _targets(kind, 50, 3, rng)
    loss = "sparse_categorical_crossentropy" if kind == "sparse" else "categorical_crossentropy"
    ours, theirs = _sequential_pair(3, "softmax", loss)
    cw = {0: 0.5, 2: 3.0}  # class 1 unlisted: weight 1
    kw = {"batch_size": 8, "epochs": 3, "verbose": 0, "shuffle": False, "class_weight": cw}
    got = ours.fit(x, y, validation_split=0.3, **kw)
    want = theirs.fit(x, y, validation_split=0.3, **kw)
    assert "val_loss" in want.history
    _assert_same_training(got, want, ours, theirs)


def test_validation_split_splits_the_sample_weights_as_keras():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((30, 4)).astype(np.float32)
    y = rng.standard_normal((30, 2)).astype(np.float32)
    sw = (rng.random(30) * 2).astype(np.float32)
    ours, theirs = _sequential_pair(2, None, "mse")
    kw = {"batch_size": 6, "epochs": 2, "verbose": 0, "shuffle": False, "sample_weight": sw}
    # 0.25 of 30: Keras trains on floor(30 * 0.75) = 22 samples
    got = ours.fit(x, y, validation_split=0.25, **kw)
    want = theirs.fit(x, y, validation_split=0.25, **kw)
    _assert_same_training(got, want, ours, theirs)


def test_weighted_validation_data_and_evaluate_match_keras():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((24, 4)).astype(np.float32)
    y = rng.integers(0, 3, 24)
    vx = rng.standard_normal((37, 4)).astype(np.float32)
    vy = rng.integers(0, 3, 37)
    vw = (rng.random(37) * 4).astype(np.float32)
    ours, theirs = _sequential_pair(3, "softmax", "sparse_categorical_crossentropy")
    kw = {
        "batch_size": 8,
        "epochs": 2,
        "verbose": 0,
        "shuffle": False,
        "validation_data": (vx, vy, vw),
    }
    _assert_same_training(ours.fit(x, y, **kw), theirs.fit(x, y, **kw), ours, theirs)
    got = ours.evaluate(vx, vy, batch_size=5, sample_weight=vw)
    want = theirs.evaluate(vx, vy, batch_size=5, sample_weight=vw, verbose=0)
    assert got == pytest.approx(want, rel=LOSS_RTOL)
    assert abs(got - ours.evaluate(vx, vy)) > 1e-3


@pytest.mark.parametrize("freq", [2, [1, 3]])
def test_validation_freq_validates_the_epochs_keras_validates(freq):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((20, 4)).astype(np.float32)
    y = rng.standard_normal((20, 2)).astype(np.float32)
    ours, theirs = _sequential_pair(2, None, "mse")
    kw = {"batch_size": 5, "epochs": 5, "verbose": 0, "shuffle": False, "validation_freq": freq}
    got = ours.fit(x, y, validation_split=0.2, **kw)
    want = theirs.fit(x, y, validation_split=0.2, **kw)
    assert len(got.history["loss"]) == 5
    assert len(got.history["val_loss"]) == len(want.history["val_loss"]) == 2
    _assert_same_training(got, want, ours, theirs)


def test_unit_weights_train_bit_for_bit_as_no_weights():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((30, 4)).astype(np.float32)
    y = rng.integers(0, 3, 30)
    runs = []
    for extra in (
        {},
        {"sample_weight": np.ones(30)},
        {"class_weight": {0: 1.0, 1: 1.0, 2: 1.0}},
    ):
        ours, _ = _sequential_pair(3, "softmax", "sparse_categorical_crossentropy")
        h = ours.fit(x, y, batch_size=7, epochs=2, verbose=0, validation_split=0.2, **extra)
        runs.append((h.history, [w.tobytes() for w in ours.get_weights()]))
    assert runs[0] == runs[1] == runs[2]
    ours, _ = _sequential_pair(3, "softmax", "sparse_categorical_crossentropy")
    assert ours.evaluate(x, y, sample_weight=np.ones(30)) == ours.evaluate(x, y)


def test_weighted_batches_from_a_source_train_as_weighted_arrays():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((24, 4)).astype(np.float32)
    y = rng.standard_normal((24, 2)).astype(np.float32)
    sw = (rng.random(24) * 2).astype(np.float32)

    def batches():
        for i in range(0, 24, 6):
            yield x[i : i + 6], y[i : i + 6], sw[i : i + 6]

    streamed, _ = _sequential_pair(2, None, "mse")
    arrays, theirs = _sequential_pair(2, None, "mse")
    h1 = streamed.fit(batches(), epochs=1, verbose=0)
    h2 = arrays.fit(x, y, batch_size=6, epochs=1, verbose=0, shuffle=False, sample_weight=sw)
    want = theirs.fit(x, y, batch_size=6, epochs=1, verbose=0, shuffle=False, sample_weight=sw)
    assert h1.history == h2.history
    for a, b in zip(streamed.get_weights(), arrays.get_weights()):
        assert a.tobytes() == b.tobytes()
    _assert_same_training(h2, want, arrays, theirs)


class _Batches(keras.utils.PyDataset):
    def __init__(self, x, y, w=None, size=6):
        super().__init__()
        self.x, self.y, self.w, self.size = x, y, w, size

    def __len__(self):
        return (len(self.x) + self.size - 1) // self.size

    def __getitem__(self, i):
        s = slice(i * self.size, (i + 1) * self.size)
        if self.w is None:
            return self.x[s], self.y[s]
        return self.x[s], self.y[s], self.w[s]


def test_class_weight_on_a_pydataset_and_weighted_validation_batches_match_keras():
    rng = np.random.default_rng(10)
    x = rng.standard_normal((24, 4)).astype(np.float32)
    y = rng.integers(0, 3, 24)
    vx = rng.standard_normal((12, 4)).astype(np.float32)
    vy = rng.integers(0, 3, 12)
    vw = (rng.random(12) * 3).astype(np.float32)
    ours, theirs = _sequential_pair(3, "softmax", "sparse_categorical_crossentropy")
    kw = {"epochs": 2, "verbose": 0, "shuffle": False, "class_weight": {1: 2.5}}
    got = ours.fit(_Batches(x, y), validation_data=_Batches(vx, vy, vw), **kw)
    want = theirs.fit(_Batches(x, y), validation_data=_Batches(vx, vy, vw), **kw)
    _assert_same_training(got, want, ours, theirs)


def test_bad_weights_are_refused_naming_the_argument_and_change_nothing():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((10, 4)).astype(np.float32)
    y = rng.integers(0, 3, 10)
    ours, _ = _sequential_pair(3, "softmax", "sparse_categorical_crossentropy")
    before = [w.copy() for w in ours.get_weights()]
    bad = [
        ({"sample_weight": np.ones(9)}, "sample_weight"),
        ({"sample_weight": np.ones((10, 2))}, "sample_weight"),
        ({"sample_weight": np.r_[np.ones(9), np.nan]}, "sample_weight"),
        ({"sample_weight": ["a"] * 10}, "sample_weight"),
        ({"sample_weight": np.ones(10), "class_weight": {0: 2.0}}, "class_weight"),
        ({"class_weight": [1.0, 2.0]}, "class_weight"),
        ({"class_weight": {0: float("inf")}}, "class_weight"),
        ({"class_weight": {"a": 1.0}}, "class_weight"),
        ({"validation_freq": 0}, "validation_freq"),
        ({"validation_freq": "2"}, "validation_freq"),
        ({"validation_data": (x, y, np.ones(3))}, "val_sample_weight"),
    ]
    for kwargs, name in bad:
        with pytest.raises(ValueError, match=name):
            ours.fit(x, y, epochs=1, verbose=0, **kwargs)
        for a, b in zip(ours.get_weights(), before):
            assert a.tobytes() == b.tobytes()
    with pytest.raises(ValueError, match="sample_weight"):
        ours.evaluate(x, y, sample_weight=np.ones(4))

    def gen():
        yield x, y

    with pytest.raises(ValueError, match="class_weight"):
        ours.fit(gen(), epochs=1, verbose=0, class_weight={0: 2.0})
    with pytest.raises(ValueError, match="sample_weight"):
        ours.fit(gen(), epochs=1, verbose=0, sample_weight=np.ones(10))
    with pytest.raises(ValueError, match="weighted_metrics"):
        ours.compile("sgd", "mse", weighted_metrics=["mae"])


def test_negative_weights_are_kept_as_keras_keeps_them():
    rng = np.random.default_rng(12)
    x = rng.standard_normal((12, 4)).astype(np.float32)
    y = rng.standard_normal((12, 2)).astype(np.float32)
    sw = np.linspace(-1.0, 2.0, 12).astype(np.float32)
    ours, theirs = _sequential_pair(2, None, "mse")
    kw = {"batch_size": 4, "epochs": 2, "verbose": 0, "shuffle": False, "sample_weight": sw}
    _assert_same_training(ours.fit(x, y, **kw), theirs.fit(x, y, **kw), ours, theirs)


def _exploding_data(rng, n=24, bad=13):
    """Regression data whose sample ``bad`` has a target so large that its squared error
    overflows float32 (the loss of its batch is infinite) while the gradient stays finite."""
    x = rng.standard_normal((n, 4)).astype(np.float32)
    y = rng.standard_normal((n, 2)).astype(np.float32)
    y[bad] = 1e30
    return x, y


@pytest.mark.parametrize("raise_error", [False, True])
def test_terminate_on_nan_stops_at_the_batch_keras_stops_with_its_weights(raise_error, capsys):
    rng = np.random.default_rng(13)
    x, y = _exploding_data(rng)
    vx = rng.standard_normal((6, 4)).astype(np.float32)
    vy = rng.standard_normal((6, 2)).astype(np.float32)
    ours, theirs = _sequential_pair(2, None, "mse", lr=1e-3)
    kw = {"batch_size": 4, "epochs": 3, "verbose": 0, "shuffle": False, "validation_data": (vx, vy)}
    if raise_error:
        with pytest.raises(RuntimeError):
            ours.fit(x, y, callbacks=[callbacks.TerminateOnNaN(raise_error=True)], **kw)
        with pytest.raises(RuntimeError):
            theirs.fit(x, y, callbacks=[keras.callbacks.TerminateOnNaN(raise_error=True)], **kw)
    else:
        got = ours.fit(x, y, callbacks=[rk.callbacks.TerminateOnNaN()], **kw)
        want = theirs.fit(x, y, callbacks=[keras.callbacks.TerminateOnNaN()], **kw)
        # the first epoch is logged, its loss infinite, validation run on the weights left
        assert len(got.history["loss"]) == len(want.history["loss"]) == 1
        assert set(got.history) == set(want.history)
        for key in want.history:
            np.testing.assert_array_equal(
                np.isfinite(got.history[key]), np.isfinite(want.history[key])
            )
        assert not np.isfinite(got.history["loss"][0])
        assert "Batch 3" in capsys.readouterr().out
    # the step of batch 3 (samples 12..15) is applied in both, its weights kept
    for a, b in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, np.asarray(b), rtol=1e-5, atol=WEIGHT_ATOL)
    assert np.abs(ours.get_weights()[2]).max() > 1e20


def test_without_terminate_on_nan_fit_raises_and_restores():
    rng = np.random.default_rng(13)
    x, y = _exploding_data(rng)
    ours, _ = _sequential_pair(2, None, "mse", lr=1e-3)
    before = [w.copy() for w in ours.get_weights()]
    with pytest.raises(ValueError, match="loss became"):
        ours.fit(x, y, batch_size=4, epochs=2, verbose=0, shuffle=False)
    for a, b in zip(ours.get_weights(), before):
        assert a.tobytes() == b.tobytes()


def test_terminate_on_nan_in_streamed_training_stops_after_that_batch():
    rng = np.random.default_rng(13)
    x, y = _exploding_data(rng)
    ours, theirs = _sequential_pair(2, None, "mse", lr=1e-3)
    kw = {"epochs": 2, "verbose": 0, "shuffle": False}
    got = ours.fit(_Batches(x, y, size=4), callbacks=[rk.callbacks.TerminateOnNaN()], **kw)
    want = theirs.fit(_Batches(x, y, size=4), callbacks=[keras.callbacks.TerminateOnNaN()], **kw)
    assert len(got.history["loss"]) == len(want.history["loss"]) == 1
    for a, b in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, np.asarray(b), rtol=1e-5, atol=WEIGHT_ATOL)


def test_a_model_trained_with_weights_still_pickles():
    rng = np.random.default_rng(14)
    x = rng.standard_normal((20, 4)).astype(np.float32)
    y = rng.standard_normal((20, 2)).astype(np.float32)
    ours, _ = _sequential_pair(2, None, "mse")
    ours.fit(x, y, batch_size=5, epochs=1, verbose=0, sample_weight=np.arange(20.0))
    copy = pickle.loads(pickle.dumps(ours))
    assert copy.predict(x).tobytes() == ours.predict(x).tobytes()
    w = np.arange(20.0)
    a = ours.fit(x, y, batch_size=5, epochs=1, verbose=0, shuffle=False, sample_weight=w)
    b = copy.fit(x, y, batch_size=5, epochs=1, verbose=0, shuffle=False, sample_weight=w)
    assert a.history == b.history


# -- the functional model ---------------------------------------------------------------


def _functional_pair(seed=0, lr=0.05, loss_weights=None):
    """A two-output functional model in ours and Keras's, same weights: a shared tanh
    trunk, a regression head ``a_reg`` (mse) and a softmax head ``b_cls`` (sparse CCE); the
    names sort in creation order, the order Keras lists a dict's outputs (and their
    layers) in."""
    rng = np.random.default_rng(seed)
    shapes = [(4, 5), (5,), (5, 2), (2,), (5, 3), (3,)]
    w = [(0.4 * rng.standard_normal(s)).astype(np.float32) for s in shapes]

    def build(lib):
        inp = lib.Input((4,), name="x")
        h = lib.layers.Dense(5, activation="tanh", name="trunk")(inp)
        reg = lib.layers.Dense(2, name="a_reg")(h)
        cls = lib.layers.Dense(3, activation="softmax", name="b_cls")(h)
        model = lib.Model(inp, {"a_reg": reg, "b_cls": cls})
        model.set_weights(w)
        model.compile(
            lib.optimizers.SGD(learning_rate=lr),
            loss={"a_reg": "mse", "b_cls": "sparse_categorical_crossentropy"},
            loss_weights=loss_weights,
        )
        return model

    return build(rk), build(keras)


def _functional_data(rng, n):
    x = rng.standard_normal((n, 4)).astype(np.float32)
    y = {
        "a_reg": rng.standard_normal((n, 2)).astype(np.float32),
        "b_cls": rng.integers(0, 3, n),
    }
    return x, y


@pytest.mark.parametrize("per_output", [False, True])
def test_functional_sample_weight_trains_as_keras(per_output):
    rng = np.random.default_rng(20)
    x, y = _functional_data(rng, 30)
    w_reg = (rng.random(30) * 2).astype(np.float32)
    w_cls = (rng.random(30) * 3).astype(np.float32)
    sw = {"a_reg": w_reg, "b_cls": w_cls} if per_output else w_reg
    ours, theirs = _functional_pair(loss_weights={"a_reg": 0.5, "b_cls": 2.0})
    kw = {"batch_size": 8, "epochs": 3, "verbose": 0, "shuffle": False, "sample_weight": sw}
    vx, vy = _functional_data(rng, 11)
    vw = {"a_reg": w_cls[:11], "b_cls": w_reg[:11]} if per_output else w_cls[:11]
    kw["validation_data"] = (vx, vy, vw)
    got = ours.fit(x, y, **kw)
    want = theirs.fit(x, y, **kw)
    assert "val_b_cls_loss" in want.history
    _assert_same_training(got, want, ours, theirs)
    e_ours = ours.evaluate(vx, vy, sample_weight=vw, return_dict=True)
    e_theirs = theirs.evaluate(vx, vy, sample_weight=vw, return_dict=True, verbose=0)
    for key, value in e_theirs.items():
        assert e_ours[key] == pytest.approx(value, rel=LOSS_RTOL), key


def test_functional_validation_split_and_freq_match_keras():
    rng = np.random.default_rng(21)
    x, y = _functional_data(rng, 30)
    sw = (rng.random(30) * 2).astype(np.float32)
    ours, theirs = _functional_pair()
    kw = {
        "batch_size": 6,
        "epochs": 4,
        "verbose": 0,
        "shuffle": False,
        "sample_weight": sw,
        "validation_split": 0.3,
        "validation_freq": 2,
    }
    got = ours.fit(x, y, **kw)
    want = theirs.fit(x, y, **kw)
    assert len(got.history["val_loss"]) == 2
    _assert_same_training(got, want, ours, theirs)


def test_functional_class_weight_single_output_matches_keras_and_is_refused_for_several():
    rng = np.random.default_rng(22)
    w = _weights(4, 5, 3, 1)

    def build(lib):
        inp = lib.Input((4,))
        out = lib.layers.Dense(3, activation="softmax")(lib.layers.Dense(5, activation="tanh")(inp))
        model = lib.Model(inp, out)
        model.set_weights(w)
        model.compile(lib.optimizers.SGD(learning_rate=0.05), "categorical_crossentropy")
        return model

    ours, theirs = build(rk), build(keras)
    x = rng.standard_normal((30, 4)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 30)]
    kw = {
        "batch_size": 8,
        "epochs": 2,
        "verbose": 0,
        "shuffle": False,
        "class_weight": {0: 4.0, 1: 0.25},
    }
    _assert_same_training(ours.fit(x, y, **kw), theirs.fit(x, y, **kw), ours, theirs)
    two, _ = _functional_pair()
    xs, ys = _functional_data(rng, 10)
    with pytest.raises(ValueError, match="class_weight"):
        two.fit(xs, ys, epochs=1, verbose=0, class_weight={0: 2.0})


def test_functional_unit_weights_bit_for_bit_and_bad_weights_refused():
    rng = np.random.default_rng(23)
    x, y = _functional_data(rng, 20)
    runs = []
    for sw in (None, np.ones(20), {"a_reg": np.ones(20), "b_cls": None}):
        ours, _ = _functional_pair()
        h = ours.fit(x, y, batch_size=6, epochs=2, verbose=0, shuffle=False, sample_weight=sw)
        runs.append((h.history, [a.tobytes() for a in ours.get_weights()]))
    assert runs[0] == runs[1] == runs[2]
    ours, _ = _functional_pair()
    before = [a.tobytes() for a in ours.get_weights()]
    for bad in (np.ones(19), {"a_reg": np.ones(20), "nope": np.ones(20)}, [np.ones(20)]):
        with pytest.raises(ValueError, match="sample_weight"):
            ours.fit(x, y, epochs=1, verbose=0, sample_weight=bad)
    with pytest.raises(ValueError, match="sample_weight"):
        ours.fit(x, y, epochs=1, verbose=0, sample_weight=np.r_[np.ones(19), np.inf])
    assert [a.tobytes() for a in ours.get_weights()] == before
    with pytest.raises(ValueError, match="weighted_metrics"):
        ours.compile("sgd", "mse", weighted_metrics=["mae"])


def test_functional_terminate_on_nan_matches_keras():
    rng = np.random.default_rng(24)
    x, reg = _exploding_data(rng)
    y = {"a_reg": reg, "b_cls": rng.integers(0, 3, len(x))}
    ours, theirs = _functional_pair(lr=1e-3)
    kw = {"batch_size": 4, "epochs": 3, "verbose": 0, "shuffle": False}
    got = ours.fit(x, y, callbacks=[rk.callbacks.TerminateOnNaN()], **kw)
    want = theirs.fit(x, y, callbacks=[keras.callbacks.TerminateOnNaN()], **kw)
    assert len(got.history["loss"]) == len(want.history["loss"]) == 1
    assert not np.isfinite(got.history["loss"][0])
    for a, b in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, np.asarray(b), rtol=1e-5, atol=WEIGHT_ATOL)
