"""One fitted model used from several threads: reads (predict, transform, fitted attributes)
share the native model's lock, so one read never waits for another; fits take it alone.

Each test holds the shared lock in one thread (the native ``_call_while_reading`` hook, which
runs a Python callable under the lock) and shows that a read in another thread finishes
meanwhile. Events order the threads; the join timeout only turns a regression (an exclusive
lock, under which the second read would wait for ever) into a failure instead of a hang.
"""

import threading

import numpy as np
import pytest

import rustyml.machine_learning as ml
import rustyml.utils as ru

_GUARD_S = 120  # a regression waits for ever; a pass takes milliseconds


def _data():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] - X[:, 2] > 0).astype(np.int64)
    return X, y


CASES = [
    (lambda X, y: ml.KMeans(n_clusters=2, random_state=0).fit(X), "predict"),
    (lambda X, y: ml.LogisticRegression().fit(X, y), "predict_proba"),
    (lambda X, y: ml.PCA(n_components=2).fit(X), "transform"),
    (lambda X, y: ml.KNN(n_neighbors=3).fit(X, y), "predict"),
    (lambda X, y: ru.StandardScaler().fit(X), "transform"),
    (lambda X, y: ru.MinMaxScaler().fit(X), "inverse_transform"),
]


@pytest.mark.parametrize(("make", "method"), CASES)
def test_a_read_finishes_while_another_thread_holds_the_model_for_reading(make, method):
    X, y = _data()
    model = make(X, y)
    expected = getattr(model, method)(X)
    held, release = threading.Event(), threading.Event()

    def hold():
        held.set()
        release.wait()

    holder = threading.Thread(target=model._native._call_while_reading, args=(hold,))
    holder.start()
    try:
        assert held.wait(_GUARD_S)
        out = {}
        reader = threading.Thread(target=lambda: out.update(result=getattr(model, method)(X)))
        reader.start()
        reader.join(_GUARD_S)
        assert not reader.is_alive(), "a read waited for another read: the lock is exclusive"
    finally:
        release.set()
        holder.join()
    np.testing.assert_array_equal(out["result"], expected)


def test_fitted_attributes_read_while_the_model_is_held_for_reading():
    X, y = _data()
    model = ml.LinearSVC().fit(X, y)
    coef = model.coef_
    seen = {}

    def read_attributes():
        # the holder itself reads again under its own shared lock
        seen["coef"] = model.coef_
        seen["intercept"] = model.intercept_

    model._native._call_while_reading(read_attributes)
    np.testing.assert_array_equal(seen["coef"], coef)
    np.testing.assert_array_equal(seen["intercept"], model.intercept_)


def test_a_refit_after_concurrent_reads_replaces_the_model_whole():
    """A fit on the native model while other threads read waits for them (no "Already
    borrowed" error, as a mutably borrowed pyclass would raise) and installs the new state."""
    X, _ = _data()
    model = ml.KMeans(n_clusters=2, random_state=0).fit(X)
    native = model._native
    X2 = X[::-1] * 3.0
    want = ml.KMeans(n_clusters=2, random_state=0).fit(X2).cluster_centers_
    held, release, errors = threading.Event(), threading.Event(), []

    def hold():
        held.set()
        release.wait()

    def refit():
        try:
            native.fit(X2)
        except Exception as exc:  # noqa: BLE001 - reported to the main thread
            errors.append(exc)

    holder = threading.Thread(target=native._call_while_reading, args=(hold,))
    holder.start()
    assert held.wait(_GUARD_S)
    fitter = threading.Thread(target=refit)
    fitter.start()
    release.set()
    holder.join()
    fitter.join()
    assert errors == []
    np.testing.assert_array_equal(native.cluster_centers_, want)
