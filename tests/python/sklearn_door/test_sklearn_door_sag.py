"""rustyml.sklearn.linear_model.LogisticRegression with ``solver="sag"``/``"saga"`` against
stock scikit-learn: the door replicates scikit-learn's SAG loop step for step (the same
sampler, the same operations in the same order, the C library's ``exp``), so ``coef_``,
``intercept_`` and ``n_iter_`` are compared for exact equality, not to a tolerance.
"""

import warnings

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from scipy import sparse as sp
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

import rustyml.sklearn as door
from rustyml.sklearn import linear_model as door_linear_model

NATIVE = ("LogisticRegression", "fit", "rustyml")
FALLBACK = ("LogisticRegression", "fit", "scikit-learn")


def _data(n_classes, n_samples=80, n_features=6, seed=0):
    X, y = make_classification(
        n_samples=n_samples,
        n_features=n_features,
        n_informative=4,
        n_redundant=0,
        n_classes=n_classes,
        random_state=seed,
    )
    return StandardScaler().fit_transform(X), y


def _fit_pair(params, X, y, sample_weight=None, expect=NATIVE):
    """The door's and stock scikit-learn's fits of the same call, with the warnings each
    raised; the door's path must be ``expect``."""
    fits, caught = [], []
    for cls in (door_linear_model.LogisticRegression, LogisticRegression):
        if cls is door_linear_model.LogisticRegression:
            door.dispatch_stats(reset=True)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            fits.append(cls(**params).fit(X, y, sample_weight=sample_weight))
        caught.append(sorted({(w.category.__name__, str(w.message)) for w in seen}))
        if cls is door_linear_model.LogisticRegression:
            assert door.dispatch_stats() == {expect: 1}
    return fits, caught


def _assert_identical(ours, stock):
    for name in ("coef_", "intercept_", "n_iter_", "classes_"):
        a, b = getattr(ours, name), getattr(stock, name)
        assert a.shape == b.shape, name
        assert a.dtype == b.dtype, name
        np.testing.assert_array_equal(a, b, err_msg=name)


PENALTIES = [
    ("sag", {"C": 1.0, "l1_ratio": 0}),
    ("sag", {"C": 0.05, "l1_ratio": 0}),
    ("sag", {"C": np.inf, "l1_ratio": 0}),
    ("saga", {"C": 1.0, "l1_ratio": 0}),
    ("saga", {"C": 0.2, "l1_ratio": 1}),
    ("saga", {"C": 0.5, "l1_ratio": 0.4}),
    ("saga", {"C": np.inf, "l1_ratio": 0}),
    ("saga", {"C": np.inf, "l1_ratio": 1}),
]


@pytest.mark.parametrize("solver,penalty", PENALTIES)
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_penalties_match_bit_for_bit(solver, penalty, n_classes, fit_intercept):
    X, y = _data(n_classes)
    params = dict(solver=solver, fit_intercept=fit_intercept, random_state=3, tol=1e-4, **penalty)
    (ours, stock), (w_ours, w_stock) = _fit_pair(params, X, y)
    _assert_identical(ours, stock)
    assert w_ours == w_stock
    np.testing.assert_array_equal(ours.predict_proba(X), stock.predict_proba(X))


@pytest.mark.parametrize(
    "spelling",
    [
        {"solver": "saga", "penalty": "l1", "C": 0.3},
        {"solver": "saga", "penalty": "elasticnet", "l1_ratio": 0.5},
        {"solver": "saga", "penalty": "l2", "l1_ratio": 0.5},
        {"solver": "sag", "penalty": None, "C": 2.0},
        {"solver": "sag", "penalty": "l2", "n_jobs": 2},
        {"solver": "sag", "l1_ratio": None},
        {"solver": "saga", "l1_ratio": 0.5, "C": np.inf},
    ],
)
def test_deprecated_spellings_warn_and_fit_as_scikit_learn(spelling):
    # the penalty's deprecated spellings, l1_ratio=None, n_jobs: the same fit, the same
    # FutureWarnings and UserWarnings
    X, y = _data(3)
    (ours, stock), (w_ours, w_stock) = _fit_pair({"random_state": 1, **spelling}, X, y)
    _assert_identical(ours, stock)
    assert w_ours == w_stock
    assert w_ours


def test_l1_zeroes_coefficients_like_scikit_learn():
    # a strong L1 penalty: the prox steps, lagged and unrolled, decide the zeros
    X, y = _data(3, n_features=10)
    params = {"solver": "saga", "C": 0.02, "l1_ratio": 1, "random_state": 0, "max_iter": 300}
    (ours, stock), _ = _fit_pair(params, X, y)
    _assert_identical(ours, stock)
    assert np.any(ours.coef_ == 0)


@pytest.mark.parametrize("solver", ["sag", "saga"])
@pytest.mark.parametrize("n_classes", [2, 4])
def test_sample_and_class_weights(solver, n_classes):
    X, y = _data(n_classes, n_samples=90)
    sw = np.random.RandomState(1).uniform(0.1, 3.0, len(y))
    for class_weight in (None, "balanced", {c: 1.0 + c for c in range(n_classes)}):
        params = {"solver": solver, "class_weight": class_weight, "random_state": 0}
        (ours, stock), _ = _fit_pair(params, X, y, sample_weight=sw)
        _assert_identical(ours, stock)
    (ours, stock), _ = _fit_pair(
        {"solver": solver, "class_weight": "balanced", "random_state": 9}, X, y
    )
    _assert_identical(ours, stock)


@pytest.mark.parametrize("solver", ["sag", "saga"])
def test_max_iter_cut_warns_as_scikit_learn(solver):
    X, y = _data(3)
    params = {"solver": solver, "max_iter": 4, "tol": 1e-12, "random_state": 5, "l1_ratio": 0}
    (ours, stock), (w_ours, w_stock) = _fit_pair(params, X, y)
    _assert_identical(ours, stock)
    assert ours.n_iter_[0] == 4
    assert w_ours == w_stock
    assert any(category == ConvergenceWarning.__name__ for category, _ in w_ours)


def test_rescaling_mid_epoch_matches():
    # A strong L2 penalty on many rows shrinks the weight scale below 1e-9 within an
    # epoch: the mid-epoch fold of the scale must match too.
    X, y = _data(2, n_samples=400)
    for solver in ("sag", "saga"):
        params = {"solver": solver, "C": 1e-4, "random_state": 0, "max_iter": 50}
        (ours, stock), _ = _fit_pair(params, X, y)
        _assert_identical(ours, stock)


def test_shared_random_state_advances_as_scikit_learn():
    X, y = _data(3)
    rng_ours, rng_stock = np.random.RandomState(7), np.random.RandomState(7)
    for _ in range(2):
        ours = door_linear_model.LogisticRegression(solver="saga", random_state=rng_ours)
        stock = LogisticRegression(solver="saga", random_state=rng_stock)
        _assert_identical(ours.fit(X, y), stock.fit(X, y))
    assert rng_ours.randint(1 << 30) == rng_stock.randint(1 << 30)
    # None draws from NumPy's global generator
    np.random.seed(11)
    ours = door_linear_model.LogisticRegression(solver="sag").fit(X, y)
    after_ours = np.random.randint(1 << 30)
    np.random.seed(11)
    stock = LogisticRegression(solver="sag").fit(X, y)
    assert after_ours == np.random.randint(1 << 30)
    _assert_identical(ours, stock)


def test_random_state_changes_the_sample_order():
    X, y = _data(2)
    params = {"solver": "sag", "tol": 1e-2}
    a = door_linear_model.LogisticRegression(random_state=0, **params).fit(X, y)
    b = door_linear_model.LogisticRegression(random_state=1, **params).fit(X, y)
    assert not np.array_equal(a.coef_, b.coef_)
    (ours, stock), _ = _fit_pair(dict(random_state=1, **params), X, y)
    _assert_identical(ours, stock)
    np.testing.assert_array_equal(ours.coef_, b.coef_)


@pytest.mark.parametrize("solver", ["sag", "saga"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_warm_start_continues_from_the_previous_fit(solver, n_classes):
    X, y = _data(n_classes)
    params = {
        "solver": solver,
        "warm_start": True,
        "max_iter": 3,
        "random_state": 2,
        "l1_ratio": 0.5,
    }
    if solver == "sag":
        params["l1_ratio"] = 0
    models = []
    for cls in (door_linear_model.LogisticRegression, LogisticRegression):
        model = cls(**params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(X, y)
            door.dispatch_stats(reset=True)
            model.fit(X[:70], y[:70])
        if cls is door_linear_model.LogisticRegression:
            assert door.dispatch_stats() == {NATIVE: 1}
        models.append(model)
    _assert_identical(*models)


@pytest.mark.parametrize("solver", ["sag", "saga"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_sparse_csr_matches(solver, n_classes):
    X, y = _data(n_classes, n_samples=100, n_features=8)
    X[np.abs(X) < 0.8] = 0.0
    X = sp.csr_matrix(X)
    params = {"solver": solver, "random_state": 4, "l1_ratio": 0.3 if solver == "saga" else 0}
    (ours, stock), _ = _fit_pair(params, X, y)
    _assert_identical(ours, stock)


def test_unreplicated_calls_run_scikit_learn():
    X, y = _data(2)
    # float32 runs scikit-learn's float32 solver
    (ours, stock), _ = _fit_pair(
        {"solver": "saga", "random_state": 0}, X.astype(np.float32), y, expect=FALLBACK
    )
    _assert_identical(ours, stock)
    # sag has no L1: scikit-learn's error, from scikit-learn's fit
    door.dispatch_stats(reset=True)
    with pytest.raises(ValueError, match="supports only 'l2' or None"):
        door_linear_model.LogisticRegression(solver="sag", l1_ratio=1).fit(X, y)
    assert door.dispatch_stats() == {FALLBACK: 1}


def test_overflow_falls_back_with_the_generator_untouched():
    # NaN warm-start coefficients make the SAG loop's weights non-finite: scikit-learn
    # raises, after the door has put the shared generator back, so both draw the same seed
    # and reach the same error.
    X, y = _data(2)
    rng_ours, rng_stock = np.random.RandomState(0), np.random.RandomState(0)
    errors = []
    for cls, rng in (
        (door_linear_model.LogisticRegression, rng_ours),
        (LogisticRegression, rng_stock),
    ):
        model = cls(solver="sag", random_state=rng, warm_start=True).fit(X, y)
        model.coef_[:] = np.nan
        door.dispatch_stats(reset=True)
        with pytest.raises(ValueError, match="Floating-point under-/overflow") as info:
            model.fit(X, y)
        errors.append(str(info.value))
    assert errors[0] == errors[1]
    assert rng_ours.randint(1 << 30) == rng_stock.randint(1 << 30)
