"""LDA against scikit-learn's LinearDiscriminantAnalysis."""

import pickle

import numpy as np
import pytest
from classification_data import load, split
from conftest import PARALLEL, SERIAL
from sklearn import discriminant_analysis
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression as SkLogisticRegression
from sklearn.pipeline import make_pipeline

from rustyml import NotFittedError, tuning
from rustyml.machine_learning import LDA, LinearDiscriminantAnalysis

CASES = [
    ("iris", "svd"),
    ("iris", "eigen"),
    ("wine", "svd"),
    ("wine", "eigen"),
    ("breast_cancer", "svd"),
    ("breast_cancer", "eigen"),
    ("digits", "svd"),
]


def align_signs(a, b):
    """Flip columns of ``a`` to match ``b`` (each discriminant direction has a free sign)."""
    return a * np.where(np.sum(a * b, axis=0) < 0, -1.0, 1.0)


@pytest.mark.parametrize("name,solver", CASES)
def test_matches_sklearn(name, solver):
    X, y = load(name, scale=False)
    ours = LDA(solver=solver).fit(X, y)
    ref = discriminant_analysis.LinearDiscriminantAnalysis(solver=solver).fit(X, y)
    assert np.array_equal(ours.predict(X), ref.predict(X))
    assert ours.score(X, y) == ref.score(X, y)
    np.testing.assert_allclose(ours.means_, ref.means_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours.priors_, ref.priors_, rtol=1e-15)
    np.testing.assert_allclose(
        ours.explained_variance_ratio_, ref.explained_variance_ratio_, atol=1e-9
    )
    T, R = ours.transform(X), ref.transform(X)
    assert T.shape == R.shape
    # Both are exact decompositions; our whitening goes through the d x d Gram matrix instead
    # of an SVD of the data, which squares its condition number: agreement to ~1e-7 relative
    # to the projected scale.
    scale = np.abs(R).max()
    np.testing.assert_allclose(align_signs(T, R), R, atol=1e-7 * scale)
    dec, ref_dec = ours.decision_function(X), ref.decision_function(X)
    np.testing.assert_allclose(dec, ref_dec, atol=1e-7 * np.abs(ref_dec).max())
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-7)


@pytest.mark.parametrize("name", ["iris", "wine", "breast_cancer", "digits"])
def test_held_out_accuracy_equals_sklearn(name):
    Xtr, Xte, ytr, yte = split(name, scale=False)
    ours = LDA().fit(Xtr, ytr).score(Xte, yte)
    ref = discriminant_analysis.LinearDiscriminantAnalysis().fit(Xtr, ytr).score(Xte, yte)
    assert abs(ours - ref) <= 0.02


def test_n_components_priors_and_binary_case():
    X, y = load("wine", scale=False)
    one = LDA(n_components=1).fit(X, y)
    assert one.transform(X).shape == (len(y), 1)
    assert len(one.explained_variance_ratio_) == 1
    with pytest.raises(ValueError, match="n_components"):
        LDA(n_components=3).fit(X, y)
    priors = [0.2, 0.3, 0.5]
    ours = LDA(priors=priors).fit(X, y)
    ref = discriminant_analysis.LinearDiscriminantAnalysis(priors=priors).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-7)
    X, y = load("breast_cancer", scale=False)
    ours = LDA().fit(X, y)
    ref = discriminant_analysis.LinearDiscriminantAnalysis().fit(X, y)
    assert ours.coef_.shape == ref.coef_.shape == (1, X.shape[1])
    assert ours.decision_function(X).shape == (len(y),)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-7)


def test_eigen_solver_refuses_a_singular_covariance():
    X, y = load("digits", scale=False)  # some pixels are always 0
    with pytest.raises(ValueError, match="singular"):
        LDA(solver="eigen").fit(X, y)


@pytest.mark.parametrize("family,name", [("reduction", "scan_f64"), ("reduction", "sum_f64")])
def test_gates_never_change_results(gate, family, name):
    X, y = load("digits", scale=False)
    module = getattr(tuning, family)
    runs = []
    for value in (SERIAL, PARALLEL):
        gate(module, name, value)
        model = LDA().fit(X, y)
        runs.append((model.means_, model.transform(X), model.predict_proba(X)))
    for a, b in zip(*runs):
        assert np.array_equal(a, b)  # bit for bit


def test_bad_input_and_conventions(tmp_path):
    X, y = load("iris", scale=False)
    with pytest.raises(ValueError, match="solver"):
        LDA(solver="lsqr").fit(X, y)
    with pytest.raises(ValueError, match="only one class"):
        LDA().fit(X, np.ones(len(X)))
    with pytest.raises(ValueError, match="more than the number of classes"):
        LDA().fit(X[:3], np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="NaN or infinity"):
        LDA().fit(np.where(X > 7, np.nan, X), y)
    with pytest.raises(ValueError, match="priors"):
        LDA(priors=[0.5, 0.5]).fit(X, y)
    with pytest.raises(NotFittedError):
        LDA().transform(X)
    assert LinearDiscriminantAnalysis is LDA
    est = LDA(n_components=1)
    assert clone(est).get_params() == est.get_params()
    pipe = make_pipeline(LDA(n_components=2), SkLogisticRegression()).fit(X, y)
    assert pipe.score(X, y) > 0.9
    model = LDA().fit(X, y)
    np.testing.assert_array_equal(model.fit_transform(X, y), model.transform(X))
    back = pickle.loads(pickle.dumps(model))
    assert np.array_equal(back.transform(X), model.transform(X))
    path = tmp_path / "lda.bin"
    model.save(path)
    assert np.array_equal(LDA.load(path).predict(X), model.predict(X))
