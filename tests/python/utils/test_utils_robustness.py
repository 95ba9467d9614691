"""rustyml.utils under hostile inputs: impossible one-hot sizes, failed refits, huge finite
values, damaged saved models and concurrent use from several threads.

Oracles are hand-derived values (the exact ends of a min-max map) and scikit-learn where it
is well defined."""

import pickle
import threading

import numpy as np
import pytest
from sklearn import preprocessing as sp

from rustyml import utils as ru


@pytest.mark.parametrize("label", [10**12, 2**62, 2**63 - 1])
def test_to_categorical_refuses_impossible_sizes_up_front(label):
    # 10**12 + 1 columns is 8 TB for one row; 2**62 + 1 columns overflows the byte count
    with pytest.raises(ValueError, match="num_classes"):
        ru.to_categorical([label])
    with pytest.raises(ValueError, match="num_classes"):
        ru.to_categorical([0, 1], num_classes=label)
    np.testing.assert_array_equal(ru.to_categorical([1, 0]), [[0.0, 1.0], [1.0, 0.0]])


def test_failed_label_encoder_fit_leaves_the_fit_alone():
    enc = ru.LabelEncoder().fit([3, 1, 2])
    before = pickle.dumps(enc)
    with pytest.raises(ValueError, match="NaN"):
        enc.fit([1.0, np.nan])
    with pytest.raises(ValueError, match="empty"):
        enc.fit_transform(np.array([], dtype=str))
    with pytest.raises(TypeError):
        enc.fit(np.array([1, "a", None], dtype=object))
    assert pickle.dumps(enc) == before
    np.testing.assert_array_equal(enc.classes_, [1, 2, 3])
    assert enc.classes_.dtype == np.array([3, 1, 2]).dtype
    np.testing.assert_array_equal(enc.transform([2, 3]), [1, 2])
    np.testing.assert_array_equal(enc.inverse_transform([0]), [1])


def test_min_max_scaler_is_finite_for_huge_finite_inputs():
    # data_max - data_min overflows float64 in both columns; the map's ends are exact
    X = np.array([[-1.5e308, 1e308], [1.5e308, -1e308], [0.0, 0.0]])
    sc = ru.MinMaxScaler().fit(X)
    Z = sc.transform(X)
    np.testing.assert_array_equal(Z, [[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]])
    np.testing.assert_array_equal(sc.inverse_transform(Z), X)
    far = sc.transform(np.array([[1.7e308, -1.7e308]]))
    assert np.all(np.isfinite(far))
    clipped = ru.MinMaxScaler(feature_range=(-1, 1), clip=True).fit(X)
    np.testing.assert_array_equal(clipped.transform(np.array([[1.7e308, 0.0]])), [[1.0, 0.0]])
    # ordinary data still agrees with scikit-learn
    rng = np.random.default_rng(3)
    Y = rng.normal(size=(50, 3)) * [1.0, 1e3, 1e-3] + 7.0
    np.testing.assert_allclose(
        ru.MinMaxScaler((-2, 3)).fit(Y).transform(Y),
        sp.MinMaxScaler((-2, 3)).fit(Y).transform(Y),
        rtol=1e-10,
        atol=1e-10,
    )


@pytest.mark.parametrize(
    "cls", [ru.MinMaxScaler, ru.MaxAbsScaler, ru.StandardScaler, ru.RobustScaler, ru.Normalizer]
)
def test_damaged_saved_scalers_are_refused_or_harmless(cls):
    X = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]])
    native = cls().fit(X)._native
    good = bytes(native.to_bytes())
    loaded = type(native).from_bytes(good)
    np.testing.assert_array_equal(loaded.transform(X), native.transform(X))
    for i in range(len(good)):
        for flip in (0x01, 0x80, 0xFF):
            data = bytearray(good)
            data[i] ^= flip
            try:
                model = type(native).from_bytes(bytes(data))
            except (ValueError, OSError):
                continue
            # a model that loads must work: a Rust panic would raise PanicException, which is
            # not an Exception subclass and fails this test
            try:
                out = model.transform(X)
            except ValueError:
                continue
            assert out.shape == X.shape
            assert np.isfinite(out).all(), (i, flip)


@pytest.mark.parametrize(
    "labels", [np.array([3, -1, 7, 3]), np.array([0.5, -2.0, 0.5]), np.array(["b", "a", "c"])]
)
def test_damaged_saved_label_encoders_are_refused_or_harmless(labels):
    enc = ru.LabelEncoder().fit(labels)
    good = pickle.dumps(enc)
    native = enc._native
    raw = bytes(native.to_bytes())
    for i in range(len(raw)):
        for flip in (0x01, 0x80, 0xFF):
            data = bytearray(raw)
            data[i] ^= flip
            try:
                model = type(native).from_bytes(bytes(data))
            except (ValueError, OSError):
                continue
            damaged = pickle.loads(good)
            damaged._native = model
            try:
                codes = damaged.transform(labels)
                back = damaged.inverse_transform(codes)
            except ValueError:
                continue
            # a damaged encoder that loads is still a bijection on what it accepts
            assert codes.dtype == np.int64 and (codes >= 0).all()
            np.testing.assert_array_equal(back, labels)


def test_damaged_pickle_is_refused_at_load():
    sc = ru.MaxAbsScaler().fit(np.array([[1.0, 2.0], [3.0, -4.0]]))
    state = sc.__getstate__()
    data = bytearray(state["_native_bytes"])
    data[-1] ^= 0x80  # the last scale entry's sign bit: -4.0 instead of 4.0
    state["_native_bytes"] = bytes(data)
    with pytest.raises((ValueError, OSError)):
        ru.MaxAbsScaler().__setstate__(state)


@pytest.mark.parametrize("cls", [ru.StandardScaler, ru.MinMaxScaler, ru.MaxAbsScaler])
def test_partial_fit_and_transform_from_two_threads(cls):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20_000, 4))
    sc = cls().partial_fit(X[:100])
    errors = []
    rounds = 40

    def run(work):
        try:
            for _ in range(rounds):
                work()
        except BaseException as exc:  # noqa: BLE001 - report any failure of the thread
            errors.append(exc)

    threads = [
        threading.Thread(target=run, args=(lambda: sc.partial_fit(X),)),
        threading.Thread(target=run, args=(lambda: sc.transform(X),)),
        threading.Thread(target=run, args=(lambda: sc.n_samples_seen_,)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sc.n_samples_seen_ == 100 + rounds * len(X)


def test_label_encoder_from_two_threads():
    y = np.arange(50_000) % 7
    enc = ru.LabelEncoder().fit(y)
    errors = []

    def run(work):
        try:
            for _ in range(30):
                work()
        except BaseException as exc:  # noqa: BLE001 - report any failure of the thread
            errors.append(exc)

    native = enc._native
    threads = [
        threading.Thread(target=run, args=(lambda: native.fit(y),)),
        threading.Thread(target=run, args=(lambda: native.transform(y),)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_robust_scaler_equal_quantiles_follow_scikit_learn():
    # scikit-learn accepts q_min == q_max (a zero spread, so no scaling); the Rust builder
    # refuses it as the original crate does
    X = np.array([[1.0, 4.0], [2.0, 8.0], [9.0, 0.0]])
    ours = ru.RobustScaler(quantile_range=(50, 50)).fit(X)
    ref = sp.RobustScaler(quantile_range=(50, 50)).fit(X)
    np.testing.assert_allclose(ours.transform(X), ref.transform(X), rtol=1e-12)
    with pytest.raises(ValueError, match="quantile range"):
        ru.RobustScaler(quantile_range=(60, 50)).fit(X)
