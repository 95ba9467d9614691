"""Keras masks and recurrent dropout against Keras 3 (JAX backend) itself.

Masks: ``Embedding(mask_zero=True)`` and ``Masking`` make a per-(sample, step) mask; the
layers Keras lets it pass (Dropout, ...) pass it on; SimpleRNN / LSTM / GRU / Bidirectional
skip the masked steps (the state is carried, the output repeats it, or is zero under
``zero_output_for_mask``, which Bidirectional sets with ``return_sequences``). Compared with
Keras on padded sequences with the same weights: outputs, and a few SGD steps (loss history
and final weights).

Dropout (``dropout=``, ``recurrent_dropout=``) cannot match Keras's random numbers: rate 0 is
no dropout bit for bit, inference is unaffected, the same seed gives the same bits, configs
carry Keras's keys. The masks' statistics and the gradients under fixed masks are checked in
the Rust unit tests (``recurrent::time_loop``).

Tolerances: every case runs at most 7 steps of 3-8 units in float32; the two libraries order
their sums differently, so each output differs by a few float32 roundings per step
(~1e-7 relative) carried through at most 7 contracting steps (tanh/sigmoid), well under 2e-5.
"""

import os
import pickle

import numpy as np
import pytest

import rustyml.keras as rk

os.environ.setdefault("KERAS_BACKEND", "jax")
keras = pytest.importorskip("keras")

STEPS = 7
VOCAB = 9
ATOL = 2e-5


def _tokens(seed=0, n=6):
    """Right-padded index sequences of different lengths (one empty, one full), with a
    zero (masked) in the middle of one of them."""
    rng = np.random.default_rng(seed)
    x = rng.integers(1, VOCAB, size=(n, STEPS)).astype(np.float32)
    lengths = [STEPS, 5, 3, 1, 0, 6][:n]
    for i, length in enumerate(lengths):
        x[i, length:] = 0.0
    x[1, 2] = 0.0  # a hole: Keras masks it too
    return x


def _recurrent(mod, kind, units, **kw):
    return getattr(mod.layers, kind)(units, **kw)


def _pair(build):
    """The same architecture in Keras and rustyml (``build(mod)`` gives the layer list);
    rustyml takes Keras's initial weights."""
    km = keras.Sequential([keras.Input((STEPS,)), *build(keras)])
    ours = rk.Sequential([rk.Input(shape=(STEPS,)), *build(rk)])
    ours.set_weights(km.get_weights())
    return ours, km


KINDS = [("SimpleRNN", {}), ("LSTM", {}), ("GRU", {}), ("GRU", {"reset_after": False})]


@pytest.mark.parametrize("kind,extra", KINDS)
@pytest.mark.parametrize(
    "return_sequences,go_backwards", [(False, False), (True, False), (False, True), (True, True)]
)
def test_embedding_mask_zero_then_recurrent_matches_keras(
    kind, extra, return_sequences, go_backwards
):
    keras.utils.set_random_seed(1)
    ours, km = _pair(
        lambda m: [
            m.layers.Embedding(VOCAB, 4, mask_zero=True),
            _recurrent(
                m, kind, 5, return_sequences=return_sequences, go_backwards=go_backwards, **extra
            ),
        ]
    )
    x = _tokens()
    want = np.asarray(km.predict(x, verbose=0))
    got = ours.predict(x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, atol=ATOL)
    # the mask changes the answer (so the comparison above tests it)
    unmasked = keras.Sequential(
        [
            keras.Input((STEPS,)),
            keras.layers.Embedding(VOCAB, 4),
            km.layers[1].__class__.from_config(km.layers[1].get_config()),
        ]
    )
    unmasked.set_weights(km.get_weights())
    assert np.abs(np.asarray(unmasked.predict(x, verbose=0)) - want).max() > 1e-3


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
@pytest.mark.parametrize("return_sequences", [False, True])
@pytest.mark.parametrize("merge_mode", ["concat", "sum"])
def test_bidirectional_with_a_mask_matches_keras(kind, return_sequences, merge_mode):
    keras.utils.set_random_seed(2)
    ours, km = _pair(
        lambda m: [
            m.layers.Embedding(VOCAB, 3, mask_zero=True),
            m.layers.Bidirectional(
                _recurrent(m, kind, 4, return_sequences=return_sequences), merge_mode=merge_mode
            ),
        ]
    )
    x = _tokens(3)
    np.testing.assert_allclose(ours.predict(x), np.asarray(km.predict(x, verbose=0)), atol=ATOL)


def test_the_mask_passes_dropout_and_a_sequence_layer_to_the_next_recurrent_layer():
    keras.utils.set_random_seed(3)
    ours, km = _pair(
        lambda m: [
            m.layers.Embedding(VOCAB, 4, mask_zero=True),
            m.layers.Dropout(0.5),
            m.layers.LSTM(5, return_sequences=True),
            m.layers.GRU(3, go_backwards=True),
        ]
    )
    x = _tokens(4)
    np.testing.assert_allclose(ours.predict(x), np.asarray(km.predict(x, verbose=0)), atol=ATOL)


@pytest.mark.parametrize("mask_value", [0.0, -1.0])
def test_masking_then_lstm_matches_keras(mask_value):
    keras.utils.set_random_seed(4)
    rng = np.random.default_rng(5)
    x = rng.normal(size=(5, STEPS, 3)).astype(np.float32)
    for i, length in enumerate([STEPS, 4, 2, 0, 6]):
        x[i, length:] = mask_value
    x[0, 3] = mask_value  # a hole
    x[2, 0, 1] = mask_value  # one feature equal to the value: not masked
    km = keras.Sequential(
        [
            keras.Input((STEPS, 3)),
            keras.layers.Masking(mask_value=mask_value),
            keras.layers.LSTM(4, return_sequences=True),
        ]
    )
    ours = rk.Sequential(
        [
            rk.Input(shape=(STEPS, 3)),
            rk.layers.Masking(mask_value=mask_value),
            rk.layers.LSTM(4, return_sequences=True),
        ]
    )
    ours.set_weights(km.get_weights())
    np.testing.assert_allclose(ours.predict(x), np.asarray(km.predict(x, verbose=0)), atol=ATOL)


def test_functional_model_carries_the_mask():
    keras.utils.set_random_seed(6)
    ki = keras.Input((STEPS,))
    kh = keras.layers.Embedding(VOCAB, 4, mask_zero=True)(ki)
    kh = keras.layers.GRU(5, return_sequences=True)(kh)
    km = keras.Model(ki, keras.layers.LSTM(3)(kh))
    ri = rk.Input(shape=(STEPS,))
    rh = rk.layers.Embedding(VOCAB, 4, mask_zero=True)(ri)
    rh = rk.layers.GRU(5, return_sequences=True)(rh)
    ours = rk.Model(ri, rk.layers.LSTM(3)(rh))
    ours.set_weights(km.get_weights())
    x = _tokens(7)
    np.testing.assert_allclose(ours.predict(x), np.asarray(km.predict(x, verbose=0)), atol=ATOL)


@pytest.mark.parametrize(
    "middle",
    [
        lambda m: m.layers.LSTM(4),
        lambda m: m.layers.GRU(4, go_backwards=True),
        lambda m: m.layers.Bidirectional(m.layers.SimpleRNN(3)),
    ],
    ids=["lstm", "gru_backwards", "bidirectional_rnn"],
)
def test_sgd_training_through_masked_steps_matches_keras(middle):
    """Three full-batch SGD steps: the gradients through skipped steps (carried states)
    must be Keras's for the losses and weights to agree."""
    keras.utils.set_random_seed(8)
    ours, km = _pair(
        lambda m: [m.layers.Embedding(VOCAB, 3, mask_zero=True), middle(m), m.layers.Dense(2)]
    )
    x = _tokens(9)
    y = np.random.default_rng(10).normal(size=(len(x), 2)).astype(np.float32)
    row0 = ours.get_weights()[0][0].copy()
    km.compile(optimizer=keras.optimizers.SGD(learning_rate=0.5), loss="mse")
    ours.compile(optimizer=rk.optimizers.SGD(learning_rate=0.5), loss="mse")
    kh = km.fit(x, y, batch_size=len(x), epochs=3, shuffle=False, verbose=0).history["loss"]
    oh = ours.fit(x, y, batch_size=len(x), epochs=3, shuffle=False, verbose=0).history["loss"]
    # losses ~1 computed from outputs within ~1e-6 of each other
    np.testing.assert_allclose(oh, kh, rtol=1e-5)
    for a, b in zip(ours.get_weights(), km.get_weights()):
        np.testing.assert_allclose(a, b, atol=ATOL)
    # row 0 of the table is read only at masked steps: no gradient reaches it
    np.testing.assert_array_equal(ours.get_weights()[0][0], row0)


def test_a_mask_reaching_the_loss_is_refused_not_ignored():
    model = rk.Sequential(
        [
            rk.Input(shape=(STEPS,)),
            rk.layers.Embedding(VOCAB, 3, mask_zero=True),
            rk.layers.LSTM(2, return_sequences=True),
        ]
    )
    model.compile(optimizer="sgd", loss="mse")
    x = _tokens()
    y = np.zeros((len(x), STEPS, 2), np.float32)
    before = [w.copy() for w in model.get_weights()]
    with pytest.raises(ValueError, match="mask"):
        model.fit(x, y, epochs=1, verbose=0)
    with pytest.raises(ValueError, match="mask"):
        model.evaluate(x, y, verbose=0)
    for a, b in zip(model.get_weights(), before):
        np.testing.assert_array_equal(a, b)
    assert model.predict(x).shape == (len(x), STEPS, 2)  # inference has no loss


def test_a_mask_into_a_layer_that_would_read_it_is_refused():
    model = rk.Sequential(
        [
            rk.Input(shape=(STEPS,)),
            rk.layers.Embedding(VOCAB, 3, mask_zero=True),
            rk.layers.BatchNormalization(),
            rk.layers.LSTM(2),
        ]
    )
    with pytest.raises(ValueError, match="BatchNormalization.*mask"):
        model.predict(_tokens())


def test_layers_keras_drops_the_mask_at_drop_it():
    """Flatten has no supports_masking: Keras drops the mask (a warning), so the Dense after
    it sees every step; the model then trains (no mask at the loss)."""
    keras.utils.set_random_seed(11)
    ours, km = _pair(
        lambda m: [
            m.layers.Embedding(VOCAB, 2, mask_zero=True),
            m.layers.Flatten(),
            m.layers.Dense(1),
        ]
    )
    x = _tokens()
    np.testing.assert_allclose(ours.predict(x), np.asarray(km.predict(x, verbose=0)), atol=ATOL)


# ---- dropout -------------------------------------------------------------------------------


def _dropout_model(kind, dropout, recurrent_dropout, seed=3):
    return rk.Sequential(
        [
            rk.Input(shape=(STEPS,)),
            rk.layers.Embedding(VOCAB, 4, mask_zero=True, seed=1),
            _recurrent(
                rk, kind, 5, dropout=dropout, recurrent_dropout=recurrent_dropout, seed=seed
            ),
            rk.layers.Dense(1, seed=2),
        ],
        seed=0,
    )


def _train(model, epochs=2):
    x = _tokens()
    y = np.linspace(-1, 1, len(x), dtype=np.float32)[:, None]
    model.compile(optimizer=rk.optimizers.SGD(learning_rate=0.3), loss="mse")
    model.fit(x, y, batch_size=3, epochs=epochs, verbose=0)
    return model


@pytest.mark.parametrize("kind", ["SimpleRNN", "LSTM", "GRU"])
def test_rate_zero_is_no_dropout_bit_for_bit(kind):
    plain = _train(_dropout_model(kind, 0.0, 0.0))
    other = rk.Sequential(
        [
            rk.Input(shape=(STEPS,)),
            rk.layers.Embedding(VOCAB, 4, mask_zero=True, seed=1),
            _recurrent(rk, kind, 5, seed=3),
            rk.layers.Dense(1, seed=2),
        ],
        seed=0,
    )
    _train(other)
    for a, b in zip(plain.get_weights(), other.get_weights()):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kind", ["SimpleRNN", "LSTM", "GRU"])
def test_dropout_trains_differently_reproducibly_and_leaves_inference_alone(kind):
    a = _train(_dropout_model(kind, 0.3, 0.4))
    b = _train(_dropout_model(kind, 0.3, 0.4))
    plain = _train(_dropout_model(kind, 0.0, 0.0))
    for wa, wb in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_array_equal(wa, wb)  # same seed, same bits
    assert any(not np.array_equal(wa, wp) for wa, wp in zip(a.get_weights(), plain.get_weights()))
    # inference ignores the rates: the dropping model with the plain one's weights
    a.set_weights(plain.get_weights())
    x = _tokens()
    np.testing.assert_array_equal(a.predict(x), plain.predict(x))


def test_dropout_keeps_the_stream_across_pickle():
    model = _train(_dropout_model("LSTM", 0.2, 0.3), epochs=1)
    copy = pickle.loads(pickle.dumps(model))
    _train(model, epochs=1)
    _train(copy, epochs=1)
    for a, b in zip(model.get_weights(), copy.get_weights()):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kind", ["SimpleRNN", "LSTM", "GRU"])
def test_configs_carry_keras_keys_and_round_trip(kind, tmp_path):
    ours = _recurrent(rk, kind, 3, dropout=0.25, recurrent_dropout=0.5, seed=7)
    theirs = _recurrent(keras, kind, 3, dropout=0.25, recurrent_dropout=0.5, seed=7)
    cfg, kcfg = ours.get_config(), theirs.get_config()
    assert kcfg["dropout"] == 0.25 and kcfg["recurrent_dropout"] == 0.5
    for key in ("dropout", "recurrent_dropout", "seed", "zero_output_for_mask"):
        if key in kcfg:  # Keras's SimpleRNN config has no seed
            assert cfg[key] == kcfg[key], key
    again = type(ours).from_config(cfg)
    assert again.get_config() == cfg
    emb = rk.layers.Embedding(5, 2, mask_zero=True)
    kemb = keras.layers.Embedding(5, 2, mask_zero=True)
    assert emb.get_config()["mask_zero"] is kemb.get_config()["mask_zero"] is True
    masking = rk.layers.Masking(mask_value=-1.0)
    assert (
        masking.get_config()["mask_value"] == keras.layers.Masking(-1.0).get_config()["mask_value"]
    )
    # a model with all of them saves, loads and pickles to the same predictions
    model = rk.Sequential(
        [
            rk.Input(shape=(STEPS,)),
            emb.__class__(VOCAB, 2, mask_zero=True),
            _recurrent(rk, kind, 3, dropout=0.25, recurrent_dropout=0.5, return_sequences=True),
            rk.layers.Masking(mask_value=0.0),
            _recurrent(rk, kind, 2, dropout=0.1),
        ]
    )
    x = _tokens()
    want = model.predict(x)
    path = str(tmp_path / "masked.rustyml")
    model.save(path)
    loaded = type(model).load(path)
    np.testing.assert_array_equal(loaded.predict(x), want)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(model)).predict(x), want)
    layer_cfg = loaded.get_config()["layers"]
    names = [c["class_name"] for c in layer_cfg]
    assert "Masking" in names
    rec = next(c["config"] for c in layer_cfg if c["class_name"] == kind)
    assert (rec["dropout"], rec["recurrent_dropout"]) == (0.25, 0.5)


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda: rk.layers.LSTM(2, dropout=1.0), "dropout"),
        (lambda: rk.layers.GRU(2, dropout=-0.1), "dropout"),
        (lambda: rk.layers.SimpleRNN(2, recurrent_dropout=1.5), "recurrent_dropout"),
        (lambda: rk.layers.LSTM(2, recurrent_dropout="x"), "recurrent_dropout"),
        (lambda: rk.layers.LSTM(2, zero_output_for_mask="yes"), "zero_output_for_mask"),
        (lambda: rk.layers.Embedding(3, 2, mask_zero="yes"), "mask_zero"),
        (lambda: rk.layers.Masking(mask_value="a"), "mask_value"),
        (lambda: rk.layers.Masking(mask_value=float("nan")), "mask_value"),
    ],
)
def test_bad_arguments_raise_value_error_naming_them(make, name):
    with pytest.raises(ValueError, match=name):
        make()


def test_masking_is_no_longer_a_stand_in():
    assert rk.layers.Masking is rk.layers.__dict__["Masking"]
    assert "Masking" in rk.layers.__all__
