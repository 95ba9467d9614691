"""Damaged saved models, for every estimator: a flipped byte anywhere in the native encoding is
either refused at load (``ValueError``/``OSError``) or gives a model that still answers with
finite output or a ``ValueError``. A Rust panic reaching Python raises ``PanicException``, which is not
an ``Exception`` subclass, so it fails these tests instead of being swallowed."""

import inspect
import pickle

import numpy as np
import pytest

from rustyml import machine_learning as ml

ESTIMATORS = [
    cls
    for cls in (getattr(ml, n) for n in sorted(dir(ml)) if not n.startswith("_"))
    if inspect.isclass(cls) and hasattr(cls, "fit") and hasattr(cls, "_native_class")
]

# a cast warning ("invalid value encountered in cast") means a garbage label reached the user
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

# enough positions to hit every field of a small model; evenly spread over larger ones
MAX_POSITIONS = 600


def _data():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(-2, 1, size=(15, 3)), rng.normal(2, 1, size=(15, 3))])
    y = np.repeat([0, 1], 15)
    return X, y


def _fitted(cls):
    X, y = _data()
    params = inspect.signature(cls.__init__).parameters
    kwargs = {}
    if "random_state" in params:
        kwargs["random_state"] = 0
    if "n_clusters" in params:
        kwargs["n_clusters"] = 2
    if "n_components" in params and cls.__name__ in ("PCA", "KernelPCA", "TSNE"):
        kwargs["n_components"] = 2
    if "perplexity" in params:
        kwargs["perplexity"] = 5.0
    return cls(**kwargs).fit(X, y), X


def _use(est, X):
    """Every fitted-state method the estimator has, on X."""
    out = []
    for name in ("predict", "transform", "decision_function", "predict_proba", "score_samples"):
        if hasattr(type(est), name):
            out.append(getattr(est, name)(X))
    return out


def test_every_estimator_is_covered():
    names = {cls.__name__ for cls in ESTIMATORS}
    assert {"SVC", "KNN", "KMeans", "DecisionTree", "IsolationForest", "PCA"} <= names


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_damaged_encoding_is_refused_or_harmless(cls):
    est, X = _fitted(cls)
    good = bytes(est._native.to_bytes())
    reloaded = pickle.loads(pickle.dumps(est))
    for a, b in zip(_use(est, X), _use(reloaded, X)):
        np.testing.assert_array_equal(a, b)
    step = max(1, len(good) // MAX_POSITIONS)
    for i in range(0, len(good), step):
        for flip in (0x01, 0x80, 0xFF):
            data = bytearray(good)
            data[i] ^= flip
            try:
                est._native = cls._native_class.from_bytes(bytes(data))
            except (ValueError, OSError):
                continue
            try:
                outputs = _use(est, X)
            except ValueError:
                continue
            # a model that loads answers with finite values: NaN or infinity in the loaded
            # state must be refused at load, not passed on silently
            for out in outputs:
                out = np.asarray(out)
                if out.dtype.kind == "f":
                    assert np.isfinite(out).all(), (cls.__name__, i, flip)
