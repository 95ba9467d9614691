"""Inputs of the right dtype are read in place: peak resident memory during a call must not
grow by the size of the input (an unexpected copy of an input is a bug)."""

import os

import numpy as np
import pytest

from rustyml.machine_learning import LinearRegression
from rustyml.math import matmul, reduction

CLEAR_REFS = "/proc/self/clear_refs"


def _peak_kib():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise RuntimeError("no VmHWM")


def _rss_kib():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def _extra_peak_mib(fn):
    with open(CLEAR_REFS, "w") as fh:
        fh.write("5")  # reset the peak to the current RSS
    base = _rss_kib()
    fn()
    return (_peak_kib() - base) / 1024


needs_proc = pytest.mark.skipif(
    not (os.path.exists(CLEAR_REFS) and os.access(CLEAR_REFS, os.W_OK)),
    reason="needs Linux /proc/self/clear_refs to reset peak RSS",
)


@needs_proc
def test_reductions_and_products_do_not_copy_their_inputs():
    x = np.random.default_rng(0).standard_normal(20_000_000)  # 160 MB
    strided = x[::2]  # 80 MB view
    assert _extra_peak_mib(lambda: reduction.sum(strided)) < 16
    assert _extra_peak_mib(lambda: reduction.mean_var(x)) < 16
    a = x[: 4000 * 2000].reshape(4000, 2000)  # 64 MB
    v = np.ones(2000)
    # matvec output is 4000 doubles; a copy of `a` or of its transpose would add 64 MB
    assert _extra_peak_mib(lambda: matmul.matvec(a, v)) < 16
    assert _extra_peak_mib(lambda: matmul.matvec(a[:, ::2], v[:1000])) < 16


@needs_proc
def test_estimator_reads_float64_training_data_in_place():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((1_000_000, 8))  # 64 MB
    y = X @ np.arange(8.0)
    # fit_intercept=False needs no centred copy; the fit must not duplicate X
    extra = _extra_peak_mib(lambda: LinearRegression(fit_intercept=False).fit(X, y))
    assert extra < 24, extra


@needs_proc
def test_network_inference_reads_its_input_in_place():
    from rustyml.neural_network import Sequential, layers

    x = np.random.default_rng(2).random((1000, 64, 64, 4), dtype=np.float32)  # 64 MB
    # outputs a quarter of the input; the finiteness check's mask is a quarter too
    conv = Sequential([layers.Conv2D(1, 1, input_shape=(64, 64, 4))], seed=0)
    dense = Sequential([layers.Dense(1, input_shape=(64 * 64 * 4,))], seed=0)
    flat = x.reshape(1000, -1)
    for model, data in ((dense, flat), (conv, x)):
        model.predict(data[:2], batch_size=2)  # first-call allocations
        # one batch of everything: a copy of the batch would add 64 MB
        extra = _extra_peak_mib(lambda m=model, d=data: m.predict(d, batch_size=len(d)))
        assert extra < 40, extra
    # evaluate reads x in place too (its y here is 4 KB)
    dense.compile(optimizer="sgd", loss="mse")
    y = np.zeros((1000, 1), np.float32)
    dense.evaluate(flat[:2], y[:2], verbose=0)
    extra = _extra_peak_mib(lambda: dense.evaluate(flat, y, batch_size=len(flat), verbose=0))
    assert extra < 40, extra


@needs_proc
def test_network_inference_memory_does_not_grow_with_the_batch():
    from rustyml.neural_network import Sequential, layers

    # 256 KiB of activations per item: 2000 items at once would hold 512 MB of them
    model = Sequential(
        [
            layers.Conv2D(64, 3, padding="same", activation="relu", input_shape=(32, 32, 1)),
            layers.Flatten(),
            layers.Dense(1),
        ],
        seed=0,
    )
    x = np.random.default_rng(3).random((2000, 32, 32, 1), dtype=np.float32)
    model.predict(x[:64], batch_size=64)  # first-call allocations
    out = []
    extra = _extra_peak_mib(lambda: out.append(model.predict(x, batch_size=len(x))))
    assert extra < 64, extra
    # the stack ran in chunks of 16 items (4 MiB of widest activation each): the same bits
    # as asking for batches of 16
    np.testing.assert_array_equal(out[0], model.predict(x, batch_size=16))


@needs_proc
def test_a_training_step_copies_its_batch_once():
    from rustyml.neural_network import Sequential, layers

    # 192 MB, more than the earlier tests leave the allocator holding
    x = np.random.default_rng(4).random((12000, 4096), dtype=np.float32)
    y = np.zeros((12000, 1), np.float32)
    model = Sequential([layers.Dense(1, input_shape=(4096,))], seed=0)
    model.compile(optimizer="sgd", loss="mse")
    model.train_on_batch(x[:2], y[:2])
    # the batch is gathered once (192 MB, plus the 48 MB finiteness mask) and that copy
    # becomes the first layer's cache; a second copy would add 192 MB more
    extra = _extra_peak_mib(lambda: model.train_on_batch(x, y))
    assert extra < 300, extra


def _unaligned(a):
    """``a``'s values in a buffer offset by one byte: NumPy calls such an array unaligned
    (it arrives so from pickled buffers and ``np.frombuffer`` at odd offsets)."""
    raw = np.zeros(a.nbytes + 1, dtype=np.uint8)
    out = np.frombuffer(raw.data, dtype=a.dtype, count=a.size, offset=1).reshape(a.shape)
    out[...] = a
    assert not out.flags.aligned
    return out


def test_unaligned_arrays_are_read_not_refused():
    import rustyml
    from rustyml.machine_learning import KNN
    from rustyml.neural_network import Sequential, layers
    from rustyml.utils import StandardScaler

    rng = np.random.default_rng(0)
    x = rng.random((40, 3))
    y = rng.integers(0, 2, 40).astype(np.float64)
    assert rustyml.math.reduction.sum(_unaligned(x[:, 0].copy())) == rustyml.math.reduction.sum(
        x[:, 0].copy()
    )
    np.testing.assert_array_equal(
        StandardScaler().fit(_unaligned(x)).mean_, StandardScaler().fit(x).mean_
    )
    np.testing.assert_array_equal(
        KNN(3).fit(_unaligned(x), y).predict(_unaligned(x)), KNN(3).fit(x, y).predict(x)
    )
    model = Sequential([layers.Dense(2, input_shape=(3,))], seed=0)
    x32 = x.astype(np.float32)
    np.testing.assert_array_equal(
        model.predict(_unaligned(x32), verbose=0), model.predict(x32, verbose=0)
    )


def test_unaligned_weights_and_gradients_reach_the_network_intact():
    """Weights and gradients cross into the network through their own entry points (not
    x / y): an unaligned buffer there (a dask worker's unpickled gradient) must be read, not
    panic, and give the aligned array's bits."""
    from rustyml.keras import Input, Model
    from rustyml.keras import layers as klayers
    from rustyml.neural_network import Sequential, layers

    rng = np.random.default_rng(1)
    x = rng.normal(size=(8, 3)).astype(np.float32)
    y = rng.normal(size=(8, 1)).astype(np.float32)

    def model():
        m = Sequential([layers.Dense(2, activation="relu", input_shape=(3,)), layers.Dense(1)])
        m.compile(optimizer="sgd", loss="mse")
        return m

    a, b = model(), model()
    weights = [w + 0.5 for w in a.get_weights()]
    a.set_weights(weights)
    b.set_weights([_unaligned(w) for w in weights])
    for wa, wb in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_array_equal(wa, wb)

    _, grads = a.compute_gradients(x, y)
    a.apply_gradients(grads)
    b.compute_gradients(x, y)
    b.apply_gradients([_unaligned(g) for g in grads])
    for wa, wb in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_array_equal(wa, wb)

    inp = Input(shape=(3,))
    f = Model(inp, klayers.Dense(1)(inp))
    shifted = [w + 0.25 for w in f.get_weights()]
    f.set_weights([_unaligned(w) for w in shifted])
    for got, want in zip(f.get_weights(), shifted):
        np.testing.assert_array_equal(got, want)


def _numpy_peak_mib(fn):
    """The most memory NumPy and Python held at once during ``fn()``, beyond what they held
    before (tracemalloc counts their allocations exactly, whatever the allocator keeps
    resident; the engine's own allocations are not counted)."""
    import tracemalloc

    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        fn()
        return (tracemalloc.get_traced_memory()[1] - base) / 2**20
    finally:
        tracemalloc.stop()


def test_kmeans_door_keeps_one_centred_copy_at_a_time():
    # scikit-learn centres a copy of X to draw its starts (then the engine centres a copy of
    # its own, not counted here). Beside that copy the door holds the init's per-row
    # distances (n x 5 doubles at k = 4), 122 MB here; it used to hold a validation copy of
    # X too (183 MB)
    from rustyml.sklearn.cluster import KMeans

    X = np.random.default_rng(2).random((1_000_000, 8))  # 64 MB
    held = _numpy_peak_mib(lambda: KMeans(4, n_init=2, max_iter=3, random_state=0).fit(X))
    assert held < 2.25 * 64, held


def test_randomized_pca_door_keeps_one_centred_copy():
    # scikit-learn's randomized solver centres one copy of X and squares it in place for the
    # total variance; so does the door: 71 MB here (it used to square into a second copy,
    # 127 MB, and to copy the centred data's transpose in every power iteration)
    from rustyml.sklearn.decomposition import PCA

    X = np.random.default_rng(3).standard_normal((40_000, 200))  # 64 MB
    held = _numpy_peak_mib(lambda: PCA(5, svd_solver="randomized", random_state=0).fit(X))
    assert held < 1.5 * 64, held
