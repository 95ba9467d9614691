"""rustyml.sklearn.linear_model.LogisticRegression against stock scikit-learn: multinomial
and weighted fits run natively and land on scikit-learn's optimum.

Tolerances come from first-order optimality, not from the stopping rules: for each fitted
model the objective's gradient ``g`` is computed here with NumPy (an independent oracle of
the objective scikit-learn minimises), and where the objective has curvature at least
``lam`` around the optimum, each solution lies within ``|g|_2 / lam`` of it, so two
solutions within the sum of those radii of each other.
"""

import warnings

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from scipy.special import logsumexp, softmax
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

import rustyml.sklearn as door
from rustyml.sklearn import linear_model as door_linear_model

NATIVE = ("LogisticRegression", "fit", "rustyml")
FALLBACK = ("LogisticRegression", "fit", "scikit-learn")


def _full_rows(model, k):
    """Coefficients and intercepts as k full softmax rows: a binary model is the softmax
    with the first class's scores fixed at 0 (log(1 + e^z) - y z = logsumexp([0, z]) - z_y)."""
    coef, intercept = model.coef_, model.intercept_
    if k == 2:
        coef = np.vstack([np.zeros_like(coef), coef])
        intercept = np.concatenate([[0.0], intercept])
    return coef, intercept


def _gradient_and_hessian(model, X, codes, k, sw, C, fit_intercept):
    """Gradient and Hessian of scikit-learn's objective
    ``sum(s_i loss_i) / S + |W|^2 / (2 C S)`` (S the weight sum, intercepts unpenalised) in
    the free parameters (per free class row: coefficients then intercept)."""
    coef, intercept = _full_rows(model, k)
    n, _d = X.shape
    S = sw.sum()
    Xt = np.hstack([X, np.ones((n, 1))]) if fit_intercept else X
    P = softmax(X @ coef.T + intercept, axis=1)
    Y = np.eye(k)[codes]
    R = (P - Y) * (sw / S)[:, None]
    W = np.hstack([coef, intercept[:, None]]) if fit_intercept else coef
    penal = np.ones(Xt.shape[1])
    if fit_intercept:
        penal[-1] = 0.0
    G = R.T @ Xt + W * penal / (C * S)
    rows = [1] if k == 2 else list(range(k))
    dt = Xt.shape[1]
    H = np.zeros((len(rows) * dt, len(rows) * dt))
    weighted = Xt * (sw / S)[:, None]
    for a, ca in enumerate(rows):
        for b, cb in enumerate(rows):
            A = P[:, ca] * ((ca == cb) - P[:, cb])
            H[a * dt : (a + 1) * dt, b * dt : (b + 1) * dt] = (weighted * A[:, None]).T @ Xt
        H[a * dt : (a + 1) * dt, a * dt : (a + 1) * dt] += np.diag(penal / (C * S))
    return G[rows].ravel(), H, dt, len(rows)


def _objective(model, X, codes, k, sw, C):
    coef, intercept = _full_rows(model, k)
    Z = X @ coef.T + intercept
    loss = logsumexp(Z, axis=1) - Z[np.arange(len(codes)), codes]
    return sw @ loss / sw.sum() + np.sum(model.coef_**2) / (2 * C * sw.sum())


def _assert_same_optimum(ours, stock, X, y, sw, C, fit_intercept):
    classes = stock.classes_
    k = len(classes)
    codes = np.searchsorted(classes, y)
    sw = np.ones(len(y)) if sw is None else sw
    g_ours, H, dt, rows = _gradient_and_hessian(ours, X, codes, k, sw, C, fit_intercept)
    g_stock, _, _, _ = _gradient_and_hessian(stock, X, codes, k, sw, C, fit_intercept)
    if k > 2 and fit_intercept:
        # Adding one constant to every intercept changes no probability: the objective is
        # flat along that direction. Both L-BFGS runs start at 0 and every gradient sums to
        # 0 over the intercepts, so both stay on the plane sum(intercepts) = 0: measure the
        # curvature there.
        assert abs(ours.intercept_.sum()) < 1e-10 and abs(stock.intercept_.sum()) < 1e-10
        flat = np.zeros(rows * dt)
        flat[dt - 1 :: dt] = 1 / np.sqrt(rows)
        basis = np.linalg.svd(np.eye(rows * dt) - np.outer(flat, flat))[0][:, :-1]
        H = basis.T @ H @ basis
    lam = np.linalg.eigvalsh(H)[0]
    assert lam > 0
    # The Hessian varies by O(|theta - theta*|) ~ 1e-4 along the segment between the two
    # solutions: half its smallest eigenvalue at stock's solution bounds the curvature there.
    radius = (np.linalg.norm(g_ours) + np.linalg.norm(g_stock)) / (lam / 2)
    theta = lambda m: np.hstack([m.coef_, m.intercept_[:, None]]).ravel()
    assert np.linalg.norm(theta(ours) - theta(stock)) <= radius
    # In objective each is within |g|^2 / (2 lam') of the optimum.
    gap = (g_ours @ g_ours + g_stock @ g_stock) / lam
    assert abs(_objective(ours, X, codes, k, sw, C) - _objective(stock, X, codes, k, sw, C)) <= gap
    assert ours.coef_.shape == stock.coef_.shape
    assert ours.intercept_.shape == stock.intercept_.shape
    assert ours.n_iter_.shape == stock.n_iter_.shape == (1,)
    assert ours.n_iter_.dtype == stock.n_iter_.dtype
    np.testing.assert_array_equal(ours.classes_, stock.classes_)


def _data(k, seed=0, n=240, d=5):
    X, y = make_classification(
        n_samples=n,
        n_features=d,
        n_informative=4,
        n_redundant=0,
        n_classes=k,
        n_clusters_per_class=1,
        class_sep=0.8,
        random_state=seed,
    )
    return StandardScaler().fit_transform(X), y


@pytest.mark.parametrize("k", [3, 5])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("C", [0.05, 1.0, 20.0])
def test_multinomial_fit_runs_natively_at_scikit_learns_optimum(k, fit_intercept, C):
    X, y = _data(k, seed=k)
    labels = np.array(["ant", "bee", "cat", "dog", "eel"])[y]
    # The door replicates scikit-learn's lbfgs run where its decisions are not left to
    # rounding (at tol 1e-12 the last steps' decreases are; test_sklearn_door_lbfgs.py).
    params = {"C": C, "fit_intercept": fit_intercept, "max_iter": 500, "tol": 1e-4}
    door.dispatch_stats(reset=True)
    ours = door_linear_model.LogisticRegression(**params).fit(X, labels)
    assert door.dispatch_stats() == {NATIVE: 1}
    stock = LogisticRegression(**params).fit(X, labels)
    assert ours.coef_.shape == (k, X.shape[1])
    # L2-penalised, the optimum's coefficients sum to zero over the classes.
    np.testing.assert_allclose(ours.coef_.sum(axis=0), 0, atol=1e-10)
    _assert_same_optimum(ours, stock, X, labels, None, C, fit_intercept)
    np.testing.assert_array_equal(ours.predict(X), stock.predict(X))


def _weights(n, seed):
    rng = np.random.default_rng(seed)
    sw = rng.uniform(0, 3, n)
    sw[rng.choice(n, n // 10, replace=False)] = 0.0
    return sw


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize(
    "class_weight, with_sample_weight",
    [(None, True), ("balanced", False), ("balanced", True), ({0: 3.0, 1: 0.5}, True)],
)
def test_weighted_fit_runs_natively_at_scikit_learns_optimum(
    k, fit_intercept, class_weight, with_sample_weight
):
    X, y = _data(k, seed=10 + k)
    sw = _weights(len(y), k) if with_sample_weight else None
    C = 0.7
    params = {"C": C, "fit_intercept": fit_intercept, "class_weight": class_weight}
    # Binary at the default tol, multinomial at 1e-6.
    params.update(max_iter=500, tol=1e-4 if k == 2 else 1e-6)
    door.dispatch_stats(reset=True)
    ours = door_linear_model.LogisticRegression(**params).fit(X, y, sample_weight=sw)
    assert door.dispatch_stats() == {NATIVE: 1}
    stock = LogisticRegression(**params).fit(X, y, sample_weight=sw)
    # The weights scikit-learn's objective uses: sample_weight times the class weight.
    from sklearn.utils.class_weight import compute_class_weight

    full = np.ones(len(y)) if sw is None else sw.copy()
    if class_weight is not None:
        full = (
            full
            * compute_class_weight(class_weight, classes=np.unique(y), y=y, sample_weight=full)[y]
        )
    _assert_same_optimum(ours, stock, X, y, full, C, fit_intercept)


def test_class_weight_is_the_same_fit_as_its_sample_weight():
    # scikit-learn multiplies sample_weight by the class weights before fitting: the door
    # builds the same weight vector, so both spellings give bit-identical fits.
    X, y = _data(2, seed=3)
    a = door_linear_model.LogisticRegression(class_weight={0: 1, 1: 2}).fit(X, y)
    b = door_linear_model.LogisticRegression().fit(X, y, sample_weight=y + 1.0)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    # Weights of one are the unweighted fit exactly.
    c = door_linear_model.LogisticRegression().fit(X, y, sample_weight=np.ones(len(y)))
    d = door_linear_model.LogisticRegression().fit(X, y)
    np.testing.assert_array_equal(c.coef_, d.coef_)


def test_integer_weights_are_repeated_samples():
    # A zero weight drops the sample, an integer weight repeats it: the weighted objective
    # (weight sum in place of n) is the repeated data's, both fits reach one optimum.
    X, y = _data(3, seed=7, n=90)
    sw = np.arange(len(y)) % 3
    params = {"C": 0.5, "tol": 1e-6, "max_iter": 1000}
    door.dispatch_stats(reset=True)
    weighted = door_linear_model.LogisticRegression(**params).fit(X, y, sample_weight=sw)
    repeated = door_linear_model.LogisticRegression(**params).fit(
        np.repeat(X, sw, axis=0), np.repeat(y, sw)
    )
    assert door.dispatch_stats() == {NATIVE: 2}
    _assert_same_optimum(weighted, repeated, X, y, sw.astype(float), 0.5, True)


def test_sample_weight_is_not_modified():
    X, y = _data(3, seed=1)
    sw = _weights(len(y), 1)
    before = sw.copy()
    door_linear_model.LogisticRegression(class_weight="balanced").fit(X, y, sample_weight=sw)
    np.testing.assert_array_equal(sw, before)


def test_weights_scikit_learn_handles_differently_fall_back():
    X, y = _data(2, seed=5)
    # Negative weights: scikit-learn accepts them (a non-convex objective): its run answers.
    sw = np.ones(len(y))
    sw[:5] = -0.5
    door.dispatch_stats(reset=True)
    ours = door_linear_model.LogisticRegression().fit(X, y, sample_weight=sw)
    assert door.dispatch_stats() == {FALLBACK: 1}
    stock = LogisticRegression().fit(X, y, sample_weight=sw)
    np.testing.assert_array_equal(ours.coef_, stock.coef_)
    # A weight vector of the wrong length: scikit-learn's own error.
    with pytest.raises(ValueError) as ours_err:
        door_linear_model.LogisticRegression().fit(X, y, sample_weight=np.ones(3))
    with pytest.raises(ValueError) as stock_err:
        LogisticRegression().fit(X, y, sample_weight=np.ones(3))
    assert str(ours_err.value) == str(stock_err.value)
    # A class weight for a class that is not in y: scikit-learn's own error.
    with pytest.raises(ValueError) as ours_err:
        door_linear_model.LogisticRegression(class_weight={0: 1, 7: 2}).fit(X, y)
    with pytest.raises(ValueError) as stock_err:
        LogisticRegression(class_weight={0: 1, 7: 2}).fit(X, y)
    assert str(ours_err.value) == str(stock_err.value)


def test_multinomial_fit_with_a_loose_tol_runs_natively_with_scikit_learns_iterates():
    # sqrt(p) tol C n = sqrt(18) * 1e-4 * 1 * 240 ~ 0.1: two lbfgs runs merely stopped by
    # the same rule could differ visibly; the door replicates scikit-learn's run, so it
    # stops at the same iterate (test_sklearn_door_lbfgs.py derives the tolerance).
    X, y = _data(3, seed=2)
    door.dispatch_stats(reset=True)
    ours = door_linear_model.LogisticRegression().fit(X, y)
    assert door.dispatch_stats() == {NATIVE: 1}
    stock = LogisticRegression().fit(X, y)
    np.testing.assert_array_equal(ours.n_iter_, stock.n_iter_)
    np.testing.assert_allclose(ours.coef_, stock.coef_, rtol=0, atol=1e-9)
    np.testing.assert_allclose(ours.intercept_, stock.intercept_, rtol=0, atol=1e-9)


# --- newton-cholesky ---------------------------------------------------------------------
#
# The door takes scikit-learn's Newton steps (same Hessian, line search and stopping rule),
# so both runs stop after the same iterations (n_iter_ equal) at the same point up to the
# rounding of the steps: each linear solve agrees with LAPACK's to cond(H) eps relative,
# Newton's contraction damps earlier differences, and the last step (at most sqrt(2 tol /
# lambda_min) long) carries its own, so the fits agree to a few cond(H) eps times the
# coefficients' scale, far below tol. The tolerance below allows 100 such errors per
# iteration.


def _newton_atol(stock, X, y, sw, C, fit_intercept, iterations=None):
    k = len(stock.classes_)
    codes = np.searchsorted(stock.classes_, y)
    sw = np.ones(len(y)) if sw is None else sw
    _, H, _, _ = _gradient_and_hessian(stock, X, codes, k, sw, C, fit_intercept)
    # The multinomial Hessian is singular along the directions the softmax does not see
    # (shifting all classes' intercepts, or everything without a penalty): its condition on
    # the rest.
    eig = np.linalg.eigvalsh(H)
    kept = eig[eig > 1e-10 * eig[-1]]
    cond = kept[-1] / kept[0]
    scale = max(1.0, np.abs(stock.coef_).max(), np.abs(stock.intercept_).max())
    iterations = int(stock.n_iter_[0]) if iterations is None else iterations
    return 100 * iterations * cond * np.finfo(float).eps * scale


def _assert_same_newton_fit(ours, stock, X, y, sw, C, fit_intercept):
    np.testing.assert_array_equal(ours.n_iter_, stock.n_iter_)
    assert ours.n_iter_.dtype == stock.n_iter_.dtype
    np.testing.assert_array_equal(ours.classes_, stock.classes_)
    assert ours.coef_.shape == stock.coef_.shape
    assert ours.intercept_.shape == stock.intercept_.shape
    atol = _newton_atol(stock, X, y, sw, C, fit_intercept)
    np.testing.assert_allclose(ours.coef_, stock.coef_, rtol=0, atol=atol)
    np.testing.assert_allclose(ours.intercept_, stock.intercept_, rtol=0, atol=atol)
    np.testing.assert_array_equal(ours.predict(X), stock.predict(X))


def _fit_both(params, X, y, sw=None, expect=NATIVE):
    door.dispatch_stats(reset=True)
    ours = door_linear_model.LogisticRegression(**params).fit(X, y, sample_weight=sw)
    assert door.dispatch_stats() == {expect: 1}
    stock = LogisticRegression(**params).fit(X, y, sample_weight=sw)
    return ours, stock


@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("C", [0.05, 1.0, 100.0, np.inf])
def test_newton_cholesky_runs_natively_with_scikit_learns_steps(k, fit_intercept, C):
    X, y = _data(k, seed=20 + k)
    if C == np.inf and k == 2:
        # Without a penalty a binary fit needs overlapping classes to have an optimum.
        y = np.where(np.random.default_rng(k).random(len(y)) < 0.2, 1 - y, y)
    params = {"C": C, "fit_intercept": fit_intercept, "solver": "newton-cholesky"}
    ours, stock = _fit_both(params, X, y)
    _assert_same_newton_fit(ours, stock, X, y, None, C, fit_intercept)


@pytest.mark.parametrize("k", [2, 4])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize(
    "class_weight, with_sample_weight",
    [(None, True), ("balanced", False), ("balanced", True), ({0: 3.0, 1: 0.5}, True)],
)
def test_newton_cholesky_weighted_fit_runs_natively(
    k, fit_intercept, class_weight, with_sample_weight
):
    X, y = _data(k, seed=30 + k)
    sw = _weights(len(y), k) if with_sample_weight else None
    C = 0.7
    params = {
        "C": C,
        "fit_intercept": fit_intercept,
        "class_weight": class_weight,
        "solver": "newton-cholesky",
    }
    ours, stock = _fit_both(params, X, y, sw)
    from sklearn.utils.class_weight import compute_class_weight

    full = np.ones(len(y)) if sw is None else sw.copy()
    if class_weight is not None:
        full = (
            full
            * compute_class_weight(class_weight, classes=np.unique(y), y=y, sample_weight=full)[y]
        )
    _assert_same_newton_fit(ours, stock, X, y, full, C, fit_intercept)


def test_newton_cholesky_ill_conditioned_but_regular_fit_runs_natively():
    # Two features agreeing to 1e-4 (cond(H) ~ 1e8 with a weak penalty): still well inside
    # what Cholesky and LAPACK solve alike; the tolerance scales with cond(H).
    X, y = _data(2, seed=41)
    X = np.hstack([X, X[:, :1] + 1e-4 * np.random.default_rng(0).standard_normal((len(y), 1))])
    params = {"C": 1e4, "solver": "newton-cholesky", "tol": 1e-8}
    ours, stock = _fit_both(params, X, y)
    _assert_same_newton_fit(ours, stock, X, y, None, 1e4, True)


def _assert_scikit_learns_fit(ours, stock):
    np.testing.assert_array_equal(ours.coef_, stock.coef_)
    np.testing.assert_array_equal(ours.intercept_, stock.intercept_)
    np.testing.assert_array_equal(ours.n_iter_, stock.n_iter_)


@pytest.mark.parametrize("max_iter", [1, 100])
def test_newton_cholesky_singular_hessian_runs_scikit_learns(max_iter):
    # A repeated column without penalty: the Hessian is singular, scikit-learn warns and
    # goes on with lbfgs; the door leaves the whole fit to it, also where max_iter would
    # cut the run at the very iteration it hands over (that run is not a cut one).
    X, y = _data(2, seed=42)
    y = np.where(np.random.default_rng(1).random(len(y)) < 0.2, 1 - y, y)
    X = np.hstack([X, X[:, :1]])
    params = {"C": np.inf, "solver": "newton-cholesky", "max_iter": max_iter}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, stock = _fit_both(params, X, y, expect=FALLBACK)
    _assert_scikit_learns_fit(ours, stock)


def test_newton_cholesky_separable_data_without_penalty_runs_natively():
    # Separable classes without a penalty: the coefficients grow each step while the loss
    # and its gradient shrink exponentially, so scikit-learn stops once the gradient is below
    # tol; the native run stops at the same step. The Hessian there is tiny and badly
    # conditioned, which the cond(H)-scaled tolerance accounts for.
    X = np.linspace(-3, 3, 40)[:, None]
    y = (X[:, 0] > 0).astype(int)
    params = {"C": np.inf, "solver": "newton-cholesky", "tol": 1e-6}
    ours, stock = _fit_both(params, X, y)
    assert stock.coef_[0, 0] > 100
    _assert_same_newton_fit(ours, stock, X, y, None, np.inf, True)


def _recorded_fit(model, X, y):
    """``model.fit(X, y)`` and the warnings it raised, as (category, text) pairs."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, y)
    return [(w.category, str(w.message)) for w in caught]


def _cut_pair(solver, k, fit_intercept, C, max_iter, warm):
    """The door's and stock scikit-learn's models for a run cut by ``max_iter``, both
    started at zero or (``warm``) at stock's one-iteration fit, and the data; ``tol`` is
    tight enough that no run here converges within 4 iterations."""
    X, y = _data(k, seed=20 + k)
    if C == np.inf and k == 2:
        y = np.where(np.random.default_rng(k).random(len(y)) < 0.2, 1 - y, y)
    params = {
        "solver": solver,
        "C": C,
        "fit_intercept": fit_intercept,
        "warm_start": warm,
        "tol": 1e-12,
    }
    ours = door_linear_model.LogisticRegression(**params, max_iter=1)
    stock = LogisticRegression(**params, max_iter=1)
    if warm:
        # one cut iteration on each side, then both resume from stock's point
        _recorded_fit(ours, X, y)
        _recorded_fit(stock, X, y)
        ours.coef_, ours.intercept_ = stock.coef_.copy(), stock.intercept_.copy()
    ours.set_params(max_iter=max_iter)
    stock.set_params(max_iter=max_iter)
    return ours, stock, X, y


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("C", [1.0, np.inf])
@pytest.mark.parametrize("max_iter", [1, 2, 3])
@pytest.mark.parametrize("warm", [False, True])
def test_newton_cholesky_cut_by_max_iter_runs_natively_with_scikit_learns_warning(
    k, fit_intercept, C, max_iter, warm
):
    # A run cut by max_iter: scikit-learn's iterate after max_iter steps (centred by its
    # finalize as a converged run), n_iter_ = max_iter, and its ConvergenceWarning word for
    # word; the steps are the converged runs', so the same tolerance rule applies.
    ours, stock, X, y = _cut_pair("newton-cholesky", k, fit_intercept, C, max_iter, warm)
    door.dispatch_stats(reset=True)
    ours_warnings = _recorded_fit(ours, X, y)
    assert door.dispatch_stats() == {NATIVE: 1}
    stock_warnings = _recorded_fit(stock, X, y)
    assert stock_warnings == [
        (ConvergenceWarning, f"Newton solver did not converge after {max_iter} iterations.")
    ]
    assert ours_warnings == stock_warnings
    assert stock.n_iter_[0] == max_iter
    _assert_same_newton_fit(ours, stock, X, y, None, C, fit_intercept)


def test_newton_cholesky_cut_run_warns_before_setting_anything():
    # Under warnings-as-errors scikit-learn's fit raises its warning from the solver, before
    # any fitted attribute exists; the door's does the same.
    X, y = _data(3, seed=43)
    params = {"solver": "newton-cholesky", "max_iter": 1}
    for model in (door_linear_model.LogisticRegression(**params), LogisticRegression(**params)):
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            with pytest.raises(ConvergenceWarning, match="Newton solver did not converge"):
                model.fit(X, y)
        assert not hasattr(model, "coef_")


# --- newton-cg ---------------------------------------------------------------------------
#
# The same CG directions and stopping rule as scikit-learn's newton-cg, where each Wolfe
# line search takes its first trial step: both runs stop after the same iterations at the
# same point up to the steps' rounding. The CG solves are inexact but deterministic
# functions of the gradient and Hessian, so the cond(H)-scaled tolerance above applies.


@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("C", [0.05, 1.0, 100.0, np.inf])
def test_newton_cg_runs_natively_with_scikit_learns_steps(k, fit_intercept, C):
    X, y = _data(k, seed=20 + k)
    if C == np.inf and k == 2:
        y = np.where(np.random.default_rng(k).random(len(y)) < 0.2, 1 - y, y)
    params = {"C": C, "fit_intercept": fit_intercept, "solver": "newton-cg"}
    ours, stock = _fit_both(params, X, y)
    _assert_same_newton_fit(ours, stock, X, y, None, C, fit_intercept)


@pytest.mark.parametrize("k", [2, 4])
@pytest.mark.parametrize("class_weight", [None, "balanced"])
def test_newton_cg_weighted_fit_runs_natively(k, class_weight):
    X, y = _data(k, seed=50 + k)
    sw = _weights(len(y), k)
    params = {"C": 0.7, "class_weight": class_weight, "solver": "newton-cg"}
    ours, stock = _fit_both(params, X, y, sw)
    from sklearn.utils.class_weight import compute_class_weight

    full = sw.copy()
    if class_weight is not None:
        full = (
            full
            * compute_class_weight(class_weight, classes=np.unique(y), y=y, sample_weight=full)[y]
        )
    _assert_same_newton_fit(ours, stock, X, y, full, 0.7, True)


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("max_iter", [1, 2, 3])
@pytest.mark.parametrize("warm", [False, True])
def test_newton_cg_cut_by_max_iter_runs_scikit_learns(k, max_iter, warm):
    # scikit-learn's warning prints the loss at its own last iterate, a double the native
    # run only matches to rounding: the door leaves such runs to scikit-learn.
    ours, stock, X, y = _cut_pair("newton-cg", k, True, 1.0, max_iter, warm)
    door.dispatch_stats(reset=True)
    ours_warnings = _recorded_fit(ours, X, y)
    assert door.dispatch_stats() == {FALLBACK: 1}
    stock_warnings = _recorded_fit(stock, X, y)
    assert [c for c, _ in stock_warnings] == [ConvergenceWarning]
    assert stock_warnings[0][1].startswith("newton-cg failed to converge at loss = ")
    assert ours_warnings == stock_warnings
    _assert_scikit_learns_fit(ours, stock)


# --- Newton solvers with warm_start ------------------------------------------------------
#
# scikit-learn starts both Newton solvers at the previous coef_ / intercept_ (newton-
# cholesky re-centres a multinomial start first, newton-cg takes it as given), so the door
# does too; each stage is compared with stock scikit-learn run from the same start (stock's
# previous fit, handed to the door, as in the lbfgs warm-start test: the two previous fits
# differ by rounding). From one start both runs take the same steps, so the cond(H)-scaled
# tolerance above applies stage by stage.


def _newton_stage_atol(stock, X, y, sw, C, fit_intercept):
    """_newton_atol with at least one iteration's rounding: a warm newton-cg run may stop
    at its start (n_iter_ 0), where both fits are the start itself."""
    iterations = max(1, int(stock.n_iter_[0]))
    return _newton_atol(stock, X, y, sw, C, fit_intercept, iterations)


@pytest.mark.parametrize("solver", ["newton-cholesky", "newton-cg"])
@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("C", [1.0, np.inf])
@pytest.mark.parametrize("weighted", [False, True])
def test_newton_warm_start_continues_from_the_previous_fit_as_scikit_learn(
    solver, k, fit_intercept, C, weighted
):
    # The cold tests' data: well inside the tolerance rule (seed 73's near-separable
    # 3-class data, coefficients up to 17, sits at its edge from a cold start already).
    X, y = _data(k, seed=20 + k)
    if C == np.inf and k == 2:
        y = np.where(np.random.default_rng(k).random(len(y)) < 0.2, 1 - y, y)
    sw = _weights(len(y), k) if weighted else None
    base = {"solver": solver, "warm_start": True, "fit_intercept": fit_intercept, "C": C}
    ours = door_linear_model.LogisticRegression(**base)
    stock = LogisticRegression(**base)
    stages = [
        # a run cut by max_iter (newton-cg's: scikit-learn's fit, warning included) ...
        ({"max_iter": 1}, NATIVE if solver == "newton-cholesky" else FALLBACK),
        # ... resumed from where it stopped, natively
        ({"max_iter": 100}, NATIVE),
        # a new C (or tol) from the previous optimum
        ({"C": C / 4, "tol": 1e-8}, NATIVE),
        # the same fit again: newton-cholesky takes one step, newton-cg none
        ({}, NATIVE),
    ]
    for stage, expect in stages:
        ours.set_params(**stage)
        stock.set_params(**stage)
        door.dispatch_stats(reset=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            ours.fit(X, y, sample_weight=sw)
            stock.fit(X, y, sample_weight=sw)
        assert door.dispatch_stats() == {expect: 1}, stage
        np.testing.assert_array_equal(ours.n_iter_, stock.n_iter_)
        atol = _newton_stage_atol(stock, X, y, sw, stock.C, fit_intercept)
        np.testing.assert_allclose(ours.coef_, stock.coef_, rtol=0, atol=atol)
        np.testing.assert_allclose(ours.intercept_, stock.intercept_, rtol=0, atol=atol)
        ours.coef_, ours.intercept_ = stock.coef_.copy(), stock.intercept_.copy()
    assert stock.n_iter_[0] == (1 if solver == "newton-cholesky" else 0)


@pytest.mark.parametrize("solver", ["newton-cholesky", "newton-cg"])
@pytest.mark.parametrize("k", [2, 4])
@pytest.mark.parametrize("change", ["C", "data"])
def test_newton_warm_start_saves_iterations_as_scikit_learn(solver, k, change):
    # A refit after a small change (a new C, or data of the same shape moved a little)
    # starts near its optimum: fewer iterations than a cold fit, scikit-learn's number. The
    # whole sequence runs on each side (no start handed over), so the refits differ by the
    # first fits' difference as well: the two stages' tolerances add.
    X, y = _data(k, seed=80 + k)
    params = {"solver": solver, "C": 2.0, "tol": 1e-8}
    first, first_stock = _fit_both(dict(params, warm_start=True), X, y)
    atol = _newton_atol(first_stock, X, y, None, 2.0, True)
    C2 = 2.0
    if change == "C":
        C2 = 1.5
    else:
        X = X + 0.02 * np.random.default_rng(k).standard_normal(X.shape)
    for model in (first, first_stock):
        model.set_params(C=C2)
    door.dispatch_stats(reset=True)
    warm = first.fit(X, y)
    assert door.dispatch_stats() == {NATIVE: 1}
    warm_stock = first_stock.fit(X, y)
    cold, cold_stock = _fit_both(dict(params, C=C2), X, y)
    np.testing.assert_array_equal(warm.n_iter_, warm_stock.n_iter_)
    np.testing.assert_array_equal(cold.n_iter_, cold_stock.n_iter_)
    assert warm.n_iter_[0] < cold.n_iter_[0]
    atol += _newton_stage_atol(warm_stock, X, y, None, C2, True)
    np.testing.assert_allclose(warm.coef_, warm_stock.coef_, rtol=0, atol=atol)
    np.testing.assert_allclose(warm.intercept_, warm_stock.intercept_, rtol=0, atol=atol)


@pytest.mark.parametrize("solver", ["newton-cholesky", "newton-cg"])
def test_newton_warm_start_of_another_shape_is_scikit_learns_error(solver):
    X, y = _data(3, seed=7)
    ours = door_linear_model.LogisticRegression(solver=solver, warm_start=True).fit(X, y)
    stock = LogisticRegression(solver=solver, warm_start=True).fit(X, y)
    door.dispatch_stats(reset=True)
    with pytest.raises(ValueError) as ours_error:
        ours.fit(X, y % 2)
    assert door.dispatch_stats() == {FALLBACK: 1}
    with pytest.raises(ValueError) as stock_error:
        stock.fit(X, y % 2)
    assert str(ours_error.value) == str(stock_error.value)
