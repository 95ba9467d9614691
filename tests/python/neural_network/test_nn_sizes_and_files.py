"""No layer size, weight value or model file can abort, panic or silently corrupt a network.

Sizes that no machine can hold (terabytes, or past 2**62 where ndarray's shape arithmetic
overflows) must be a ValueError naming the layer, checked before anything is allocated; weights
must be finite (and a moving variance >= 0); a saved file carries a SHA-256 digest so a flipped
byte is refused instead of loading a different network; save never replaces a special file.
Oracles: the refusals themselves (a crash would kill the test process), the model's own
predictions before a refused call or a corrupted load (bit-identical), and NumPy for values.
"""

import json
import os
import stat
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rustyml import _native
from rustyml.neural_network import MLPClassifier, Sequential, layers

# More bytes than any machine has (4e12 bytes and up): refused on every host.
HUGE = 10**9


def _build(stack, input_shape, seed=0):
    model = Sequential(stack, seed=seed)
    model.build(input_shape)
    return model


# --- 1 and 2: sizes -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stack", "input_shape", "layer_name"),
    [
        ([layers.Dense(HUGE)], (1000,), "Dense"),
        ([layers.Dense(2**62)], (4,), "Dense"),
        ([layers.Embedding(10**12, 1000)], (3,), "Embedding"),
        ([layers.LSTM(10**6)], (5, 3), "LSTM"),
        ([layers.LSTM(2**62)], (5, 3), "LSTM"),
        ([layers.GRU(10**6)], (5, 3), "GRU"),
        ([layers.SimpleRNN(2**62)], (5, 3), "SimpleRNN"),
        ([layers.Bidirectional(layers.LSTM(10**6))], (5, 3), "LSTM"),
        ([layers.UpSampling2D(10**5)], (28, 28, 1), "UpSampling2D"),
        ([layers.UpSampling1D(10**12)], (28, 1), "UpSampling1D"),
        ([layers.UpSampling3D(10**4)], (8, 8, 8, 1), "UpSampling3D"),
        ([layers.ZeroPadding2D(10**6)], (8, 8, 3), "ZeroPadding2D"),
        ([layers.ZeroPadding1D(2**62)], (8, 3), "ZeroPadding1D"),
        ([layers.ZeroPadding3D(10**5)], (4, 4, 4, 1), "ZeroPadding3D"),
        ([layers.RepeatVector(10**12)], (1000,), "RepeatVector"),
        ([layers.RepeatVector(2**62)], (4,), "RepeatVector"),
        ([layers.Conv2DTranspose(4, 3, strides=10**9)], (8, 8, 1), "Conv2DTranspose"),
        ([layers.Conv1DTranspose(4, 3, strides=2**62)], (8, 1), "Conv1DTranspose"),
        ([layers.Conv2D(HUGE, 3)], (8, 8, 1000), "Conv2D"),
        ([layers.Conv2D(4, 3, dilation_rate=2**62, padding="same")], (8, 8, 1), "Conv2D"),
        ([layers.Conv1D(4, 2**62, padding="same")], (8, 1), "Conv1D"),
        ([layers.DepthwiseConv2D(3, depth_multiplier=10**12)], (8, 8, 3), "DepthwiseConv2D"),
        ([layers.SeparableConv2D(10**12, 3)], (8, 8, 3), "SeparableConv2D"),
    ],
)
def test_sizes_no_machine_can_hold_are_a_value_error_naming_the_layer(
    stack, input_shape, layer_name
):
    with pytest.raises(ValueError, match=layer_name):
        _build(stack, input_shape)


def test_size_error_names_the_bytes():
    with pytest.raises(ValueError, match=r"4000000000000 bytes"):
        _build([layers.Dense(HUGE)], (1000,))


def test_input_shape_no_machine_can_hold_is_a_value_error():
    with pytest.raises(ValueError, match="bytes"):
        _build([layers.Dense(2)], (10**12, 10**6))


def test_a_failed_build_leaves_the_model_buildable():
    model = Sequential([layers.Dense(HUGE)], seed=0)
    with pytest.raises(ValueError):
        model.build((1000,))
    assert model._native is None


def test_mlp_with_a_hidden_layer_no_machine_can_hold():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 1000))
    y = np.arange(20) % 2
    with pytest.raises(ValueError, match="Dense"):
        MLPClassifier(hidden_layer_sizes=(HUGE,), max_iter=1).fit(X, y)


def test_fit_at_a_batch_too_large_suggests_a_smaller_batch_size():
    model = Sequential([layers.UpSampling2D(500), layers.Flatten(), layers.Dense(1)], seed=0)
    model.compile(optimizer="sgd", loss="mse")
    n = 20000  # 20000 samples of 8x8 floats: 5 MB of input, but 1.3 TB of activations
    x = np.zeros((n, 8, 8, 1), np.float32)
    y = np.zeros((n, 1), np.float32)
    model.build((8, 8, 1))
    weights = [w.copy() for w in model.get_weights()]
    with pytest.raises(ValueError, match=r"batch_size") as info:
        model.fit(x, y, batch_size=n, epochs=1, verbose=0)
    assert "UpSampling2D" in str(info.value) and "bytes" in str(info.value)
    for a, b in zip(weights, model.get_weights()):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("value", [-1, 0, 2**64, 2**70, -(2**70)])
def test_out_of_range_int_arguments_are_value_errors(value):
    for make in (
        lambda: layers.Dense(value),
        lambda: layers.Embedding(value, 3),
        lambda: layers.RepeatVector(value),
        lambda: layers.UpSampling2D(value),
        lambda: layers.Conv2D(2, value),
        lambda: layers.Conv2D(2, 3, strides=value),
        lambda: layers.LSTM(value),
    ):
        with pytest.raises(ValueError):
            make()
    with pytest.raises(ValueError):
        layers.ZeroPadding2D(value if value < 0 else 2**64)
    with pytest.raises(ValueError):
        layers.Dense(3, seed=value if value < 0 else 2**64)


def test_overflowing_float_arguments_are_value_errors():
    with pytest.raises(ValueError):
        layers.Dense(3, input_shape=(float("inf"),))
    with pytest.raises(ValueError):
        layers.Dropout(10**400)


# --- 3: set_weights ------------------------------------------------------------------------


def _bn_model():
    model = Sequential(
        [layers.Dense(4, input_shape=(3,)), layers.BatchNormalization(), layers.Dense(2)], seed=1
    )
    model.build()
    return model


def _x():
    return np.random.default_rng(3).normal(size=(5, 3)).astype(np.float32)


@pytest.mark.parametrize(
    ("index", "value", "match"),
    [
        (0, np.nan, r"layer 0 \(Dense\).*NaN"),
        (0, np.inf, r"layer 0 \(Dense\).*inf"),
        (1, -np.inf, r"layer 0 \(Dense\).*inf"),
        (0, 1e39, r"layer 0 \(Dense\).*float32"),
        (5, -0.5, r"layer 1 \(BatchNormalization\).*variance"),
        (4, np.nan, r"layer 1 \(BatchNormalization\)"),
        (6, np.nan, r"layer 2 \(Dense\)"),
    ],
)
def test_set_weights_refuses_bad_values_and_leaves_the_model_unchanged(index, value, match):
    model = _bn_model()
    before = model.predict(_x())
    weights = [np.asarray(w, dtype=np.float64) for w in model.get_weights()]
    weights[index].flat[0] = value
    with pytest.raises(ValueError, match=match):
        model.set_weights(weights)
    np.testing.assert_array_equal(model.predict(_x()), before)


def test_set_weights_refuses_complex_arrays():
    model = _bn_model()
    before = model.predict(_x())
    weights = [np.asarray(w, dtype=np.complex64) for w in model.get_weights()]
    with pytest.raises(ValueError, match="complex"):
        model.set_weights(weights)
    np.testing.assert_array_equal(model.predict(_x()), before)


def test_set_weights_accepts_float64_within_range_and_zero_variance():
    model = _bn_model()
    weights = [np.asarray(w, dtype=np.float64) for w in model.get_weights()]
    weights[5][:] = 0.0
    weights[0].flat[0] = 3.0e38
    model.set_weights(weights)
    assert model.get_weights()[0].flat[0] == np.float32(3.0e38)


def test_load_refuses_a_negative_moving_variance(tmp_path):
    # A file holding a negative variance (one sign bit) with a valid digest: still refused.
    model = _bn_model()
    weights = model.get_weights()
    weights[5] = weights[5].copy()
    weights[5][0] = -1.0
    meta = {
        "format": "rustyml.Sequential/1",
        "config": json.dumps(model.get_config()),
    }
    path = tmp_path / "neg.safetensors"
    _native.neural_network.save_safetensors(str(path), meta, weights)
    with pytest.raises(ValueError, match="variance"):
        Sequential.load(path)


# --- 4: fused activations keep NaN ----------------------------------------------------------


@pytest.mark.parametrize(
    ("fused", "unfused"),
    [
        ("relu", layers.ReLU()),
        ("leaky_relu", layers.LeakyReLU(0.2)),
        ("elu", layers.ELU(1.0)),
        ("sigmoid", layers.Sigmoid()),
        ("tanh", layers.Tanh()),
    ],
)
def test_fused_activation_propagates_nan_like_the_separate_layer(fused, unfused):
    model_f = Sequential([layers.Dense(7, activation=fused, input_shape=(5,))], seed=2)
    model_u = Sequential([layers.Dense(7, input_shape=(5,)), unfused], seed=2)
    model_f.build()
    model_u.build()
    model_u.set_weights(model_f.get_weights())
    # predict refuses non-finite input, so the native model is fed directly: a NaN feature
    # makes every pre-activation of its sample NaN
    x = np.ones((4, 5), np.float32)
    x[1:3, 1] = np.nan
    pf = model_f._native.predict(x, 4)
    pu = model_u._native.predict(x, 4)
    assert np.isnan(pf[1:3]).all() and np.isfinite(pf[[0, 3]]).all()
    np.testing.assert_array_equal(pf.view(np.uint32), pu.view(np.uint32))


# --- 5: predict warns when finite input gives non-finite output ------------------------------


def test_predict_warns_naming_the_layer_where_output_became_non_finite():
    model = Sequential(
        [layers.Dense(3, input_shape=(2,), name="first"), layers.Dense(1, name="second")], seed=0
    )
    model.build()
    w = model.get_weights()
    w[2] = np.full_like(w[2], 3.0e38)  # second kernel at the float32 limit
    model.set_weights(w)
    x = np.full((4, 2), 100.0, np.float32)
    first = model.get_weights()
    hidden = x @ first[0] + first[1]
    assert np.isfinite(hidden).all()
    with pytest.warns(RuntimeWarning, match=r"layer 1 \(second\)"):
        out = model.predict(x)
    assert not np.isfinite(out).all()


def test_predict_on_finite_output_does_not_warn():
    model = _bn_model()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.predict(_x())


# --- 6: save targets ---------------------------------------------------------------------


def _small():
    model = Sequential(
        [layers.Dense(3, activation="relu", input_shape=(4,)), layers.Dense(2)], seed=4
    )
    model.build()
    return model


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_save_refuses_a_fifo_and_leaves_it(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="not a regular file"):
        _small().save(fifo)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_save_refuses_a_character_device():
    if not os.path.exists("/dev/null"):
        pytest.skip("no /dev/null")
    with pytest.raises(ValueError, match="not a regular file"):
        _small().save("/dev/null")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_save_refuses_a_directory(tmp_path):
    with pytest.raises(ValueError, match="directory"):
        _small().save(tmp_path)


def test_save_through_a_symlink_writes_the_target_and_keeps_the_link(tmp_path):
    target = tmp_path / "real.safetensors"
    target.write_bytes(b"old")
    link = tmp_path / "link.safetensors"
    link.symlink_to(target.name)
    model = _small()
    model.save(link)
    assert link.is_symlink()
    assert os.readlink(link) == target.name
    assert target.stat().st_size > 100
    x = np.random.default_rng(0).normal(size=(6, 4)).astype(np.float32)
    np.testing.assert_array_equal(Sequential.load(link).predict(x), model.predict(x))
    np.testing.assert_array_equal(Sequential.load(target).predict(x), model.predict(x))


def test_save_to_a_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link"
    link.symlink_to("made.safetensors")
    _small().save(link)
    assert (tmp_path / "made.safetensors").is_file() and link.is_symlink()


def test_a_failed_save_leaves_the_old_file_whole_and_no_temporary(tmp_path):
    path = tmp_path / "m.safetensors"
    model = _small()
    model.save(path)
    old = path.read_bytes()
    os.chmod(tmp_path, 0o500)  # the directory refuses the temporary file
    try:
        if os.access(tmp_path, os.W_OK):
            pytest.skip("running as a user who can write anyway")
        with pytest.raises(OSError):
            model.save(path)
    finally:
        os.chmod(tmp_path, 0o700)
    assert path.read_bytes() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.safetensors"]


def test_save_replaces_a_regular_file_atomically_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "m.safetensors"
    path.write_bytes(b"junk")
    _small().save(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.safetensors"]
    Sequential.load(path)


# --- 7: files that lie -------------------------------------------------------------------


def test_every_single_byte_flip_is_refused_or_harmless(tmp_path):
    model = Sequential(
        [
            layers.Dense(3, activation="relu", input_shape=(4,)),
            layers.BatchNormalization(),
            layers.Dense(2),
        ],
        seed=5,
    )
    model.compile(optimizer="adam", loss="mse")
    path = tmp_path / "m.safetensors"
    model.save(path)
    x = np.random.default_rng(1).normal(size=(8, 4)).astype(np.float32)
    want = model.predict(x).view(np.uint32)
    data = bytearray(path.read_bytes())
    rng = np.random.default_rng(7)
    positions = sorted(set(rng.integers(0, len(data), size=3000).tolist()) | {0, len(data) - 1})
    bad = tmp_path / "bad.safetensors"
    loaded = 0
    for pos in positions:
        flipped = bytearray(data)
        flipped[pos] ^= 1 << int(rng.integers(0, 8))
        bad.write_bytes(bytes(flipped))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                got = Sequential.load(bad)
        except ValueError:
            continue
        loaded += 1
        np.testing.assert_array_equal(got.predict(x).view(np.uint32), want, err_msg=f"byte {pos}")
    assert loaded < len(positions)


def test_saved_file_carries_a_digest_and_stays_a_plain_safetensors_file(tmp_path):
    path = tmp_path / "m.safetensors"
    _small().save(path)
    raw = path.read_bytes()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8 : 8 + n])
    meta = header["__metadata__"]
    assert all(isinstance(v, str) for v in meta.values())
    assert len(meta["rustyml.sha256"]) == 64


def test_a_file_without_digest_loads_with_a_warning(tmp_path):
    model = _small()
    meta = {"format": "rustyml.Sequential/1", "config": json.dumps(model.get_config())}
    path = tmp_path / "old.safetensors"
    _native.neural_network.save_safetensors(str(path), meta, model.get_weights())
    # rewrite without the digest key, as files from before the digest were
    raw = path.read_bytes()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8 : 8 + n])
    del header["__metadata__"]["rustyml.sha256"]
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    path.write_bytes(len(text).to_bytes(8, "little") + text + raw[8 + n :])
    with pytest.warns(UserWarning, match="cannot be verified"):
        loaded = Sequential.load(path)
    x = np.random.default_rng(2).normal(size=(3, 4)).astype(np.float32)
    np.testing.assert_array_equal(loaded.predict(x), model.predict(x))


def test_a_mismatching_digest_is_a_value_error(tmp_path):
    model = _small()
    path = tmp_path / "m.safetensors"
    model.save(path)
    raw = bytearray(path.read_bytes())
    raw[-1] ^= 0x01  # last byte of the last tensor
    path.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="digest"):
        Sequential.load(path)


def _crafted(tmp_path, config, weights=()):
    meta = {"format": "rustyml.Sequential/1", "config": config}
    path = tmp_path / "crafted.safetensors"
    _native.neural_network.save_safetensors(
        str(path), meta, [np.asarray(w, np.float32) for w in weights]
    )
    return path


@pytest.mark.parametrize(
    "config",
    [
        {"layers": [7]},
        {"layers": 7},
        [1, 2],
        {"layers": [{"class_name": "Dense", "config": 5}]},
        {"layers": [{"class_name": "Dense", "config": {"units": 4, "bogus": 1}}]},
        {"layers": [{"class_name": "Nope", "config": {}}]},
        {
            "layers": [{"class_name": "Dense", "config": {"units": HUGE}}],
            "input_shape": [1000],
        },
        {"layers": [{"class_name": "Dense", "config": {"units": 2**64}}], "input_shape": [3]},
        {"layers": [{"class_name": "Dense", "config": {"units": 4}}], "input_shape": [2**70]},
    ],
)
def test_crafted_architectures_are_value_errors(tmp_path, config):
    with pytest.raises(ValueError):
        Sequential.from_config(config).build()
    with pytest.raises(ValueError):
        Sequential.load(_crafted(tmp_path, json.dumps(config)))


def test_deeply_nested_architecture_is_a_value_error(tmp_path):
    deep = "[" * 100000 + "]" * 100000
    with pytest.raises(ValueError):
        Sequential.load(_crafted(tmp_path, deep))
    nested = current = []
    for _ in range(100000):
        current.append([])
        current = current[0]
    config = {"layers": [{"class_name": "Dense", "config": {"units": 2, "name": nested}}]}
    with pytest.raises(ValueError):
        Sequential.from_config(config)


def test_a_file_with_huge_units_is_a_value_error(tmp_path):
    config = {
        "name": "s",
        "seed": 0,
        "input_shape": [1000],
        "layers": [{"class_name": "Dense", "config": {"units": HUGE}}],
    }
    with pytest.raises(ValueError, match="Dense"):
        Sequential.load(_crafted(tmp_path, json.dumps(config)))


# --- 8: property-based: any argument value gives a layer or a ValueError/TypeError ----------

# Integers come in the two classes the property is about: small sizes, which must build and
# run, and sizes from 2**40 up, which need terabytes (or overflow) and must be refused on any
# host. Sizes in between are valid but need gigabytes or hours (a GRU of 10**4 units): whether
# they fit depends on the machine, so they are left to the deterministic tests above.
_ints = st.one_of(
    st.integers(min_value=-(2**70), max_value=64),
    st.integers(min_value=2**40, max_value=2**70),
)
_values = st.one_of(
    st.none(),
    st.booleans(),
    _ints,
    st.sampled_from([-1, 0, 1, 2**62, 2**63, 2**64 - 1, 2**64, 10**12]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.tuples(_ints, _ints),
)

# (constructor taking the fuzzed value, a per-sample input shape it can be built on)
_LAYERS = {
    "Dense": (lambda v: layers.Dense(v), (6,)),
    "Embedding.in": (lambda v: layers.Embedding(v, 4), (5,)),
    "Embedding.out": (lambda v: layers.Embedding(10, v), (5,)),
    "RepeatVector": (lambda v: layers.RepeatVector(v), (6,)),
    "Reshape": (lambda v: layers.Reshape((v, -1)), (6,)),
    "UpSampling1D": (lambda v: layers.UpSampling1D(v), (6, 2)),
    "UpSampling2D": (lambda v: layers.UpSampling2D(v), (6, 6, 2)),
    "UpSampling3D": (lambda v: layers.UpSampling3D(v), (3, 3, 3, 1)),
    "ZeroPadding1D": (lambda v: layers.ZeroPadding1D(v), (6, 2)),
    "ZeroPadding2D": (lambda v: layers.ZeroPadding2D(v), (6, 6, 2)),
    "ZeroPadding3D": (lambda v: layers.ZeroPadding3D(v), (3, 3, 3, 1)),
    "Cropping2D": (lambda v: layers.Cropping2D(v), (6, 6, 2)),
    "Conv1D.filters": (lambda v: layers.Conv1D(v, 3), (8, 2)),
    "Conv2D.kernel": (lambda v: layers.Conv2D(2, v, padding="same"), (8, 8, 2)),
    "Conv2D.strides": (lambda v: layers.Conv2D(2, 3, strides=v), (8, 8, 2)),
    "Conv2D.dilation": (lambda v: layers.Conv2D(2, 3, dilation_rate=v, padding="same"), (8, 8, 2)),
    "Conv2DTranspose.strides": (lambda v: layers.Conv2DTranspose(2, 3, strides=v), (8, 8, 2)),
    "Conv3DTranspose.kernel": (lambda v: layers.Conv3DTranspose(1, v), (3, 3, 3, 1)),
    "DepthwiseConv2D.mult": (lambda v: layers.DepthwiseConv2D(3, depth_multiplier=v), (8, 8, 2)),
    "SeparableConv1D.filters": (lambda v: layers.SeparableConv1D(v, 3), (8, 2)),
    "MaxPooling2D": (lambda v: layers.MaxPooling2D(v, padding="same"), (8, 8, 2)),
    "AveragePooling1D.strides": (lambda v: layers.AveragePooling1D(2, strides=v), (8, 2)),
    "SimpleRNN": (lambda v: layers.SimpleRNN(v), (4, 3)),
    "LSTM": (lambda v: layers.LSTM(v), (4, 3)),
    "GRU": (lambda v: layers.GRU(v), (4, 3)),
    "GroupNormalization": (lambda v: layers.GroupNormalization(v), (6, 4)),
    "Dropout": (lambda v: layers.Dropout(v), (6,)),
    "GaussianNoise": (lambda v: layers.GaussianNoise(v), (6,)),
    "LeakyReLU": (lambda v: layers.LeakyReLU(v), (6,)),
    "ELU": (lambda v: layers.ELU(v), (6,)),
    "BatchNormalization.eps": (lambda v: layers.BatchNormalization(epsilon=v), (6,)),
    "Dense.seed": (lambda v: layers.Dense(3, seed=v), (6,)),
    "input_shape": (lambda v: layers.Dense(3, input_shape=(v,)), None),
}


@pytest.mark.parametrize("which", sorted(_LAYERS))
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(value=_values)
def test_any_argument_value_gives_a_layer_or_a_clear_error(which, value):
    make, input_shape = _LAYERS[which]
    try:
        layer = make(value)
        model = Sequential([layer], seed=0)
        model.build(input_shape)
    except (ValueError, TypeError):
        return
    # built: it must run on a sample of its input shape
    shape = model._input_shape
    x = np.ones((1, *shape), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            model.predict(x)
        except ValueError:
            pass
