"""Conv1D/2D/3D and Conv1D/2D/3DTranspose: values against direct NumPy loops and Keras (JAX),
shapes against Keras's length rules, gradients against finite differences, bad input, save/load
and a small CNN on digits."""

import itertools
import os

import numpy as np
import pytest

from rustyml.neural_network import Sequential, layers, optimizers

PLAIN = {1: layers.Conv1D, 2: layers.Conv2D, 3: layers.Conv3D}
TRANSPOSED = {1: layers.Conv1DTranspose, 2: layers.Conv2DTranspose, 3: layers.Conv3DTranspose}


def _out_len(n, k, s, d, padding):
    span = d * (k - 1) + 1
    if padding == "causal":  # valid over the input with span - 1 zeros put before it
        return (n + span - 1 - span) // s + 1
    return (n - span) // s + 1 if padding == "valid" else -(-n // s)


def _pad_before(n, k, s, d, padding):
    if padding == "valid":
        return 0
    if padding == "causal":
        return d * (k - 1)
    span = d * (k - 1) + 1
    return max((-(-n // s) - 1) * s + span - n, 0) // 2


def _transposed_len(n, k, s, d, padding):
    span = d * (k - 1) + 1
    return n * s + max(span - s, 0) if padding == "valid" else n * s


def ref_conv(x, w, b, strides, padding, dilation):
    """Cross-correlation by direct loops in f64: x (batch, n.., c), w (k.., c, f)."""
    rank = x.ndim - 2
    ks = w.shape[:rank]
    outs = [_out_len(x.shape[1 + a], ks[a], strides[a], dilation[a], padding) for a in range(rank)]
    pads = [
        _pad_before(x.shape[1 + a], ks[a], strides[a], dilation[a], padding) for a in range(rank)
    ]
    y = np.zeros((x.shape[0], *outs, w.shape[-1]))
    for o in itertools.product(*(range(n) for n in outs)):
        for t in itertools.product(*(range(k) for k in ks)):
            i = [o[a] * strides[a] + t[a] * dilation[a] - pads[a] for a in range(rank)]
            if all(0 <= i[a] < x.shape[1 + a] for a in range(rank)):
                y[(slice(None), *o)] += x[(slice(None), *i)].astype(np.float64) @ w[t]
    return y + b


def ref_conv_transpose(x, w, b, strides, padding, dilation):
    """Scatter definition in f64: x (batch, n.., c), w (k.., f, c); every input cell writes its
    value times the kernel, cropped by the conv geometry's padding."""
    rank = x.ndim - 2
    ks = w.shape[:rank]
    full = [
        _transposed_len(x.shape[1 + a], ks[a], strides[a], dilation[a], padding)
        for a in range(rank)
    ]
    pads = [_pad_before(full[a], ks[a], strides[a], dilation[a], padding) for a in range(rank)]
    y = np.zeros((x.shape[0], *full, w.shape[-2]))
    for i in itertools.product(*(range(n) for n in x.shape[1:-1])):
        for t in itertools.product(*(range(k) for k in ks)):
            o = [i[a] * strides[a] + t[a] * dilation[a] - pads[a] for a in range(rank)]
            if all(0 <= o[a] < full[a] for a in range(rank)):
                y[(slice(None), *o)] += x[(slice(None), *i)].astype(np.float64) @ w[t].T
    return y + b


def _model(layer, sample_shape, seed=0):
    model = Sequential([layer], seed=seed)
    model.build(sample_shape)
    return model


def _randomise(model, rng):
    new = [rng.standard_normal(w.shape).astype(np.float32) for w in model.get_weights()]
    model.set_weights(new)
    return new


CASES = [
    # (rank, sample shape, kernel, strides, padding, dilation)
    (1, (9, 2), 3, 2, "valid", 1),
    (1, (7, 3), 3, 1, "same", 2),
    (2, (6, 5, 2), (3, 2), (2, 1), "same", 1),
    (2, (7, 6, 3), (2, 3), 1, "valid", (2, 1)),
    (2, (5, 4, 3), 1, 1, "valid", 1),
    (3, (4, 5, 3, 2), (2, 3, 2), (1, 2, 1), "same", 1),
    (3, (5, 4, 4, 1), (3, 2, 2), (2, 1, 1), "valid", 1),
]


def _tuple(v, rank):
    return (v,) * rank if isinstance(v, int) else tuple(v)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("transposed", [False, True])
def test_forward_matches_direct_loops(case, transposed):
    rank, sample, k, s, padding, d = case
    rng = np.random.default_rng(len(sample) + 7 * rank)
    cls = (TRANSPOSED if transposed else PLAIN)[rank]
    model = _model(cls(3, k, strides=s, padding=padding, dilation_rate=d), sample)
    w, b = _randomise(model, rng)
    x = rng.standard_normal((2, *sample)).astype(np.float32)
    ref = (ref_conv_transpose if transposed else ref_conv)(
        x, w, b, _tuple(s, rank), padding, _tuple(d, rank)
    )
    got = model.predict(x)
    assert got.shape == ref.shape
    # Sums of <= 3*3*2*3 = 54 products of N(0,1) values: f32 rounding well under 1e-4.
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-4)


def test_kernel_shapes_follow_keras():
    m = _model(layers.Conv2D(4, (3, 2)), (6, 6, 2))
    assert [w.shape for w in m.get_weights()] == [(3, 2, 2, 4), (4,)]
    m = _model(layers.Conv2DTranspose(4, (3, 2)), (6, 6, 2))
    assert [w.shape for w in m.get_weights()] == [(3, 2, 4, 2), (4,)]
    m = _model(layers.Conv3D(5, 2), (4, 4, 4, 3))
    assert [w.shape for w in m.get_weights()] == [(2, 2, 2, 3, 5), (5,)]


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_output_shapes_follow_keras_rules(rank):
    n = {1: (7,), 2: (7, 6), 3: (5, 6, 4)}[rank]
    for k, s, d, padding in itertools.product([1, 2, 3], [1, 2, 3], [1, 2], ["valid", "same"]):
        if s > 1 and d > 1:
            continue  # Keras refuses strides > 1 together with dilation > 1
        plain = [_out_len(v, k, s, d, padding) for v in n]
        if min(plain) >= 1:
            m = _model(PLAIN[rank](2, k, strides=s, padding=padding, dilation_rate=d), (*n, 1))
            assert m.predict(np.zeros((1, *n, 1), np.float32)).shape == (1, *plain, 2)
        else:
            with pytest.raises(ValueError, match=PLAIN[rank].__name__):
                _model(PLAIN[rank](2, k, strides=s, padding=padding, dilation_rate=d), (*n, 1))
        up = [_transposed_len(v, k, s, d, padding) for v in n]
        m = _model(TRANSPOSED[rank](2, k, strides=s, padding=padding, dilation_rate=d), (*n, 1))
        assert m.predict(np.zeros((1, *n, 1), np.float32)).shape == (1, *up, 2)


def test_activation_use_bias_and_relu():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 6, 6, 2)).astype(np.float32)
    lin = _model(layers.Conv2D(3, 3), (6, 6, 2), seed=5)
    relu = _model(layers.Conv2D(3, 3, activation="relu"), (6, 6, 2), seed=5)
    w = _randomise(lin, rng)
    relu.set_weights(w)
    np.testing.assert_array_equal(relu.predict(x), np.maximum(lin.predict(x), 0))
    # Without a bias only the kernel trains (the native count lists trained parameters,
    # which exist once a step has run).
    nb = _model(layers.Conv2D(3, 3, use_bias=False), (6, 6, 2))
    nb.compile(optimizer="sgd", loss="mse")
    nb.fit(x, np.zeros((3, 4, 4, 3), np.float32), epochs=1, verbose=0)
    assert nb.count_params() == 3 * 3 * 2 * 3


def _sgd_step_gradients(layer, sample, x, target):
    """The gradient one plain SGD step applies (w_new = w - lr * g) against central
    differences of the same MSE computed in f64 from predict."""
    lr = 1.0
    model = _model(layer, sample, seed=3)
    model.compile(optimizer=optimizers.SGD(lr), loss="mse")
    before = [w.astype(np.float64) for w in model.get_weights()]
    model.fit(x, target, epochs=1, batch_size=len(x), shuffle=False, verbose=0)
    applied = [(b - a) / lr for b, a in zip(before, model.get_weights())]
    model.set_weights([b.astype(np.float32) for b in before])

    def loss(ws):
        model.set_weights([w.astype(np.float32) for w in ws])
        return np.mean((model.predict(x).astype(np.float64) - target) ** 2)

    h = 1e-2
    for j, w in enumerate(before):
        for idx in np.ndindex(w.shape):
            plus = [v.copy() for v in before]
            minus = [v.copy() for v in before]
            plus[j][idx] += h
            minus[j][idx] -= h
            num = (loss(plus) - loss(minus)) / (2 * h)
            # The MSE is quadratic in each weight: central differences are exact up to f32
            # rounding of the forward pass (~1e-6 relative) divided by 2h.
            assert abs(applied[j][idx] - num) < 2e-3, (j, idx, applied[j][idx], num)


@pytest.mark.parametrize("transposed", [False, True])
def test_weight_gradients_match_finite_differences(transposed):
    rng = np.random.default_rng(2)
    cls = layers.Conv2DTranspose if transposed else layers.Conv2D
    layer = cls(2, (2, 3), strides=(2, 1), padding="same")
    x = rng.standard_normal((2, 3, 4, 2)).astype(np.float32)
    probe = _model(cls(2, (2, 3), strides=(2, 1), padding="same"), (3, 4, 2))
    out_shape = probe.predict(x).shape
    target = rng.standard_normal(out_shape)
    _sgd_step_gradients(layer, (3, 4, 2), x, target)


def test_bad_input_is_a_value_error_naming_the_layer_and_shapes():
    with pytest.raises(ValueError, match=r"Conv2D.*\(5, 5\).*\(3, 3\)"):
        _model(layers.Conv2D(1, 5), (3, 3, 1))
    # "same" padding accepts an input smaller than the kernel, as in Keras
    assert _model(layers.Conv2D(1, 5, padding="same"), (3, 3, 1)).predict(
        np.ones((1, 3, 3, 1), np.float32)
    ).shape == (1, 3, 3, 1)
    # A wrong channel count is refused by the model's shape check, and a kernel built for
    # another channel count by the layer (Keras's kernel shape in the message).
    model = _model(layers.Conv2D(2, 3), (6, 6, 3))
    with pytest.raises(ValueError, match=r"\(6, 6, 2\).*\(6, 6, 3\)"):
        model.predict(np.ones((1, 6, 6, 2), np.float32))
    with pytest.raises(ValueError, match=r"Conv2D.*\[3, 3, 3, 2\].*\[3, 3, 2, 2\]"):
        model.set_weights([np.zeros((3, 3, 2, 2), np.float32), np.zeros(2, np.float32)])
    with pytest.raises(ValueError, match="Conv2D"):
        _model(layers.Conv2D(2, 3), (6, 6))
    for bad in (0, -1, (1, 0)):
        with pytest.raises(ValueError, match="Conv2D.*strides"):
            layers.Conv2D(2, 3, strides=bad)
    with pytest.raises(ValueError, match="Conv1D.*kernel_size"):
        layers.Conv1D(2, (3, 3))
    # Keras allows "causal" on Conv1D alone
    for cls in (layers.Conv2D, layers.Conv3D, layers.Conv1DTranspose):
        with pytest.raises(ValueError, match=f"{cls.__name__}.*padding"):
            cls(2, 3, padding="causal")


def test_save_load_round_trip(tmp_path):
    rng = np.random.default_rng(6)
    model = Sequential(
        [
            layers.Conv2D(4, 3, padding="same", activation="relu", input_shape=(6, 6, 2)),
            layers.Conv2DTranspose(3, 2, strides=2, dilation_rate=1),
            layers.Conv2D(2, (3, 1), strides=(2, 1)),
        ],
        seed=4,
    )
    model.build()
    _randomise(model, rng)
    x = rng.standard_normal((3, 6, 6, 2)).astype(np.float32)
    path = tmp_path / "conv.safetensors"
    model.save(path)
    same = Sequential.load(path)
    assert np.array_equal(same.predict(x), model.predict(x))


def test_digits_cnn_reaches_97_percent():
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    X = (X / 16.0).astype(np.float32).reshape(-1, 8, 8, 1)
    xtr, xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    model = Sequential(
        [
            layers.Conv2D(16, 3, activation="relu", input_shape=(8, 8, 1)),
            layers.Conv2D(32, 3, activation="relu"),
            layers.Flatten(),
            layers.Dense(10, activation="softmax"),
        ],
        seed=0,
    )
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(xtr, ytr, epochs=15, batch_size=32, verbose=0)
    acc = np.mean(np.argmax(model.predict(xte), axis=1) == yte)
    assert acc >= 0.97, acc


# -- Keras (JAX) as an oracle: same weights, same outputs ---------------------------------------
os.environ.setdefault("KERAS_BACKEND", "jax")


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("transposed", [False, True])
def test_keras_gives_the_same_outputs(case, transposed):
    keras = pytest.importorskip("keras")
    rank, sample, k, s, padding, d = case
    cls = (TRANSPOSED if transposed else PLAIN)[rank]
    kcls = getattr(keras.layers, cls.__name__)
    rng = np.random.default_rng(11 + rank)
    model = _model(
        cls(3, k, strides=s, padding=padding, dilation_rate=d, activation="tanh"), sample
    )
    weights = _randomise(model, rng)
    klayer = kcls(3, k, strides=s, padding=padding, dilation_rate=d, activation="tanh")
    klayer.build((None, *sample))
    klayer.set_weights(weights)
    x = rng.standard_normal((2, *sample)).astype(np.float32)
    want = np.asarray(klayer(x))
    got = model.predict(x)
    assert got.shape == want.shape
    # XLA's f32 convolution sums in a different order: <= ~54 terms of N(0,1) products.
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-4)


@pytest.mark.parametrize(
    "name, kwargs, sample",
    [
        ("Conv1D", {"filters": 3, "kernel_size": 3}, (7, 2)),
        ("Conv2D", {"filters": 3, "kernel_size": 3}, (6, 6, 2)),
        ("Conv2DTranspose", {"filters": 3, "kernel_size": 3, "strides": 2}, (4, 4, 2)),
        ("Conv3D", {"filters": 2, "kernel_size": 2}, (4, 4, 4, 2)),
        ("DepthwiseConv2D", {"kernel_size": 3, "depth_multiplier": 2}, (6, 6, 2)),
        ("SeparableConv1D", {"filters": 3, "kernel_size": 3}, (7, 2)),
        ("SeparableConv2D", {"filters": 3, "kernel_size": 3}, (6, 6, 2)),
    ],
)
def test_use_bias_false_weight_lists_are_keras_lists(name, kwargs, sample):
    # Keras lists no bias for use_bias=False, so the same list must move both ways.
    os.environ.setdefault("KERAS_BACKEND", "jax")
    keras = pytest.importorskip("keras")
    rng = np.random.default_rng(11)
    model = _model(getattr(layers, name)(use_bias=False, **kwargs), sample)
    kmodel = keras.Sequential(
        [keras.Input(sample), getattr(keras.layers, name)(use_bias=False, **kwargs)]
    )
    assert [w.shape for w in model.get_weights()] == [w.shape for w in kmodel.get_weights()]
    weights = [rng.standard_normal(w.shape).astype(np.float32) for w in kmodel.get_weights()]
    model.set_weights(weights)
    kmodel.set_weights(model.get_weights())
    x = rng.standard_normal((2, *sample)).astype(np.float32)
    # float32 convolutions of a few dozen taps: both sum the same products in different
    # orders, so they agree to a few ulps of the output's magnitude.
    np.testing.assert_allclose(
        model.predict(x), np.asarray(kmodel.predict(x, verbose=0)), rtol=1e-5, atol=1e-5
    )
    with pytest.raises(ValueError, match="weight arrays"):
        model.set_weights([*weights, np.zeros(3, np.float32)])


# -- Conv1D(padding="causal") -----------------------------------------------------------------

CAUSAL = [
    # (steps, channels, kernel, strides, dilation)
    (7, 2, 3, 1, 1),
    (9, 3, 3, 1, 2),
    (8, 2, 4, 2, 1),
    (7, 1, 2, 3, 1),
    (2, 2, 5, 1, 1),  # kernel longer than the sequence: every window is partly padding
]


@pytest.mark.parametrize("steps, c, k, s, d", CAUSAL)
def test_causal_matches_direct_loops_and_left_padding(steps, c, k, s, d):
    rng = np.random.default_rng(31)
    model = _model(layers.Conv1D(3, k, strides=s, padding="causal", dilation_rate=d), (steps, c))
    w, b = _randomise(model, rng)
    x = rng.standard_normal((2, steps, c)).astype(np.float32)
    got = model.predict(x)
    assert got.shape == (2, -(-steps // s), 3)
    want = ref_conv(x, w, b, (s,), "causal", (d,))
    # f32 sums of at most k * c = 15 products of N(0,1) values: ~1e-6
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
    # The same as "valid" over the sequence with d * (k - 1) zeros put before it.
    valid = _model(layers.Conv1D(3, k, strides=s, dilation_rate=d), (steps + d * (k - 1), c))
    valid.set_weights([w, b])
    padded = np.concatenate([np.zeros((2, d * (k - 1), c), np.float32), x], axis=1)
    np.testing.assert_allclose(got, valid.predict(padded), rtol=0, atol=1e-6)
    # Causal: changing input step i leaves every output before step ceil(i / s) unchanged.
    for i in range(steps):
        x2 = x.copy()
        x2[:, i] += 1.0
        moved = model.predict(x2)
        first = -(-i // s)
        np.testing.assert_array_equal(moved[:, :first], got[:, :first])
        if s == 1:  # output i's last tap reads input i (with strides, some inputs are skipped)
            assert not np.array_equal(moved[:, i], got[:, i])


@pytest.mark.parametrize("steps, c, k, s, d", CAUSAL)
def test_causal_keras_gives_the_same_outputs(steps, c, k, s, d):
    keras = pytest.importorskip("keras")
    rng = np.random.default_rng(32)
    model = _model(
        layers.Conv1D(3, k, strides=s, padding="causal", dilation_rate=d, activation="tanh"),
        (steps, c),
    )
    weights = _randomise(model, rng)
    klayer = keras.layers.Conv1D(
        3, k, strides=s, padding="causal", dilation_rate=d, activation="tanh"
    )
    klayer.build((None, steps, c))
    klayer.set_weights(weights)
    x = rng.standard_normal((2, steps, c)).astype(np.float32)
    want = np.asarray(klayer(x))
    got = model.predict(x)
    assert got.shape == want.shape == klayer.compute_output_shape((2, steps, c))
    # XLA's f32 convolution sums its <= 15 products in another order: a few ulps.
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-5)


def test_causal_output_lengths_follow_keras():
    keras = pytest.importorskip("keras")
    for n, k, s, d in itertools.product([1, 2, 5, 8], [1, 2, 3], [1, 2, 3], [1, 2]):
        if s > 1 and d > 1:
            continue  # Keras refuses strides > 1 with dilation_rate > 1
        ours = _model(layers.Conv1D(2, k, strides=s, padding="causal", dilation_rate=d), (n, 1))
        got = ours.predict(np.ones((1, n, 1), np.float32)).shape
        theirs = keras.layers.Conv1D(2, k, strides=s, padding="causal", dilation_rate=d)
        assert (
            got == theirs.compute_output_shape((1, n, 1)) == (1, _out_len(n, k, s, d, "causal"), 2)
        )


def test_causal_weight_gradients_match_finite_differences():
    rng = np.random.default_rng(33)
    x = rng.standard_normal((2, 7, 2)).astype(np.float32)
    target = rng.standard_normal((2, 4, 3))
    layer = layers.Conv1D(3, 3, strides=2, padding="causal")
    _sgd_step_gradients(layer, (7, 2), x, target)
    dilated = layers.Conv1D(3, 3, padding="causal", dilation_rate=2)
    _sgd_step_gradients(dilated, (7, 2), x, rng.standard_normal((2, 7, 3)))
    nb = layers.Conv1D(3, 4, padding="causal", use_bias=False)
    _sgd_step_gradients(nb, (7, 2), x, rng.standard_normal((2, 7, 3)))


def test_causal_save_load_round_trip(tmp_path):
    rng = np.random.default_rng(34)
    model = Sequential(
        [
            layers.Conv1D(4, 3, padding="causal", dilation_rate=2, input_shape=(9, 2)),
            layers.Conv1D(2, 2, strides=2, padding="causal", activation="relu"),
        ],
        seed=5,
    )
    model.build()
    _randomise(model, rng)
    x = rng.standard_normal((3, 9, 2)).astype(np.float32)
    model.save(tmp_path / "causal.safetensors")
    same = Sequential.load(tmp_path / "causal.safetensors")
    assert same.layers[0].get_config()["padding"] == "causal"
    assert np.array_equal(same.predict(x), model.predict(x))


@pytest.mark.parametrize(
    "make",
    [
        lambda: layers.SeparableConv1D(2, 3, padding="causal"),
        lambda: layers.DepthwiseConv1D(3, padding="causal"),
        lambda: layers.Conv2D(2, 3, padding="causal"),
        lambda: layers.Conv1DTranspose(2, 3, padding="causal"),
        lambda: layers.MaxPooling1D(2, padding="causal"),
    ],
)
def test_causal_is_refused_where_keras_refuses_it(make):
    keras = pytest.importorskip("keras")
    with pytest.raises(ValueError) as ours:
        make()
    name = str(ours.value).split(":")[0]
    assert name in str(ours.value) and "padding" in str(ours.value)
    # Keras refuses the same layer (at construction or on its first call).
    kcls = getattr(keras.layers, name)
    with pytest.raises(ValueError):
        args = (3,) if name in ("DepthwiseConv1D", "MaxPooling1D") else (2, 3)
        klayer = kcls(*args, padding="causal")
        sample = (1, 7, 7, 2) if name == "Conv2D" else (1, 7, 2)
        klayer(np.ones(sample, np.float32))


def test_causal_bitwise_serial_and_parallel_gate():
    """Above and below the convolution gate, a causal Conv1D gives the same bits forward and
    after one training step."""
    from rustyml import tuning

    rng = np.random.default_rng(35)
    x = rng.standard_normal((4, 2000, 8)).astype(np.float32)
    y = rng.standard_normal((4, 2000, 16)).astype(np.float32)

    def run():
        model = _model(
            layers.Conv1D(16, 3, padding="causal", dilation_rate=2, activation="tanh"),
            (2000, 8),
            seed=6,
        )
        model.compile(optimizer="sgd", loss="mse")
        model.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0)
        return model.predict(x).tobytes(), [w.tobytes() for w in model.get_weights()]

    before = tuning.conv.get_parallel_min_flops()
    try:
        tuning.conv.set_parallel_min_flops(tuning.SERIAL)
        serial = run()
        tuning.conv.set_parallel_min_flops(tuning.PARALLEL)
        parallel = run()
    finally:
        tuning.conv.set_parallel_min_flops(before)
    assert serial == parallel
