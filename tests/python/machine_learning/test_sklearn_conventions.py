"""scikit-learn conventions every classifier and estimator keeps: continuous or non-finite
labels refused with scikit-learn's wording, a column-vector y accepted with its warning,
``hasattr`` telling the truth about optional methods and attributes."""

import warnings

import numpy as np
import pytest

from rustyml import machine_learning as ml
from rustyml.exceptions import DataConversionWarning

CLASSIFIERS = [
    lambda: ml.LogisticRegression(),
    lambda: ml.SVC(),
    lambda: ml.LinearSVC(),
    lambda: ml.KNN(n_neighbors=3),
    lambda: ml.LDA(),
    lambda: ml.DecisionTree(),
]


def _data():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(-2, 1, size=(20, 2)), rng.normal(2, 1, size=(20, 2))])
    return X, np.repeat([0, 1], 20)


@pytest.mark.parametrize("make", CLASSIFIERS)
def test_continuous_labels_are_an_unknown_label_type(make):
    X, _ = _data()
    y = np.linspace(0.0, 1.0, len(X))
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        make().fit(X, y)


@pytest.mark.parametrize("make", CLASSIFIERS)
def test_non_finite_labels_are_refused(make):
    X, y = _data()
    y = y.astype(float)
    y[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        make().fit(X, y)


@pytest.mark.parametrize("make", CLASSIFIERS)
def test_column_vector_y_fits_like_a_1d_y_with_a_warning(make):
    X, y = _data()
    flat = make().fit(X, y).predict(X)
    with pytest.warns(DataConversionWarning, match="column-vector y"):
        col = make().fit(X, y.reshape(-1, 1)).predict(X)
    np.testing.assert_array_equal(flat, col)


def test_integral_float_labels_still_fit_without_warnings():
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = ml.LogisticRegression().fit(X, y.astype(float))
    np.testing.assert_array_equal(clf.classes_, [0.0, 1.0])


def test_regression_tree_has_no_predict_proba_and_classifier_tree_has():
    X, y = _data()
    reg = ml.DecisionTree(is_classifier=False).fit(X, y.astype(float))
    assert not hasattr(reg, "predict_proba")
    clf = ml.DecisionTree().fit(X, y)
    assert hasattr(clf, "predict_proba")
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)


def test_closed_form_linear_regression_reports_one_iteration():
    # scikit-learn's convention for an estimator with max_iter: n_iter_ >= 1 once fitted
    X, y = _data()
    assert ml.LinearRegression().fit(X, y.astype(float)).n_iter_ == 1
    gd = ml.LinearRegression(solver="gradient_descent", max_iter=50).fit(X, y.astype(float))
    assert 0 < gd.n_iter_ <= 50


def test_not_fitted_error_is_caught_as_scikit_learns():
    from sklearn.exceptions import NotFittedError as SkNotFitted

    from rustyml.exceptions import NotFittedError

    X, _ = _data()
    with pytest.raises(SkNotFitted, match="not fitted yet") as info:
        ml.KMeans(n_clusters=2).predict(X)  # raised in Python
    assert isinstance(info.value, NotFittedError)
    with pytest.raises(SkNotFitted, match="not fitted yet"):
        # raised in Rust: the native class takes every hyper-parameter by keyword
        ml.KMeans._native_class(**ml.KMeans(n_clusters=2).get_params()).predict(X)
    with pytest.raises(NotFittedError):
        ml.SVC().decision_function(X)


@pytest.mark.parametrize("make", [*CLASSIFIERS, lambda: ml.LinearRegression()])
def test_score_refuses_a_bad_y_naming_it_and_leaves_the_model_as_it_was(make):
    X, y = _data()
    model = make().fit(X, y)
    before = model.predict(X)
    assert model.score(X, y) > 0.5
    with pytest.raises(ValueError, match="different lengths"):
        model.score(X, y[:5])
    with pytest.raises(ValueError, match="NaN or infinity"):
        model.score(X, np.where(y == 1, np.nan, 0.0))
    with pytest.raises(ValueError, match="1-dimensional"):
        model.score(X, np.stack([y, y], axis=1))
    np.testing.assert_array_equal(model.predict(X), before)
