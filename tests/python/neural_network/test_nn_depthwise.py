"""DepthwiseConv1D/2D and SeparableConv1D/2D: values against a direct-loop NumPy reference and
Keras (JAX), output shapes against Keras's length rules, gradients against finite differences,
bad input, and save/load."""

import math
import os

import numpy as np
import pytest

from rustyml.neural_network import Sequential, layers, optimizers


def _ref_depthwise(x, kernel, strides, padding, dilation):
    """Direct loops: x ``(batch, *spatial, C)``, kernel ``(*k, C, dm)`` -> ``(batch, *out, C*dm)``."""
    rank = x.ndim - 2
    spatial = x.shape[1:-1]
    ks = kernel.shape[:rank]
    c, dm = kernel.shape[rank:]
    out_len, pad = [], []
    for n, k, s, d in zip(spatial, ks, strides, dilation):
        span = d * (k - 1) + 1
        if padding == "valid":
            o = (n - span) // s + 1
            p = 0
        else:
            o = math.ceil(n / s)
            p = max((o - 1) * s + span - n, 0) // 2
        out_len.append(o)
        pad.append(p)
    out = np.zeros((x.shape[0], *out_len, c * dm), np.float64)
    for b in range(x.shape[0]):
        for o in np.ndindex(*out_len):
            for t in np.ndindex(*ks):
                i = [o[a] * strides[a] + t[a] * dilation[a] - pad[a] for a in range(rank)]
                if any(v < 0 or v >= spatial[a] for a, v in enumerate(i)):
                    continue
                for ch in range(c):
                    for m in range(dm):
                        out[(b, *o, ch * dm + m)] += float(x[(b, *i, ch)]) * float(
                            kernel[(*t, ch, m)]
                        )
    return out


def _ref_layer(x, weights, separable, strides, padding, dilation, activation=None):
    y = _ref_depthwise(x, weights[0], strides, padding, dilation)
    if separable:
        pw = weights[1].reshape(weights[1].shape[-2], weights[1].shape[-1]).astype(np.float64)
        y = y @ pw
    y = y + weights[-1]
    if activation == "relu":
        y = np.maximum(y, 0)
    elif activation == "tanh":
        y = np.tanh(y)
    return y


CLASSES = {
    "DepthwiseConv1D": (layers.DepthwiseConv1D, 1, False),
    "DepthwiseConv2D": (layers.DepthwiseConv2D, 2, False),
    "SeparableConv1D": (layers.SeparableConv1D, 1, True),
    "SeparableConv2D": (layers.SeparableConv2D, 2, True),
}

CASES = [
    # (strides, padding, dilation, depth_multiplier, activation)
    (1, "valid", 1, 1, None),
    (2, "same", 1, 2, "relu"),
    (1, "same", 2, 3, "tanh"),
    (3, "valid", 1, 1, None),
]


def _make(name, strides, padding, dilation, dm, activation, sample, seed=3, filters=4):
    cls, rank, separable = CLASSES[name]
    kwargs = {
        "strides": strides,
        "padding": padding,
        "dilation_rate": dilation,
        "depth_multiplier": dm,
        "activation": activation,
        "input_shape": sample,
        "seed": seed,
    }
    if separable:
        layer = cls(filters, 3 if rank == 1 else (3, 2), **kwargs)
    else:
        layer = cls(3 if rank == 1 else (3, 2), **kwargs)
    return Sequential([layer], seed=seed)


def _sample(rank):
    return (11, 3) if rank == 1 else (7, 8, 3)


def _tuple(v, rank):
    return (v,) * rank


@pytest.mark.parametrize("name", list(CLASSES))
@pytest.mark.parametrize("case", CASES)
def test_forward_matches_direct_loops(name, case):
    strides, padding, dilation, dm, activation = case
    _, rank, separable = CLASSES[name]
    rng = np.random.default_rng(0)
    model = _make(name, strides, padding, dilation, dm, activation, _sample(rank))
    weights = [rng.standard_normal(w.shape).astype(np.float32) for w in model.get_weights()]
    model.set_weights(weights)
    x = rng.standard_normal((2, *_sample(rank))).astype(np.float32)
    got = model.predict(x)
    want = _ref_layer(
        x, weights, separable, _tuple(strides, rank), padding, _tuple(dilation, rank), activation
    )
    assert got.shape == want.shape
    # f32 sums of <= 6 taps then <= 9 pointwise terms: k·eps·Σ|terms| ≲ 15 · 1.2e-7 · 40 ≈ 7e-5.
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4)


def _keras_len(n, k, s, d, padding):
    span = d * (k - 1) + 1
    return (n - span) // s + 1 if padding == "valid" else -(-n // s)


@pytest.mark.parametrize("name", list(CLASSES))
@pytest.mark.parametrize(
    "n,strides,padding,dilation",
    [
        (10, 1, "valid", 1),
        (10, 2, "valid", 1),
        (10, 3, "same", 1),
        (9, 2, "same", 1),
        (10, 1, "same", 3),
        (10, 1, "valid", 4),
        (3, 1, "same", 1),
    ],
)
def test_output_shapes_follow_keras_rules(name, n, strides, padding, dilation):
    _, rank, separable = CLASSES[name]
    sample = (n, 2) if rank == 1 else (n, n + 1, 2)
    if padding == "valid" and n < dilation * 2 + 1:
        pytest.skip("no full window")
    model = _make(name, strides, padding, dilation, 2, None, sample, filters=5)
    out = model.predict(np.zeros((1, *sample), np.float32))
    ks = (3,) if rank == 1 else (3, 2)
    lens = tuple(_keras_len(sample[a], ks[a], strides, dilation, padding) for a in range(rank))
    assert out.shape == (1, *lens, 5 if separable else 4)


@pytest.mark.parametrize("name", list(CLASSES))
def test_gradients_match_finite_differences(name):
    """One SGD step on MSE moves each weight by -lr·dL/dw; compared with central differences
    of the loss (linear layer, quadratic loss: the difference quotient is exact up to f32
    rounding of the outputs, ~1e-7 / h)."""
    _, rank, _ = CLASSES[name]
    sample = (6, 2) if rank == 1 else (5, 4, 2)
    model = _make(name, 1, "same", 1, 2, None, sample, filters=2)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, *sample)).astype(np.float32)
    t = rng.standard_normal(model.predict(x).shape).astype(np.float32)
    w0 = [w.copy() for w in model.get_weights()]
    lr = 0.1
    model.compile(optimizer=optimizers.SGD(lr), loss="mse")
    model.fit(x, t, batch_size=2, epochs=1, shuffle=False, verbose=0)
    w1 = model.get_weights()

    def loss(ws):
        model.set_weights(ws)
        y = model.predict(x).astype(np.float64)
        return np.mean((y - t) ** 2)

    h = 1e-2
    for k, w in enumerate(w0):
        analytic = (w - w1[k]) / lr
        for idx in np.ndindex(*w.shape):
            plus = [v.copy() for v in w0]
            minus = [v.copy() for v in w0]
            plus[k][idx] += h
            minus[k][idx] -= h
            numeric = (loss(plus) - loss(minus)) / (2 * h)
            assert abs(analytic[idx] - numeric) < 2e-4, (name, k, idx)


@pytest.mark.parametrize(
    "make,match",
    [
        (lambda: layers.DepthwiseConv2D(0), "DepthwiseConv2D: kernel_size"),
        (lambda: layers.SeparableConv1D(0, 3), "SeparableConv1D: filters"),
        (lambda: layers.DepthwiseConv1D(3, padding="causal"), "DepthwiseConv1D: padding"),
        (lambda: layers.SeparableConv2D(2, 3, strides=2, dilation_rate=2), "SeparableConv2D"),
        (lambda: layers.DepthwiseConv1D(3, depth_multiplier=0), "depth_multiplier"),
    ],
)
def test_bad_arguments_are_value_errors_naming_the_layer(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_input_smaller_than_the_kernel_is_a_value_error_naming_layer_and_shapes():
    with pytest.raises(ValueError, match=r"DepthwiseConv2D.*\(5, 5\).*\(3, 3\)"):
        model = Sequential([layers.DepthwiseConv2D((5, 5), input_shape=(3, 3, 2))])
        model.predict(np.zeros((1, 3, 3, 2), np.float32))
    # a rank-3 sample for a 1-D layer
    with pytest.raises(ValueError, match="SeparableConv1D"):
        model = Sequential([layers.SeparableConv1D(2, 3, input_shape=(5, 5, 2))])
        model.predict(np.zeros((1, 5, 5, 2), np.float32))


@pytest.mark.parametrize("name", list(CLASSES))
def test_save_load_round_trip(name, tmp_path):
    _, rank, _ = CLASSES[name]
    model = _make(name, 1, "same", 1, 2, "relu", _sample(rank), seed=5)
    x = np.random.default_rng(2).standard_normal((3, *_sample(rank))).astype(np.float32)
    path = tmp_path / "model.safetensors"
    model.save(path)
    same = Sequential.load(path)
    assert np.array_equal(same.predict(x), model.predict(x))
    assert same.layers[0].get_config() == model.layers[0].get_config()


def test_configs_round_trip_through_serialize():
    layer = layers.SeparableConv2D(
        3,
        (3, 1),
        strides=(2, 1),
        padding="same",
        depth_multiplier=2,
        activation="relu",
        use_bias=False,
        seed=4,
    )
    again = layers.deserialize(layers.serialize(layer))
    assert again.get_config() == layer.get_config()
    assert again.kernel_size == (3, 1) and again.strides == (2, 1)


@pytest.mark.parametrize("name", list(CLASSES))
@pytest.mark.parametrize("case", CASES[:3])
def test_keras_gives_the_same_outputs_for_the_same_weights(name, case):
    os.environ.setdefault("KERAS_BACKEND", "jax")
    keras = pytest.importorskip("keras")
    strides, padding, dilation, dm, activation = case
    if strides > 1 and dilation > 1:
        pytest.skip("Keras refuses the combination")
    _, rank, separable = CLASSES[name]
    model = _make(name, strides, padding, dilation, dm, activation, _sample(rank))
    rng = np.random.default_rng(7)
    weights = [rng.standard_normal(w.shape).astype(np.float32) for w in model.get_weights()]
    model.set_weights(weights)
    kcls = getattr(keras.layers, name)
    ks = 3 if rank == 1 else (3, 2)
    kwargs = {
        "strides": strides,
        "padding": padding,
        "dilation_rate": dilation,
        "depth_multiplier": dm,
        "activation": activation,
    }
    klayer = kcls(4, ks, **kwargs) if separable else kcls(ks, **kwargs)
    kmodel = keras.Sequential([keras.Input(_sample(rank)), klayer])
    klayer.set_weights(weights)
    x = rng.standard_normal((2, *_sample(rank))).astype(np.float32)
    np.testing.assert_allclose(model.predict(x), np.asarray(kmodel(x)), rtol=0, atol=1e-4)
