"""Recurrent layers (SimpleRNN, LSTM, GRU, Bidirectional) from Python: forward values against
an unrolled NumPy reference written from the equations, Keras (JAX) as an oracle with the
same weights, gradients by finite differences, errors, save/load, and a small training run."""

import os

import numpy as np
import pytest

from rustyml.neural_network import Sequential, layers, optimizers


def _sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def _reference(kind, x, weights, *, return_sequences=False, go_backwards=False, reset_after=True):
    """One scalar equation at a time (float64), Keras's gate order and definitions."""
    x = np.asarray(x, np.float64)
    k, rk, b = (np.asarray(w, np.float64) for w in weights)
    n, steps, d = x.shape
    units = rk.shape[0]
    b_in = b[0] if b.ndim == 2 else b
    b_rec = b[1] if b.ndim == 2 else np.zeros_like(b)
    out = np.zeros((n, steps, units))
    for s in range(n):
        h = np.zeros(units)
        c = np.zeros(units)
        for i in range(steps):
            t = steps - 1 - i if go_backwards else i
            xt = x[s, t]
            new_h = np.zeros(units)
            for j in range(units):

                def pre(g, v=xt, hv=h, j=j):
                    col = g * units + j
                    return sum(v[m] * k[m, col] for m in range(d)) + b_in[col], sum(
                        hv[m] * rk[m, col] for m in range(units)
                    )

                if kind == "SimpleRNN":
                    a, r = pre(0)
                    new_h[j] = np.tanh(a + r)
                elif kind == "LSTM":
                    ig = _sigmoid(sum(pre(0)))
                    fg = _sigmoid(sum(pre(1)))
                    cg = np.tanh(sum(pre(2)))
                    og = _sigmoid(sum(pre(3)))
                    c[j] = fg * c[j] + ig * cg  # c[j] is only read for unit j
                    new_h[j] = og * np.tanh(c[j])
                else:  # GRU
                    az, rz = pre(0)
                    ar, rr = pre(1)
                    z = _sigmoid(az + rz + b_rec[j])
                    r = _sigmoid(ar + rr + b_rec[units + j])
                    if reset_after:
                        ah, rh = pre(2)
                        hh = np.tanh(ah + r * (rh + b_rec[2 * units + j]))
                    else:
                        # (r ⊙ h) U_h needs every unit's reset gate
                        rs = np.array(
                            [
                                _sigmoid(
                                    sum(xt[m] * k[m, units + q] for m in range(d))
                                    + b_in[units + q]
                                    + sum(h[m] * rk[m, units + q] for m in range(units))
                                )
                                for q in range(units)
                            ]
                        )
                        ah, _ = pre(2)
                        hh = np.tanh(
                            ah + sum(rs[m] * h[m] * rk[m, 2 * units + j] for m in range(units))
                        )
                    new_h[j] = z * h[j] + (1 - z) * hh
            h = new_h
            out[s, i] = h
    return out if return_sequences else out[:, -1]


def _rand_weights(kind, d, units, rng, reset_after=True):
    gates = {"SimpleRNN": 1, "LSTM": 4, "GRU": 3}[kind]
    k = rng.uniform(-0.6, 0.6, (d, gates * units)).astype(np.float32)
    rk = rng.uniform(-0.6, 0.6, (units, gates * units)).astype(np.float32)
    bshape = (2, gates * units) if kind == "GRU" and reset_after else (gates * units,)
    b = rng.uniform(-0.3, 0.3, bshape).astype(np.float32)
    return [k, rk, b]


def _layer(kind, units, **kw):
    return getattr(layers, kind)(units, **kw)


CASES = [
    ("SimpleRNN", {}),
    ("LSTM", {}),
    ("GRU", {"reset_after": True}),
    ("GRU", {"reset_after": False}),
]


@pytest.mark.parametrize("kind,extra", CASES)
@pytest.mark.parametrize(
    "return_sequences,go_backwards", [(False, False), (True, False), (True, True)]
)
def test_forward_matches_unrolled_numpy(kind, extra, return_sequences, go_backwards):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 4, 2)).astype(np.float32)
    w = _rand_weights(kind, 2, 3, rng, extra.get("reset_after", True))
    model = Sequential(
        [
            _layer(
                kind,
                3,
                return_sequences=return_sequences,
                go_backwards=go_backwards,
                input_shape=(4, 2),
                **extra,
            )
        ]
    )
    model.set_weights(w)
    got = model.predict(x)
    want = _reference(
        kind,
        x,
        w,
        return_sequences=return_sequences,
        go_backwards=go_backwards,
        reset_after=extra.get("reset_after", True),
    )
    assert got.shape == want.shape == ((3, 4, 3) if return_sequences else (3, 3))
    # f32 sums of ~5 terms per gate through ≤ 4 steps: ~1e-6, far under 1e-5
    np.testing.assert_allclose(got, want, atol=1e-5)


def _keras():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    return pytest.importorskip("keras")


@pytest.mark.parametrize("kind,extra", CASES)
@pytest.mark.parametrize("return_sequences,go_backwards", [(False, False), (True, True)])
def test_keras_oracle_same_weights_same_outputs(kind, extra, return_sequences, go_backwards):
    keras = _keras()
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 6, 3)).astype(np.float32)
    kl = getattr(keras.layers, kind)(
        5, return_sequences=return_sequences, go_backwards=go_backwards, **extra
    )
    km = keras.Sequential([keras.Input((6, 3)), kl])
    want = np.asarray(km.predict(x, verbose=0))
    model = Sequential(
        [
            _layer(
                kind,
                5,
                return_sequences=return_sequences,
                go_backwards=go_backwards,
                input_shape=(6, 3),
                **extra,
            )
        ]
    )
    model.set_weights(km.get_weights())  # Keras's arrays, unchanged
    np.testing.assert_allclose(model.predict(x), want, atol=2e-5)
    for ours, theirs in zip(model.get_weights(), km.get_weights()):
        assert ours.shape == theirs.shape


@pytest.mark.parametrize("merge_mode", ["concat", "sum", "mul", "ave"])
def test_keras_oracle_bidirectional(merge_mode):
    keras = _keras()
    rng = np.random.default_rng(2)
    x = rng.normal(size=(3, 5, 2)).astype(np.float32)
    km = keras.Sequential(
        [
            keras.Input((5, 2)),
            keras.layers.Bidirectional(
                keras.layers.GRU(4, return_sequences=True), merge_mode=merge_mode
            ),
        ]
    )
    want = np.asarray(km.predict(x, verbose=0))
    model = Sequential(
        [
            layers.Bidirectional(
                layers.GRU(4, return_sequences=True), merge_mode=merge_mode, input_shape=(5, 2)
            )
        ]
    )
    model.set_weights(km.get_weights())  # forward's arrays, then backward's, unchanged
    np.testing.assert_allclose(model.predict(x), want, atol=2e-5)
    ours = model.get_weights()
    assert len(ours) == 6
    for a, b in zip(ours, km.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_bidirectional_config_holds_the_inner_layer():
    bi = layers.Bidirectional(layers.LSTM(3, return_sequences=True), merge_mode="sum")
    spec = layers.serialize(bi)
    assert spec["config"]["layer"]["class_name"] == "LSTM"
    assert spec["config"]["layer"]["config"]["units"] == 3
    again = layers.deserialize(spec)
    assert isinstance(again.layer, layers.LSTM) and again.merge_mode == "sum"


# Non-default activations take the backward's general path (the defaults have their own).
GRADIENT_CASES = CASES + [
    ("LSTM", {"activation": "softsign", "recurrent_activation": "tanh"}),
]


@pytest.mark.parametrize("kind,extra", GRADIENT_CASES)
def test_gradients_match_finite_differences(kind, extra):
    """One plain SGD step moves each weight by -lr * dL/dw; compare with central differences
    of the model's own loss (mse)."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 3, 2)).astype(np.float32)
    y = rng.normal(size=(2, 2)).astype(np.float32)
    model = Sequential([_layer(kind, 2, input_shape=(3, 2), seed=4, **extra)])
    lr = 0.5
    model.compile(optimizer=optimizers.SGD(learning_rate=lr), loss="mse")
    w0 = [w.copy() for w in model.get_weights()]
    model.fit(x, y, batch_size=2, epochs=1, shuffle=False, verbose=0)
    w1 = model.get_weights()
    h = 1e-2
    for a in range(len(w0)):
        analytic = (w0[a] - w1[a]) / lr
        for idx in list(np.ndindex(w0[a].shape))[::3]:
            plus = [w.copy() for w in w0]
            plus[a][idx] += h
            model.set_weights(plus)
            lp = model.evaluate(x, y)
            minus = [w.copy() for w in w0]
            minus[a][idx] -= h
            model.set_weights(minus)
            lm = model.evaluate(x, y)
            numeric = (lp - lm) / (2 * h)
            # f32 losses ~1: roundoff ~1e-7 / 2h ~ 1e-5; truncation O(h^2) ~ 1e-4
            assert abs(analytic[idx] - numeric) < 2e-3 + 1e-2 * abs(numeric), (
                a,
                idx,
                analytic[idx],
                numeric,
            )


def test_bad_input_names_the_layer_and_shapes():
    model = Sequential([layers.LSTM(3, input_shape=(4, 2))])
    with pytest.raises(ValueError, match=r"\(4, 7\).*\(4, 2\)"):
        model.predict(np.zeros((5, 4, 7), np.float32))
    with pytest.raises(ValueError, match=r"LSTM.*\(batch, timesteps, features\).*\[4\]"):
        Sequential([layers.LSTM(3, input_shape=(4,))]).predict(np.zeros((2, 4), np.float32))
    with pytest.raises(ValueError, match=r"GRU.*\[3\]"):
        Sequential([layers.Dense(3, input_shape=(4,)), layers.GRU(2)]).predict(
            np.zeros((1, 4), np.float32)
        )
    with pytest.raises(ValueError, match="return_state"):
        layers.GRU(3, return_state=True)
    with pytest.raises(ValueError, match="units"):
        layers.SimpleRNN(0)
    with pytest.raises(ValueError, match="merge_mode"):
        layers.Bidirectional(layers.LSTM(2), merge_mode=None)
    with pytest.raises(ValueError, match="Bidirectional"):
        layers.Bidirectional(layers.Dense(2))
    model = Sequential([layers.GRU(3, input_shape=(4, 2))])
    with pytest.raises(ValueError, match="bias"):
        model.set_weights(
            [np.zeros((2, 9), np.float32), np.zeros((3, 9), np.float32), np.zeros(9, np.float32)]
        )


def test_save_load_round_trip(tmp_path):
    model = Sequential(
        [
            layers.Bidirectional(layers.LSTM(4, return_sequences=True), input_shape=(5, 3)),
            layers.GRU(3, reset_after=False, go_backwards=True),
            layers.Dense(2),
        ],
        seed=7,
    )
    x = np.random.default_rng(5).normal(size=(4, 5, 3)).astype(np.float32)
    path = tmp_path / "rnn.rustyml"
    model.save(path)
    again = Sequential.load(path)
    np.testing.assert_array_equal(again.predict(x), model.predict(x))
    assert [w.shape for w in again.get_weights()] == [w.shape for w in model.get_weights()]


def test_lstm_learns_the_sum_of_a_sequence():
    rng = np.random.default_rng(6)
    x = rng.uniform(-1, 1, size=(512, 6, 1)).astype(np.float32)
    y = x.sum(axis=1) / 3.0
    model = Sequential([layers.LSTM(16, input_shape=(6, 1)), layers.Dense(1)], seed=1)
    model.compile(optimizer=optimizers.Adam(learning_rate=0.01), loss="mse")
    model.fit(x, y, batch_size=32, epochs=40, verbose=0)
    xt = rng.uniform(-1, 1, size=(128, 6, 1)).astype(np.float32)
    mse = float(np.mean((model.predict(xt) - xt.sum(axis=1) / 3.0) ** 2))
    assert mse < 2e-3, mse  # the target's variance is ~0.22


# -- use_bias=False: no bias at all, Keras's [kernel, recurrent_kernel] lists ---------------------

NO_BIAS_CASES = [
    ("SimpleRNN", {}),
    ("LSTM", {}),
    ("LSTM", {"unit_forget_bias": False}),
    ("GRU", {"reset_after": True}),
    ("GRU", {"reset_after": False}),
]


@pytest.mark.parametrize("kind,extra", NO_BIAS_CASES)
@pytest.mark.parametrize("return_sequences,go_backwards", [(False, False), (True, True)])
def test_keras_oracle_use_bias_false(kind, extra, return_sequences, go_backwards):
    keras = _keras()
    rng = np.random.default_rng(21)
    x = rng.normal(size=(4, 6, 3)).astype(np.float32)
    kw = {"return_sequences": return_sequences, "go_backwards": go_backwards, **extra}
    km = keras.Sequential(
        [keras.Input((6, 3)), getattr(keras.layers, kind)(5, use_bias=False, **kw)]
    )
    model = Sequential([_layer(kind, 5, use_bias=False, input_shape=(6, 3), **kw)])
    assert [w.shape for w in model.get_weights()] == [w.shape for w in km.get_weights()]
    assert len(model.get_weights()) == 2
    # Non-trivial weights (Keras's own init has an orthogonal recurrent kernel).
    weights = [w.copy() for w in _rand_weights(kind, 3, 5, rng)[:2]]
    km.set_weights(weights)
    model.set_weights(weights)  # Keras's list, unchanged, both ways
    for ours, theirs in zip(model.get_weights(), km.get_weights()):
        np.testing.assert_array_equal(ours, theirs)
    want = np.asarray(km.predict(x, verbose=0))
    # Same tolerance as with a bias: f32 gate sums of ~8 terms through 6 steps, the outputs
    # bounded by 1, agree to a few ulps per step (~1e-6), well under 2e-5.
    np.testing.assert_allclose(model.predict(x), want, atol=2e-5)
    # The bias really is absent: with one (Keras's zero init) the outputs are the same;
    # with a non-zero one they are not.
    with_bias = Sequential([_layer(kind, 5, input_shape=(6, 3), **kw)])
    b = with_bias.get_weights()[2]
    with_bias.set_weights([*weights, np.full_like(b, 0.3)])
    assert not np.allclose(with_bias.predict(x), want, atol=1e-3)
    with pytest.raises(ValueError, match="weight arrays"):
        model.set_weights([*weights, np.zeros_like(b)])


def test_keras_oracle_bidirectional_use_bias_false():
    keras = _keras()
    rng = np.random.default_rng(22)
    x = rng.normal(size=(3, 5, 2)).astype(np.float32)
    km = keras.Sequential(
        [
            keras.Input((5, 2)),
            keras.layers.Bidirectional(keras.layers.LSTM(4, use_bias=False, return_sequences=True)),
        ]
    )
    model = Sequential(
        [
            layers.Bidirectional(
                layers.LSTM(4, use_bias=False, return_sequences=True), input_shape=(5, 2)
            )
        ]
    )
    # forward's [kernel, recurrent_kernel], then backward's
    assert [w.shape for w in model.get_weights()] == [w.shape for w in km.get_weights()]
    assert len(km.get_weights()) == 4
    weights = [rng.uniform(-0.6, 0.6, w.shape).astype(np.float32) for w in km.get_weights()]
    km.set_weights(weights)
    model.set_weights(weights)
    np.testing.assert_allclose(model.predict(x), np.asarray(km.predict(x, verbose=0)), atol=2e-5)
    for a, b in zip(model.get_weights(), weights):
        np.testing.assert_array_equal(a, b)
    assert model.count_params() == sum(w.size for w in weights) == km.count_params()
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x, np.zeros((3, 5, 8), np.float32), epochs=1, verbose=0)
    assert model.count_params() == km.count_params()


@pytest.mark.parametrize("kind,extra", NO_BIAS_CASES)
def test_use_bias_false_gradients_match_finite_differences(kind, extra):
    test_gradients_match_finite_differences(kind, {"use_bias": False, **extra})


@pytest.mark.parametrize("kind,extra", NO_BIAS_CASES)
def test_use_bias_false_matches_the_numpy_reference_with_a_zero_bias(kind, extra):
    rng = np.random.default_rng(23)
    x = rng.normal(size=(3, 4, 2)).astype(np.float32)
    reset_after = extra.get("reset_after", True)
    k, rk, b = _rand_weights(kind, 2, 3, rng, reset_after)
    model = Sequential(
        [_layer(kind, 3, use_bias=False, return_sequences=True, input_shape=(4, 2), **extra)]
    )
    model.set_weights([k, rk])
    # Training never grows a bias: after a step the list is still [kernel, recurrent_kernel].
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x, np.zeros((3, 4, 3), np.float32), epochs=1, verbose=0)
    k, rk = model.get_weights()
    want = _reference(
        kind, x, [k, rk, np.zeros_like(b)], return_sequences=True, reset_after=reset_after
    )
    np.testing.assert_allclose(model.predict(x), want, atol=1e-5)


def test_use_bias_false_save_load_round_trip(tmp_path):
    model = Sequential(
        [
            layers.Bidirectional(
                layers.GRU(4, use_bias=False, return_sequences=True), input_shape=(5, 3)
            ),
            layers.LSTM(3, use_bias=False, return_sequences=True),
            layers.SimpleRNN(2, use_bias=False),
        ],
        seed=8,
    )
    x = np.random.default_rng(9).normal(size=(4, 5, 3)).astype(np.float32)
    before = model.predict(x)
    model.save(tmp_path / "nobias.safetensors")
    again = Sequential.load(tmp_path / "nobias.safetensors")
    np.testing.assert_array_equal(again.predict(x), before)
    assert [w.shape for w in again.get_weights()] == [w.shape for w in model.get_weights()]
    assert len(again.get_weights()) == 2 * 2 + 2 + 2
    assert again.layers[0].get_config()["layer"]["config"]["use_bias"] is False
    assert again.layers[1].get_config()["use_bias"] is False


def test_use_bias_false_bitwise_serial_and_parallel_products():
    """The recurrent products run on gemmkit; forcing its parallel threshold either way
    changes no bit of the outputs or of one training step."""
    from rustyml import tuning

    backend = tuning.matmul.backend
    rng = np.random.default_rng(24)
    x = rng.normal(size=(64, 5, 32)).astype(np.float32)
    y = rng.normal(size=(64, 5, 64)).astype(np.float32)

    def run():
        model = Sequential(
            [layers.GRU(64, use_bias=False, return_sequences=True, input_shape=(5, 32))],
            seed=3,
        )
        model.compile(optimizer="sgd", loss="mse")
        model.fit(x, y, batch_size=64, epochs=1, shuffle=False, verbose=0)
        return model.predict(x).tobytes(), [w.tobytes() for w in model.get_weights()]

    before = backend.parallel_threshold()
    try:
        backend.set_parallel_threshold(2**62)
        serial = run()
        backend.set_parallel_threshold(0)
        parallel = run()
    finally:
        backend.set_parallel_threshold(before)
    assert serial == parallel


@pytest.mark.parametrize("kind", ["SimpleRNN", "LSTM", "GRU"])
def test_recurrent_gate_serial_and_parallel_bitwise(kind):
    """`tuning.recurrent.parallel_min_flops` runs blocks of 16 batch rows as parallel tasks
    or in turn; either way, and with a short last block (batch 37), no bit changes: not the
    predictions, not the weights after training, not with a Bidirectional wrapper."""
    from rustyml import tuning

    rng = np.random.default_rng(31)
    x = rng.normal(size=(37, 6, 5)).astype(np.float32)
    y = rng.normal(size=(37, 8)).astype(np.float32)

    def run():
        model = Sequential(
            [
                layers.Bidirectional(
                    _layer(kind, 4, return_sequences=True, go_backwards=True),
                    input_shape=(6, 5),
                ),
                _layer(kind, 8),
            ],
            seed=5,
        )
        model.compile(optimizer="adam", loss="mse")
        model.fit(x, y, batch_size=37, epochs=2, shuffle=False, verbose=0)
        return model.predict(x).tobytes(), [w.tobytes() for w in model.get_weights()]

    before = tuning.recurrent.get_parallel_min_flops()
    try:
        tuning.recurrent.set_parallel_min_flops(tuning.SERIAL)
        serial = run()
        tuning.recurrent.set_parallel_min_flops(tuning.PARALLEL)
        parallel = run()
    finally:
        tuning.recurrent.set_parallel_min_flops(before)
    assert serial == parallel


def test_recurrent_blocks_match_the_reference_across_blocks():
    """A batch of 35 (blocks of 16, 16 and 3) run in parallel matches the NumPy recurrence
    row for row."""
    from rustyml import tuning

    rng = np.random.default_rng(32)
    x = rng.normal(size=(35, 4, 3)).astype(np.float32)
    weights = _rand_weights("LSTM", 3, 5, rng)
    model = Sequential([_layer("LSTM", 5, return_sequences=True, input_shape=(4, 3))], seed=1)
    model.set_weights(weights)
    before = tuning.recurrent.get_parallel_min_flops()
    try:
        tuning.recurrent.set_parallel_min_flops(tuning.PARALLEL)
        got = model.predict(x)
    finally:
        tuning.recurrent.set_parallel_min_flops(before)
    want = _reference("LSTM", x, weights, return_sequences=True)
    # as test_forward_matches_unrolled_numpy: f32 sums of ~8 terms per gate, 4 steps
    np.testing.assert_allclose(got, want, atol=1e-5)
