"""The functional API (``keras.Input``, layers called on tensors, ``keras.Model(inputs,
outputs)``, shared layers, the merge layers) against Keras 3 itself (JAX backend).

Every model is built by one function run once with ``keras`` and once with
``rustyml.keras``; rustyml's model gets Keras's initial weights (matched by layer name), and
both predict and then train a few full-batch SGD steps with ``shuffle=False``.

Tolerance: both compute in float32 (u = 2^-24 ~ 6e-8). A forward pass through these models
rounds each output through at most ~4 layers whose products have length <= 36 (a 3x3x4
convolution), which XLA and rustyml sum in different orders: a relative difference of at
most a few tens of u per layer, ~1e-6 over the depth. Each SGD step adds the same again to
the weights through the backward pass and the updates; with 3 steps that stays below
~2e-5 relative (rtol), plus atol = 1e-6 for values near 0 where relative error is
meaningless. A wrong gradient (a tie routed to one branch, a missing path of a shared layer
or of a tensor feeding two layers, an unweighted loss) moves weights by 1e-3 or more.
"""

import json
import os

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")
keras = pytest.importorskip("keras")

import rustyml.keras as rk
from rustyml import parallel

RTOL, ATOL = 2e-5, 1e-6
STEPS = 3


def _rng(seed):
    return np.random.default_rng(seed)


def _copy_weights(theirs, ours):
    """Keras's weights into rustyml's model, layer by layer (matched by name)."""
    arrays = []
    for layer in ours.layers:
        arrays += [np.asarray(w) for w in theirs.get_layer(layer.name).get_weights()]
    ours.set_weights(arrays)


def _ours_by_layer(theirs, ours):
    """rustyml's weights grouped like Keras's, for comparing after training."""
    got = ours.get_weights()
    out, i = [], 0
    for layer in ours.layers:
        n = len(theirs.get_layer(layer.name).get_weights())
        out.append((layer.name, got[i : i + n]))
        i += n
    assert i == len(got)
    return out


def _compare(build, xs, ys, loss="mse", loss_weights=None, lr=0.05, steps=STEPS):
    """Build with both libraries, copy Keras's weights, compare predictions, train
    ``steps`` full-batch SGD steps and compare losses and weights."""
    theirs = build(keras)
    ours = build(rk)
    _copy_weights(theirs, ours)
    want = theirs.predict(xs, verbose=0)
    got = ours.predict(xs)
    for g, w in zip(*(_as_list(got), _as_list(want))):
        np.testing.assert_allclose(g, np.asarray(w), rtol=RTOL, atol=ATOL)
    kwargs = (
        {"loss": loss} if loss_weights is None else {"loss": loss, "loss_weights": loss_weights}
    )
    theirs.compile(optimizer=keras.optimizers.SGD(lr), **kwargs)
    ours.compile(optimizer=rk.optimizers.SGD(lr), **kwargs)
    n = len(_as_list(xs)[0])
    h_theirs = theirs.fit(xs, ys, batch_size=n, epochs=steps, shuffle=False, verbose=0)
    h_ours = ours.fit(xs, ys, batch_size=n, epochs=steps, shuffle=False, verbose=0)
    assert set(h_ours.history) == set(h_theirs.history)
    for key in h_theirs.history:
        np.testing.assert_allclose(
            h_ours.history[key], h_theirs.history[key], rtol=RTOL, atol=ATOL, err_msg=key
        )
    for name, arrays in _ours_by_layer(theirs, ours):
        for g, w in zip(arrays, theirs.get_layer(name).get_weights()):
            np.testing.assert_allclose(g, np.asarray(w), rtol=RTOL, atol=ATOL, err_msg=name)
    return theirs, ours


def _as_list(v):
    return list(v) if isinstance(v, (list, tuple)) else [v]


def test_residual_block_with_a_projection_shortcut():
    def build(k):
        x = k.Input((6, 6, 3), name="image")
        h = k.layers.Conv2D(4, 3, padding="same", activation="relu", name="c1")(x)
        h = k.layers.Conv2D(4, 3, padding="same", name="c2")(h)
        skip = k.layers.Conv2D(4, 1, name="proj")(x)
        h = k.layers.Add(name="add")([h, skip])
        h = k.layers.Activation("relu", name="act")(h)
        h = k.layers.GlobalAveragePooling2D(name="gap")(h)
        return k.Model(x, k.layers.Dense(1, name="out")(h))

    r = _rng(0)
    x = r.standard_normal((8, 6, 6, 3)).astype(np.float32)
    y = r.standard_normal((8, 1)).astype(np.float32)
    _compare(build, x, y)


def test_identity_residual_where_one_tensor_feeds_two_layers():
    def build(k):
        x = k.Input((5,), name="x")
        h = k.layers.Dense(5, activation="tanh", name="d1")(x)
        r = k.layers.Dense(5, activation="tanh", name="d2")(h)
        h = k.layers.Add(name="add")([h, r])
        return k.Model(x, k.layers.Dense(2, name="out")(h))

    r = _rng(1)
    _compare(
        build,
        r.standard_normal((10, 5)).astype(np.float32),
        r.standard_normal((10, 2)).astype(np.float32),
    )


def test_two_towers_joined_by_concatenate():
    def build(k):
        a = k.Input((5,), name="user")
        b = k.Input((3,), name="item")
        ha = k.layers.Dense(4, activation="relu", name="tower_a")(a)
        hb = k.layers.Dense(4, activation="tanh", name="tower_b")(b)
        h = k.layers.Concatenate(name="join")([ha, hb])
        h = k.layers.Dense(6, activation="relu", name="mix")(h)
        return k.Model([a, b], k.layers.Dense(1, name="score")(h))

    r = _rng(2)
    xs = [
        r.standard_normal((12, 5)).astype(np.float32),
        r.standard_normal((12, 3)).astype(np.float32),
    ]
    _compare(build, xs, r.standard_normal((12, 1)).astype(np.float32))


def test_a_shared_layer_sums_the_gradients_of_its_calls():
    def build(k):
        a = k.Input((4,), name="left")
        b = k.Input((4,), name="right")
        shared = k.layers.Dense(3, activation="tanh", name="encoder")
        h = k.layers.Subtract(name="diff")([shared(a), shared(b)])
        return k.Model([a, b], k.layers.Dense(1, name="out")(h))

    r = _rng(3)
    xs = [
        r.standard_normal((9, 4)).astype(np.float32),
        r.standard_normal((9, 4)).astype(np.float32),
    ]
    theirs, ours = _compare(build, xs, r.standard_normal((9, 1)).astype(np.float32))
    # one set of weights for both calls
    assert len(ours.get_weights()) == len(theirs.get_weights()) == 4


@pytest.mark.parametrize(
    "merge",
    [
        ("Add", {}),
        ("Subtract", {}),
        ("Multiply", {}),
        ("Average", {}),
        ("Maximum", {}),
        ("Minimum", {}),
        ("Concatenate", {"axis": -1}),
        ("Dot", {"axes": 1}),
        ("Dot", {"axes": 1, "normalize": True}),
    ],
    ids=lambda m: m[0] + ("_normalized" if m[1].get("normalize") else ""),
)
def test_each_merge_layer(merge):
    name, kwargs = merge

    def build(k):
        a = k.Input((4,), name="a")
        b = k.Input((4,), name="b")
        ha = k.layers.Dense(4, activation="tanh", name="da")(a)
        hb = k.layers.Dense(4, activation="tanh", name="db")(b)
        m = getattr(k.layers, name)(name="merge", **kwargs)([ha, hb])
        return k.Model([a, b], k.layers.Dense(2, name="out")(m))

    r = _rng(4)
    xs = [
        r.standard_normal((10, 4)).astype(np.float32),
        r.standard_normal((10, 4)).astype(np.float32),
    ]
    _compare(build, xs, r.standard_normal((10, 2)).astype(np.float32))


@pytest.mark.parametrize("name", ["Add", "Multiply", "Average", "Maximum", "Minimum"])
def test_merges_of_three_tensors_fold_as_keras(name):
    def build(k):
        x = k.Input((3,), name="x")
        hs = [k.layers.Dense(3, activation="tanh", name=f"d{i}")(x) for i in range(3)]
        m = getattr(k.layers, name)(name="merge")(hs)
        return k.Model(x, k.layers.Dense(1, name="out")(m))

    r = _rng(5)
    _compare(
        build,
        r.standard_normal((8, 3)).astype(np.float32),
        r.standard_normal((8, 1)).astype(np.float32),
    )


@pytest.mark.parametrize("name", ["Maximum", "Minimum"])
def test_maximum_and_minimum_ties_split_the_gradient_as_keras(name):
    # two branches with equal weights tie everywhere: JAX gives each half the gradient, so
    # the branches stay equal; routing a tie to one side would train only that branch
    def build(k):
        x = k.Input((3,), name="x")
        m = getattr(k.layers, name)(name="merge")(
            [k.layers.Dense(3, name="left")(x), k.layers.Dense(3, name="right")(x)]
        )
        return k.Model(x, k.layers.Dense(1, name="out")(m))

    theirs = build(keras)
    theirs.get_layer("right").set_weights(theirs.get_layer("left").get_weights())
    ours = build(rk)
    _copy_weights(theirs, ours)
    r = _rng(6)
    x = r.standard_normal((8, 3)).astype(np.float32)
    y = r.standard_normal((8, 1)).astype(np.float32)
    for m in (theirs, ours):
        m.compile(optimizer=(keras if m is theirs else rk).optimizers.SGD(0.1), loss="mse")
        m.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    for name_, arrays in _ours_by_layer(theirs, ours):
        for g, w in zip(arrays, theirs.get_layer(name_).get_weights()):
            np.testing.assert_allclose(g, np.asarray(w), rtol=RTOL, atol=ATOL, err_msg=name_)
    left, right = ours.get_weights()[0:2], ours.get_weights()[2:4]
    assert all(np.array_equal(p, q) for p, q in zip(left, right))


def test_two_outputs_with_loss_weights():
    def build(k):
        x = k.Input((6,), name="x")
        h = k.layers.Dense(8, activation="relu", name="trunk")(x)
        reg = k.layers.Dense(2, name="reg")(h)
        cls = k.layers.Dense(1, activation="sigmoid", name="cls")(h)
        return k.Model(x, [reg, cls])

    r = _rng(7)
    x = r.standard_normal((16, 6)).astype(np.float32)
    ys = [
        r.standard_normal((16, 2)).astype(np.float32),
        (r.uniform(size=(16, 1)) < 0.5).astype(np.float32),
    ]
    theirs, ours = _compare(
        build, x, ys, loss=["mse", "binary_crossentropy"], loss_weights=[1.0, 0.3]
    )
    want = theirs.evaluate(x, ys, verbose=0, return_dict=True)
    got = ours.evaluate(x, ys, return_dict=True)
    assert set(got) == set(want)
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=RTOL, atol=ATOL, err_msg=key)


def test_dict_inputs_and_outputs_and_metrics_per_output():
    def build(k):
        a = k.Input((3,), name="a")
        b = k.Input((2,), name="b")
        h = k.layers.Concatenate(name="cat")([a, b])
        return k.Model(
            {"a": a, "b": b},
            {
                "value": k.layers.Dense(1, name="value")(h),
                "flag": k.layers.Dense(1, activation="sigmoid", name="flag")(h),
            },
        )

    theirs, ours = build(keras), build(rk)
    _copy_weights(theirs, ours)
    r = _rng(8)
    xs = {
        "a": r.standard_normal((12, 3)).astype(np.float32),
        "b": r.standard_normal((12, 2)).astype(np.float32),
    }
    ys = {
        "value": r.standard_normal((12, 1)).astype(np.float32),
        "flag": (r.uniform(size=(12, 1)) < 0.5).astype(np.float32),
    }
    want, got = theirs.predict(xs, verbose=0), ours.predict(xs)
    assert set(got) == set(want) == {"value", "flag"}
    for key in want:
        np.testing.assert_allclose(got[key], want[key], rtol=RTOL, atol=ATOL)
    compile_args = {
        "loss": {"value": "mse", "flag": "binary_crossentropy"},
        "metrics": {"flag": ["accuracy"]},
    }
    theirs.compile(optimizer=keras.optimizers.SGD(0.1), **compile_args)
    ours.compile(optimizer=rk.optimizers.SGD(0.1), **compile_args)
    h_t = theirs.fit(xs, ys, batch_size=4, epochs=2, shuffle=False, verbose=0)
    h_o = ours.fit(xs, ys, batch_size=4, epochs=2, shuffle=False, verbose=0)
    assert set(h_o.history) == set(h_t.history)
    for key in h_t.history:
        np.testing.assert_allclose(
            h_o.history[key], h_t.history[key], rtol=RTOL, atol=ATOL, err_msg=key
        )


def _small(k, name="m"):
    a = k.Input((4,), name="a")
    b = k.Input((4,), name="b")
    shared = k.layers.Dense(3, activation="tanh", name="shared")
    h = k.layers.Concatenate(name="cat")([shared(a), shared(b)])
    return k.Model([a, b], k.layers.Dense(2, name="out")(h), name=name)


def test_config_has_keras_functional_shape():
    theirs, ours = _small(keras), _small(rk)
    want, got = theirs.get_config(), ours.get_config()
    assert got["input_layers"] == want["input_layers"]
    assert got["output_layers"] == want["output_layers"]

    def graph(config):
        return {
            entry["name"]: (
                entry["class_name"],
                [json.dumps(node["args"], sort_keys=True) for node in entry["inbound_nodes"]],
            )
            for entry in config["layers"]
        }

    def histories(config):
        out = {}
        for name, (cls, nodes) in graph(config).items():
            hist = []
            for node in nodes:
                args = json.loads(node)[0]
                refs = args if isinstance(args, list) else [args]
                hist.append([r["config"]["keras_history"] for r in refs])
            out[name] = (cls, hist)
        return out

    assert histories(got) == histories(want)


def test_from_config_save_and_load_give_the_same_model(tmp_path):
    model = _small(rk)
    model.compile(optimizer="adam", loss="mse")
    r = _rng(9)
    xs = [
        r.standard_normal((6, 4)).astype(np.float32),
        r.standard_normal((6, 4)).astype(np.float32),
    ]
    model.fit(xs, r.standard_normal((6, 2)).astype(np.float32), epochs=2, verbose=0)
    again = rk.Model.from_config(model.get_config())
    again.set_weights(model.get_weights())
    assert np.array_equal(again.predict(xs), model.predict(xs))
    path = tmp_path / "m.safetensors"
    model.save(path)
    loaded = rk.models.load_model(path)
    assert isinstance(loaded, rk.Model)
    assert np.array_equal(loaded.predict(xs), model.predict(xs))
    assert [layer.name for layer in loaded.layers] == [layer.name for layer in model.layers]
    y = r.standard_normal((6, 2)).astype(np.float32)
    assert loaded.evaluate(xs, y) == pytest.approx(model.evaluate(xs, y), rel=1e-6)


def test_summary_layers_and_get_layer():
    model = _small(rk)
    lines = []
    model.summary(print_fn=lines.append)
    text = "\n".join(lines)
    for name in ("a (InputLayer)", "shared (Dense)", "cat (Concatenate)", "out (Dense)"):
        assert name in text
    assert "shared[0][0], shared[1][0]" in text
    # 4*3+3 + 6*2+2, as Keras counts
    assert model.count_params() == _small(keras).count_params() == 29
    assert model.get_layer("cat") is model.layers[3]
    assert model.get_layer(index=0).name == "a"
    with pytest.raises(ValueError, match="No such layer"):
        model.get_layer("nope")
    assert rk.models.Model is rk.Model


def test_same_seed_same_bits_at_one_and_two_threads():
    r = _rng(10)
    xs = [
        r.standard_normal((40, 4)).astype(np.float32),
        r.standard_normal((40, 4)).astype(np.float32),
    ]
    y = r.standard_normal((40, 2)).astype(np.float32)

    def train(threads):
        with parallel.num_threads(threads):
            a = rk.Input((4,), name="a")
            b = rk.Input((4,), name="b")
            shared = rk.layers.Dense(3, activation="tanh", name="shared")
            h = rk.layers.Concatenate(name="cat")([shared(a), shared(b)])
            model = rk.Model([a, b], rk.layers.Dense(2, name="out")(h), seed=3)
            model.compile(optimizer="adam", loss="mse")
            hist = model.fit(xs, y, batch_size=8, epochs=3, verbose=0).history["loss"]
            return hist, model.predict(xs).tobytes()

    assert train(1) == train(2)


def test_bad_graphs_are_clear_value_errors():
    a = rk.Input((3,), name="a")
    b = rk.Input((4,), name="b")
    with pytest.raises(ValueError, match=r"'add_bad'.*same shape"):
        rk.layers.Add(name="add_bad")([a, b])
    z = rk.Input((3,), name="z")
    out = rk.layers.Add(name="add_ok")([a, z])
    with pytest.raises(ValueError, match=r"Graph disconnected.*'z'"):
        rk.Model(a, out)
    shared = rk.layers.Dense(2, name="sh")
    shared(a)
    with pytest.raises(ValueError, match="shared layer"):
        shared(b)
    with pytest.raises(ValueError, match="Dot"):
        rk.layers.Dot(axes=1, name="dot_bad")([a, b])
    with pytest.raises(ValueError, match="list"):
        rk.layers.Add(name="add_one")(a)
    with pytest.raises(TypeError, match="symbolic tensors"):
        rk.layers.Dense(2)(np.zeros((2, 3), np.float32))
    with pytest.raises(NotImplementedError, match="subclassing"):
        rk.Model()
    model = rk.Model(a, rk.layers.Dense(1, name="d_ok")(a))
    with pytest.raises(ValueError, match="compiled"):
        model.fit(np.zeros((2, 3)), np.zeros((2, 1)))
    model.compile(optimizer="sgd", loss="mse")
    with pytest.raises(ValueError, match="per-sample shape"):
        model.fit(np.zeros((2, 5)), np.zeros((2, 1)), verbose=0)
    with pytest.raises(ValueError, match="samples"):
        model.fit(np.zeros((2, 3)), np.zeros((3, 1)), verbose=0)


def test_the_readme_functional_example_runs_as_written(capsys):
    readme = (__import__("pathlib").Path(__file__).resolve().parents[3] / "README.md").read_text()
    start = readme.index("```python", readme.index("The functional API builds"))
    code = readme[start + len("```python") : readme.index("```", start + 3)]
    namespace = {}
    exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102
    assert isinstance(namespace["model"], rk.Model)
    assert "add (Add)" in capsys.readouterr().out


def test_frozen_layers_and_validation_logs_match_keras():
    def build(k):
        a = k.Input((5,), name="user")
        b = k.Input((3,), name="item")
        ha = k.layers.Dense(4, activation="relu", name="tower_a")(a)
        hb = k.layers.Dense(4, activation="tanh", name="tower_b")(b)
        h = k.layers.Concatenate(name="join")([ha, hb])
        return k.Model([a, b], [k.layers.Dense(1, name="y1")(h), k.layers.Dense(2, name="y2")(h)])

    theirs, ours = build(keras), build(rk)
    _copy_weights(theirs, ours)
    frozen = ours.get_layer("tower_a")
    frozen_before = [np.array(w) for w in theirs.get_layer("tower_a").get_weights()]
    theirs.get_layer("tower_a").trainable = False
    frozen.trainable = False
    r = _rng(11)
    xs = [
        r.standard_normal((10, 5)).astype(np.float32),
        r.standard_normal((10, 3)).astype(np.float32),
    ]
    ys = [
        r.standard_normal((10, 1)).astype(np.float32),
        r.standard_normal((10, 2)).astype(np.float32),
    ]
    vxs = [
        r.standard_normal((6, 5)).astype(np.float32),
        r.standard_normal((6, 3)).astype(np.float32),
    ]
    vys = [
        r.standard_normal((6, 1)).astype(np.float32),
        r.standard_normal((6, 2)).astype(np.float32),
    ]
    kwargs = {"loss": ["mse", "mse"], "loss_weights": [0.7, 1.3]}
    theirs.compile(optimizer=keras.optimizers.SGD(0.1), **kwargs)
    ours.compile(optimizer=rk.optimizers.SGD(0.1), **kwargs)
    fit = {
        "batch_size": 5,
        "epochs": 2,
        "shuffle": False,
        "verbose": 0,
        "validation_data": (vxs, vys),
    }
    h_t, h_o = theirs.fit(xs, ys, **fit), ours.fit(xs, ys, **fit)
    assert "val_y2_loss" in h_o.history
    assert set(h_o.history) == set(h_t.history)
    for key in h_t.history:
        np.testing.assert_allclose(
            h_o.history[key], h_t.history[key], rtol=RTOL, atol=ATOL, err_msg=key
        )
    for name, arrays in _ours_by_layer(theirs, ours):
        for g, w in zip(arrays, theirs.get_layer(name).get_weights()):
            np.testing.assert_allclose(g, np.asarray(w), rtol=RTOL, atol=ATOL, err_msg=name)
    for g, w in zip(ours.get_weights()[:2], frozen_before):
        np.testing.assert_array_equal(g, w)


def test_a_pickled_model_predicts_and_trains_on():
    import pickle

    model = _small(rk)
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    r = _rng(12)
    xs = [
        r.standard_normal((6, 4)).astype(np.float32),
        r.standard_normal((6, 4)).astype(np.float32),
    ]
    y = r.standard_normal((6, 2)).astype(np.float32)
    copy = pickle.loads(pickle.dumps(model))
    assert np.array_equal(copy.predict(xs), model.predict(xs))
    # plain SGD keeps no running state, so both continue alike
    h1 = model.fit(xs, y, epochs=2, shuffle=False, verbose=0).history
    h2 = copy.fit(xs, y, epochs=2, shuffle=False, verbose=0).history
    assert h1 == h2
