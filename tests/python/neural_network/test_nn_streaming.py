"""Sequential on data read batch by batch: generators, iterables of batches, PyDataset-like
objects and dask arrays. Oracles: the same model trained in memory (bit-identical weights
for the same batches), Keras 3 (JAX backend) for the epoch/step semantics, and the process's
own peak memory for the bound."""

import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

from rustyml.neural_network import PyDataset, Sequential, layers

os.environ.setdefault("KERAS_BACKEND", "jax")

N, D, B = 60, 3, 10


@pytest.fixture
def data():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(N, D)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], dtype=np.float32) + 0.1).astype(np.float32)
    return x, y


def _model(metrics=None):
    m = Sequential([layers.Dense(5, activation="tanh", input_shape=(D,)), layers.Dense(1)], seed=3)
    m.compile("adam", "mse", metrics=metrics)
    return m


def _same_weights(a, b):
    return all(np.array_equal(p, q) for p, q in zip(a.get_weights(), b.get_weights()))


class _Batches(PyDataset):
    """Batches ``i`` of ``x, y`` in order; records which were read and the epoch ends."""

    def __init__(self, x, y, batch=B, **kw):
        super().__init__(**kw)
        self.x, self.y, self.batch = x, y, batch
        self.log = []

    def __len__(self):
        return (len(self.x) + self.batch - 1) // self.batch

    def __getitem__(self, i):
        self.log.append(i)
        s = slice(i * self.batch, (i + 1) * self.batch)
        return self.x[s], self.y[s]

    def on_epoch_end(self):
        self.log.append("end")


def _gen(x, y, batch=B):
    for i in range(0, len(x), batch):
        yield x[i : i + batch], y[i : i + batch]


def test_generator_batches_give_the_in_memory_fit_bits(data):
    x, y = data
    ref = _model(["mae"])
    want = ref.fit(x, y, batch_size=B, epochs=1, shuffle=False, verbose=0).history
    m = _model(["mae"])
    got = m.fit(_gen(x, y), epochs=1, shuffle=False, verbose=0).history
    assert got == want
    assert _same_weights(m, ref)


@pytest.mark.parametrize("kind", ["pydataset", "iterable", "dask"])
def test_every_epoch_reads_the_data_again_and_matches_in_memory(data, kind):
    x, y = data
    ref = _model()
    want = ref.fit(x, y, batch_size=B, epochs=3, shuffle=False, verbose=0).history
    m = _model()
    if kind == "pydataset":
        got = m.fit(_Batches(x, y), epochs=3, shuffle=False, verbose=0).history
    elif kind == "iterable":
        got = m.fit(_Again(x, y), epochs=3, shuffle=False, verbose=0).history
    else:
        da = pytest.importorskip("dask.array")
        # blocks of 7 rows: every batch of 10 spans a block boundary somewhere
        got = m.fit(
            da.from_array(x, chunks=(7, D)),
            da.from_array(y, chunks=(13, 1)),
            batch_size=B,
            epochs=3,
            shuffle=False,
            verbose=0,
        ).history
    assert got == want
    assert _same_weights(m, ref)


class _Again:
    """A re-iterable of batches that is neither a sequence nor an iterator."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __iter__(self):
        return _gen(self.x, self.y)


def test_predict_and_evaluate_on_batches_give_the_in_memory_bits(data):
    x, y = data
    m = _model(["mae"])
    m.fit(x, y, batch_size=B, epochs=1, verbose=0)
    assert np.array_equal(m.predict(_Batches(x, y)), m.predict(x, batch_size=B))
    assert np.array_equal(m.predict(((xb,) for xb, _ in _gen(x, y))), m.predict(x, batch_size=B))
    assert m.evaluate(_gen(x, y))[0] == m.evaluate(x, y, batch_size=B)[0]
    assert m.predict(_gen(x, y), steps=2).shape == (2 * B, 1)


def test_dask_predict_is_read_block_by_block(data):
    da = pytest.importorskip("dask.array")
    x, y = data
    m = _model()
    m.fit(x, y, batch_size=B, epochs=1, verbose=0)
    assert np.array_equal(
        m.predict(da.from_array(x, chunks=(7, D)), batch_size=B), m.predict(x, batch_size=B)
    )


def test_pydataset_shuffle_permutes_the_batch_order_each_epoch_from_the_seed(data):
    x, y = data
    logs = []
    for _ in range(2):
        ds = _Batches(x, y)
        _model().fit(ds, epochs=3, verbose=0)
        logs.append(ds.log)
    assert logs[0] == logs[1]  # same model seed, same orders
    epochs = [[], [], []]
    e = 0
    for item in logs[0]:
        if item == "end":
            e += 1
        else:
            epochs[e].append(item)
    n_batches = len(_Batches(x, y))
    assert all(sorted(ep) == list(range(n_batches)) for ep in epochs)
    assert len({tuple(ep) for ep in epochs}) > 1


keras_cases = [
    ("pydataset", {"epochs": 2, "shuffle": False}),
    ("pydataset", {"epochs": 3, "steps_per_epoch": 2, "shuffle": False}),
    ("pydataset", {"epochs": 2, "steps_per_epoch": 7, "shuffle": False}),
    ("generator", {"epochs": 3, "steps_per_epoch": 2, "shuffle": False}),
    ("generator", {"epochs": 1, "shuffle": False}),
]


@pytest.mark.parametrize(("kind", "kw"), keras_cases)
def test_steps_epochs_and_dataset_calls_match_keras(kind, kw):
    keras = pytest.importorskip("keras")
    x = np.random.default_rng(0).normal(size=(50, D)).astype(np.float32)
    y = x[:, :1].copy()

    class Steps(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self.per_epoch = getattr(self, "per_epoch", []) + [0]

        def on_train_batch_end(self, batch, logs=None):
            self.per_epoch[-1] += 1

    class KerasBatches(keras.utils.PyDataset):
        __len__ = _Batches.__len__
        __getitem__ = _Batches.__getitem__
        on_epoch_end = _Batches.on_epoch_end

        def __init__(self):
            super().__init__()
            self.x, self.y, self.batch, self.log = x, y, B, []

    theirs = keras.Sequential([keras.Input((D,)), keras.layers.Dense(1)])
    theirs.compile("sgd", "mse")
    counter = Steps()
    kds = KerasBatches()
    with warnings.catch_warnings(record=True) as kwarn:
        warnings.simplefilter("always")
        kh = theirs.fit(
            kds if kind == "pydataset" else _gen(x, y), callbacks=[counter], verbose=0, **kw
        )
    ours = _model()
    ods = _Batches(x, y)
    reads = [0]

    def counted():
        for batch in _gen(x, y):
            reads[0] += 1
            yield batch

    def read_so_far():
        return sum(1 for i in ods.log if i != "end") if kind == "pydataset" else reads[0]

    counter_ours = _ReadsPerEpoch(read_so_far)
    with warnings.catch_warnings(record=True) as owarn:
        warnings.simplefilter("always")
        oh = ours.fit(
            ods if kind == "pydataset" else counted(), verbose=0, callbacks=[counter_ours], **kw
        )
    steps = counter_ours.per_epoch
    assert len(oh.history["loss"]) == len(kh.history["loss"])
    assert steps == counter.per_epoch
    ran_out = [str(w.message).startswith("Your input ran out of data") for w in owarn]
    k_ran_out = [str(w.message).startswith("Your input ran out of data") for w in kwarn]
    if "steps_per_epoch" in kw:
        # (Keras 3 also warns when a generator without steps_per_epoch ends, its normal end)
        assert sum(ran_out) == sum(k_ran_out)
    if kind == "pydataset":
        # Keras reads batch 0 and calls on_epoch_end once before training (its build)
        assert ods.log == kds.log[2:]


class _ReadsPerEpoch:
    """Batches read in each epoch, from a count of reads taken at every epoch's end."""

    def __init__(self, reads):
        self.reads, self.per_epoch, self.model = reads, [], None

    def on_epoch_end(self, epoch, logs=None):
        self.per_epoch.append(self.reads() - sum(self.per_epoch))


def test_generator_read_once_stops_training_when_exhausted(data):
    x, y = data
    m = _model()
    with pytest.warns(UserWarning, match="ran out of data"):
        h = m.fit(_gen(x, y), epochs=3, shuffle=False, verbose=0)
    assert len(h.history["loss"]) == 1


def test_keras_errors_for_batch_sources(data):
    x, y = data
    m = _model()
    with pytest.raises(ValueError, match="`y` should not be passed"):
        m.fit(_gen(x, y), y, verbose=0)
    with pytest.raises(ValueError, match="no batches"):
        m.fit((b for b in []), verbose=0, shuffle=False)
    with pytest.raises(ValueError, match="tuples"):
        m.fit((xb for xb, _ in _gen(x, y)), verbose=0, shuffle=False)
    with pytest.raises(ValueError, match="validation_split"):
        m.fit(_gen(x, y), validation_split=0.2, verbose=0, shuffle=False)
    # batches may carry their weights (test_keras_sample_weights.py), one per sample
    with pytest.raises(ValueError, match="sample_weight"):
        m.fit(((xb, yb, np.ones(len(xb) + 1)) for xb, yb in _gen(x, y)), verbose=0, shuffle=False)
    with pytest.warns(UserWarning, match="shuffle=True"):
        m.fit(_gen(x, y), verbose=0)


def test_validation_data_of_batches_matches_in_memory_validation(data):
    x, y = data
    a, b = _model(["mae"]), _model(["mae"])
    want = a.fit(
        x, y, batch_size=B, epochs=2, shuffle=False, verbose=0, validation_data=(x, y)
    ).history
    got = b.fit(
        _Batches(x, y), epochs=2, shuffle=False, verbose=0, validation_data=_Batches(x, y)
    ).history
    assert got["loss"] == want["loss"]
    # the validation loss is the same per-sample mean, summed in another grouping
    np.testing.assert_allclose(got["val_loss"], want["val_loss"], rtol=1e-6)
    np.testing.assert_allclose(got["val_mae"], want["val_mae"], rtol=1e-6)


_PEAK_SCRIPT = textwrap.dedent(
    """
    import sys
    import numpy as np
    from rustyml.neural_network import Sequential, layers
    from rustyml.neural_network import PyDataset

    kind, n_batches, rows, cols = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])

    def batch(i):
        r = np.random.default_rng(i)
        xb = r.standard_normal((rows, cols), dtype=np.float32)
        return xb, xb[:, :1] * 2.0

    class Data(PyDataset):
        def __len__(self):
            return n_batches
        def __getitem__(self, i):
            return batch(i)

    def gen():
        for i in range(n_batches):
            yield batch(i)

    m = Sequential([layers.Dense(8, activation="relu", input_shape=(cols,)), layers.Dense(1)],
                   seed=0)
    m.compile("sgd", "mse")
    m.fit(*batch(0), batch_size=rows, verbose=0)  # warm: build, allocator pools
    if kind == "dask":
        import dask
        import dask.array as da
        dask.config.set(scheduler="synchronous")
        x = da.random.RandomState(0).standard_normal((n_batches * rows, cols),
                                                     chunks=(4 * rows, cols)).astype(np.float32)
        y = x[:, :1] * 2.0
    def hwm():
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # restart the peak-RSS mark here
    before = hwm()
    if kind == "pydataset":
        m.fit(Data(), epochs=1, shuffle=True, verbose=0)
    elif kind == "generator":
        m.fit(gen(), epochs=1, shuffle=False, verbose=0)
    else:
        m.fit(x, y, batch_size=rows, epochs=1, shuffle=False, verbose=0)
    print(hwm() - before)
    """
)


def _peak_growth(kind, n_batches, rows, cols):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run(
        [sys.executable, "-c", _PEAK_SCRIPT, kind, str(n_batches), str(rows), str(cols)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return int(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="Linux peak-RSS reset")
@pytest.mark.parametrize("kind", ["pydataset", "generator", "dask"])
def test_peak_memory_stays_a_few_batches_whatever_the_data_size(kind):
    if kind == "dask":
        pytest.importorskip("dask.array")
    rows, cols = 2048, 64
    batch_bytes = rows * cols * 4  # 0.5 MiB
    small = _peak_growth(kind, 16, rows, cols)
    large = _peak_growth(kind, 256, rows, cols)  # 128 MiB of data in all
    # The loop holds the batch read, its float32 copy, the gathered rows the first layer
    # keeps, the activations (8 + 1 columns) and, for dask, one block of 4 batches being cut:
    # under 16 batches whatever the data's size. Growth with 16x the data beyond that bound
    # means batches are kept (the fault: NumPy reading a whole PyDataset into one array).
    assert large - small < 16 * batch_bytes, (small, large)
    if kind != "dask":  # (dask's scheduler and graph add their own fixed tens of MiB)
        assert large < 256 * batch_bytes / 4, (small, large)


def test_weighted_batches_evaluate_to_keras_weighted_loss(data):
    keras = pytest.importorskip("keras")
    x, y = data
    w = np.random.default_rng(9).random(len(x)).astype(np.float32)
    ours = _model()
    theirs = keras.Sequential(
        [keras.Input((D,)), keras.layers.Dense(5, activation="tanh"), keras.layers.Dense(1)]
    )
    theirs.compile("adam", "mse")
    theirs.set_weights(ours.get_weights())

    def weighted():
        for i in range(0, len(x), B):
            yield x[i : i + B], y[i : i + B], w[i : i + B]

    got = ours.evaluate(weighted())
    want = theirs.evaluate(weighted(), verbose=0)
    # per-sample float32 losses summed in two orders: a few float32 roundings of the total
    assert got == pytest.approx(want, rel=len(x) * float(np.finfo(np.float32).eps))
