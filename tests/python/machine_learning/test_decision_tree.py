"""DecisionTree against scikit-learn's DecisionTreeClassifier / DecisionTreeRegressor."""

import pickle

import numpy as np
import pytest
from conftest import PARALLEL, SERIAL
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits, load_iris, load_wine
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from rustyml import NotFittedError, tuning
from rustyml.machine_learning import DecisionTree

LOADERS = [load_iris, load_wine, load_breast_cancer, load_digits]
CRITERION = {"cart": "gini", "id3": "entropy", "c45": "entropy"}


@pytest.mark.parametrize("loader", LOADERS, ids=lambda f: f.__name__[5:])
@pytest.mark.parametrize("algorithm", ["cart", "id3", "c45"])
def test_accuracy_within_two_points_of_sklearn(loader, algorithm):
    # One 30% test split of iris holds 45 samples (one sample = 2.2 points) and fully grown
    # trees swing with tie-breaking, so both are averaged over the same 10 stratified splits.
    X, y = loader(return_X_y=True)
    ours, ref = [], []
    for seed in range(10):
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=seed, stratify=y)
        ours.append(DecisionTree(algorithm=algorithm).fit(Xtr, ytr).score(Xte, yte))
        sk = DecisionTreeClassifier(criterion=CRITERION[algorithm], random_state=seed)
        ref.append(sk.fit(Xtr, ytr).score(Xte, yte))
    assert np.mean(ours) >= np.mean(ref) - 0.02, (np.mean(ours), np.mean(ref))


@pytest.mark.parametrize(
    "loader,depth,algorithm",
    [
        (load_wine, 2, "cart"),
        (load_wine, 2, "id3"),
        (load_wine, 3, "cart"),
        (load_digits, 3, "cart"),
        (load_digits, 3, "id3"),
        (load_breast_cancer, 2, "id3"),
    ],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_shallow_trees_equal_sklearns_where_no_split_ties(loader, depth, algorithm):
    # Same criterion, same midpoint thresholds, no tied candidate splits on these settings:
    # the very same tree, so the same leaves and class fractions.
    X, y = loader(return_X_y=True)
    ours = DecisionTree(algorithm=algorithm, max_depth=depth).fit(X, y)
    ref = DecisionTreeClassifier(criterion=CRITERION[algorithm], max_depth=depth, random_state=0)
    ref.fit(X, y)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-15)
    assert ours.get_n_leaves() == ref.get_n_leaves()
    assert ours.get_depth() == ref.get_depth()
    # importances: the same impurity decreases, normalised (entropy base cancels out)
    np.testing.assert_allclose(ours.feature_importances_, ref.feature_importances_, atol=1e-12)


@pytest.mark.parametrize("depth", [2, 4, 6])
def test_regression_tree_equals_sklearns_on_diabetes(depth):
    X, y = load_diabetes(return_X_y=True)
    ours = DecisionTree(is_classifier=False, max_depth=depth).fit(X, y)
    ref = DecisionTreeRegressor(max_depth=depth, random_state=0).fit(X, y)
    # leaf means computed by different summation orders: equal to rounding
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), rtol=1e-12)
    assert ours.get_n_leaves() == ref.get_n_leaves()


def test_regression_r2_on_held_out_diabetes_matches_sklearn():
    X, y = load_diabetes(return_X_y=True)
    ours, ref = [], []
    for seed in range(10):
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=seed)
        ours.append(DecisionTree(is_classifier=False, max_depth=3).fit(Xtr, ytr).score(Xte, yte))
        sk = DecisionTreeRegressor(max_depth=3, random_state=seed).fit(Xtr, ytr)
        ref.append(sk.score(Xte, yte))
    assert abs(np.mean(ours) - np.mean(ref)) < 0.02


def test_string_labels_and_classes():
    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    model = DecisionTree(max_depth=3).fit(X, names)
    assert list(model.classes_) == ["setosa", "versicolor", "virginica"]
    assert model.predict(X).dtype == names.dtype
    assert model.score(X, names) > 0.95
    proba = model.predict_proba(X)
    assert proba.shape == (150, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.array_equal(model.classes_[proba.argmax(axis=1)], model.predict(X))


def test_min_samples_leaf_and_split_match_sklearn():
    X, y = load_breast_cancer(return_X_y=True)
    for kwargs in [{"min_samples_leaf": 20}, {"min_samples_split": 60}]:
        ours = DecisionTree(**kwargs).fit(X, y)
        ref = DecisionTreeClassifier(random_state=0, **kwargs).fit(X, y)
        assert abs(ours.get_n_leaves() - ref.get_n_leaves()) <= 2, kwargs
        assert np.mean(ours.predict(X) == ref.predict(X)) > 0.97


def test_gates_never_change_the_tree(gate):
    X, y = load_digits(return_X_y=True)
    results = []
    for value in (SERIAL, PARALLEL):
        gate(tuning.tree, "sort_scan_min_elems", value)
        gate(tuning.tree, "traversal_min_visits", value)
        model = DecisionTree(algorithm="c45", random_state=3).fit(X, y)
        results.append((pickle.dumps(model), model.predict_proba(X)))
    assert results[0][0] == results[1][0]
    assert np.array_equal(results[0][1], results[1][1])


def test_sklearn_conventions_and_persistence(tmp_path):
    X, y = load_wine(return_X_y=True)
    est = DecisionTree(algorithm="id3", max_depth=4)
    assert clone(est).get_params() == est.get_params()
    search = GridSearchCV(DecisionTree(), {"max_depth": [2, 4]}, cv=3).fit(X, y)
    assert search.best_params_["max_depth"] in (2, 4)
    model = est.fit(X, y)
    back = pickle.loads(pickle.dumps(model))
    assert np.array_equal(back.predict_proba(X), model.predict_proba(X))
    path = tmp_path / "tree.bin"
    model.save(path)
    assert np.array_equal(DecisionTree.load(path).predict(X), model.predict(X))
    reg = DecisionTree(is_classifier=False).fit(X, y.astype(float))
    assert reg._estimator_type == "regressor" and reg.score(X, y) == 1.0
    with pytest.raises(AttributeError, match="is_classifier"):
        reg.predict_proba(X)


@pytest.mark.parametrize(
    "kwargs,X,y,exc,match",
    [
        ({}, np.ones((0, 2)), np.ones(0), ValueError, "empty"),
        ({}, np.array([[1.0], [np.nan]]), [0, 1], ValueError, "NaN or infinity"),
        ({}, np.array([[1.0], [2.0]]), [0.0, np.nan], ValueError, "y contains NaN"),
        ({"is_classifier": False}, np.array([[1.0], [2.0]]), [0.0, np.inf], ValueError, "NaN"),
        ({}, np.array([[1.0], [2.0]]), [0], ValueError, "inconsistent numbers of samples"),
        ({"algorithm": "c5"}, np.ones((2, 1)), [0, 1], ValueError, "unknown algorithm"),
        ({"max_depth": 0}, np.ones((2, 1)), [0, 1], ValueError, "max_depth"),
        ({"max_depth": -1}, np.ones((2, 1)), [0, 1], ValueError, "max_depth"),
        ({"min_samples_split": 1}, np.ones((2, 1)), [0, 1], ValueError, "min_samples_split"),
        ({"min_samples_leaf": 0}, np.ones((2, 1)), [0, 1], ValueError, "min_samples_leaf"),
        ({"random_state": -3}, np.ones((2, 1)), [0, 1], ValueError, "random_state"),
        ({"random_state": "x"}, np.ones((2, 1)), [0, 1], TypeError, "random_state"),
    ],
)
def test_bad_input_is_refused(kwargs, X, y, exc, match):
    with pytest.raises(exc, match=match):
        DecisionTree(**kwargs).fit(X, y)


def test_predict_before_fit_and_feature_mismatch():
    with pytest.raises(NotFittedError):
        DecisionTree().predict(np.ones((1, 2)))
    model = DecisionTree().fit(np.arange(8.0).reshape(4, 2), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="features"):
        model.predict(np.ones((1, 3)))
    with pytest.raises(ValueError, match="NaN"):
        model.predict(np.array([[np.nan, 1.0]]))


def test_tree_gates_exist_with_their_shipped_defaults():
    found = {(f, n): (d, u) for f, n, _v, d, u in tuning.gates()}
    assert found[("tree", "traversal_min_visits")] == (262_144, "total node visits")
    assert found[("tree", "sort_scan_min_elems")] == (8_192, "node_samples * features")
    assert tuning.tree.get_sort_scan_min_elems() == 8_192
