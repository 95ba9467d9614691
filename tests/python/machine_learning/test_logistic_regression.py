"""LogisticRegression against scikit-learn's LogisticRegression."""

import pickle
import warnings

import numpy as np
import pytest
import sklearn
from classification_data import load, split
from conftest import PARALLEL, SERIAL
from scipy.special import expit, logsumexp, softmax
from sklearn import linear_model
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from rustyml import NotFittedError, tuning
from rustyml.machine_learning import LogisticRegression

SKLEARN_VERSION = tuple(int(p) for p in sklearn.__version__.split(".")[:2])


def sk_logreg(penalty="l2", **kw):
    """scikit-learn's LogisticRegression with ``penalty`` spelt as the installed version wants
    (1.8 deprecated ``penalty`` for ``l1_ratio`` / ``C=inf``)."""
    if SKLEARN_VERSION < (1, 8):
        return linear_model.LogisticRegression(penalty=penalty, **kw)
    if penalty == "l1":
        return linear_model.LogisticRegression(l1_ratio=1.0, **kw)
    if penalty is None:
        return linear_model.LogisticRegression(C=np.inf, **kw)
    return linear_model.LogisticRegression(**kw)


def sk_fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y)


@pytest.mark.parametrize(
    "name,scale",
    [
        ("iris", False),
        ("iris", True),
        ("wine", False),
        ("wine", True),
        ("breast_cancer", True),
        ("digits", False),
        ("digits", True),
    ],
)
def test_accuracy_within_two_points_of_sklearn(name, scale):
    Xtr, Xte, ytr, yte = split(name, scale)
    ours = LogisticRegression().fit(Xtr, ytr).score(Xte, yte)
    ref = sk_fit(linear_model.LogisticRegression(), Xtr, ytr).score(Xte, yte)
    assert abs(ours - ref) <= 0.02, (ours, ref)


@pytest.mark.parametrize("name", ["iris", "wine", "breast_cancer", "digits"])
def test_converged_solution_matches_sklearn(name):
    X, y = load(name)
    ours = LogisticRegression(tol=1e-10, max_iter=100_000).fit(X, y)
    ref = linear_model.LogisticRegression(tol=1e-10, max_iter=100_000).fit(X, y)
    # Same strictly convex objective (strong convexity 1 / (C n) after the 1/n scaling). Both
    # L-BFGS runs may end on a relative decrease of 64 eps of an O(1) objective, which leaves
    # coefficients up to sqrt(2 * 64 eps * C n) ~ 1e-5 apart.
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-5)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-5)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-5)
    assert np.array_equal(ours.classes_, ref.classes_)


def test_binary_outputs_follow_sklearn_shapes_and_definitions():
    X, y = load("breast_cancer")
    model = LogisticRegression().fit(X, y)
    ref = linear_model.LogisticRegression().fit(X, y)
    assert model.coef_.shape == ref.coef_.shape == (1, X.shape[1])
    assert model.intercept_.shape == ref.intercept_.shape == (1,)
    dec = model.decision_function(X)
    assert dec.shape == (X.shape[0],)
    np.testing.assert_allclose(
        dec, X @ model.coef_[0] + model.intercept_[0], rtol=1e-12, atol=1e-12
    )
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba[:, 1], expit(dec), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-15)
    np.testing.assert_allclose(model.predict_log_proba(X), np.log(proba))
    assert np.array_equal(model.predict(X), model.classes_[(dec > 0).astype(int)])
    assert model.n_iter_.shape == (1,) and model.n_iter_[0] > 0


def test_multinomial_outputs_follow_sklearn_shapes_and_definitions():
    X, y = load("wine")
    model = LogisticRegression().fit(X, y)
    assert model.coef_.shape == (3, X.shape[1]) and model.intercept_.shape == (3,)
    dec = model.decision_function(X)
    np.testing.assert_allclose(dec, X @ model.coef_.T + model.intercept_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(model.predict_proba(X), softmax(dec, axis=1), rtol=1e-12, atol=1e-15)
    assert np.array_equal(model.predict(X), model.classes_[np.argmax(dec, axis=1)])


def l1_objective(model, X, y, C):
    """C * sum(log-loss) + |W|_1 with unpenalised intercepts (the saga objective)."""
    Z = X @ model.coef_.T + model.intercept_
    idx = np.searchsorted(model.classes_, y)
    if Z.shape[1] == 1:
        z = Z[:, 0]
        t = (idx == 1).astype(float)
        loss = np.sum(np.logaddexp(0.0, z) - t * z)
    else:
        loss = np.sum(logsumexp(Z, axis=1) - Z[np.arange(len(y)), idx])
    return C * loss + np.abs(model.coef_).sum()


@pytest.mark.parametrize("name", ["iris", "breast_cancer"])
def test_l1_reaches_the_saga_optimum_and_accuracy(name):
    X, y = load(name)
    ours = LogisticRegression(penalty="l1", C=0.5, tol=1e-8, max_iter=10_000).fit(X, y)
    ref = sk_fit(
        sk_logreg("l1", C=0.5, solver="saga", tol=1e-8, max_iter=10_000),
        X,
        y,
    )
    f_ours, f_ref = l1_objective(ours, X, y, 0.5), l1_objective(ref, X, y, 0.5)
    # OWL-QN converges to the same optimum as saga; neither is exact, so compare the objective
    # to 1e-6 relative (saga's tol of 1e-8 on the coefficients bounds its own gap well below).
    assert f_ours <= f_ref * (1 + 1e-6), (f_ours, f_ref)
    assert np.count_nonzero(ours.coef_) < ours.coef_.size  # L1 zeroes some weights
    assert abs(ours.score(X, y) - ref.score(X, y)) <= 0.02
    Xtr, Xte, ytr, yte = split(name)
    a = LogisticRegression(penalty="l1").fit(Xtr, ytr).score(Xte, yte)
    b = sk_fit(sk_logreg("l1", solver="saga"), Xtr, ytr).score(Xte, yte)
    assert abs(a - b) <= 0.02


def test_no_penalty_and_gradient_descent_reach_the_lbfgs_solution():
    X, y = load("iris")
    ours = LogisticRegression(penalty=None, max_iter=1000).fit(X, y)
    ref = sk_fit(sk_logreg(None, max_iter=1000), X, y)
    assert abs(ours.score(X, y) - ref.score(X, y)) <= 0.02
    lbfgs = LogisticRegression(tol=1e-10, max_iter=10_000).fit(X, y)
    gd = LogisticRegression(
        solver="gradient_descent", learning_rate=0.5, tol=1e-10, max_iter=200_000
    ).fit(X, y)
    # both solve the same strictly convex problem to a step/gradient of 1e-10
    np.testing.assert_allclose(gd.coef_, lbfgs.coef_, atol=1e-6)


def test_labels_keep_their_values_and_dtype():
    X, y = load("iris")
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    model = LogisticRegression().fit(X, names)
    assert list(model.classes_) == ["setosa", "versicolor", "virginica"]
    assert model.predict(X).dtype == names.dtype
    assert model.score(X, names) > 0.9
    odd = np.array([-3.0, 7.0, 100.0])[y]
    model = LogisticRegression().fit(X, odd)
    np.testing.assert_array_equal(model.classes_, [-3.0, 7.0, 100.0])
    assert set(model.predict(X)) <= {-3.0, 7.0, 100.0}
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        LogisticRegression().fit(X, odd + 0.25)
    model = LogisticRegression().fit(X, y.astype(np.int32))
    assert model.classes_.dtype == np.int32 and model.predict(X).dtype == np.int32
    np.testing.assert_array_equal(
        model.predict(X), LogisticRegression().fit(X, y.astype(float)).predict(X)
    )


@pytest.mark.parametrize(
    "family,name",
    [("reduction", "exp_reduce"), ("elementwise", "exp_map_f64"), ("reduction", "scan_f64")],
)
def test_gates_never_change_results(gate, family, name):
    X, y = load("digits")
    module = getattr(tuning, family)
    runs = []
    for value in (SERIAL, PARALLEL):
        gate(module, name, value)
        model = LogisticRegression().fit(X, y)
        runs.append((model.coef_, model.intercept_, model.predict_proba(X), model.predict(X)))
    for a, b in zip(*runs):
        assert np.array_equal(a, b)  # bit for bit


@pytest.mark.parametrize(
    "X,y,match",
    [
        (np.ones((0, 2)), np.ones(0), "empty"),
        (np.array([[1.0], [np.nan]]), np.array([0.0, 1.0]), "NaN or infinity"),
        (np.array([[1.0], [np.inf]]), np.array([0.0, 1.0]), "NaN or infinity"),
        (np.array([[1.0], [2.0]]), np.array([0.0, np.nan]), "y contains NaN"),
        (np.array([[1.0], [2.0]]), np.array([1.0]), "inconsistent numbers of samples"),
        (np.array([[1.0], [2.0]]), np.array([1.0, 1.0]), "only one class"),
        (np.array([1.0, 2.0]), np.array([0.0, 1.0]), "2-dimensional"),
    ],
)
def test_bad_training_data(X, y, match):
    with pytest.raises(ValueError, match=match):
        LogisticRegression().fit(X, y)


def test_bad_hyper_parameters_and_use_before_fit():
    X, y = np.arange(8.0).reshape(-1, 2), np.array([0, 1, 0, 1])
    with pytest.raises(NotFittedError):
        LogisticRegression().predict(X)
    with pytest.raises(NotFittedError):
        _ = LogisticRegression().coef_
    with pytest.raises(ValueError, match="penalty"):
        LogisticRegression(penalty="elasticnet").fit(X, y)
    with pytest.raises(ValueError, match="C must be"):
        LogisticRegression(C=0.0).fit(X, y)
    with pytest.raises(ValueError, match="solver"):
        LogisticRegression(solver="newton").fit(X, y)
    with pytest.raises(ValueError, match="max_iter"):
        LogisticRegression(max_iter=0).fit(X, y)
    with pytest.raises(TypeError, match="real numbers"):
        LogisticRegression().fit(np.array([["a", "b"]] * 4), y)
    model = LogisticRegression().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        model.predict(np.ones((2, 3)))


def test_sklearn_conventions_and_persistence(tmp_path):
    X, y = load("iris", scale=False)
    est = LogisticRegression(C=0.5)
    assert clone(est).get_params() == est.get_params()
    assert "C=0.5" in repr(est)
    pipe = make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y)
    assert pipe.score(X, y) > 0.9
    search = GridSearchCV(LogisticRegression(), {"C": [0.1, 1.0, 10.0]}, cv=3).fit(X, y)
    assert search.best_params_["C"] in (0.1, 1.0, 10.0)
    model = LogisticRegression().fit(X, y)
    back = pickle.loads(pickle.dumps(model))
    assert np.array_equal(back.predict_proba(X), model.predict_proba(X))
    assert np.array_equal(back.classes_, model.classes_)
    path = tmp_path / "logreg.bin"
    model.save(path)
    assert np.array_equal(LogisticRegression.load(path).coef_, model.coef_)


def test_linear_model_gates_ship_their_defaults():
    found = {(f, n): d for f, n, _v, d, _u in tuning.gates()}
    assert found[("reduction", "exp_reduce")] == 32_768
    assert found[("elementwise", "exp_map_f64")] == 65_536
    assert tuning.reduction.get_exp_reduce() == 32_768
    assert tuning.elementwise.get_exp_map_f64() == 65_536


@pytest.mark.parametrize("name", ["iris", "breast_cancer"])
def test_sample_weight_matches_sklearn(name):
    X, y = load(name)
    rng = np.random.default_rng(0)
    sw = rng.uniform(0.0, 2.0, len(y))
    sw[::7] = 0.0
    ours = LogisticRegression(tol=1e-10, max_iter=100_000).fit(X, y, sample_weight=sw)
    ref = linear_model.LogisticRegression(tol=1e-10, max_iter=100_000).fit(X, y, sample_weight=sw)
    # Same objective (weighted mean loss, penalty over the weight sum S), strong convexity
    # 1 / (C S) in the coefficients; as above, an ftol stop of either run leaves them up to
    # sqrt(2 * 64 eps * C S) ~ 1e-5 apart.
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-5)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-5)


def test_bad_sample_weight_is_refused_and_keeps_the_fit():
    X, y = np.arange(8.0).reshape(-1, 2), np.array([0, 1, 0, 1])
    model = LogisticRegression().fit(X, y)
    coef = model.coef_.copy()
    for sw, match in [
        (np.ones(3), "4"),
        (np.array([1.0, -1.0, 1.0, 1.0]), ">= 0"),
        (np.array([1.0, np.nan, 1.0, 1.0]), ">= 0"),
        (np.zeros(4), "all zero"),
    ]:
        with pytest.raises(ValueError, match=match):
            model.fit(X, y, sample_weight=sw)
    # A failed fit builds a fresh engine and leaves the fitted one in place.
    np.testing.assert_array_equal(model.coef_, coef)


def test_native_start_is_checked_and_used():
    # The native fit's start (the sklearn door's warm start): a start of another shape, one
    # that is not finite, or an intercept without coefficients is a clear ValueError that
    # leaves the previous fit; a newton-cholesky fit started at its own optimum takes one
    # iteration (scikit-learn's rule: convergence is tested after a step) and stays there.
    from rustyml import _native

    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    y = (X[:, 0] + 0.5 * rng.standard_normal(60) > 0).astype(float)
    native = _native.machine_learning.LogisticRegression(
        penalty="l2",
        C=1.0,
        fit_intercept=True,
        max_iter=100,
        tol=1e-10,
        solver="newton-cholesky",
        learning_rate=0.1,
    )
    native.fit_weighted(X, y, None)
    coef, intercept, n_iter = native.coef_, native.intercept_, native.n_iter_
    assert n_iter > 2
    bad = [
        {"start_coef": np.zeros((2, 3)), "start_intercept": np.zeros(1)},
        {"start_coef": coef, "start_intercept": np.zeros(2)},
        {"start_coef": coef},
        {"start_coef": np.full((1, 3), np.nan), "start_intercept": intercept},
        {"start_intercept": intercept},
    ]
    for start in bad:
        with pytest.raises(ValueError, match="start"):
            native.fit_weighted(X, y, None, **start)
        assert native.n_iter_ == n_iter
    native.fit_weighted(X, y, np.ones(60), start_coef=coef, start_intercept=intercept)
    assert native.n_iter_ == 1 and native.converged_
    np.testing.assert_allclose(native.coef_, coef, rtol=0, atol=1e-8)
