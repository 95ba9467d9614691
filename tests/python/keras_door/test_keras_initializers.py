"""keras.initializers against Keras 3 (JAX backend).

Deterministic initializers (Zeros, Ones, Constant, Identity, and the forget-gate ones of an
LSTM bias) must equal Keras's arrays exactly, also inside layers. The random streams cannot
match JAX's, so random initializers are checked by their distribution: the fans (Keras's own
``compute_fans``), bounds (uniform limits, the truncation at two standard deviations), and
the sample mean and variance against Keras's formulas. Statistical tolerance: for N iid draws
of variance s^2 and kurtosis k, the sample variance has standard error s^2 sqrt((k - 1) / N)
and the mean s / sqrt(N); we allow 6 standard errors (k <= 3 for every distribution here: 3
normal, ~2.4 truncated at 2 sigma, 1.8 uniform), a false-failure chance below 1e-8. Keras's
own draws are checked against the same bounds, which ties the expected values to Keras.
"""

import math
import os

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")
keras = pytest.importorskip("keras")

from rustyml.neural_network import Sequential, initializers, layers

SHAPES = [(7,), (40, 30), (3, 20, 16), (3, 3, 8, 12)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_fans_are_keras_fans(shape):
    from keras.src.initializers.random_initializers import compute_fans

    assert initializers.compute_fans(shape) == tuple(int(f) for f in compute_fans(shape))


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.Zeros(),
        lambda m: m.Ones(),
        lambda m: m.Constant(0.25),
        lambda m: m.Identity(gain=1.5),
    ],
    ids=["zeros", "ones", "constant", "identity"],
)
@pytest.mark.parametrize("shape", [(4, 6), (6, 4)], ids=str)
def test_deterministic_initializers_equal_keras(make, shape):
    got = make(initializers)(shape)
    want = np.asarray(make(keras.initializers)(shape, dtype="float32"))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)


# (name, expected variance from the fans of (fan_in, fan_out) = (300, 200), bound or None)
FAN_IN, FAN_OUT = 300, 200
RANDOM = {
    "GlorotUniform": (2.0 / (FAN_IN + FAN_OUT), math.sqrt(6.0 / (FAN_IN + FAN_OUT))),
    "GlorotNormal": (
        2.0 / (FAN_IN + FAN_OUT),
        2 * math.sqrt(2.0 / (FAN_IN + FAN_OUT)) / 0.87962566103423978,
    ),
    "HeUniform": (2.0 / FAN_IN, math.sqrt(6.0 / FAN_IN)),
    "HeNormal": (2.0 / FAN_IN, 2 * math.sqrt(2.0 / FAN_IN) / 0.87962566103423978),
    "LecunUniform": (1.0 / FAN_IN, math.sqrt(3.0 / FAN_IN)),
    "LecunNormal": (1.0 / FAN_IN, 2 * math.sqrt(1.0 / FAN_IN) / 0.87962566103423978),
    "RandomNormal": (0.05**2, None),
    "RandomUniform": (0.1**2 / 12, 0.05),
    "TruncatedNormal": (None, 0.1),
}


def _check_moments(x, variance, bound):
    x = np.asarray(x, np.float64).ravel()
    n = x.size
    if bound is not None:
        assert np.abs(x).max() <= bound * (1 + 1e-6)
    if variance is not None:
        assert abs(x.mean()) <= 6 * math.sqrt(variance / n)
        assert abs(x.var() / variance - 1) <= 6 * math.sqrt(2.0 / n)


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_random_initializers_follow_keras_distributions(name):
    variance, bound = RANDOM[name]
    ours = getattr(initializers, name)(seed=1)((FAN_IN, FAN_OUT))
    theirs = np.asarray(getattr(keras.initializers, name)(seed=1)((FAN_IN, FAN_OUT)))
    _check_moments(ours, variance, bound)
    _check_moments(theirs, variance, bound)
    # reproducible by seed, different across seeds
    again = getattr(initializers, name)(seed=1)((FAN_IN, FAN_OUT))
    np.testing.assert_array_equal(ours, again)
    assert not np.array_equal(ours, getattr(initializers, name)(seed=2)((FAN_IN, FAN_OUT)))


@pytest.mark.parametrize(
    "scale, mode, distribution",
    [
        (3.0, "fan_out", "uniform"),
        (0.5, "fan_avg", "untruncated_normal"),
        (2.0, "fan_in", "truncated_normal"),
    ],
)
def test_variance_scaling_on_a_convolution_kernel(scale, mode, distribution):
    shape = (3, 3, 16, 24)  # fan_in 144, fan_out 216
    fan = {"fan_in": 144, "fan_out": 216, "fan_avg": 180}[mode]
    bound = math.sqrt(3 * scale / fan) if distribution == "uniform" else None
    for lib in (initializers, keras.initializers):
        init = lib.VarianceScaling(scale=scale, mode=mode, distribution=distribution, seed=4)
        _check_moments(np.asarray(init(shape)), scale / fan, bound)


@pytest.mark.parametrize("shape", [(30, 12), (12, 30), (2, 5, 12)], ids=str)
def test_orthogonal_is_orthogonal_times_gain_as_in_keras(shape):
    for lib in (initializers, keras.initializers):
        q = np.asarray(lib.Orthogonal(gain=2.0, seed=0)(shape), np.float64).reshape(-1, shape[-1])
        small = q.T @ q if q.shape[0] >= q.shape[1] else q @ q.T
        np.testing.assert_allclose(small, 4.0 * np.eye(len(small)), atol=1e-5)


def test_layers_take_keras_initializer_arguments_as_keras_does():
    """Deterministic initializers through the layer arguments give Keras's weights exactly,
    including the LSTM bias's forget-gate ones."""

    def build(lib, init):
        return lib.Sequential(
            [
                lib.layers.Embedding(10, 4, embeddings_initializer=init.Constant(0.3))
                if lib is keras
                else lib.layers.Embedding(
                    10, 4, embeddings_initializer=init.Constant(0.3), input_shape=(5,)
                ),
                lib.layers.LSTM(
                    3,
                    return_sequences=True,
                    kernel_initializer="ones",
                    recurrent_initializer=init.Constant(-0.2),
                    bias_initializer=init.Constant(0.1),
                ),
                lib.layers.Conv1D(
                    2, 2, kernel_initializer=init.Constant(0.05), bias_initializer="ones"
                ),
                lib.layers.Flatten(),
                lib.layers.Dense(
                    2, kernel_initializer="zeros", bias_initializer=init.Constant(-1.0)
                ),
            ]
        )

    theirs = build(keras, keras.initializers)
    theirs.build((None, 5))
    import rustyml.keras as rk

    ours = build(rk, rk.initializers)
    ours.build()
    for got, want in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_array_equal(got, np.asarray(want))


def test_random_layer_initializers_are_seeded_and_bounded():
    def model(seed):
        return Sequential(
            [layers.Dense(50, kernel_initializer="he_uniform", input_shape=(40,)), layers.Dense(3)],
            seed=seed,
        )

    a, b, c = model(0), model(0), model(1)
    for m in (a, b, c):
        m.build()
    np.testing.assert_array_equal(a.get_weights()[0], b.get_weights()[0])
    assert not np.array_equal(a.get_weights()[0], c.get_weights()[0])
    assert np.abs(a.get_weights()[0]).max() <= math.sqrt(6.0 / 40)
    seeded = Sequential(
        [layers.Dense(5, kernel_initializer=initializers.GlorotNormal(seed=3), input_shape=(4,))]
    )
    seeded.build()
    np.testing.assert_array_equal(
        seeded.get_weights()[0], initializers.GlorotNormal(seed=3)((4, 5))
    )
    with pytest.raises(ValueError, match="unknown initializer"):
        layers.Dense(2, kernel_initializer="nope")
    with pytest.raises(TypeError):
        layers.Dropout(0.5, kernel_initializer="ones")
