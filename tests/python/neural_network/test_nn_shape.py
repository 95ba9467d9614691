"""Border (ZeroPadding/Cropping 1D/2D/3D) and upsampling (UpSampling1D/2D/3D) layers: values
against direct NumPy loops, Keras (JAX backend) as an oracle for values and output shapes,
input gradients against finite differences, bad input, and a save/load round trip."""

import itertools
import math
import os

import numpy as np
import pytest

from rustyml.neural_network import Sequential, layers, optimizers

MODES = ["nearest", "bilinear", "bicubic", "lanczos3", "lanczos5"]


def _x(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _predict(layer, x):
    model = Sequential([layer], seed=0)
    return model.predict(x)


# --- NumPy references (direct loops) ------------------------------------------------------


def _pad_ref(x, pairs):
    out_shape = (
        [x.shape[0]] + [n + b + a for n, (b, a) in zip(x.shape[1:-1], pairs)] + [x.shape[-1]]
    )
    out = np.zeros(out_shape, np.float32)
    for idx in itertools.product(*(range(n) for n in x.shape)):
        shifted = (idx[0],) + tuple(i + b for i, (b, _) in zip(idx[1:-1], pairs)) + (idx[-1],)
        out[shifted] = x[idx]
    return out


def _crop_ref(x, pairs):
    out_shape = (
        [x.shape[0]] + [n - b - a for n, (b, a) in zip(x.shape[1:-1], pairs)] + [x.shape[-1]]
    )
    out = np.zeros(out_shape, np.float32)
    for idx in itertools.product(*(range(n) for n in out_shape)):
        src = (idx[0],) + tuple(i + b for i, (b, _) in zip(idx[1:-1], pairs)) + (idx[-1],)
        out[idx] = x[src]
    return out


def _kernel(mode, d):
    def sinc(t):
        return 1.0 if t == 0 else math.sin(math.pi * t) / (math.pi * t)

    if mode == "bilinear":
        return max(0.0, 1.0 - d)
    if mode == "bicubic":  # Keys, a = -0.5
        a = -0.5
        if d <= 1:
            return (a + 2) * d**3 - (a + 3) * d**2 + 1
        if d < 2:
            return a * d**3 - 5 * a * d**2 + 8 * a * d - 4 * a
        return 0.0
    r = 3 if mode == "lanczos3" else 5
    return sinc(d) * sinc(d / r) if d < r else 0.0


def _weights(mode, n, f):
    """Matrix (n*f, n): half-pixel centres, in-range taps renormalised to sum to 1."""
    w = np.zeros((n * f, n))
    for o in range(n * f):
        if mode == "nearest" or f == 1:
            w[o, o // f] = 1.0
            continue
        s = (o + 0.5) / f - 0.5
        row = np.array([_kernel(mode, abs(s - i)) for i in range(n)])
        w[o] = row / row.sum()
    return w


def _upsample_ref(x, factors, mode):
    out = x.astype(np.float64)
    for k, f in enumerate(factors):
        w = _weights(mode, out.shape[k + 1], f)
        out = np.moveaxis(np.tensordot(w, np.moveaxis(out, k + 1, 0), axes=1), 0, k + 1)
    return out


# --- forward values against NumPy ---------------------------------------------------------

BORDER_CASES = [
    (layers.ZeroPadding1D, (2, 1), [(2, 1)], (2, 4, 3), _pad_ref),
    (layers.ZeroPadding1D, 3, [(3, 3)], (1, 2, 2), _pad_ref),
    (layers.ZeroPadding2D, ((1, 2), (0, 1)), [(1, 2), (0, 1)], (2, 3, 4, 2), _pad_ref),
    (layers.ZeroPadding2D, (1, 2), [(1, 1), (2, 2)], (1, 3, 2, 1), _pad_ref),
    (
        layers.ZeroPadding3D,
        ((1, 0), (0, 2), (1, 1)),
        [(1, 0), (0, 2), (1, 1)],
        (1, 2, 3, 2, 2),
        _pad_ref,
    ),
    (layers.Cropping1D, (1, 2), [(1, 2)], (2, 6, 3), _crop_ref),
    (layers.Cropping2D, ((2, 1), (0, 1)), [(2, 1), (0, 1)], (2, 5, 4, 2), _crop_ref),
    (layers.Cropping2D, (1, 1), [(1, 1), (1, 1)], (1, 4, 5, 1), _crop_ref),
    (
        layers.Cropping3D,
        ((1, 0), (0, 1), (1, 1)),
        [(1, 0), (0, 1), (1, 1)],
        (1, 3, 3, 4, 2),
        _crop_ref,
    ),
]


@pytest.mark.parametrize(("cls", "arg", "pairs", "shape", "ref"), BORDER_CASES)
def test_border_layers_match_numpy(cls, arg, pairs, shape, ref):
    x = _x(shape)
    out = _predict(cls(arg), x)
    np.testing.assert_array_equal(out, ref(x, pairs))  # pure copies: exact


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("shape", "size"), [((2, 3, 4, 2), (2, 3)), ((1, 12, 2, 1), (2, 1)), ((1, 1, 1, 3), (3, 2))]
)
def test_up_sampling_2d_matches_numpy(mode, shape, size):
    x = _x(shape, 1)
    out = _predict(layers.UpSampling2D(size=size, interpolation=mode), x)
    # <= 11x11-term f32 sums of |x| < 5 with weights of total magnitude < 1.5: error << 1e-5.
    np.testing.assert_allclose(out, _upsample_ref(x, size, mode), rtol=0, atol=1e-5)


def test_up_sampling_1d_and_3d_repeat_exactly():
    x = _x((2, 3, 2))
    np.testing.assert_array_equal(_predict(layers.UpSampling1D(size=3), x), np.repeat(x, 3, axis=1))
    x = _x((1, 2, 3, 2, 2))
    want = np.repeat(np.repeat(x, 2, axis=1), 3, axis=3)
    np.testing.assert_array_equal(_predict(layers.UpSampling3D(size=(2, 1, 3)), x), want)


# --- Keras as an oracle -------------------------------------------------------------------

os.environ.setdefault("KERAS_BACKEND", "jax")


def _keras():
    return pytest.importorskip("keras")


@pytest.mark.parametrize(("cls", "arg", "pairs", "shape", "ref"), BORDER_CASES)
def test_border_layers_match_keras(cls, arg, pairs, shape, ref):
    keras = _keras()
    kcls = getattr(keras.layers, cls.__name__)
    kwargs = {"padding" if "Padding" in cls.__name__ else "cropping": arg}
    klayer = kcls(**kwargs)
    x = _x(shape, 2)
    want = np.asarray(klayer(x))
    assert tuple(klayer.compute_output_shape((None, *shape[1:]))) == (None, *want.shape[1:])
    np.testing.assert_array_equal(_predict(cls(arg), x), want)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("shape", "size"), [((2, 3, 4, 2), (2, 3)), ((1, 5, 6, 1), (3, 2)), ((1, 12, 3, 2), (2, 1))]
)
def test_up_sampling_2d_matches_keras(mode, shape, size):
    keras = _keras()
    x = _x(shape, 3)
    klayer = keras.layers.UpSampling2D(size=size, interpolation=mode)
    want = np.asarray(klayer(x))
    out = _predict(layers.UpSampling2D(size=size, interpolation=mode), x)
    assert out.shape == want.shape
    # Same definition, different summation order (JAX contracts a weight matrix in f32):
    # differences are f32 rounding of <= 11-term sums per pass.
    np.testing.assert_allclose(out, want, rtol=0, atol=2e-5)


def test_up_sampling_1d_3d_match_keras():
    keras = _keras()
    x = _x((2, 3, 4), 4)
    np.testing.assert_array_equal(
        _predict(layers.UpSampling1D(3), x), np.asarray(keras.layers.UpSampling1D(3)(x))
    )
    x = _x((1, 2, 3, 2, 2), 5)
    k = keras.layers.UpSampling3D(size=(2, 1, 3))
    np.testing.assert_array_equal(_predict(layers.UpSampling3D((2, 1, 3)), x), np.asarray(k(x)))


# --- gradients by finite differences ------------------------------------------------------


def _input_gradient_check(layer, shape):
    """A PReLU on an all-negative input multiplies it by alpha, so dL/dalpha = x * dL/dx of
    the layer under test; one SGD step reads dL/dalpha off the alpha update."""
    x = -np.abs(_x(shape, 6)) - 0.5
    model = Sequential([layers.PReLU(alpha_initializer=0.5, input_shape=shape[1:]), layer], seed=0)
    model.build()
    alpha = (np.random.default_rng(7).random(shape[1:]) + 0.5).astype(np.float32)
    model.set_weights([alpha])
    y = _x((shape[0], *model.predict(x).shape[1:]), 8)

    def loss(a):
        model.set_weights([a.astype(np.float32)])
        d = model.predict(x).astype(np.float64) - y
        return np.mean(d * d)

    lr = 1.0
    model.set_weights([alpha])
    model.compile(optimizer=optimizers.SGD(learning_rate=lr), loss="mse")
    model.fit(x, y, batch_size=shape[0], epochs=1, shuffle=False, verbose=0)
    analytic = (alpha.astype(np.float64) - model.get_weights()[0]) / lr
    eps = 1e-2
    numeric = np.zeros_like(analytic)
    for idx in np.ndindex(alpha.shape):
        a = alpha.astype(np.float64)
        a[idx] += eps
        up = loss(a)
        a[idx] -= 2 * eps
        numeric[idx] = (up - loss(a)) / (2 * eps)
    # The loss is quadratic in alpha, so central differences are exact up to the f32
    # rounding of the predictions (~1e-7 relative of loss values ~1, divided by 2 eps).
    np.testing.assert_allclose(analytic, numeric, rtol=0, atol=2e-4)


@pytest.mark.parametrize(
    ("layer", "shape"),
    [
        (layers.ZeroPadding2D(((1, 2), (0, 1))), (2, 3, 2, 2)),
        (layers.Cropping1D((1, 2)), (2, 6, 2)),
        (layers.Cropping3D(((1, 0), (0, 1), (1, 1))), (1, 3, 2, 3, 1)),
        (layers.UpSampling1D(3), (2, 3, 2)),
        (layers.UpSampling3D((2, 1, 2)), (1, 2, 2, 2, 1)),
    ]
    + [(layers.UpSampling2D((2, 3), interpolation=m), (1, 3, 4, 1)) for m in MODES],
)
def test_input_gradients_match_finite_differences(layer, shape):
    _input_gradient_check(layer, shape)


# --- bad input, config round trip, persistence -------------------------------------------


@pytest.mark.parametrize(
    ("layer", "input_shape", "match"),
    [
        (layers.ZeroPadding2D(1), (5, 3), r"ZeroPadding2D.*4D input.*\[1, 5, 3\]"),
        (layers.Cropping1D((2, 3)), (5, 2), r"Cropping1D.*\(2, 3\).*5"),
        (layers.Cropping2D(((0, 0), (2, 2))), (4, 4, 1), r"Cropping2D.*\(2, 2\).*4"),
        (layers.UpSampling2D(2), (4, 4), r"UpSampling2D.*4D input.*\[1, 4, 4\]"),
        (layers.UpSampling3D(2), (4, 4, 4), r"UpSampling3D.*5D input"),
    ],
)
def test_bad_input_is_a_value_error_naming_the_layer_and_shapes(layer, input_shape, match):
    model = Sequential([layer], seed=0)
    with pytest.raises(ValueError, match=match):
        model.build(input_shape)


def test_bad_arguments_are_value_errors():
    with pytest.raises(ValueError, match="UpSampling2D"):
        layers.UpSampling2D(2, interpolation="area")
    with pytest.raises(ValueError, match="UpSampling1D"):
        layers.UpSampling1D(0)
    with pytest.raises(ValueError, match="ZeroPadding3D"):
        layers.ZeroPadding3D((1, 2))
    with pytest.raises(ValueError, match="Cropping2D"):
        layers.Cropping2D(-1)


def test_configs_round_trip_and_save_load_predicts_identically(tmp_path):
    model = Sequential(
        [
            layers.ZeroPadding2D(((1, 0), (2, 1)), input_shape=(4, 3, 2)),
            layers.UpSampling2D((2, 1), interpolation="lanczos3"),
            layers.Cropping2D(((1, 2), (0, 1))),
            layers.Flatten(),
            layers.Dense(3),
        ],
        seed=3,
    )
    model.compile(optimizer="sgd", loss="mse")
    x = _x((5, 4, 3, 2), 9)
    model.fit(x, _x((5, 3), 10), epochs=2, verbose=0)
    before = model.predict(x)
    path = tmp_path / "shape.safetensors"
    model.save(path)
    same = Sequential.load(path)
    np.testing.assert_array_equal(same.predict(x), before)
    for layer in model.layers:
        clone = layers.deserialize(layers.serialize(layer))
        assert clone.get_config() == layer.get_config()
