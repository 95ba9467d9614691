"""rustyml.sklearn.linear_model.LogisticRegression(solver="lbfgs") against stock
scikit-learn: the door replicates SciPy's L-BFGS-B run on scikit-learn's objective, so both
stop after the same iterations (``n_iter_`` equal) at the same point up to rounding,
converged, cut by ``max_iter`` or at any ``tol``.

Tolerance: both runs take the same decisions (those within rounding of their thresholds
fall back), so their iterates differ only by the rounding of the sums (BLAS there, other
orders here), which the quasi-Newton steps carry along and, on long runs over
ill-conditioned problems, amplify. The door measures that amplification on each fit: a
probe reruns it with every objective value and gradient entry moved by 2 eps, and the door
answers only where the probe ends within 1e-8 (relative to the coefficients' scale) of the
run. Measured over 72 problems (feature scales to 1e5, tol 1e-2 to 1e-8, weights, C=inf,
runs cut at 15 to 1000 iterations) the gap to scikit-learn's run stayed within 3 times the
probe's gap, up to 160 times where both are at rounding level (below 1e-12). The tests
allow 100 times the probe's gap plus 1e-12, relative to the coefficients' scale.
"""

import warnings

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from sklearn._loss.loss import HalfBinomialLoss
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.linear_model._linear_loss import LinearModelLoss
from sklearn.utils.class_weight import compute_class_weight

import rustyml.sklearn as door
from rustyml import _native
from rustyml.sklearn import linear_model as door_linear_model

NATIVE = ("LogisticRegression", "fit", "rustyml")
FALLBACK = ("LogisticRegression", "fit", "scikit-learn")


def _data(k, seed=0, n=240, d=5, spread=1.0):
    X, y = make_classification(
        n_samples=n,
        n_features=d,
        n_informative=min(d, 4),
        n_redundant=0,
        n_classes=k,
        n_clusters_per_class=1,
        class_sep=0.8,
        random_state=seed,
    )
    # Feature scales from 1 to `spread`: an ill-conditioned Hessian for a large spread.
    return X * np.logspace(0, np.log10(spread), d)[None, :], y


def _probe_gap(X, y, sw, params, start=None):
    """The door's probe gap for this fit (module docs), from the native entry point."""
    classes, codes = np.unique(y, return_inverse=True)
    weights = None if sw is None else np.asarray(sw, dtype=np.float64)
    class_weight = params.get("class_weight")
    if class_weight is not None:
        per_class = compute_class_weight(class_weight, classes=classes, y=y, sample_weight=sw)
        weights = (np.ones(len(y)) if weights is None else weights) * per_class[codes]
    *_, status, gap = _native.machine_learning.fit_sklearn_logistic_lbfgs(
        np.ascontiguousarray(X, dtype=np.float64),
        codes.astype(np.int64),
        weights,
        n_classes=len(classes),
        c=float(params.get("C", 1.0)),
        fit_intercept=bool(params.get("fit_intercept", True)),
        max_iter=int(params.get("max_iter", 100)),
        tol=float(params.get("tol", 1e-4)),
        max_probe_gap=np.inf,
        **(start or {}),
    )
    assert status != "fragile"
    return gap


def _fit_both(params, X, y, sw=None, expect=NATIVE):
    door.dispatch_stats(reset=True)
    with warnings.catch_warnings(record=True) as ours_warned:
        warnings.simplefilter("always", ConvergenceWarning)
        ours = door_linear_model.LogisticRegression(**params).fit(X, y, sample_weight=sw)
    assert door.dispatch_stats() == {expect: 1}
    with warnings.catch_warnings(record=True) as stock_warned:
        warnings.simplefilter("always", ConvergenceWarning)
        stock = LogisticRegression(**params).fit(X, y, sample_weight=sw)

    def messages(warned):
        return [str(w.message) for w in warned if issubclass(w.category, ConvergenceWarning)]

    assert messages(ours_warned) == messages(stock_warned)
    return ours, stock


def _assert_same_run(ours, stock, X, y, sw, params, start=None):
    np.testing.assert_array_equal(ours.n_iter_, stock.n_iter_)
    assert ours.n_iter_.dtype == stock.n_iter_.dtype
    np.testing.assert_array_equal(ours.classes_, stock.classes_)
    assert ours.coef_.shape == stock.coef_.shape
    assert ours.intercept_.shape == stock.intercept_.shape
    scale = max(1.0, np.abs(stock.coef_).max(), np.abs(stock.intercept_).max())
    atol = (100 * _probe_gap(X, y, sw, params, start) + 1e-12) * scale
    np.testing.assert_allclose(ours.coef_, stock.coef_, rtol=0, atol=atol)
    np.testing.assert_allclose(ours.intercept_, stock.intercept_, rtol=0, atol=atol)


@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("C", [0.05, 1.0, 20.0, np.inf])
def test_default_tol_runs_natively_with_scikit_learns_iterates(k, fit_intercept, C):
    X, y = _data(k, seed=k + 1)
    params = {"C": C, "fit_intercept": fit_intercept}
    ours, stock = _fit_both(params, X, y)
    _assert_same_run(ours, stock, X, y, None, params)


@pytest.mark.parametrize(("k", "tol"), [(2, 1e-2), (2, 1e-6), (2, 1e-8), (4, 1e-2), (4, 1e-6)])
def test_any_tol_runs_natively(k, tol):
    X, y = _data(k, seed=7, spread=3.0)
    params = {"C": 2.0, "tol": tol, "max_iter": 1000}
    ours, stock = _fit_both(params, X, y)
    _assert_same_run(ours, stock, X, y, None, params)


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("max_iter", [1, 2, 7])
def test_runs_cut_by_max_iter_warn_as_scikit_learn(k, max_iter):
    # Cut short, scikit-learn warns and reports n_iter_ = max_iter at its unconverged
    # iterate: the door's iterate is the same one.
    X, y = _data(k, seed=3, spread=100.0)
    params = {"C": 10.0, "tol": 1e-10, "max_iter": max_iter}
    ours, stock = _fit_both(params, X, y)
    assert ours.n_iter_[0] == max_iter
    _assert_same_run(ours, stock, X, y, None, params)


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("class_weight", [None, "balanced", "dict"])
def test_weighted_fits_run_natively(k, class_weight):
    X, y = _data(k, seed=11)
    sw = np.random.default_rng(k).uniform(0.1, 3.0, size=len(y))
    if class_weight == "dict":
        class_weight = {c: 1.0 + c for c in range(k)}
    params = {"C": 0.7, "class_weight": class_weight, "tol": 1e-6}
    ours, stock = _fit_both(params, X, y, sw=sw)
    _assert_same_run(ours, stock, X, y, sw, params)


def test_runs_that_amplify_rounding_run_scikit_learns():
    # 1000 iterations on features scaled up to 1e3: rounding-sized moves change the end
    # point by percents (the probe), so the native run cannot stand for scikit-learn's.
    X, y = _data(3, seed=5, d=8, spread=1e3)
    params = {"C": 1.0, "max_iter": 1000}
    ours, stock = _fit_both(params, X, y, expect=FALLBACK)
    np.testing.assert_array_equal(ours.coef_, stock.coef_)
    np.testing.assert_array_equal(ours.n_iter_, stock.n_iter_)


def test_a_stop_decision_within_rounding_runs_scikit_learns():
    # tol set to the largest gradient entry of scikit-learn's third iterate: whether the run
    # stops there is decided by rounding, so the door leaves the fit to scikit-learn.
    X, y = _data(2, seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        third = LogisticRegression(max_iter=3, tol=1e-12).fit(X, y)
    loss = LinearModelLoss(base_loss=HalfBinomialLoss(), fit_intercept=True)
    w = np.r_[third.coef_.ravel(), third.intercept_]
    _, grad = loss.loss_gradient(
        w, X, (y == 1).astype(float), l2_reg_strength=1.0 / len(y), n_threads=1
    )
    tol = float(np.max(np.abs(grad)))
    ours, stock = _fit_both({"tol": tol}, X, y, expect=FALLBACK)
    np.testing.assert_array_equal(ours.coef_, stock.coef_)
    np.testing.assert_array_equal(ours.n_iter_, stock.n_iter_)


@pytest.mark.parametrize("k", [2, 3])
def test_sparse_X_runs_natively_as_its_dense_copy(k):
    # scikit-learn's sparse products sum in another order than BLAS, as the native dense
    # ones do: the same bound as a dense fit.
    from scipy.sparse import csr_matrix

    X, y = _data(k, seed=40 + k)
    X[np.abs(X) < 0.6] = 0.0
    params = {"C": 0.5}
    ours, stock = _fit_both(params, csr_matrix(X), y)
    _assert_same_run(ours, stock, X, y, None, params)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("k", [2, 3])
def test_warm_start_continues_from_the_previous_fit_as_scikit_learn(k, fit_intercept):
    # Each fit starts at the previous one's coefficients (and intercepts): runs cut short
    # resume where they stopped, a new C starts from the old optimum. Every stage is
    # compared with stock scikit-learn doing the same from the same start (stock's previous
    # fit, handed to the door: the two previous fits differ by rounding, which a later run
    # may amplify as any other start's rounding).
    X, y = _data(k, seed=60 + k, spread=10.0)
    base = {"warm_start": True, "fit_intercept": fit_intercept}
    ours = door_linear_model.LogisticRegression(**base)
    stock = LogisticRegression(**base)
    start = None
    for stage in ({"max_iter": 3}, {"max_iter": 3}, {"max_iter": 200}, {"C": 0.1}):
        ours.set_params(**stage)
        stock.set_params(**stage)
        door.dispatch_stats(reset=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            ours.fit(X, y)
            stock.fit(X, y)
        assert door.dispatch_stats() == {NATIVE: 1}
        _assert_same_run(ours, stock, X, y, None, ours.get_params(), start)
        ours.coef_, ours.intercept_ = stock.coef_.copy(), stock.intercept_.copy()
        start = {"start_coef": stock.coef_.copy()}
        if fit_intercept:
            start["start_intercept"] = stock.intercept_.copy()


def test_warm_start_of_another_shape_is_scikit_learns_error():
    X, y = _data(3, seed=7)
    ours = door_linear_model.LogisticRegression(warm_start=True).fit(X, y)
    stock = LogisticRegression(warm_start=True).fit(X, y)
    with pytest.raises(ValueError) as ours_error:
        ours.fit(X, y % 2)
    with pytest.raises(ValueError) as stock_error:
        stock.fit(X, y % 2)
    assert str(ours_error.value) == str(stock_error.value)
