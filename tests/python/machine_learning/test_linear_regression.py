"""LinearRegression against scikit-learn's LinearRegression / Ridge / Lasso."""

import pickle

import numpy as np
import pytest
from sklearn import linear_model
from sklearn.base import clone
from sklearn.datasets import load_diabetes, make_regression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from rustyml import NotFittedError
from rustyml.machine_learning import LinearRegression


def test_chapter_example():
    x = np.array([[1.0], [2.0], [3.0], [4.0], [5.0]])
    y = np.array([3.0, 5.0, 7.0, 9.0, 11.0])
    model = LinearRegression(True)
    assert model.fit(x, y) is model
    assert f"{model.predict(x)[0]:.3f}" == "3.000"


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_coefficients_match_sklearn_on_diabetes(fit_intercept):
    X, y = load_diabetes(return_X_y=True)
    ours = LinearRegression(fit_intercept=fit_intercept).fit(X, y)
    ref = linear_model.LinearRegression(fit_intercept=fit_intercept).fit(X, y)
    # normal equations vs scikit-learn's lstsq: both exact up to conditioning (cond ~ 1e2 here)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-8, atol=1e-8)
    assert ours.intercept_ == pytest.approx(ref.intercept_, abs=1e-8)
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), rtol=1e-9)
    assert ours.score(X, y) == pytest.approx(ref.score(X, y), abs=1e-12)


def test_ridge_matches_sklearn_ridge():
    X, y = make_regression(n_samples=300, n_features=12, noise=5.0, random_state=0)
    ours = LinearRegression(penalty="l2", alpha=3.0).fit(X, y)
    ref = linear_model.Ridge(alpha=3.0).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-9)
    assert ours.intercept_ == pytest.approx(ref.intercept_, abs=1e-9)


def test_gradient_descent_l1_matches_sklearn_lasso():
    X, y = make_regression(n_samples=400, n_features=8, n_informative=4, noise=1.0, random_state=1)
    X = StandardScaler().fit_transform(X)
    ours = LinearRegression(
        solver="gradient_descent",
        penalty="l1",
        alpha=2.0,
        learning_rate=0.1,
        max_iter=50_000,
        tol=1e-10,
    ).fit(X, y)
    ref = linear_model.Lasso(alpha=2.0, tol=1e-12, max_iter=100_000).fit(X, y)
    # both converge to the unique Lasso minimiser; tolerance from the stopping criteria
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-6)
    assert np.array_equal(ours.coef_ == 0, ref.coef_ == 0)


def test_gradient_descent_without_penalty_reaches_least_squares():
    X, y = make_regression(n_samples=200, n_features=5, noise=2.0, random_state=2)
    X = StandardScaler().fit_transform(X)
    ours = LinearRegression(
        solver="gradient_descent", learning_rate=0.2, max_iter=20_000, tol=1e-12
    ).fit(X, y)
    ref = linear_model.LinearRegression().fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-7)
    assert 0 < ours.n_iter_ <= 20_000


def test_sklearn_conventions_clone_pipeline_gridsearch():
    X, y = load_diabetes(return_X_y=True)
    est = LinearRegression(penalty="l2", alpha=1.0)
    assert clone(est).get_params() == est.get_params()
    assert est.set_params(alpha=2.0) is est and est.alpha == 2.0
    with pytest.raises(ValueError, match="Invalid parameter"):
        est.set_params(bogus=1)
    pipe = make_pipeline(StandardScaler(), LinearRegression()).fit(X, y)
    assert pipe.score(X, y) > 0.5
    search = GridSearchCV(LinearRegression(penalty="l2"), {"alpha": [0.01, 0.1, 1.0]}, cv=3).fit(
        X, y
    )
    assert search.best_params_["alpha"] in (0.01, 0.1, 1.0)
    assert "alpha=2.0" in repr(est)


def test_pickle_and_save_load_round_trip_exactly(tmp_path):
    X, y = load_diabetes(return_X_y=True)
    model = LinearRegression().fit(X, y)
    back = pickle.loads(pickle.dumps(model))
    assert np.array_equal(back.predict(X), model.predict(X))
    assert back.get_params() == model.get_params()
    path = tmp_path / "lr.bin"
    model.save(path)
    loaded = LinearRegression.load(path)
    assert np.array_equal(loaded.coef_, model.coef_) and loaded.intercept_ == model.intercept_
    unfitted = pickle.loads(pickle.dumps(LinearRegression(alpha=0.5)))
    assert unfitted.alpha == 0.5
    with pytest.raises(NotFittedError):
        unfitted.predict(X)


@pytest.mark.parametrize(
    "X,y,exc,match",
    [
        (np.ones((0, 2)), np.ones(0), ValueError, "empty"),
        (np.array([[1.0], [np.nan]]), np.array([1.0, 2.0]), ValueError, "NaN or infinity"),
        (np.array([[1.0], [np.inf]]), np.array([1.0, 2.0]), ValueError, "NaN or infinity"),
        (np.array([[1.0], [2.0]]), np.array([1.0, np.nan]), ValueError, "y contains NaN"),
        (np.array([[1.0], [2.0]]), np.array([1.0]), ValueError, "inconsistent numbers of samples"),
        (np.array([1.0, 2.0]), np.array([1.0, 2.0]), ValueError, "2-dimensional"),
        (np.array([["a"], ["b"]]), np.array([1.0, 2.0]), TypeError, "real numbers"),
    ],
)
def test_bad_training_data(X, y, exc, match):
    with pytest.raises(exc, match=match):
        LinearRegression().fit(X, y)


def test_bad_hyper_parameters_and_predict_before_fit():
    X, y = np.ones((4, 1)), np.arange(4.0)
    with pytest.raises(NotFittedError, match="not fitted"):
        LinearRegression().predict(X)
    with pytest.raises(ValueError, match="solver"):
        LinearRegression(solver="sgd").fit(X, y)
    with pytest.raises(ValueError, match="penalty"):
        LinearRegression(penalty="elastic").fit(X, y)
    with pytest.raises(ValueError, match="gradient_descent"):
        LinearRegression(penalty="l1").fit(X, y)
    with pytest.raises(ValueError, match="diverged"):
        LinearRegression(solver="gradient_descent", learning_rate=100.0).fit(
            np.arange(8.0).reshape(-1, 1) * 100, np.arange(8.0)
        )
    model = LinearRegression().fit(np.ones((4, 2)) + np.eye(4, 2), y)
    with pytest.raises(ValueError, match="features"):
        model.predict(np.ones((2, 3)))


def test_integer_inputs_are_accepted_like_sklearn():
    X = np.arange(10).reshape(-1, 1)
    y = 3 * np.arange(10) + 2
    model = LinearRegression().fit(X, y)
    np.testing.assert_allclose(model.coef_, [3.0])
    assert model.intercept_ == pytest.approx(2.0)
