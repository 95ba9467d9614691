"""Functional models read data batch by batch (generators, iterables, ``PyDataset``s), as
Keras 3's ``fit`` / ``evaluate`` / ``predict`` do.

Oracles: the in-memory path of the same model (already compared with Keras 3 in
test_keras_functional.py) fed the same batches in the same order must give the same bits,
since each streamed batch is one step of the same native loop; Keras 3 (JAX) itself for
the epoch bookkeeping (``steps_per_epoch`` continuing where the last epoch stopped, History
keys, per-output losses). Tolerance against Keras as in test_keras_model_members.py: float32
steps ordered differently, 2e-5 relative over a few steps.
"""

import os

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")
keras = pytest.importorskip("keras")

import rustyml.keras as rkeras

RTOL, ATOL = 2e-5, 1e-6


def _data(n=24, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, 3)).astype(np.float32)
    b = rng.standard_normal((n, 2)).astype(np.float32)
    y1 = rng.standard_normal((n, 1)).astype(np.float32)
    y2 = (rng.uniform(size=(n, 1)) < 0.5).astype(np.float32)
    return a, b, y1, y2


def _weights():
    rng = np.random.default_rng(5)
    return [
        rng.uniform(-0.7, 0.7, (3, 4)).astype(np.float32),
        rng.uniform(-0.3, 0.3, (4,)).astype(np.float32),
        rng.uniform(-0.7, 0.7, (6, 1)).astype(np.float32),
        rng.uniform(-0.3, 0.3, (1,)).astype(np.float32),
        rng.uniform(-0.7, 0.7, (6, 1)).astype(np.float32),
        rng.uniform(-0.3, 0.3, (1,)).astype(np.float32),
    ]


def _two_tower(lib):
    """Two inputs (a dict), two outputs: enough structure for the batch plumbing."""
    a = lib.Input((3,), name="a")
    b = lib.Input((2,), name="b")
    h = lib.layers.Dense(4, activation="tanh", name="h")(a)
    j = lib.layers.Concatenate(name="join")([h, b])
    reg = lib.layers.Dense(1, name="reg")(j)
    cls = lib.layers.Dense(1, activation="sigmoid", name="cls")(j)
    m = lib.Model({"a": a, "b": b}, {"reg": reg, "cls": cls})
    # by layer: the two libraries may list a branching model's layers in different orders
    w = _weights()
    for name, arrays in (("h", w[:2]), ("reg", w[2:4]), ("cls", w[4:])):
        m.get_layer(name).set_weights(arrays)
    lr = 0.05
    m.compile(
        lib.optimizers.SGD(learning_rate=lr),
        {"reg": "mse", "cls": "binary_crossentropy"},
        metrics={"cls": ["accuracy"]},
    )
    return m


def _batches(a, b, y1, y2, size, weights=None):
    for s in range(0, len(a), size):
        x = {"a": a[s : s + size], "b": b[s : s + size]}
        y = {"reg": y1[s : s + size], "cls": y2[s : s + size]}
        if weights is None:
            yield x, y
        else:
            yield x, y, weights[s : s + size]


class _Dataset(rkeras.utils.PyDataset):
    def __init__(self, arrays, size):
        super().__init__()
        self.arrays, self.size = arrays, size

    def __len__(self):
        return (len(self.arrays[0]) + self.size - 1) // self.size

    def __getitem__(self, i):
        a, b, y1, y2 = (v[i * self.size : (i + 1) * self.size] for v in self.arrays)
        return {"a": a, "b": b}, {"reg": y1, "cls": y2}


def _bits(weights):
    return [w.tobytes() for w in weights]


def test_a_generator_trains_as_the_same_batches_in_memory():
    a, b, y1, y2 = _data()
    sw = np.linspace(0.5, 1.5, len(a)).astype(np.float32)
    streamed, in_memory = _two_tower(rkeras), _two_tower(rkeras)
    h1 = streamed.fit(_batches(a, b, y1, y2, 8, sw), epochs=1, verbose=0)
    h2 = in_memory.fit(
        {"a": a, "b": b},
        {"reg": y1, "cls": y2},
        batch_size=8,
        shuffle=False,
        sample_weight=sw,
        verbose=0,
    )
    assert _bits(streamed.get_weights()) == _bits(in_memory.get_weights())
    assert sorted(h1.history) == sorted(h2.history)
    for k in h2.history:
        np.testing.assert_allclose(h1.history[k], h2.history[k], rtol=1e-6, err_msg=k)


def test_pydataset_epochs_evaluate_and_predict_match_arrays():
    a, b, y1, y2 = _data()
    ds = _Dataset((a, b, y1, y2), 6)
    streamed, in_memory = _two_tower(rkeras), _two_tower(rkeras)
    streamed.fit(ds, epochs=3, shuffle=False, verbose=0)
    in_memory.fit(
        {"a": a, "b": b}, {"reg": y1, "cls": y2}, batch_size=6, epochs=3, shuffle=False, verbose=0
    )
    assert _bits(streamed.get_weights()) == _bits(in_memory.get_weights())
    p_stream = streamed.predict(ds)
    p_mem = in_memory.predict({"a": a, "b": b}, batch_size=6)
    for k in ("reg", "cls"):
        np.testing.assert_array_equal(p_stream[k], p_mem[k])
    # equal batches: the size-weighted mean of the batch losses is the whole set's loss up to
    # float32 rounding of a 4-term average
    e_stream = streamed.evaluate(ds, return_dict=True)
    e_mem = in_memory.evaluate({"a": a, "b": b}, {"reg": y1, "cls": y2}, return_dict=True)
    assert list(e_stream) == list(e_mem)
    np.testing.assert_allclose(list(e_stream.values()), list(e_mem.values()), rtol=1e-6)


def test_steps_per_epoch_and_validation_follow_keras():
    a, b, y1, y2 = _data(n=30)

    class KerasDataset(keras.utils.PyDataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            s = slice(6 * i, 6 * i + 6)
            return {"a": a[s], "b": b[s]}, {"reg": y1[s], "cls": y2[s]}

    def endless():
        while True:
            yield from _batches(a, b, y1, y2, 6)

    theirs, ours = _two_tower(keras), _two_tower(rkeras)
    # 3 steps per epoch over an endless generator: epoch 2 continues at batch 4
    kwargs = {"epochs": 3, "steps_per_epoch": 3, "verbose": 0}
    ht = theirs.fit(endless(), validation_data=KerasDataset(), **kwargs)
    ho = ours.fit(endless(), validation_data=_Dataset((a, b, y1, y2), 6), **kwargs)
    assert sorted(ho.history) == sorted(ht.history)
    for k in ht.history:
        np.testing.assert_allclose(ho.history[k], ht.history[k], rtol=RTOL, atol=ATOL, err_msg=k)
    for name in ("h", "reg", "cls"):
        for w_o, w_t in zip(
            ours.get_layer(name).get_weights(), theirs.get_layer(name).get_weights()
        ):
            np.testing.assert_allclose(w_o, np.asarray(w_t), rtol=RTOL, atol=ATOL, err_msg=name)


def test_bad_batches_are_refused_and_change_nothing():
    a, b, y1, y2 = _data()
    m = _two_tower(rkeras)
    before = _bits(m.get_weights())
    with pytest.raises(ValueError, match="do not pass y"):
        m.fit(_batches(a, b, y1, y2, 8), y1, verbose=0)
    with pytest.raises(ValueError, match="must hold targets"):
        m.fit(iter([({"a": a, "b": b},)]), verbose=0)
    with pytest.raises(ValueError, match="no batches"):
        m.fit(iter([]), verbose=0)
    with pytest.raises(ValueError, match="steps_per_epoch applies"):
        m.fit({"a": a, "b": b}, {"reg": y1, "cls": y2}, steps_per_epoch=2, verbose=0)
    with pytest.raises(ValueError, match="steps_per_epoch"):
        m.fit(_batches(a, b, y1, y2, 8), steps_per_epoch=0, verbose=0)
    assert _bits(m.get_weights()) == before


def test_class_weight_is_refused_for_several_outputs_on_every_path():
    """Keras refuses class_weight on multi-output models; so do fit on arrays, fit on a
    batch source and train_on_batch, and nothing changes."""
    a, b, y1, y2 = _data()
    m = _two_tower(rkeras)
    before = _bits(m.get_weights())
    cw = {0: 1.0, 1: 2.0}
    x, y = {"a": a, "b": b}, {"reg": y1, "cls": y2}
    for call in (
        lambda: m.fit(x, y, class_weight=cw, verbose=0),
        lambda: m.fit(_Dataset((a, b, y1, y2), 6), class_weight=cw, verbose=0),
        lambda: m.train_on_batch(x, y, class_weight=cw),
    ):
        with pytest.raises(ValueError, match="single output"):
            call()
    assert _bits(m.get_weights()) == before
