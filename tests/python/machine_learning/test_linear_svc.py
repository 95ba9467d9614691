"""LinearSVC against scikit-learn's LinearSVC (liblinear)."""

import pickle
import warnings

import numpy as np
import pytest
from classification_data import load, split
from conftest import PARALLEL, SERIAL
from sklearn import svm
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV

from rustyml import NotFittedError, tuning
from rustyml.machine_learning import LinearSVC


def sk_fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y)


@pytest.mark.parametrize("penalty", ["l2", "l1"])
@pytest.mark.parametrize("name", ["iris", "wine", "breast_cancer", "digits"])
def test_accuracy_within_two_points_of_sklearn(name, penalty):
    Xtr, Xte, ytr, yte = split(name)
    ours = LinearSVC(penalty=penalty).fit(Xtr, ytr).score(Xte, yte)
    ref = sk_fit(svm.LinearSVC(penalty=penalty, dual=False), Xtr, ytr).score(Xte, yte)
    assert abs(ours - ref) <= 0.02, (ours, ref)


@pytest.mark.parametrize("name", ["iris", "wine", "breast_cancer"])
def test_converged_l2_solution_matches_liblinear(name):
    X, y = load(name)
    ours = LinearSVC(tol=1e-10, max_iter=100_000).fit(X, y)
    ref = svm.LinearSVC(dual=False, tol=1e-10, max_iter=100_000).fit(X, y)
    # One strictly convex primal (intercept penalised as liblinear does), both solved to a
    # gradient of ~1e-10; L-BFGS may stop on a relative decrease of 64 eps instead, which
    # bounds the weights' distance to the optimum by sqrt(2 * 64 eps * C n) ~ 1e-5.
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-5)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-5)
    assert np.array_equal(ours.predict(X), ref.predict(X))


def primal_l1(model, X, y, C):
    """|w|_1 + C sum squared hinge, one-vs-rest (intercept as a penalised weight)."""
    total = 0.0
    classes = model.classes_
    positives = [classes[1]] if len(classes) == 2 else classes
    for row, pos in enumerate(positives):
        t = np.where(y == pos, 1.0, -1.0)
        w, b = model.coef_[row], model.intercept_[row]
        total += np.abs(w).sum() + abs(b) + C * np.sum(np.maximum(0, 1 - t * (X @ w + b)) ** 2)
    return total


@pytest.mark.parametrize("name", ["iris", "breast_cancer"])
def test_l1_reaches_the_liblinear_objective(name):
    X, y = load(name)
    ours = LinearSVC(penalty="l1", tol=1e-10, max_iter=100_000).fit(X, y)
    ref = sk_fit(svm.LinearSVC(penalty="l1", dual=False, tol=1e-10, max_iter=100_000), X, y)
    f_ours, f_ref = primal_l1(ours, X, y, 1.0), primal_l1(ref, X, y, 1.0)
    # two solvers of one convex objective: compare optimal values to 1e-6 relative
    assert f_ours <= f_ref * (1 + 1e-6), (f_ours, f_ref)


def test_binary_and_multiclass_shapes_and_definitions():
    X, y = load("breast_cancer")
    model = LinearSVC().fit(X, y)
    assert model.coef_.shape == (1, X.shape[1]) and model.intercept_.shape == (1,)
    dec = model.decision_function(X)
    np.testing.assert_allclose(
        dec, X @ model.coef_[0] + model.intercept_[0], rtol=1e-12, atol=1e-12
    )
    assert np.array_equal(model.predict(X), model.classes_[(dec > 0).astype(int)])
    X, y = load("wine")
    model = LinearSVC().fit(X, y + 10)
    assert model.coef_.shape == (3, X.shape[1])
    dec = model.decision_function(X)
    assert np.array_equal(model.predict(X), model.classes_[np.argmax(dec, axis=1)])
    assert list(model.classes_) == [10, 11, 12]


@pytest.mark.parametrize("family,name", [("reduction", "sum_f64"), ("reduction", "scan_f64")])
def test_gates_never_change_results(gate, family, name):
    X, y = load("digits")
    module = getattr(tuning, family)
    runs = []
    for value in (SERIAL, PARALLEL):
        gate(module, name, value)
        model = LinearSVC().fit(X, y)
        runs.append((model.coef_, model.intercept_, model.predict(X)))
    for a, b in zip(*runs):
        assert np.array_equal(a, b)  # bit for bit


def test_bad_input_and_conventions(tmp_path):
    X, y = load("iris")
    with pytest.raises(ValueError, match="penalty"):
        LinearSVC(penalty=None).fit(X, y)
    with pytest.raises(ValueError, match="C must be"):
        LinearSVC(C=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="only one class"):
        LinearSVC().fit(X, np.ones(len(X)))
    with pytest.raises(ValueError, match="NaN or infinity"):
        LinearSVC().fit(np.full_like(X, np.inf), y)
    with pytest.raises(NotFittedError):
        LinearSVC().decision_function(X)
    est = LinearSVC(C=3.0)
    assert clone(est).get_params() == est.get_params()
    search = GridSearchCV(LinearSVC(), {"C": [0.1, 1.0]}, cv=3).fit(X, y)
    assert search.best_params_["C"] in (0.1, 1.0)
    model = LinearSVC().fit(X, y)
    back = pickle.loads(pickle.dumps(model))
    assert np.array_equal(back.coef_, model.coef_)
    path = tmp_path / "linsvc.bin"
    model.save(path)
    assert np.array_equal(LinearSVC.load(path).predict(X), model.predict(X))
