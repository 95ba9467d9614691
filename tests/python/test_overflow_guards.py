"""Finite input never comes back as NaN or infinity: where squares, products or kernel powers of
the input would overflow float64, the call is refused with a ValueError naming the bound;
below the bound results are exact scalings of the unit-scale ones.

The bound: a sum of n_features p-th powers of differences of values up to m stays finite when
n_features * (2m)^p <= f64::MAX (p = 2 for euclidean distances, dot products and kernels)."""

import numpy as np
import pytest

import rustyml.machine_learning as ml
import rustyml.metrics as mt
from rustyml.math import distance


def _data(scale=1.0):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    return X * scale, (X[:, 0] > 0).astype(int)


HUGE = 1e200
# a power of two: scaling by it is exact, so distances scale exactly
SAFE_SCALE = 2.0**400

REFUSING = {
    "KNN": lambda X, y: ml.KNN(n_neighbors=2).fit(X, y).kneighbors(X)[0],
    "SVC rbf": lambda X, y: ml.SVC().fit(X, y).decision_function(X),
    "SVC poly": lambda X, y: ml.SVC(kernel="poly").fit(X, y).decision_function(X),
    "SVC linear": lambda X, y: ml.SVC(kernel="linear").fit(X, y).decision_function(X),
    "KernelPCA": lambda X, y: ml.KernelPCA(kernel="rbf", n_components=2).fit_transform(X),
    "LogisticRegression": lambda X, y: ml.LogisticRegression().fit(X, y).predict_proba(X),
    "LogisticRegression GD": lambda X, y: (
        ml.LogisticRegression(solver="gradient_descent").fit(X, y).predict_proba(X)
    ),
    "TSNE": lambda X, y: ml.TSNE(perplexity=5, max_iter=250, random_state=0).fit_transform(X),
    "pairwise": lambda X, y: distance.pairwise(X, X),
    "KMeans": lambda X, y: ml.KMeans(n_clusters=2, random_state=0).fit(X).transform(X),
}


@pytest.mark.parametrize("name", sorted(REFUSING))
def test_values_whose_squares_overflow_are_refused_naming_the_bound(name):
    X, y = _data(HUGE)
    with pytest.raises(ValueError, match="too large .* rescale"):
        REFUSING[name](X, y)


@pytest.mark.parametrize("name", sorted(REFUSING))
def test_values_below_the_bound_give_finite_results(name):
    X, y = _data(SAFE_SCALE)
    out = np.asarray(REFUSING[name](X, y), dtype=float)
    assert np.isfinite(out).all()


def test_distances_below_the_bound_are_exact_scalings():
    X, y = _data()
    big = X * SAFE_SCALE
    np.testing.assert_array_equal(distance.pairwise(big, big), distance.pairwise(X, X) * SAFE_SCALE)
    d_small, i_small = ml.KNN(n_neighbors=3).fit(X, y).kneighbors(X)
    d_big, i_big = ml.KNN(n_neighbors=3).fit(big, y).kneighbors(big)
    np.testing.assert_array_equal(i_big, i_small)
    np.testing.assert_array_equal(d_big, d_small * SAFE_SCALE)


def test_manhattan_needs_no_squares_and_keeps_working_at_huge_scale():
    # p = 1: the bound is f64::MAX / (2 n_features) ~ 3e307, far above 1e200
    X, y = _data(HUGE)
    d, _ = ml.KNN(n_neighbors=2, metric="manhattan").fit(X, y).kneighbors(X)
    assert np.isfinite(d).all() and (d[:, 0] == 0).all()


def test_a_query_beyond_the_bound_is_refused_by_a_fitted_model():
    X, y = _data()
    knn = ml.KNN(n_neighbors=2).fit(X, y)
    with pytest.raises(ValueError, match="too large"):
        knn.predict(X * HUGE)
    svc = ml.SVC().fit(X, y)
    with pytest.raises(ValueError, match="too large"):
        svc.decision_function(X * HUGE)
    km = ml.KMeans(n_clusters=2, random_state=0).fit(X)
    with pytest.raises(ValueError, match="too large"):
        km.transform(X * HUGE)


def test_polynomial_kernel_powers_that_overflow_are_refused_naming_the_parameters():
    X, y = _data()
    with pytest.raises(ValueError, match="gamma, coef0 or degree"):
        ml.SVC(kernel="poly", gamma=1e100, degree=5).fit(X, y)


def test_logistic_decision_values_that_overflow_are_refused():
    # fitted on unit-scale data, asked about features whose products with the coefficients
    # overflow (|x| beyond f64::MAX / |coef|): the decision values would be inf - inf = NaN
    X, y = _data()
    clf = ml.LogisticRegression(C=1e6).fit(X, y)
    assert abs(clf.coef_[0, 0]) > 1 and abs(clf.coef_[0, 1]) > 0.1  # 1e308 * coef overflows
    wild = X.copy()
    wild[:, 0] = 1e308
    wild[:, 1] = -1e308
    with pytest.raises(ValueError, match="decision values overflow"):
        clf.predict_proba(wild)
    np.testing.assert_array_equal(clf.predict(X), clf.predict(X.copy()))  # model unchanged


@pytest.mark.parametrize("beta", [1e10, 1e155, 1e200, 1e300])
def test_fbeta_with_huge_beta_tends_to_recall(beta):
    # F_beta = (1 + b^2) P R / (b^2 P + R) -> R as b -> inf; b^2 overflows beyond ~1.3e154
    y_true = np.array([0, 1, 1, 0, 1, 1, 0, 1])
    y_pred = np.array([0, 1, 0, 1, 1, 0, 0, 1])
    recall = mt.recall_score(y_true, y_pred)
    np.testing.assert_allclose(mt.fbeta_score(y_true, y_pred, beta=beta), recall, rtol=1e-12)
    macro = mt.fbeta_score(y_true, y_pred, beta=beta, average="macro")
    np.testing.assert_allclose(macro, mt.recall_score(y_true, y_pred, average="macro"), rtol=1e-12)
