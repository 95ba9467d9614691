"""rustyml.sklearn.svm.LinearSVC against scikit-learn's own LinearSVC: the same inputs to
the door and to the unpatched class. The coordinate-descent solvers (dual, L1, and
Crammer-Singer's) are liblinear's
step for step (same sparse rows, same sums in the same order, same mt19937 draws), so their
``coef_``, ``intercept_`` and ``n_iter_`` must be equal to the bit; the primal TRON solver
differs from scikit-learn's only in how BLAS rounds its vector operations (see
``PRIMAL_RTOL``)."""

import logging
import warnings

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

import scipy.sparse as sp
from sklearn import datasets
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

import rustyml.sklearn as door
from rustyml.sklearn import svm as door_svm

# TRON's dot / axpy / nrm2 run through OpenBLAS in scikit-learn (unrolled, several partial
# sums, fused multiply-adds) and sequentially here, so each vector operation differs by a
# few units of roundoff (u = 1.1e-16) relative to its magnitude, times the vector length
# (at most 5 on iris): ~1e-15 per operation. While both runs take the same discrete branches
# (CG stops, accepted steps, the set of margins below 1), the Newton / CG updates pass such
# perturbations through H's inverse (condition number below 3e3 on standardised iris), over
# a few dozen operations: a relative gap below ~1e-10, the tolerance used there.
PRIMAL_RTOL = 1e-10


@pytest.fixture(autouse=True)
def _always_unpatched():
    yield
    door.unpatch_sklearn()


def _fit_both(X, y, sample_weight=None, **params):
    door.dispatch_stats(reset=True)
    ours = door_svm.LinearSVC(**params)
    with warnings.catch_warnings(record=True) as ours_warned:
        warnings.simplefilter("always")
        ours.fit(X, y, sample_weight=sample_weight)
    native = door.dispatch_stats().get(("LinearSVC", "fit", "rustyml"), 0) == 1
    stock = LinearSVC(**params)
    with warnings.catch_warnings(record=True) as stock_warned:
        warnings.simplefilter("always")
        stock.fit(X, y, sample_weight=sample_weight)
    kinds = [type(w.message) for w in ours_warned], [type(w.message) for w in stock_warned]
    assert kinds[0] == kinds[1]
    return ours, stock, native


def _assert_same_fit(ours, stock):
    assert ours.n_iter_ == stock.n_iter_
    assert type(ours.n_iter_) is type(stock.n_iter_)
    np.testing.assert_array_equal(ours.classes_, stock.classes_)
    assert ours.coef_.shape == stock.coef_.shape
    np.testing.assert_array_equal(ours.coef_, stock.coef_)
    np.testing.assert_array_equal(ours.intercept_, stock.intercept_)


def _binary():
    X, y = datasets.load_breast_cancer(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def _multiclass():
    X, y = datasets.load_iris(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def _wide(seed=0, n_classes=2):
    # more features than samples: dual="auto" picks the dual solver
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(40, 60))
    X[rng.random(X.shape) < 0.3] = 0.0  # zeros liblinear's rows leave out
    y = rng.integers(0, n_classes, size=40)
    return X, y


DUAL_CASES = [
    {"dual": True, "random_state": 0},
    {"dual": True, "random_state": 3, "C": 10.0, "tol": 1e-6},
    {"dual": True, "loss": "hinge", "random_state": 1},
    {"dual": "auto", "loss": "hinge", "random_state": 2, "C": 0.1},
    {"dual": True, "fit_intercept": False, "random_state": 4},
    {"dual": True, "intercept_scaling": 5.0, "random_state": 5},
    {"dual": True, "class_weight": "balanced", "random_state": 6},
    {"dual": True, "class_weight": {0: 0.5, 1: 3.0}, "random_state": 7, "loss": "hinge"},
]


@pytest.mark.parametrize("params", DUAL_CASES)
@pytest.mark.parametrize("data", [_binary, _multiclass])
def test_dual_solvers_are_scikit_learns_to_the_bit(params, data):
    X, y = data()
    ours, stock, native = _fit_both(X, y, **params)
    assert native
    _assert_same_fit(ours, stock)


@pytest.mark.parametrize("n_classes", [2, 4])
def test_dual_auto_on_wide_data_is_the_dual_solver(n_classes):
    X, y = _wide(n_classes=n_classes)
    ours, stock, native = _fit_both(X, y, random_state=0)
    assert native
    _assert_same_fit(ours, stock)


def test_string_labels_and_sparse_rows_with_stored_zeros():
    X, y = _wide(seed=1, n_classes=3)
    labels = np.array(["b", "a", "c"])[y]
    csr = sp.csr_matrix(X)
    csr.data[::7] = 0.0  # stored zeros stay in liblinear's rows
    for data in (X, csr):
        ours, stock, native = _fit_both(data, labels, random_state=0, dual=True)
        assert native
        _assert_same_fit(ours, stock)


def test_sample_weight_scales_each_samples_c_and_zero_weight_drops_it():
    X, y = _multiclass()
    sw = np.random.default_rng(0).uniform(0.0, 3.0, size=len(y))
    sw[::10] = 0.0
    for params in ({"loss": "hinge"}, {"dual": True, "class_weight": "balanced"}):
        ours, stock, native = _fit_both(X, y, sample_weight=sw, random_state=0, **params)
        assert native
        _assert_same_fit(ours, stock)


def test_max_iter_hit_warns_and_counts_like_scikit_learn():
    X, y = _binary()
    for params in ({"dual": True, "max_iter": 3}, {"dual": False, "max_iter": 2}):
        ours, stock, native = _fit_both(X, y, random_state=0, **params)
        assert native
        assert ours.n_iter_ == stock.n_iter_ == params["max_iter"]
        with pytest.warns(ConvergenceWarning, match="Liblinear failed to converge"):
            door_svm.LinearSVC(random_state=0, **params).fit(X, y)


def test_max_iter_zero_is_an_unfitted_zero_model():
    X, y = _binary()
    ours, stock, native = _fit_both(X, y, dual=True, max_iter=0, random_state=0)
    assert native
    _assert_same_fit(ours, stock)


def test_a_shared_random_state_advances_as_scikit_learns_fit_advances_it():
    X, y = _multiclass()
    ours_rng, stock_rng = np.random.RandomState(5), np.random.RandomState(5)
    for _ in range(3):
        ours = door_svm.LinearSVC(dual=True, random_state=ours_rng).fit(X, y)
        stock = LinearSVC(dual=True, random_state=stock_rng).fit(X, y)
        _assert_same_fit(ours, stock)
    assert ours_rng.randint(1 << 30) == stock_rng.randint(1 << 30)


L1_CASES = [
    {"random_state": 0},
    {"C": 0.05, "tol": 1e-6, "random_state": 1},
    {"class_weight": "balanced", "intercept_scaling": 2.0, "random_state": 3},
    {"fit_intercept": False, "random_state": 9},
]


@pytest.mark.parametrize("params", L1_CASES)
@pytest.mark.parametrize("data", [_binary, _multiclass])
def test_l1_penalty_coordinate_descent_is_scikit_learns_to_the_bit(params, data):
    X, y = data()
    ours, stock, native = _fit_both(X, y, penalty="l1", dual=False, **params)
    assert native
    _assert_same_fit(ours, stock)


def test_l1_penalty_on_sparse_rows_with_sample_weight():
    X, y = _wide(seed=2, n_classes=3)
    sw = np.random.default_rng(1).uniform(0.5, 2.0, size=len(y))
    ours, stock, native = _fit_both(
        sp.csr_matrix(X), y, sample_weight=sw, penalty="l1", dual="auto", random_state=4
    )
    assert native
    _assert_same_fit(ours, stock)


CRAMMER_SINGER_CASES = [
    {"random_state": 0},
    {"C": 0.1, "tol": 1e-6, "random_state": 1},
    {"class_weight": "balanced", "intercept_scaling": 2.0, "random_state": 2},
    {"class_weight": {0: 3.0, 1: 0.5}, "random_state": 3},
    {"fit_intercept": False, "C": 10.0, "random_state": 4},
    # penalty, loss and dual do not matter to Crammer-Singer
    {"penalty": "l1", "loss": "hinge", "dual": False, "random_state": 5},
]


@pytest.mark.parametrize("params", CRAMMER_SINGER_CASES)
@pytest.mark.parametrize("data", [_binary, _multiclass])
def test_crammer_singer_is_scikit_learns_to_the_bit(params, data):
    X, y = data()
    ours, stock, native = _fit_both(X, y, multi_class="crammer_singer", **params)
    assert native
    _assert_same_fit(ours, stock)


def test_crammer_singer_on_sparse_rows_with_sample_weight_and_string_labels():
    X, y = _wide(seed=3, n_classes=4)
    labels = np.array(["d", "b", "a", "c"])[y]
    sw = np.random.default_rng(2).uniform(0.0, 2.0, size=len(y))
    sw[::9] = 0.0  # dropped before training
    csr = sp.csr_matrix(X)
    csr.data[::5] = 0.0  # stored zeros stay in liblinear's rows
    for data in (X, csr):
        ours, stock, native = _fit_both(
            data, labels, sample_weight=sw, multi_class="crammer_singer", random_state=6
        )
        assert native
        _assert_same_fit(ours, stock)


def test_crammer_singer_ignores_max_iter_but_warns_as_scikit_learn():
    # scikit-learn's fork runs the solver under its own pass cap; the estimator's max_iter
    # only decides the ConvergenceWarning (n_iter_ >= max_iter)
    X, y = _multiclass()
    ours, stock, native = _fit_both(X, y, multi_class="crammer_singer", max_iter=2, random_state=0)
    assert native
    assert ours.n_iter_ > 2
    _assert_same_fit(ours, stock)
    with pytest.warns(ConvergenceWarning, match="Liblinear failed to converge"):
        door_svm.LinearSVC(multi_class="crammer_singer", max_iter=2).fit(X, y)


PRIMAL_CASES = [
    {},
    {"C": 100.0, "tol": 1e-8},
    {"class_weight": "balanced", "intercept_scaling": 3.0},
    {"fit_intercept": False, "C": 0.01},
]


@pytest.mark.parametrize("params", PRIMAL_CASES)
@pytest.mark.parametrize("classes", [(0, 1, 2), (1, 2)])
def test_primal_solver_agrees_to_blas_rounding(params, classes):
    X, y = _multiclass()
    keep = np.isin(y, classes)
    ours, stock, native = _fit_both(X[keep], y[keep], dual=False, **params)
    assert native
    assert ours.n_iter_ == stock.n_iter_
    assert ours.coef_.shape == stock.coef_.shape
    np.testing.assert_allclose(ours.coef_, stock.coef_, rtol=PRIMAL_RTOL, atol=0)
    np.testing.assert_allclose(ours.intercept_, stock.intercept_, rtol=PRIMAL_RTOL, atol=0)


@pytest.mark.parametrize("C", [1.0, 100.0])
def test_primal_solver_leaves_answers_that_hang_on_rounding_to_scikit_learn(C, caplog):
    # On breast_cancer TRON's runs take different discrete branches (CG stops, accepted
    # steps) when the input moves by ulps: scikit-learn's own answer moves by far more than
    # rounding, as it would between two BLAS builds. The door's probe (the replica on the
    # input moved by 4 ulp) sees it, and scikit-learn's fit runs: its bits.
    X, y = _binary()
    params = {"dual": False, "C": C, "random_state": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        stock = LinearSVC(**params).fit(X, y)
        signs = np.where(np.arange(X.size).reshape(X.shape) % 2 == 0, 1.0, -1.0)
        moved = LinearSVC(**params).fit(X * (1 + 2 * np.finfo(float).eps * signs), y)
        spread = np.max(np.abs(moved.coef_ - stock.coef_)) / np.max(np.abs(stock.coef_))
        assert spread > 1e-9  # scikit-learn's own answer hangs on rounding here
        door.dispatch_stats(reset=True)
        with caplog.at_level(logging.INFO, logger="rustyml.sklearn"):
            ours = door_svm.LinearSVC(**params).fit(X, y)
    assert "hangs on rounding" in caplog.text
    assert door.dispatch_stats() == {("LinearSVC", "fit", "scikit-learn"): 1}
    np.testing.assert_array_equal(ours.coef_, stock.coef_)
    np.testing.assert_array_equal(ours.intercept_, stock.intercept_)


@pytest.mark.parametrize(
    "params, reason",
    [
        ({"penalty": "l1", "dual": True}, "no liblinear solver"),
        ({"verbose": 1}, "verbose"),
        ({"loss": "hinge", "dual": False}, "no liblinear solver"),
    ],
)
def test_unreplicated_settings_run_scikit_learns_fit(params, reason, caplog, capfd):
    X, y = _multiclass()
    door.dispatch_stats(reset=True)
    with caplog.at_level(logging.INFO, logger="rustyml.sklearn"):
        try:
            ours = door_svm.LinearSVC(random_state=0, **params).fit(X, y)
        except ValueError as err:  # scikit-learn's own error for the combination
            with pytest.raises(ValueError, match=str(err)[:40]):
                LinearSVC(random_state=0, **params).fit(X, y)
            ours = None
    assert door.dispatch_stats().get(("LinearSVC", "fit", "scikit-learn"), 0) == 1
    assert reason in caplog.text
    if ours is not None:
        stock = LinearSVC(random_state=0, **params).fit(X, y)
        _assert_same_fit(ours, stock)


def test_invalid_parameters_raise_scikit_learns_errors():
    X, y = _binary()
    for params in ({"C": -1.0}, {"tol": 0.0}, {"loss": "log"}):
        with pytest.raises(ValueError) as ours:
            door_svm.LinearSVC(**params).fit(X, y)
        with pytest.raises(ValueError) as stock:
            LinearSVC(**params).fit(X, y)
        assert str(ours.value) == str(stock.value)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("side_by_side", [0, 2**64 - 1])
def test_the_probe_trains_on_values_moved_by_its_ulps_beside_the_fit(sparse, side_by_side):
    """The native call that trains a fit beside its rounding probe: the probe is the same
    training on the values (row-major, or the CSR data) times 1 - k eps at positions
    3j + 1 and 1 + k eps elsewhere, moved here by NumPy, and the fit is the one trained
    alone; side by side (gate at 0) or one after the other (at usize::MAX) alike."""
    from rustyml import _native, tuning

    rng = np.random.default_rng(3)
    X = rng.standard_normal((300, 6))
    X[rng.random(X.shape) < 0.2] = 0.0
    y = np.ascontiguousarray((X[:, 0] + 0.5 * rng.standard_normal(300) > 0) * 2 + (X[:, 1] > 0))
    codes = np.ascontiguousarray(y, dtype=np.intc)
    weight = rng.uniform(0.5, 2.0, 300)
    csr = sp.csr_matrix(X)
    values = csr.data if sparse else X
    signs = np.where(np.arange(values.size).reshape(values.shape) % 3 == 1, -1.0, 1.0)
    moved = values * (1 + 4 * np.finfo(np.float64).eps * signs)
    settings = {
        "n_features": 6,
        "solver": 2,
        "tol": 1e-6,
        "c": 0.8,
        "class_weight": np.ones(4),
        "max_iter": 500,
        "seed": 0,
        "bias": 1.0,
    }

    def train(vals, **extra):
        x = None if sparse else vals
        parts = (csr.indptr, csr.indices, vals) if sparse else None
        return _native.machine_learning.train_liblinear(
            x, codes, weight, sparse=parts, **settings, **extra
        )

    saved = tuning.liblinear.get_side_by_side_min_entries()
    try:
        tuning.liblinear.set_side_by_side_min_entries(side_by_side)
        coef, n_iter, labels, (probe_coef, probe_iter) = train(values, probe_ulps=4)
        alone = train(values)
        moved_alone = train(moved)
    finally:
        tuning.liblinear.set_side_by_side_min_entries(saved)
    assert alone[3] is None
    assert np.array_equal(labels, [0, 1, 2, 3])
    np.testing.assert_array_equal(coef, alone[0])
    np.testing.assert_array_equal(n_iter, alone[1])
    np.testing.assert_array_equal(probe_coef, moved_alone[0])
    np.testing.assert_array_equal(probe_iter, moved_alone[1])
    # the probe did move the input: four one-vs-rest problems, each its own answer
    assert coef.shape == (4, 7) and not np.array_equal(probe_coef, coef)
