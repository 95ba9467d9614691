"""SVC against scikit-learn's SVC (libsvm)."""

import pickle

import numpy as np
import pytest
from classification_data import load, split
from conftest import PARALLEL, SERIAL
from sklearn import svm
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from rustyml import NotFittedError, tuning
from rustyml.machine_learning import SVC

KERNELS = ["linear", "poly", "rbf", "sigmoid"]


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("name", ["iris", "wine", "breast_cancer", "digits"])
def test_accuracy_within_two_points_of_sklearn(name, kernel):
    Xtr, Xte, ytr, yte = split(name)
    ours = SVC(kernel=kernel).fit(Xtr, ytr).score(Xte, yte)
    ref = svm.SVC(kernel=kernel).fit(Xtr, ytr).score(Xte, yte)
    assert abs(ours - ref) <= 0.02, (ours, ref)


def dual_per_point(model, X):
    """dual_coef_ summed over identical training points (zeros for non-support vectors).

    Duplicated samples (iris has some) can share their weight in any proportion, so only the
    sum per distinct point is determined by the problem."""
    _, point = np.unique(X, axis=0, return_inverse=True)
    full = np.zeros((model.dual_coef_.shape[0], point.max() + 1))
    np.add.at(full.T, point.ravel()[model.support_], model.dual_coef_.T)
    return full


@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
@pytest.mark.parametrize("name", ["iris", "wine", "breast_cancer", "digits"])
def test_tight_tolerance_solution_matches_libsvm(name, kernel):
    X, y = load(name)
    ours = SVC(kernel=kernel, tol=1e-8).fit(X, y)
    ref = svm.SVC(kernel=kernel, tol=1e-8).fit(X, y)
    # Same dual problem, both solved to a KKT violation of 1e-8 by second-order SMO: the
    # decision function (unique) agrees to ~1e-7; 1e-5 leaves room for the O(tol * n)
    # accumulated differences of two stopping points.
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-5)
    np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X), atol=1e-5)
    assert np.array_equal(ours.predict(X), ref.predict(X))
    if kernel == "rbf":
        # Strictly positive-definite kernel: the weight per distinct point is unique too.
        np.testing.assert_allclose(dual_per_point(ours, X), dual_per_point(ref, X), atol=1e-5)
        assert ours._gamma == pytest.approx(ref._gamma, rel=1e-12)


def test_support_vectors_are_grouped_by_class():
    X, y = load("wine")
    model = SVC().fit(X, y)
    ref = svm.SVC().fit(X, y)
    assert model.n_support_.sum() == len(model.support_) == model.dual_coef_.shape[1]
    assert np.array_equal(model.support_vectors_, X[model.support_])
    labels = y[model.support_]
    assert np.all(np.diff(labels) >= 0)  # grouped by class, classes in order
    for c in range(3):
        assert np.all(np.diff(model.support_[labels == c]) > 0)  # training order within a class
    assert np.array_equal(model.support_, ref.support_)
    assert np.array_equal(model.n_support_, ref.n_support_)


def test_linear_kernel_weights_match_sklearn():
    for name in ["iris", "breast_cancer"]:
        X, y = load(name)
        ours = SVC(kernel="linear", tol=1e-8).fit(X, y)
        ref = svm.SVC(kernel="linear", tol=1e-8).fit(X, y)
        assert ours.coef_.shape == ref.coef_.shape
        np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-5)
    with pytest.raises(AttributeError, match="linear kernel"):
        _ = SVC().fit(X, y).coef_


def test_binary_decision_sign_and_ovo_shape_follow_sklearn():
    X, y = load("breast_cancer")
    ours, ref = SVC(tol=1e-8).fit(X, y), svm.SVC(tol=1e-8).fit(X, y)
    dec = ours.decision_function(X)
    assert dec.shape == (len(y),)
    np.testing.assert_allclose(dec, ref.decision_function(X), atol=1e-5)
    assert np.array_equal(ours.predict(X), ours.classes_[(dec > 0).astype(int)])
    X, y = load("iris")
    ovo = SVC(decision_function_shape="ovo", tol=1e-8).fit(X, y)
    ref = svm.SVC(decision_function_shape="ovo", tol=1e-8).fit(X, y)
    assert ovo.decision_function(X).shape == (len(y), 3)
    np.testing.assert_allclose(ovo.decision_function(X), ref.decision_function(X), atol=1e-5)


@pytest.mark.parametrize("gamma", ["scale", "auto", 0.05])
def test_gamma_rules(gamma):
    X, y = load("iris", scale=False)
    ours, ref = SVC(gamma=gamma).fit(X, y), svm.SVC(gamma=gamma).fit(X, y)
    assert ours._gamma == pytest.approx(ref._gamma, rel=1e-12)


def test_small_kernel_cache_gives_the_same_model():
    X, y = load("breast_cancer")
    full = SVC().fit(X, y)
    # 569 rows of 8 bytes: 0.01 MB holds two rows, so rows are recomputed on demand.
    tiny = SVC(cache_size=0.01).fit(X, y)
    assert np.array_equal(full.support_, tiny.support_)
    np.testing.assert_allclose(full.decision_function(X), tiny.decision_function(X), atol=1e-9)


@pytest.mark.parametrize(
    "family,name",
    [("elementwise", "exp_map_f64"), ("reduction", "scan_f64"), ("reduction", "sum_f64")],
)
@pytest.mark.parametrize("kernel", ["rbf", "sigmoid"])
def test_gates_never_change_results(gate, family, name, kernel):
    X, y = load("digits")
    module = getattr(tuning, family)
    runs = []
    for value in (SERIAL, PARALLEL):
        gate(module, name, value)
        model = SVC(kernel=kernel).fit(X, y)
        runs.append((model.dual_coef_, model.intercept_, model.decision_function(X)))
    for a, b in zip(*runs):
        assert np.array_equal(a, b)  # bit for bit


def test_bad_input_is_refused():
    X, y = load("iris")
    with pytest.raises(ValueError, match="unknown kernel"):
        SVC(kernel="laplacian").fit(X, y)
    with pytest.raises(ValueError, match="gamma"):
        SVC(gamma=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="gamma"):
        SVC(gamma="often").fit(X, y)
    with pytest.raises(ValueError, match="C must be"):
        SVC(C=0).fit(X, y)
    with pytest.raises(ValueError, match="decision_function_shape"):
        SVC(decision_function_shape="ovx").fit(X, y)
    with pytest.raises(ValueError, match="only one class"):
        SVC().fit(X, np.zeros(len(X)))
    with pytest.raises(ValueError, match="NaN or infinity"):
        SVC().fit(np.where(X > 2, np.nan, X), y)
    with pytest.raises(ValueError, match="inconsistent"):
        SVC().fit(X, y[:-1])
    with pytest.raises(ValueError, match="empty"):
        SVC().fit(np.ones((0, 4)), np.ones(0))
    with pytest.raises(NotFittedError):
        SVC().predict(X)
    with pytest.raises(ValueError, match="features"):
        SVC().fit(X, y).predict(X[:, :2])


def test_sklearn_conventions_and_persistence(tmp_path):
    X, y = load("iris")
    est = SVC(C=2.0, kernel="poly")
    assert clone(est).get_params() == est.get_params()
    search = GridSearchCV(SVC(), {"C": [0.5, 5.0]}, cv=3).fit(X, y)
    assert search.best_params_["C"] in (0.5, 5.0)
    model = SVC().fit(X, np.array(["a", "b", "c"])[y])
    back = pickle.loads(pickle.dumps(model))
    assert np.array_equal(back.predict(X), model.predict(X))
    assert back.predict(X).dtype == model.predict(X).dtype
    path = tmp_path / "svc.bin"
    model.save(path)
    assert np.array_equal(SVC.load(path).decision_function(X), model.decision_function(X))
