"""Pooling layers (max / average / global, 1D-3D): values against a direct-loop NumPy
reference and Keras, shapes under Keras's valid/same rules, input gradients against finite
differences, save/load, the gate facade and bad input."""

import itertools
import os

import numpy as np
import pytest

from rustyml import tuning
from rustyml.neural_network import Sequential, layers, optimizers

WINDOW = {
    ("max", 1): layers.MaxPooling1D,
    ("max", 2): layers.MaxPooling2D,
    ("max", 3): layers.MaxPooling3D,
    ("avg", 1): layers.AveragePooling1D,
    ("avg", 2): layers.AveragePooling2D,
    ("avg", 3): layers.AveragePooling3D,
}
GLOBAL = {
    ("max", 1): layers.GlobalMaxPooling1D,
    ("max", 2): layers.GlobalMaxPooling2D,
    ("max", 3): layers.GlobalMaxPooling3D,
    ("avg", 1): layers.GlobalAveragePooling1D,
    ("avg", 2): layers.GlobalAveragePooling2D,
    ("avg", 3): layers.GlobalAveragePooling3D,
}


def _distinct(shape, seed=0):
    """Distinct values (a permutation of a grid with gap 0.25), so max pooling has no ties."""
    n = int(np.prod(shape))
    rng = np.random.default_rng(seed)
    return (rng.permutation(n).astype(np.float32) * 0.25 - n * 0.125).reshape(shape)


def _pool_ref(x, kind, pool, strides, padding):
    """Direct loops: every output cell scans its window, skipping cells outside the input;
    average divides by the cells it really saw (Keras)."""
    spatial = x.shape[1:-1]
    outs, pads = [], []
    for n, k, s in zip(spatial, pool, strides):
        if padding == "valid":
            outs.append((n - k) // s + 1)
            pads.append(0)
        else:
            o = -(-n // s)
            outs.append(o)
            pads.append(max((o - 1) * s + k - n, 0) // 2)
    y = np.zeros((x.shape[0], *outs, x.shape[-1]), dtype=np.float64)
    for b in range(x.shape[0]):
        for o in itertools.product(*(range(v) for v in outs)):
            for c in range(x.shape[-1]):
                vals = []
                for t in itertools.product(*(range(k) for k in pool)):
                    idx = tuple(oi * s + ti - p for oi, s, ti, p in zip(o, strides, t, pads))
                    if all(0 <= i < n for i, n in zip(idx, spatial)):
                        vals.append(float(x[(b, *idx, c)]))
                y[(b, *o, c)] = max(vals) if kind == "max" else sum(vals) / len(vals)
    return y


def _model(layer, sample_shape):
    model = Sequential([layer])
    model.build(sample_shape)
    return model


CASES = [
    # (rank, sample shape, pool, strides, padding)
    (1, (9, 3), (3,), (2,), "valid"),
    (1, (9, 3), (4,), (3,), "same"),
    (1, (5, 2), (2,), None, "same"),
    (2, (7, 6, 2), (2, 2), None, "valid"),
    (2, (7, 6, 2), (3, 2), (2, 1), "same"),
    (2, (5, 5, 3), (2, 3), (1, 2), "valid"),
    (2, (3, 3, 1), (2, 2), (2, 2), "same"),
    (3, (4, 5, 3, 2), (2, 2, 2), None, "valid"),
    (3, (5, 4, 3, 2), (3, 2, 2), (2, 1, 2), "same"),
]


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize(("rank", "sample", "pool", "strides", "padding"), CASES)
def test_window_pooling_matches_direct_loops(kind, rank, sample, pool, strides, padding):
    x = _distinct((2, *sample), seed=rank)
    layer = WINDOW[(kind, rank)](pool_size=pool, strides=strides, padding=padding)
    got = _model(layer, sample).predict(x)
    want = _pool_ref(x, kind, pool, strides or pool, padding)
    assert got.shape == want.shape
    if kind == "max":
        np.testing.assert_array_equal(got, want)
    else:
        # a k-term f32 sum: k * eps * sum|terms| / k bounds the mean's error
        k = int(np.prod(pool))
        np.testing.assert_allclose(got, want, rtol=0, atol=k * 1.2e-7 * np.abs(x).max())


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("rank", [1, 2, 3])
@pytest.mark.parametrize("keepdims", [False, True])
def test_global_pooling_matches_numpy(kind, rank, keepdims):
    sample = (5, 4, 3, 6)[-(rank + 1) :]
    x = _distinct((3, *sample), seed=10 + rank)
    got = _model(GLOBAL[(kind, rank)](keepdims=keepdims), sample).predict(x)
    axes = tuple(range(1, rank + 1))
    x64 = x.astype(np.float64)
    want = (
        x64.max(axis=axes, keepdims=keepdims)
        if kind == "max"
        else x64.mean(axis=axes, keepdims=keepdims)
    )
    assert got.shape == want.shape
    n = int(np.prod(sample[:-1]))
    np.testing.assert_allclose(got, want, rtol=0, atol=n * 1.2e-7 * np.abs(x).max())


@pytest.mark.parametrize(
    ("n", "k", "s", "padding"),
    [
        (n, k, s, p)
        for n in (1, 4, 7, 8)
        for k in (1, 2, 3)
        for s in (1, 2, 3)
        for p in ("valid", "same")
        if p == "same" or k <= n
    ],
)
def test_output_lengths_follow_keras_rules(n, k, s, padding):
    model = _model(layers.MaxPooling1D(k, strides=s, padding=padding), (n, 2))
    out = model.predict(np.zeros((1, n, 2), np.float32))
    want = (n - k) // s + 1 if padding == "valid" else -(-n // s)
    assert out.shape == (1, want, 2)


def _input_gradient(layer_factory, x):
    """The gradient of the MSE loss (target 0) with respect to the pooling input, read off one
    SGD step of a PReLU in front of it: for x < 0 and alpha = 1, PReLU is the identity and
    d loss / d alpha = x * d loss / d input."""
    sample = x.shape[1:]
    model = Sequential([layers.PReLU(alpha_initializer=1.0), layer_factory()])
    model.build(sample)
    model.compile(optimizer=optimizers.SGD(learning_rate=1.0), loss="mse")
    out_shape = model.predict(x).shape
    before = model.get_weights()[0].astype(np.float64)
    model.fit(x, np.zeros(out_shape, np.float32), batch_size=1, epochs=1, verbose=0, shuffle=False)
    after = model.get_weights()[0].astype(np.float64)
    return (before - after).reshape(sample) / x[0].astype(np.float64)


def _loss(model, x):
    out = model.predict(x).astype(np.float64)
    return float(np.mean(out**2))


GRAD_CASES = [
    (lambda: layers.MaxPooling1D(3, strides=2, padding="same"), (7, 2)),
    (lambda: layers.AveragePooling1D(3, strides=2, padding="same"), (7, 2)),
    (lambda: layers.MaxPooling2D((2, 3), strides=(1, 2), padding="same"), (4, 5, 2)),
    (lambda: layers.AveragePooling2D((3, 2), strides=(2, 1), padding="same"), (5, 4, 2)),
    (lambda: layers.MaxPooling3D((2, 2, 2), strides=1), (3, 3, 2, 1)),
    (lambda: layers.AveragePooling3D((2, 2, 1)), (4, 2, 3, 2)),
    (lambda: layers.GlobalMaxPooling2D(), (3, 4, 2)),
    (lambda: layers.GlobalAveragePooling3D(keepdims=True), (2, 3, 2, 2)),
]


@pytest.mark.parametrize(("factory", "sample"), GRAD_CASES)
def test_input_gradient_matches_finite_differences(factory, sample):
    # strictly negative, distinct, gaps 0.25: a step of 0.01 moves no arg-max
    x = _distinct((1, *sample), seed=3) - 0.25 * np.prod(sample) - 1.0
    assert (x < 0).all()
    grad = _input_gradient(factory, x)
    probe = _model(factory(), sample)
    h = 0.01
    fd = np.zeros(sample)
    for idx in np.ndindex(*sample):
        xp, xm = x.copy(), x.copy()
        xp[(0, *idx)] += h
        xm[(0, *idx)] -= h
        # the f32 steps, not the nominal h (x + h rounds at |x| ~ 10)
        step = float(xp[(0, *idx)]) - float(xm[(0, *idx)])
        fd[idx] = (_loss(probe, xp) - _loss(probe, xm)) / step
    # the loss is quadratic in x between arg-max changes, so the central difference is exact
    # up to the f32 rounding of the outputs (~eps * |out|^2 per term) over 2h
    scale = float(np.mean(probe.predict(x).astype(np.float64) ** 2))
    np.testing.assert_allclose(grad, fd, rtol=1e-4, atol=8 * 1.2e-7 * scale / (2 * h) + 1e-6)


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_keras_jax_agrees(kind):
    os.environ.setdefault("KERAS_BACKEND", "jax")
    keras = pytest.importorskip("keras")
    for rank, sample, pool, strides, padding in CASES:
        x = _distinct((2, *sample), seed=20 + rank)
        cls = WINDOW[(kind, rank)]
        ours = _model(cls(pool_size=pool, strides=strides, padding=padding), sample).predict(x)
        kcls = getattr(keras.layers, cls.__name__)
        theirs = np.asarray(kcls(pool_size=pool, strides=strides, padding=padding)(x))
        assert ours.shape == theirs.shape, (cls.__name__, sample, pool, strides, padding)
        k = int(np.prod(pool))
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=2 * k * 1.2e-7 * np.abs(x).max())
    for rank in (1, 2, 3):
        sample = (4, 3, 5, 2)[-(rank + 1) :]
        x = _distinct((2, *sample), seed=30 + rank)
        cls = GLOBAL[(kind, rank)]
        for keepdims in (False, True):
            ours = _model(cls(keepdims=keepdims), sample).predict(x)
            theirs = np.asarray(getattr(keras.layers, cls.__name__)(keepdims=keepdims)(x))
            assert ours.shape == theirs.shape
            n = int(np.prod(sample[:-1]))
            np.testing.assert_allclose(ours, theirs, rtol=0, atol=2 * n * 1.2e-7 * np.abs(x).max())


def test_save_load_round_trip_is_bit_identical(tmp_path):
    model = Sequential(
        [
            layers.MaxPooling2D((2, 2), padding="same"),
            layers.AveragePooling2D((2, 1), strides=(1, 1)),
            layers.GlobalMaxPooling2D(keepdims=True),
            layers.Flatten(),
            layers.Dense(3),
        ],
        seed=4,
    )
    model.build((7, 6, 2))
    x = _distinct((3, 7, 6, 2))
    before = model.predict(x)
    model.save(tmp_path / "pool.safetensors")
    loaded = Sequential.load(tmp_path / "pool.safetensors")
    np.testing.assert_array_equal(loaded.predict(x), before)
    cfg = loaded.layers[0].get_config()
    assert cfg["pool_size"] == [2, 2] and cfg["strides"] == [2, 2] and cfg["padding"] == "same"


def test_gate_facade_and_bitwise_agreement_across_settings():
    assert tuning.pool.get_parallel_min_ops() >= 0
    found = {(f, n): d for f, n, _v, d, _u in tuning.gates()}
    assert found[("pool", "parallel_min_ops")] == 12_000
    x = _distinct((1, 40, 40, 16))
    model = _model(layers.MaxPooling2D((3, 3), strides=2, padding="same"), (40, 40, 16))
    before = tuning.pool.get_parallel_min_ops()
    try:
        tuning.pool.set_parallel_min_ops(2**64 - 1)
        serial = model.predict(x)
        tuning.pool.set_parallel_min_ops(0)
        parallel = model.predict(x)
    finally:
        tuning.pool.set_parallel_min_ops(before)
    assert serial.tobytes() == parallel.tobytes()


@pytest.mark.parametrize(
    ("make", "sample", "match"),
    [
        (lambda: layers.MaxPooling2D((5, 5)), (3, 3, 1), r"MaxPooling2D.*\(5, 5\).*\(3, 3\)"),
        (lambda: layers.AveragePooling1D(4), (3, 2), r"AveragePooling1D.*4.*3"),
        (lambda: layers.MaxPooling2D(), (4, 4), r"MaxPooling2D.*\[4, 4\]"),
        (
            lambda: layers.GlobalAveragePooling3D(),
            (4, 4, 2),
            r"GlobalAveragePooling3D.*\[4, 4, 2\]",
        ),
    ],
)
def test_layers_that_do_not_fit_are_value_errors(make, sample, match):
    with pytest.raises(ValueError, match=match):
        _model(make(), sample)


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: layers.MaxPooling2D(0), "MaxPooling2D: pool_size"),
        (lambda: layers.MaxPooling2D((2, 2, 2)), "MaxPooling2D: pool_size"),
        (lambda: layers.AveragePooling1D(2, strides=0), "AveragePooling1D: strides"),
        (lambda: layers.MaxPooling3D(padding="full"), "MaxPooling3D: padding"),
        (lambda: layers.GlobalMaxPooling1D(data_format="channels_first"), "GlobalMaxPooling1D"),
    ],
)
def test_bad_arguments_are_value_errors(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_same_padding_allows_a_pool_larger_than_the_input():
    # Keras: ceil(3 / 5) = 1 output, the window clipped to the 3 real cells
    x = np.array([[[1.0], [4.0], [2.0]]], np.float32)
    assert _model(layers.MaxPooling1D(5, padding="same"), (3, 1)).predict(x).ravel().tolist() == [
        4.0
    ]
    got = _model(layers.AveragePooling1D(5, padding="same"), (3, 1)).predict(x).ravel()
    np.testing.assert_allclose(got, [7.0 / 3.0], rtol=2e-7)
