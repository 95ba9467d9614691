"""The Keras door's optimizers and losses against Keras 3 itself (JAX backend).

Each test builds the same small Dense network in both libraries with identical weights, trains
a few steps with ``shuffle=False`` and compares the weights (and losses) that come out.

Tolerance: both sides compute in float32 (unit roundoff u = 2^-24 ~ 6e-8). Per step the
forward pass, the backward pass and the update each round a handful of times per element (dot
products of length <= 5, a few elementwise operations), and the two libraries order those
operations differently (XLA may fuse and reassociate), so a step adds a relative difference of
a few tens of u to each weight, which later steps carry along. With at most 8 steps that stays
below ~8 * 40 u ~ 2e-5 relative: rtol = 2e-5, plus atol = 1e-6 for weights passing near 0.
Every behaviour checked here differed from Keras before by at least 1e-3 relative, so the
comparison separates them by two orders of magnitude.

Adam's step ``lr * m / (sqrt(v) + eps')`` is close to ``lr * sign(g)`` when ``|g| >> eps'``,
so a gradient element that is small through cancellation (relative error far above u) can
move its weight by a visibly different amount in the two libraries. Cases with a large
learning rate therefore use an epsilon (1e-2) that dominates such tiny gradients; Adam's
defaults are checked at its default learning rate (1e-3), where the same effect stays below
the tolerance.
"""

import math
import os

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")
keras = pytest.importorskip("keras")

from rustyml.neural_network import Sequential, callbacks, layers, losses, optimizers

RTOL, ATOL = 2e-5, 1e-6


def _data(seed=0, n=8, d=4, binary=False):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)).astype(np.float32)
    if binary:
        y = (rng.uniform(size=(n, 1)) < 0.5).astype(np.float32)
    else:
        y = rng.standard_normal((n, 1)).astype(np.float32)
    return x, y


def _weights(seed=1, d=4, hidden=5):
    rng = np.random.default_rng(seed)
    return [
        rng.uniform(-0.8, 0.8, (d, hidden)).astype(np.float32),
        rng.uniform(-0.5, 0.5, (hidden,)).astype(np.float32),
        rng.uniform(-0.8, 0.8, (hidden, 1)).astype(np.float32),
        # A bias far from 0 makes any (missing) decay of the biases plain to see.
        np.array([1.0], np.float32),
    ]


def _pair(keras_opt, our_opt, keras_loss="mse", our_loss="mse", out_act=None, weights=None):
    weights = _weights() if weights is None else weights
    theirs = keras.Sequential(
        [
            keras.Input((4,)),
            keras.layers.Dense(5, activation="tanh"),
            keras.layers.Dense(1, activation=out_act),
        ]
    )
    theirs.set_weights(weights)
    theirs.compile(optimizer=keras_opt, loss=keras_loss)
    ours = Sequential(
        [
            layers.Dense(5, activation="tanh", input_shape=(4,)),
            layers.Dense(1, activation=out_act),
        ],
        seed=0,
    )
    ours.set_weights(weights)
    ours.compile(optimizer=our_opt, loss=our_loss)
    return theirs, ours


def _train_and_compare(theirs, ours, x, y, epochs=4, batch_size=4):
    h_theirs = theirs.fit(x, y, epochs=epochs, batch_size=batch_size, shuffle=False, verbose=0)
    h_ours = ours.fit(x, y, epochs=epochs, batch_size=batch_size, shuffle=False, verbose=0)
    for got, want in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(got, np.asarray(want), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(
        h_ours.history["loss"], h_theirs.history["loss"], rtol=RTOL, atol=ATOL
    )
    return ours.get_weights(), theirs.get_weights()


# Each case: (Keras optimizer, ours), with hyper-parameters that make the formula visible
# (a large epsilon shows where it is added; weight decay shows on the biases).
CASES = {
    "sgd": lambda m: m.SGD(learning_rate=0.1),
    "sgd_momentum_nesterov": lambda m: m.SGD(learning_rate=0.05, momentum=0.9, nesterov=True),
    "sgd_weight_decay": lambda m: m.SGD(learning_rate=0.1, weight_decay=0.5),
    "sgd_momentum_weight_decay": lambda m: m.SGD(learning_rate=0.1, momentum=0.5, weight_decay=0.2),
    "adam_defaults": lambda m: m.Adam(),
    "adam_epsilon": lambda m: m.Adam(learning_rate=0.05, epsilon=1e-2),
    "adam_weight_decay": lambda m: m.Adam(learning_rate=0.05, weight_decay=0.5),
    "adam_amsgrad": lambda m: m.Adam(learning_rate=0.05, epsilon=1e-3, amsgrad=True),
    "adamw_defaults": lambda m: m.AdamW(learning_rate=0.05),
    "adamw_weight_decay": lambda m: m.AdamW(learning_rate=0.05, weight_decay=0.5),
    "rmsprop_defaults": lambda m: m.RMSprop(),
    "rmsprop_epsilon": lambda m: m.RMSprop(learning_rate=0.01, epsilon=1e-2),
    "rmsprop_momentum_centered": lambda m: m.RMSprop(
        learning_rate=0.01, momentum=0.5, centered=True, epsilon=1e-3
    ),
    "rmsprop_weight_decay": lambda m: m.RMSprop(learning_rate=0.01, weight_decay=0.5),
    "adagrad_defaults": lambda m: m.Adagrad(learning_rate=0.1),
    "adagrad_epsilon": lambda m: m.Adagrad(learning_rate=0.1, epsilon=1e-2),
    "adagrad_initial_accumulator": lambda m: m.Adagrad(
        learning_rate=0.1, initial_accumulator_value=0.5
    ),
    "adagrad_weight_decay": lambda m: m.Adagrad(learning_rate=0.1, weight_decay=0.5),
    "sgd_clipnorm": lambda m: m.SGD(learning_rate=0.1, clipnorm=0.05),
    "adam_clipvalue": lambda m: m.Adam(learning_rate=0.05, clipvalue=0.01, epsilon=1e-2),
    "rmsprop_global_clipnorm": lambda m: m.RMSprop(learning_rate=0.01, global_clipnorm=0.05),
    "adam_amsgrad_clipnorm": lambda m: m.Adam(
        learning_rate=0.05, epsilon=1e-2, amsgrad=True, clipnorm=0.05
    ),
    "adagrad_clipvalue": lambda m: m.Adagrad(learning_rate=0.1, clipvalue=0.02),
    "sgd_global_clipnorm": lambda m: m.SGD(learning_rate=0.1, momentum=0.5, global_clipnorm=0.1),
    "nadam_defaults": lambda m: m.Nadam(),
    "nadam_epsilon": lambda m: m.Nadam(learning_rate=0.05, epsilon=1e-2),
    "nadam_weight_decay_clipnorm": lambda m: m.Nadam(
        learning_rate=0.05, epsilon=1e-2, weight_decay=0.5, clipnorm=0.05
    ),
    "adamax_defaults": lambda m: m.Adamax(),
    "adamax_epsilon": lambda m: m.Adamax(learning_rate=0.05, beta_2=0.5, epsilon=1e-2),
    "adamax_weight_decay_global_clipnorm": lambda m: m.Adamax(
        learning_rate=0.05, epsilon=1e-2, weight_decay=0.5, global_clipnorm=0.05
    ),
}


# Schedules whose rate changes within the 8 steps of a test (decay_steps of a few steps).
SCHEDULES = {
    "exponential": lambda s: s.ExponentialDecay(0.2, decay_steps=3, decay_rate=0.5),
    "exponential_staircase": lambda s: s.ExponentialDecay(
        0.2, decay_steps=3, decay_rate=0.5, staircase=True
    ),
    "inverse_time": lambda s: s.InverseTimeDecay(0.2, decay_steps=2, decay_rate=0.7),
    "inverse_time_staircase": lambda s: s.InverseTimeDecay(
        0.2, decay_steps=3, decay_rate=0.7, staircase=True
    ),
    "piecewise": lambda s: s.PiecewiseConstantDecay([1, 4], [0.2, 0.05, 0.01]),
    "polynomial": lambda s: s.PolynomialDecay(0.2, decay_steps=5, end_learning_rate=0.01, power=2),
    "polynomial_cycle": lambda s: s.PolynomialDecay(
        0.2, decay_steps=3, end_learning_rate=0.01, cycle=True
    ),
    "cosine": lambda s: s.CosineDecay(0.2, decay_steps=5, alpha=0.1),
    "cosine_warmup": lambda s: s.CosineDecay(
        0.0, decay_steps=4, alpha=0.05, warmup_target=0.2, warmup_steps=3
    ),
}


@pytest.mark.parametrize("case", sorted(SCHEDULES))
def test_schedule_values_match_keras(case):
    from rustyml.neural_network import schedules

    ours, theirs = SCHEDULES[case](schedules), SCHEDULES[case](keras.optimizers.schedules)
    got = np.array([ours(step) for step in range(25)], np.float32)
    want = np.array([float(theirs(step)) for step in range(25)], np.float32)
    # float32 on both sides; pow/cos of the backend may differ from NumPy's by a few ulp
    np.testing.assert_allclose(got, want, rtol=4 * 2**-23, atol=1e-9)


@pytest.mark.parametrize("case", sorted(SCHEDULES))
@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_schedule_trains_to_keras_weights(case, optimizer):
    """The schedule is evaluated per optimizer step (not per epoch): 8 steps over 4 epochs,
    the rate changing within each; the rate read after training is the next step's."""
    from rustyml.neural_network import schedules

    # Adam's step is nearly lr * sign(g) where |g| >> epsilon; an epsilon of 0.1 keeps the
    # steps proportional to gradients that are small through cancellation (see the module's
    # note), at the schedules' rates of up to 0.2
    kwargs = {"epsilon": 0.1} if optimizer == "Adam" else {"momentum": 0.5}
    keras_opt = getattr(keras.optimizers, optimizer)(
        learning_rate=SCHEDULES[case](keras.optimizers.schedules), **kwargs
    )
    our_opt = getattr(optimizers, optimizer)(learning_rate=SCHEDULES[case](schedules), **kwargs)
    x, y = _data()
    theirs, ours = _pair(keras_opt, our_opt)
    _train_and_compare(theirs, ours, x, y)
    assert our_opt.learning_rate == pytest.approx(float(keras_opt.learning_rate), rel=1e-6)
    with pytest.raises(TypeError, match="not settable"):
        our_opt.learning_rate = 0.1


def test_scheduled_optimizer_resumes_after_pickling_and_saving(tmp_path):
    """A pickled or saved model continues at the schedule's step, not from step 0."""
    import pickle

    from rustyml.neural_network import schedules

    x, y = _data()

    def make():
        opt = optimizers.SGD(learning_rate=schedules.ExponentialDecay(0.2, 2, 0.3))
        return _pair(keras.optimizers.SGD(), opt)[1]

    straight = make()
    straight.fit(x, y, epochs=4, batch_size=4, shuffle=False, verbose=0)
    half = make()
    half.fit(x, y, epochs=2, batch_size=4, shuffle=False, verbose=0)
    resumed = pickle.loads(pickle.dumps(half))
    resumed.fit(x, y, epochs=2, batch_size=4, shuffle=False, verbose=0)
    for got, want in zip(resumed.get_weights(), straight.get_weights()):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("case", sorted(CASES))
def test_optimizer_trains_to_keras_weights(case):
    x, y = _data()
    make = CASES[case]
    theirs, ours = _pair(make(keras.optimizers), make(optimizers))
    _train_and_compare(theirs, ours, x, y)


def test_weight_decay_shrinks_the_bias_as_keras_does():
    """One SGD step on a zero gradient (MSE at the target): Keras shrinks every variable by
    ``p * wd * lr``, biases included, so a bias of 1 becomes 1 - 0.5 * 0.1 = 0.95; the same
    for Adam, whose decay is decoupled (not an L2 term in the gradient)."""
    # Zero inputs and a zero hidden bias: the hidden layer outputs tanh(0) = 0 exactly and
    # the prediction is the output bias, 1.0, which is the target. Every gradient is exactly
    # 0 (Adam would turn even a rounding-sized gradient into a full step).
    x = np.zeros((4, 4), np.float32)
    y = np.ones((4, 1), np.float32)
    weights = _weights()
    weights[1] = np.zeros(5, np.float32)
    for name in ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad"):
        kwargs = {"learning_rate": 0.1, "weight_decay": 0.5}
        theirs, ours = _pair(
            getattr(keras.optimizers, name)(**kwargs),
            getattr(optimizers, name)(**kwargs),
            weights=weights,
        )
        theirs.train_on_batch(x, y)
        ours.train_on_batch(x, y)
        (kernel, bias) = ours.get_weights()[2:]
        assert bias[0] == pytest.approx(0.95, abs=1e-6), name
        np.testing.assert_allclose(kernel, weights[2] * 0.95, rtol=1e-6)
        for got, want in zip(ours.get_weights(), theirs.get_weights()):
            np.testing.assert_allclose(got, np.asarray(want), rtol=RTOL, atol=ATOL)


def test_binary_crossentropy_from_logits_trains_as_keras():
    x, y = _data(binary=True)
    theirs, ours = _pair(
        keras.optimizers.SGD(learning_rate=0.5),
        optimizers.SGD(learning_rate=0.5),
        keras_loss=keras.losses.BinaryCrossentropy(from_logits=True),
        our_loss=losses.BinaryCrossentropy(from_logits=True),
    )
    _train_and_compare(theirs, ours, x, y)


def test_binary_crossentropy_from_logits_value():
    """Logit 2 against label 0: 2 + log1p(exp(-2)) = 2.126928 (Keras's number), not the
    probability path's 16.118 on a clamped 'probability' of 2."""
    model = Sequential([layers.Dense(1, input_shape=(1,))], seed=0)
    model.set_weights([np.array([[1.0]], np.float32), np.array([0.0], np.float32)])
    model.compile(optimizer="sgd", loss=losses.BinaryCrossentropy(from_logits=True))
    got = model.evaluate(np.array([[2.0]], np.float32), np.array([[0.0]], np.float32))
    want = float(
        keras.losses.BinaryCrossentropy(from_logits=True)(
            np.array([[0.0]], np.float32), np.array([[2.0]], np.float32)
        )
    )
    assert want == pytest.approx(2.0 + math.log1p(math.exp(-2.0)), rel=1e-6)
    assert got == pytest.approx(want, rel=1e-6)


def test_binary_crossentropy_on_saturated_sigmoid_matches_keras_float32_clamp():
    """A sigmoid saturated at 1.0 in float32 against label 0: Keras clamps to 1 - 1e-7 rounded
    to float32 (1 - 2^-23) and reports 23 ln 2 = 15.942, not -ln(1e-7) = 16.118."""
    x = np.array([[40.0, 0.0, 0.0, 0.0], [0.3, -0.2, 0.1, 0.4]], np.float32)
    y = np.array([[0.0], [1.0]], np.float32)
    weights = _weights()
    # Output pre-activation near 5 * 10 + 1 = 51: sigmoid rounds to 1.0 in float32.
    weights[2] = np.full((5, 1), 10.0, np.float32)
    weights[0] = np.abs(weights[0])
    theirs, ours = _pair(
        keras.optimizers.SGD(learning_rate=0.1),
        optimizers.SGD(learning_rate=0.1),
        keras_loss="binary_crossentropy",
        our_loss="binary_crossentropy",
        out_act="sigmoid",
        weights=weights,
    )
    saturated = (x[:1], y[:1])
    assert np.asarray(theirs.predict(saturated[0], verbose=0))[0, 0] == 1.0
    want = float(theirs.evaluate(*saturated, verbose=0))
    assert want == pytest.approx(23 * math.log(2), rel=1e-6)
    assert ours.evaluate(*saturated) == pytest.approx(want, rel=1e-6)
    _train_and_compare(theirs, ours, x, y, epochs=3, batch_size=2)


def test_zero_learning_rate_is_accepted_and_freezes_the_weights():
    x, y = _data()
    theirs, ours = _pair(keras.optimizers.SGD(learning_rate=0.0), optimizers.SGD(learning_rate=0.0))
    _train_and_compare(theirs, ours, x, y, epochs=2)
    for got, want in zip(ours.get_weights(), _weights()):
        np.testing.assert_array_equal(got, want)
    for name in ("Adam", "AdamW", "RMSprop", "Adagrad"):
        assert getattr(optimizers, name)(learning_rate=0).learning_rate == 0.0


@pytest.mark.parametrize("bad", ["0.1", -0.1, float("nan"), float("inf"), True, None], ids=repr)
def test_bad_learning_rate_is_refused_naming_it(bad):
    with pytest.raises((ValueError, TypeError), match="learning_rate"):
        optimizers.SGD(learning_rate=bad)


def test_only_one_clip_argument():
    with pytest.raises(ValueError, match="only one of"):
        optimizers.SGD(clipnorm=1.0, clipvalue=1.0)
    with pytest.raises(ValueError, match="clipnorm"):
        optimizers.Adam(clipnorm=-1.0)


def test_keras_default_hyperparameters():
    assert optimizers.Adam().epsilon == keras.optimizers.Adam().epsilon == 1e-7
    assert optimizers.RMSprop().epsilon == keras.optimizers.RMSprop().epsilon
    assert optimizers.Adagrad().epsilon == keras.optimizers.Adagrad().epsilon
    assert (
        optimizers.Adagrad().initial_accumulator_value
        == keras.optimizers.Adagrad().initial_accumulator_value
        == 0.1
    )
    assert optimizers.AdamW().weight_decay == keras.optimizers.AdamW().weight_decay == 0.004


def test_optimizer_config_without_new_fields_still_compiles():
    """Files saved before these fields existed store the older optimizer JSON."""
    import json

    model = Sequential([layers.Dense(1, input_shape=(2,))], seed=0)
    model.build()
    old = {
        "class_name": "Adagrad",
        "config": {
            "learning_rate": 0.1,
            "global_clipnorm": None,
            "weight_decay": 0.0,
            "epsilon": 1e-7,
        },
    }
    model._native.compile(
        json.dumps(old), json.dumps({"name": "mean_squared_error", "from_logits": False})
    )


def test_a_warm_up_schedule_may_start_at_zero_as_in_keras():
    """A LearningRateScheduler whose first epoch sets 0 (a linear warm-up) runs and trains as
    Keras's does."""

    def warm_up(epoch, lr):
        return 0.05 * epoch

    x, y = _data()
    theirs, ours = _pair(keras.optimizers.SGD(learning_rate=0.1), optimizers.SGD(learning_rate=0.1))
    h_theirs = theirs.fit(
        x,
        y,
        epochs=3,
        batch_size=4,
        shuffle=False,
        verbose=0,
        callbacks=[keras.callbacks.LearningRateScheduler(warm_up)],
    )
    h_ours = ours.fit(
        x,
        y,
        epochs=3,
        batch_size=4,
        shuffle=False,
        verbose=0,
        callbacks=[callbacks.LearningRateScheduler(warm_up)],
    )
    np.testing.assert_allclose(
        h_ours.history["loss"], h_theirs.history["loss"], rtol=RTOL, atol=ATOL
    )
    for got, want in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(got, np.asarray(want), rtol=RTOL, atol=ATOL)
    assert ours.learning_rate == pytest.approx(0.1)
