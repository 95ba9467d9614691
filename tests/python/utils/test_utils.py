"""rustyml.utils against scikit-learn.preprocessing / model_selection and hand-derived values.

Agreement bound: 1e-10 relative (the issue's), absolute for values near zero."""

import pickle
import warnings

import numpy as np
import pytest
from conftest import PARALLEL, SERIAL
from sklearn import preprocessing as sp
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split as sk_split
from sklearn.pipeline import make_pipeline

import rustyml
from rustyml import NotFittedError
from rustyml import utils as ru

TOL = {"rtol": 1e-10, "atol": 1e-10}


def close(ours, ref):
    np.testing.assert_allclose(ours, ref, **TOL)


def data(rng, n=300, d=6):
    X = rng.normal(size=(n, d)) * np.array([1.0, 10.0, 0.01, 1e3, 3.0, 1.0])[:d] + 5.0
    X[:, 2] = 7.25  # constant column
    if d > 5:
        X[:, 5] = 0.1  # constant, not exactly representable: a near-zero computed variance
    return X


def layouts(X):
    yield "C", X
    yield "F", np.asfortranarray(X)
    big = np.zeros((X.shape[0] * 2, X.shape[1] * 3))
    big[::2, ::3] = X
    yield "strided", big[::2, ::3]
    yield "float32", X.astype(np.float32)


SCALERS = [
    (ru.StandardScaler, sp.StandardScaler, {}, ["mean_", "var_", "scale_", "n_samples_seen_"]),
    (ru.StandardScaler, sp.StandardScaler, {"with_mean": False}, ["mean_", "var_", "scale_"]),
    (ru.StandardScaler, sp.StandardScaler, {"with_std": False}, ["mean_"]),
    (
        ru.MinMaxScaler,
        sp.MinMaxScaler,
        {},
        ["data_min_", "data_max_", "data_range_", "scale_", "min_"],
    ),
    (ru.MinMaxScaler, sp.MinMaxScaler, {"feature_range": (-3, 2)}, ["scale_", "min_"]),
    (ru.MaxAbsScaler, sp.MaxAbsScaler, {}, ["max_abs_", "scale_", "n_samples_seen_"]),
    (ru.RobustScaler, sp.RobustScaler, {}, ["center_", "scale_"]),
    (ru.RobustScaler, sp.RobustScaler, {"quantile_range": (10.0, 90.0)}, ["center_", "scale_"]),
    (ru.RobustScaler, sp.RobustScaler, {"with_centering": False}, ["scale_"]),
    (ru.Normalizer, sp.Normalizer, {"norm": "l1"}, []),
    (ru.Normalizer, sp.Normalizer, {"norm": "l2"}, []),
    (ru.Normalizer, sp.Normalizer, {"norm": "max"}, []),
]


@pytest.mark.parametrize("ours_cls,ref_cls,kw,attrs", SCALERS)
def test_scalers_match_sklearn(rng, ours_cls, ref_cls, kw, attrs):
    X = data(rng)
    new = data(rng, n=40)
    for layout, Xl in layouts(X):
        ours = ours_cls(**kw)
        assert ours.fit(Xl) is ours
        # the reference sees the same values in float64 (float32 input is converted once)
        X64 = np.asarray(Xl, dtype=np.float64)
        ref = ref_cls(**kw).fit(X64)
        for a in attrs:
            np.testing.assert_allclose(
                getattr(ours, a), getattr(ref, a), err_msg=f"{layout} {a}", **TOL
            )
        np.testing.assert_allclose(ours.transform(new), ref.transform(new), err_msg=layout, **TOL)
        out = ours_cls(**kw).fit_transform(Xl)
        assert out.dtype == np.float64 and np.all(np.isfinite(out))
        np.testing.assert_allclose(out, ref_cls(**kw).fit_transform(X64), err_msg=layout, **TOL)
        if hasattr(ref, "inverse_transform"):
            np.testing.assert_allclose(
                ours.inverse_transform(out), ref.inverse_transform(out), **TOL
            )
    assert ours.n_features_in_ == X.shape[1]


@pytest.mark.parametrize(
    "ours_cls,ref_cls",
    [
        (ru.StandardScaler, sp.StandardScaler),
        (ru.MinMaxScaler, sp.MinMaxScaler),
        (ru.MaxAbsScaler, sp.MaxAbsScaler),
    ],
)
def test_partial_fit_matches_sklearn(rng, ours_cls, ref_cls):
    X = data(rng, n=500)
    ours, ref = ours_cls(), ref_cls()
    for chunk in np.array_split(X, 7):
        ours.partial_fit(chunk)
        ref.partial_fit(chunk)
    close(ours.transform(X), ref.transform(X))
    assert ours.n_samples_seen_ == ref.n_samples_seen_ == 500


def test_min_max_clip_and_constant_features(rng):
    X = data(rng)
    ours = ru.MinMaxScaler(clip=True).fit(X)
    ref = sp.MinMaxScaler(clip=True).fit(X)
    far = X * 3.0 - 10.0
    close(ours.transform(far), ref.transform(far))
    assert ours.transform(far).min() >= 0.0 and ours.transform(far).max() <= 1.0
    with pytest.raises(ValueError, match="smaller than maximum"):
        ru.MinMaxScaler(feature_range=(1, 0)).fit(X)


def test_standard_scaler_constant_and_near_constant_columns():
    X = np.column_stack([np.full(1000, 1e9 + 0.1), np.full(1000, -3.3), np.linspace(0, 1, 1000)])
    ours = ru.StandardScaler().fit(X)
    ref = sp.StandardScaler().fit(X)
    np.testing.assert_array_equal(ours.scale_[:2], [1.0, 1.0])
    np.testing.assert_array_equal(ref.scale_[:2], [1.0, 1.0])
    close(ours.transform(X)[:, 2], ref.transform(X)[:, 2])
    # a constant column's mean is exactly its value here, so it transforms to exactly 0;
    # scikit-learn's summed mean is off by its summation error (1.6e-5 for 1e9 + 0.1), at
    # most n * eps * |value|
    np.testing.assert_array_equal(ours.transform(X)[:, :2], 0.0)
    bound = 1000 * np.finfo(float).eps * np.abs(X[0, :2])
    assert np.all(np.abs(ref.transform(X)[:, :2]) <= bound)


def test_scaler_bad_input_and_conventions(rng):
    X = data(rng)
    sc = ru.StandardScaler()
    with pytest.raises(NotFittedError):
        sc.transform(X)
    with pytest.raises(ValueError, match="NaN"):
        sc.fit(np.where(X > 6, np.nan, X))
    with pytest.raises(ValueError, match="infinity"):
        ru.MinMaxScaler().fit(np.where(X > 6, np.inf, X))
    with pytest.raises(ValueError, match="empty"):
        sc.fit(np.zeros((0, 3)))
    sc.fit(X)
    with pytest.raises(ValueError, match="features"):
        sc.transform(X[:, :3])
    with pytest.raises(ValueError, match="2-dimensional"):
        sc.transform(X[0])
    with pytest.raises(TypeError):
        sc.fit(np.array([["a", "b"]]))
    with pytest.raises(ValueError, match="norm"):
        ru.Normalizer(norm="l3").fit(X)
    with pytest.raises(ValueError, match="quantile range"):
        ru.RobustScaler(quantile_range=(80, 20)).fit(X)
    # scikit-learn conventions: clone, get/set_params, pickle, save/load, Pipeline
    c = clone(ru.MinMaxScaler(feature_range=(-1, 1)))
    assert c.get_params()["feature_range"] == (-1, 1)
    back = pickle.loads(pickle.dumps(sc))
    np.testing.assert_array_equal(back.transform(X), sc.transform(X))
    assert back.mean_.tobytes() == sc.mean_.tobytes()
    y = (X[:, 0] > 5).astype(int)
    pipe = make_pipeline(ru.StandardScaler(), LogisticRegression()).fit(X, y)
    ref = make_pipeline(sp.StandardScaler(), LogisticRegression()).fit(X, y)
    np.testing.assert_allclose(pipe.predict_proba(X), ref.predict_proba(X), rtol=1e-6)


def test_save_load(tmp_path, rng):
    X = data(rng)
    for model in (ru.StandardScaler(), ru.RobustScaler(), ru.Normalizer("max"), ru.MaxAbsScaler()):
        model.fit(X)
        path = tmp_path / "m.bin"
        model.save(path)
        np.testing.assert_array_equal(type(model).load(path).transform(X), model.transform(X))


def test_cheap_map_and_sum_gates_are_bitwise(rng, gate):
    X = rng.normal(size=(50_000, 9))
    results = []
    for value in (SERIAL, PARALLEL):
        gate(rustyml.tuning.elementwise, "cheap_map_f64", value)
        gate(rustyml.tuning.reduction, "sum_f64", value)
        sc = ru.StandardScaler().fit(X)
        results.append(
            (
                sc.mean_.tobytes(),
                sc.scale_.tobytes(),
                sc.transform(X).tobytes(),
                ru.normalize(X).tobytes(),
            )
        )
    assert results[0] == results[1]


# -- standardize / normalize ------------------------------------------------------------------


def test_standardize_matches_definitions(rng):
    X = data(rng)
    close(ru.standardize(X), sp.StandardScaler().fit_transform(X))
    close(ru.standardize(X, axis=0), sp.StandardScaler().fit_transform(X))
    close(ru.standardize(X, axis="row"), sp.StandardScaler().fit_transform(X.T).T)
    g = ru.standardize(X, axis=None)
    close(g, (X - X.mean()) / X.std())
    with pytest.raises(ValueError, match="axis"):
        ru.standardize(X, axis="diagonal")


@pytest.mark.parametrize("order", ["l1", "l2", "max"])
def test_normalize_matches_sklearn(rng, order):
    X = data(rng)
    X[3] = 0.0  # a zero row is left as it is
    close(ru.normalize(X, order=order), sp.normalize(X, norm=order))
    close(ru.Normalizer(norm=order).fit_transform(X), sp.Normalizer(norm=order).fit_transform(X))
    close(ru.normalize(X, axis="column", order=order), sp.normalize(X, norm=order, axis=0))
    flat = X.reshape(1, -1)
    close(ru.normalize(X, axis=None, order=order), sp.normalize(flat, norm=order).reshape(X.shape))


def test_normalize_lp_and_bad_orders(rng):
    X = rng.normal(size=(20, 4))
    close(ru.normalize(X, order=3), X / np.sum(np.abs(X) ** 3, axis=1, keepdims=True) ** (1 / 3))
    with pytest.raises(ValueError, match="positive"):
        ru.normalize(X, order=-1.0)
    with pytest.raises(ValueError, match="norm order"):
        ru.normalize(X, order="l9")


# -- train_test_split -------------------------------------------------------------------------


SIZES = [
    (None, None),
    (0.3, None),
    (None, 0.6),
    (7, None),
    (None, 11),
    (0.2, 0.5),
    (5, 10),
    (0.33, 0.67),
]


@pytest.mark.parametrize("n", [17, 100, 101])
@pytest.mark.parametrize("test_size,train_size", SIZES)
def test_split_sizes_match_sklearn(n, test_size, train_size):
    X = np.arange(n * 2.0).reshape(n, 2)
    y = np.arange(n)
    try:
        ref = sk_split(X, y, test_size=test_size, train_size=train_size, random_state=0)
    except ValueError:
        with pytest.raises(ValueError):
            ru.train_test_split(X, y, test_size=test_size, train_size=train_size, random_state=0)
        return
    Xtr, Xte, ytr, yte = ru.train_test_split(
        X, y, test_size=test_size, train_size=train_size, random_state=0
    )
    assert (len(Xtr), len(Xte)) == (len(ref[0]), len(ref[1]))
    np.testing.assert_array_equal(Xtr[:, 0], ytr * 2.0)
    np.testing.assert_array_equal(Xte[:, 0], yte * 2.0)
    assert not set(ytr) & set(yte)


def test_split_reproducible_shuffle_free_and_any_sequence(rng):
    X = rng.normal(size=(50, 3))
    a = ru.train_test_split(X, random_state=42)
    b = ru.train_test_split(X, random_state=42)
    c = ru.train_test_split(X, random_state=43)
    np.testing.assert_array_equal(a[0], b[0])
    assert not np.array_equal(a[0], c[0])
    tr, te = ru.train_test_split(np.arange(10), shuffle=False)  # test: ceil(0.25 * 10) = 3
    np.testing.assert_array_equal(tr, np.arange(7))
    np.testing.assert_array_equal(te, np.arange(7, 10))
    ltr, lte = ru.train_test_split(list("abcdefghij"), test_size=3, random_state=1)
    assert isinstance(ltr, list) and len(lte) == 3 and set(ltr).isdisjoint(lte)


def test_stratified_split_matches_sklearn_counts(rng):
    y = np.repeat(np.array(["a", "b", "c"]), [60, 30, 10])
    X = np.arange(100)
    for test_size in (0.2, 0.3, 17):  # sizes whose class allocation has no ties to break
        ours = ru.train_test_split(X, y, test_size=test_size, stratify=y, random_state=5)
        ref = sk_split(X, y, test_size=test_size, stratify=y, random_state=5)
        for o, r in zip(ours[2:], ref[2:]):
            assert sorted(np.unique(o, return_counts=True)[1]) == sorted(
                np.unique(r, return_counts=True)[1]
            )
    with pytest.raises(ValueError, match="least populated class"):
        ru.train_test_split(X, np.arange(100) % 99, stratify=np.arange(100) % 99)
    with pytest.raises(ValueError, match="shuffle=False"):
        ru.train_test_split(X, stratify=y, shuffle=False)


def test_split_bad_input():
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        ru.train_test_split(np.zeros(5), np.zeros(6))
    with pytest.raises(ValueError, match="At least one array"):
        ru.train_test_split()
    with pytest.raises(ValueError, match="test_size"):
        ru.train_test_split(np.zeros(10), test_size=1.5)
    with pytest.raises(ValueError, match="train set will be empty"):
        ru.train_test_split(np.zeros(1))
    with pytest.raises(TypeError):
        ru.train_test_split(np.zeros(10), random_state="seed")


# -- label encoding ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "y",
    [
        np.array([3, -1, 3, 7, 0]),
        np.array([2.5, -1.0, 2.5, 0.0]),
        np.array(["paris", "tokyo", "amsterdam", "paris"]),
        np.array([True, False, True]),
        np.array([10, 20, 10], dtype=np.int32),
        np.array(["b", "a"], dtype=object),
    ],
)
def test_label_encoder_matches_sklearn(y):
    ours = ru.LabelEncoder()
    ref = sp.LabelEncoder()
    codes = ours.fit_transform(y)
    np.testing.assert_array_equal(codes, ref.fit_transform(y))
    np.testing.assert_array_equal(ours.classes_, ref.classes_)
    assert ours.classes_.dtype == ref.classes_.dtype
    np.testing.assert_array_equal(ours.inverse_transform(codes), y)
    np.testing.assert_array_equal(
        ru.LabelEncoder().fit(y).transform(y[::-1]), ref.transform(y[::-1])
    )
    back = pickle.loads(pickle.dumps(ours))
    np.testing.assert_array_equal(back.transform(y), codes)


def test_label_encoder_errors():
    enc = ru.LabelEncoder()
    with pytest.raises(NotFittedError):
        enc.transform([1])
    enc.fit(["x", "y"])
    with pytest.raises(ValueError, match="unseen labels.*z"):
        enc.transform(["x", "z"])
    with pytest.raises(ValueError, match="unseen"):
        enc.inverse_transform([0, 5])
    with pytest.raises(ValueError, match="unseen"):
        ru.LabelEncoder().fit([1, 2]).transform([1.5])
    with pytest.raises(ValueError, match="empty"):
        ru.LabelEncoder().fit([])
    with pytest.raises(ValueError, match="NaN"):
        ru.LabelEncoder().fit([1.0, np.nan])
    assert ru.LabelEncoder().fit([1, 2]).transform([]).shape == (0,)


def test_one_hot_round_trip():
    y = np.array([0, 2, 1, 2])
    onehot = ru.to_categorical(y)
    np.testing.assert_array_equal(onehot, np.eye(3)[y])
    assert onehot.dtype == np.float64
    np.testing.assert_array_equal(ru.to_sparse_categorical(onehot), y)
    assert ru.to_categorical(y, num_classes=5).shape == (4, 5)
    probs = np.array([[0.2, 0.5, 0.3], [0.4, 0.4, 0.2]])
    np.testing.assert_array_equal(ru.to_sparse_categorical(probs), np.argmax(probs, axis=1))
    with pytest.raises(ValueError, match="num_classes"):
        ru.to_categorical(y, num_classes=2)
    with pytest.raises(ValueError, match="non-negative integer"):
        ru.to_categorical([-1, 0])
    with pytest.raises(ValueError, match="non-negative integer"):
        ru.to_categorical([0.5])
    with pytest.raises(ValueError, match="NaN"):
        ru.to_sparse_categorical(np.array([[np.nan, 1.0]]))


def test_warnings_are_not_raised(rng):
    X = data(rng)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ru.StandardScaler().fit_transform(X)
        ru.Normalizer().fit_transform(X)
