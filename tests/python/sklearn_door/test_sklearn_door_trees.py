"""rustyml.sklearn.tree (and the fallback-only LinearSVC / ensemble / manifold doors) against
scikit-learn itself: the same inputs to the door and to scikit-learn's class."""

import logging
import pickle

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from sklearn import datasets
from sklearn.base import clone
from sklearn.tree import (
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ExtraTreeClassifier,
    ExtraTreeRegressor,
)
from tree_checks import assert_same_structure

import rustyml.sklearn as door
from rustyml.sklearn import manifold as door_manifold
from rustyml.sklearn import svm as door_svm
from rustyml.sklearn import tree as door_tree

EPS = np.finfo(np.float64).eps


@pytest.fixture(autouse=True)
def _always_unpatched():
    yield
    door.unpatch_sklearn()


def _ran(cls, method, path):
    return door.dispatch_stats().get((cls, method, path), 0)


def _native_fit(est, X, y, **kw):
    door.dispatch_stats(reset=True)
    est.fit(X, y, **kw)
    return _ran(type(est).__name__, "fit", "rustyml") == 1


def _same_structure(ours, stock):
    assert_same_structure(ours.tree_, stock.tree_)


def _classification_sets():
    iris = datasets.load_iris(return_X_y=True)
    cancer = datasets.load_breast_cancer(return_X_y=True)
    digits = datasets.load_digits(return_X_y=True)
    # string labels: classes_ keeps them, sorted
    names = np.array(["setosa", "versicolor", "virginica"])[iris[1]]
    return {
        "iris": iris,
        "iris_names": (iris[0], names),
        "breast_cancer": cancer,
        "digits": digits,
    }


CLASSIFIER_PARAMS = [
    {},
    {"criterion": "entropy", "max_depth": 4},
    {"criterion": "log_loss", "min_samples_leaf": 3},
    {"min_samples_split": 0.05},
    {"ccp_alpha": 0.01},
]


@pytest.mark.parametrize("name", ["iris", "iris_names", "breast_cancer", "digits"])
@pytest.mark.parametrize("params", CLASSIFIER_PARAMS, ids=str)
def test_classifier_is_scikit_learns_tree_bit_for_bit(name, params):
    X, y = _classification_sets()[name]
    ours = door_tree.DecisionTreeClassifier(random_state=0, **params)
    stock = DecisionTreeClassifier(random_state=0, **params).fit(X, y)
    native = _native_fit(ours, X, y)
    _same_structure(ours, stock)
    # class counts are exact, and the door forms values and impurities by scikit-learn's
    # own formulas from them: identical floats
    np.testing.assert_array_equal(ours.tree_.value, stock.tree_.value)
    np.testing.assert_array_equal(ours.tree_.impurity, stock.tree_.impurity)
    np.testing.assert_array_equal(ours.feature_importances_, stock.feature_importances_)
    np.testing.assert_array_equal(ours.classes_, stock.classes_)
    assert ours.n_classes_ == stock.n_classes_
    assert (ours.n_outputs_, ours.max_features_) == (stock.n_outputs_, stock.max_features_)
    rng = np.random.default_rng(0)
    Q = X[rng.permutation(len(X))[:100]] + rng.normal(0, 0.5, (100, X.shape[1]))
    np.testing.assert_array_equal(ours.predict(Q), stock.predict(Q))
    np.testing.assert_array_equal(ours.predict_proba(Q), stock.predict_proba(Q))
    np.testing.assert_array_equal(ours.apply(Q), stock.apply(Q))
    np.testing.assert_array_equal(ours.decision_path(Q).toarray(), stock.decision_path(Q).toarray())
    # tied splits are replayed as scikit-learn breaks them: every one of these fits is native
    assert native, door.dispatch_stats()


@pytest.mark.parametrize("seed", range(6))
def test_duplicated_columns_tie_and_the_tie_goes_where_scikit_learn_sends_it(seed):
    X, y = datasets.load_iris(return_X_y=True)
    X = np.hstack([X, X[:, :2], X[:, 3:]])  # every split on a copied column is tied
    ours = door_tree.DecisionTreeClassifier(random_state=seed)
    assert _native_fit(ours, X, y)
    stock = DecisionTreeClassifier(random_state=seed).fit(X, y)
    _same_structure(ours, stock)
    np.testing.assert_array_equal(ours.tree_.impurity, stock.tree_.impurity)


def _same_tree(ours, stock):
    """The same nodes and the same node values and impurities, bit for bit."""
    _same_structure(ours, stock)
    np.testing.assert_array_equal(ours.tree_.value, stock.tree_.value)
    np.testing.assert_array_equal(ours.tree_.impurity, stock.tree_.impurity)


def test_real_valued_regression_ties_are_scikit_learns(caplog):
    # a fully grown tree ends in two-sample nodes that every feature splits alike: the tie
    # is decided by scikit-learn's rounded sums, which the replica forms in its order
    X, y = datasets.make_regression(200, 4, noise=1.0, random_state=0)
    ours = door_tree.DecisionTreeRegressor(random_state=0)
    assert _native_fit(ours, X, y)
    _same_tree(ours, DecisionTreeRegressor(random_state=0).fit(X, y))


IRIS_WEIGHTS = np.random.default_rng(3).integers(0, 4, 150) * 0.37


@pytest.mark.parametrize(
    "params, kw",
    [
        ({"splitter": "random"}, {}),
        ({"splitter": "random", "max_features": 2, "criterion": "entropy"}, {}),
        ({"max_features": "sqrt"}, {}),
        ({"max_features": 0.5, "min_samples_leaf": 2}, {}),
        ({"class_weight": "balanced"}, {}),
        ({"class_weight": {0: 1.0, 1: 2.5, 2: 0.5}}, {"sample_weight": IRIS_WEIGHTS}),
        ({}, {"sample_weight": np.ones(150)}),
        ({"min_weight_fraction_leaf": 0.1}, {"sample_weight": IRIS_WEIGHTS}),
        ({"min_impurity_decrease": 0.02}, {}),
    ],
    ids=str,
)
def test_sampling_weights_and_stopping_rules_are_scikit_learns(params, kw):
    # rows of weight zero leave the splitter, as in scikit-learn
    X, y = datasets.load_iris(return_X_y=True)
    ours = door_tree.DecisionTreeClassifier(random_state=1, **params)
    assert _native_fit(ours, X, y, **kw)
    _same_tree(ours, DecisionTreeClassifier(random_state=1, **params).fit(X, y, **kw))


@pytest.mark.parametrize("max_leaf_nodes", [2, 3, 7, 20, 1000])
@pytest.mark.parametrize("classifier", [True, False])
def test_best_first_growth_is_scikit_learns(max_leaf_nodes, classifier):
    # two copies of one problem far apart: every split of one copy has a twin of exactly the
    # same improvement in the other, so the frontier's ties decide which is split first
    X, y = datasets.load_iris(return_X_y=True)
    X = np.r_[X, X + 100.0]
    y = np.r_[y, y]
    if not classifier:
        y = y * 1.5 + X[:, 0].round()
    kind = (door_tree.DecisionTreeClassifier, DecisionTreeClassifier)
    if not classifier:
        kind = (door_tree.DecisionTreeRegressor, DecisionTreeRegressor)
    ours = kind[0](max_leaf_nodes=max_leaf_nodes, random_state=2)
    assert _native_fit(ours, X, y)
    _same_tree(ours, kind[1](max_leaf_nodes=max_leaf_nodes, random_state=2).fit(X, y))


@pytest.mark.parametrize(
    "params, kw, reason",
    [
        ({"monotonic_cst": [1, 0, 0, 0]}, {}, "monotonic_cst"),
        ({}, {"sample_weight": np.r_[-1.0, np.ones(149)]}, "negative sample weights"),
    ],
)
def test_unsupported_parameters_fall_back_with_their_reason(params, kw, reason, caplog):
    X, y = datasets.load_iris(return_X_y=True)
    y = y % 2  # monotonic constraints need two classes
    ours = door_tree.DecisionTreeClassifier(random_state=1, **params)
    with caplog.at_level(logging.INFO, logger="rustyml.sklearn"):
        assert not _native_fit(ours, X, y, **kw)
    assert f"DecisionTreeClassifier.fit: scikit-learn ({reason}" in caplog.text
    stock = DecisionTreeClassifier(random_state=1, **params).fit(X, y, **kw)
    _same_tree(ours, stock)


@pytest.mark.parametrize("fmt", ["csc", "csr"])
@pytest.mark.parametrize("splitter", ["best", "random"])
def test_sparse_input_is_scikit_learns(fmt, splitter):
    # negative, zero and positive values: scikit-learn's sparse splitter moves the negative
    # ones to the front and the positive ones to the back around the zeros, in its own
    # swap order, and the replica repeats it
    from scipy import sparse

    rng = np.random.default_rng(7)
    X = rng.integers(-3, 4, (300, 6)) * 0.5
    X[rng.random(X.shape) < 0.6] = 0.0
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] < 0)
    Xs = sparse.csc_matrix(X) if fmt == "csc" else sparse.csr_matrix(X)
    weights = rng.integers(0, 3, 300) * 1.0
    ours = door_tree.DecisionTreeClassifier(random_state=3, splitter=splitter)
    assert _native_fit(ours, Xs, y, sample_weight=weights)
    stock = DecisionTreeClassifier(random_state=3, splitter=splitter)
    _same_tree(ours, stock.fit(Xs, y, sample_weight=weights))
    # the same data dense: the dense splitter orders samples otherwise, but the tree is a
    # valid scikit-learn tree over it as well
    np.testing.assert_array_equal(ours.predict(X), stock.predict(X))
    ours = door_tree.DecisionTreeRegressor(random_state=3, splitter=splitter, max_leaf_nodes=30)
    target = X @ rng.normal(size=6)
    assert _native_fit(ours, Xs, target)
    stock = DecisionTreeRegressor(random_state=3, splitter=splitter, max_leaf_nodes=30)
    _same_tree(ours, stock.fit(Xs, target))


def test_missing_values_fall_back(caplog):
    X, y = datasets.load_iris(return_X_y=True)
    X[::7, 1] = np.nan
    ours = door_tree.DecisionTreeClassifier(random_state=0)
    with caplog.at_level(logging.INFO, logger="rustyml.sklearn"):
        assert not _native_fit(ours, X, y)
    assert "missing or infinite values in X" in caplog.text
    _same_tree(ours, DecisionTreeClassifier(random_state=0).fit(X, y))


def _regression_sets():
    X, y = datasets.make_regression(400, 6, noise=5.0, random_state=0)
    diabetes = datasets.load_diabetes(return_X_y=True)
    rng = np.random.default_rng(4)
    Xr = rng.random((300, 4))
    yr = np.sin(6 * Xr[:, 0]) + Xr[:, 1] ** 2 + 0.1 * rng.normal(size=300)
    return {"make_regression": (X, y), "diabetes": diabetes, "random": (Xr, yr)}


@pytest.mark.parametrize("name", ["make_regression", "diabetes", "random"])
@pytest.mark.parametrize(
    "params",
    [{"max_depth": 3}, {"min_samples_leaf": 20}, {}, {"splitter": "random"}, {"ccp_alpha": 1.0}],
    ids=str,
)
def test_regressor_grows_scikit_learns_tree(name, params):
    X, y = _regression_sets()[name]
    ours = door_tree.DecisionTreeRegressor(random_state=0, **params)
    stock = DecisionTreeRegressor(random_state=0, **params).fit(X, y)
    assert _native_fit(ours, X, y), door.dispatch_stats()
    # the same sums in the same order: node means and variances are scikit-learn's bits
    _same_tree(ours, stock)
    Q = X + np.random.default_rng(1).normal(0, 0.1, X.shape)
    np.testing.assert_array_equal(ours.apply(Q), stock.apply(Q))
    np.testing.assert_array_equal(ours.predict(Q), stock.predict(Q))


def test_regressor_with_repeated_real_targets_is_scikit_learns():
    # targets 0.1 and 0.7 repeated: a pure node's rounded impurity may sit above EPSILON in
    # scikit-learn's sum-of-squares form, and it splits on; the replica rounds alike
    X = np.arange(40, dtype=float).reshape(-1, 1) % 7
    y = np.where(X[:, 0] > 3, 0.7, 0.1)
    ours = door_tree.DecisionTreeRegressor(random_state=0)
    assert _native_fit(ours, X, y)
    _same_tree(ours, DecisionTreeRegressor(random_state=0).fit(X, y))


@pytest.mark.parametrize("seed", range(4))
def test_several_outputs_are_scikit_learns(seed):
    rng = np.random.default_rng(seed)
    X = rng.random((250, 5)).round(2)
    y_reg = np.c_[30 * X[:, 0] + rng.normal(size=250), X[:, 1] * X[:, 2]]
    ours = door_tree.DecisionTreeRegressor(random_state=seed, max_depth=6)
    assert _native_fit(ours, X, y_reg)
    _same_tree(ours, DecisionTreeRegressor(random_state=seed, max_depth=6).fit(X, y_reg))
    # two outputs of 3 and 2 classes, string labels on one
    y_clf = np.c_[(X[:, 0] * 3).astype(int), np.where(X[:, 1] > 0.4, "yes", "no")]
    ours = door_tree.DecisionTreeClassifier(random_state=seed, criterion="entropy")
    assert _native_fit(ours, X, y_clf)
    stock = DecisionTreeClassifier(random_state=seed, criterion="entropy").fit(X, y_clf)
    _same_tree(ours, stock)
    for a, b in zip(ours.classes_, stock.classes_):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ours.n_classes_, stock.n_classes_)
    np.testing.assert_array_equal(ours.predict(X), stock.predict(X))


@pytest.mark.parametrize("seed", range(12))
def test_poisson_trees_are_scikit_learns(seed):
    # half the Poisson deviance: scikit-learn's base-2 proxy and natural-log losses
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 8, (400, 4)).astype(float)
    y = rng.poisson(np.exp(X[:, 0] / 4)) * [1.0, 0.5][seed % 2]
    if seed % 3 == 0:
        y = np.c_[y, rng.poisson(2.0, 400)]
    params = {"criterion": "poisson", "random_state": seed, "min_samples_leaf": 1 + seed % 4}
    params["splitter"] = ["best", "random"][seed // 2 % 2]
    params["max_leaf_nodes"] = [None, 12][seed // 4 % 2]
    ours = door_tree.DecisionTreeRegressor(**params)
    assert _native_fit(ours, X, y)
    _same_tree(ours, DecisionTreeRegressor(**params).fit(X, y))


def test_poisson_refusals_are_scikit_learns():
    X = np.arange(10.0).reshape(-1, 1)
    for y, message in [(np.r_[-1.0, np.ones(9)], "negative"), (np.zeros(10), "not positive")]:
        with pytest.raises(ValueError, match=message):
            door_tree.DecisionTreeRegressor(criterion="poisson").fit(X, y)


@pytest.mark.parametrize("weights", ["none", "integer", "real"])
def test_the_split_search_gate_never_changes_a_tree(weights):
    # with class counts of integer weights the door scans a node's features side by side
    # (sorting private copies); real weights keep the one sample order scikit-learn's sums
    # follow. Forced serial and forced side by side both grow scikit-learn's tree.
    from rustyml import tuning

    rng = np.random.default_rng(11)
    X = rng.normal(size=(6000, 10)).round(1)
    y = (X[:, :3] > 0).sum(axis=1)
    sample_weight = {
        "none": None,
        "integer": rng.integers(0, 4, 6000) * 1.0,
        "real": rng.random(6000),
    }[weights]
    stock = DecisionTreeClassifier(random_state=4, max_features=6, criterion="entropy")
    stock.fit(X, y, sample_weight=sample_weight)
    saved = tuning.tree.get_sort_scan_min_elems()
    try:
        for value in (0, 2**63):
            tuning.tree.set_sort_scan_min_elems(value)
            ours = door_tree.DecisionTreeClassifier(
                random_state=4, max_features=6, criterion="entropy"
            )
            assert _native_fit(ours, X, y, sample_weight=sample_weight)
            _same_tree(ours, stock)
    finally:
        tuning.tree.set_sort_scan_min_elems(saved)


@pytest.mark.parametrize("seed", range(40))
def test_random_problems_grow_scikit_learns_trees(seed):
    # coarse grids make ties and values closer than scikit-learn's float32 FEATURE_THRESHOLD
    # (1e-7) count as equal; weights with zeros; every supported parameter in turn
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(5, 600)), int(rng.integers(1, 7))
    X = rng.integers(0, [3, 10, 1000][seed % 3], (n, d)) * [1.0, 0.1, 3e-8][seed // 3 % 3]
    params = {"random_state": seed, "splitter": ["best", "random"][seed % 2]}
    params["max_features"] = [None, 1, "sqrt", 0.6][seed % 4]
    params["min_samples_leaf"] = [1, 1, 4][seed % 3]
    params["min_weight_fraction_leaf"] = [0.0, 0.0, 0.0, 0.03][seed % 4]
    params["max_leaf_nodes"] = [None, None, 5, 40][seed // 4 % 4]
    weights = rng.random(n) * rng.integers(0, 3, n) if seed % 5 < 2 else None
    if weights is not None and not weights.any():
        weights = None
    if seed % 2:
        y = rng.integers(0, 4, n)
        params["criterion"] = ["gini", "entropy"][seed // 2 % 2]
        ours, stock = door_tree.DecisionTreeClassifier(**params), DecisionTreeClassifier(**params)
    else:
        y = rng.normal(size=n) * 10
        ours, stock = door_tree.DecisionTreeRegressor(**params), DecisionTreeRegressor(**params)
    assert _native_fit(ours, X, y, sample_weight=weights)
    _same_tree(ours, stock.fit(X, y, sample_weight=weights))


@pytest.mark.parametrize("classifier", [False, True])
def test_nodes_sorted_with_and_without_equal_values_grow_scikit_learns_trees(classifier):
    """A node whose values of a feature are all distinct has one sorted order, whichever
    sort finds it (the engine's faster one); with equal values the order among them is
    scikit-learn's introsort's, which the engine then runs. Continuous columns (distinct
    but for float32's rare collisions), a column with -0.0 and 0.0 (equal to the sort),
    and grid columns (ties in every node) in one deep tree."""
    rng = np.random.default_rng(11)
    n = 4000
    continuous = rng.standard_normal((n, 3))
    signed_zeros = np.where(rng.random(n) < 0.5, -0.0, 0.0) + rng.integers(0, 2, n)
    grid = np.round(rng.standard_normal((n, 2)), 1)
    X = np.column_stack([continuous, signed_zeros, grid])
    signal = X[:, 0] * X[:, 4] + np.sin(3 * X[:, 1]) + X[:, 3]
    if classifier:
        y = np.digitize(signal + 0.3 * rng.standard_normal(n), [-1, 0, 1])
        ours, stock = (
            door_tree.DecisionTreeClassifier(random_state=0),
            DecisionTreeClassifier(random_state=0),
        )
    else:
        y = signal + 0.1 * rng.standard_normal(n)
        ours, stock = (
            door_tree.DecisionTreeRegressor(random_state=0),
            DecisionTreeRegressor(random_state=0),
        )
    assert _native_fit(ours, X, y)
    _same_tree(ours, stock.fit(X, y))
    np.testing.assert_array_equal(ours.predict(X), stock.predict(X))


def test_native_fit_draws_from_random_state_as_scikit_learn_does():
    X, y = datasets.load_iris(return_X_y=True)
    ours_rng, stock_rng = np.random.RandomState(5), np.random.RandomState(5)
    assert _native_fit(door_tree.DecisionTreeClassifier(random_state=ours_rng), X, y)
    DecisionTreeClassifier(random_state=stock_rng).fit(X, y)
    assert ours_rng.randint(1 << 30) == stock_rng.randint(1 << 30)


def test_natively_fitted_tree_pickles_and_clones():
    X, y = datasets.load_breast_cancer(return_X_y=True)
    ours = door_tree.DecisionTreeClassifier(max_depth=5, random_state=0)
    assert _native_fit(ours, X, y)
    back = pickle.loads(pickle.dumps(ours))
    assert type(back) is door_tree.DecisionTreeClassifier
    np.testing.assert_array_equal(back.predict_proba(X), ours.predict_proba(X))
    _same_structure(back, ours)
    fresh = clone(ours)
    assert type(fresh) is door_tree.DecisionTreeClassifier
    assert fresh.get_params() == ours.get_params()
    assert not hasattr(fresh, "tree_")


def test_errors_are_scikit_learns():
    X, y = datasets.load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="min_samples_split"):
        door_tree.DecisionTreeClassifier(min_samples_split=1).fit(X, y)
    bad = X.copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        door_tree.DecisionTreeClassifier().fit(bad, y)
    with pytest.raises(ValueError, match="Unknown label type"):
        door_tree.DecisionTreeClassifier().fit(X, X[:, 0])


def test_patch_points_sklearn_tree_at_the_doors():
    import sklearn.tree

    door.patch_sklearn()
    assert sklearn.tree.DecisionTreeClassifier is door_tree.DecisionTreeClassifier
    assert sklearn.tree.DecisionTreeRegressor is door_tree.DecisionTreeRegressor
    assert sklearn.tree.ExtraTreeClassifier is door_tree.ExtraTreeClassifier
    assert sklearn.tree.ExtraTreeRegressor is door_tree.ExtraTreeRegressor
    door.unpatch_sklearn()
    assert sklearn.tree.DecisionTreeClassifier is DecisionTreeClassifier
    assert sklearn.tree.DecisionTreeRegressor is DecisionTreeRegressor
    assert sklearn.tree.ExtraTreeClassifier is ExtraTreeClassifier
    assert sklearn.tree.ExtraTreeRegressor is ExtraTreeRegressor


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("classifier", [True, False])
def test_extra_trees_are_scikit_learns(seed, classifier):
    # scikit-learn's defaults: the random splitter, max_features "sqrt" (classifier) or all
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(500, 8)).round(2)
    y = (X[:, 0] + X[:, 1] > 0).astype(int) + (X[:, 2] > 1)
    if not classifier:
        y = X[:, 0] * 2.0 + np.sin(X[:, 3])
    kinds = (door_tree.ExtraTreeClassifier, ExtraTreeClassifier)
    if not classifier:
        kinds = (door_tree.ExtraTreeRegressor, ExtraTreeRegressor)
    params = {"random_state": seed, "min_samples_leaf": 1 + seed % 3}
    ours = kinds[0](**params)
    assert _native_fit(ours, X, y)
    _same_tree(ours, kinds[1](**params).fit(X, y))


@pytest.mark.parametrize(
    "ours, stock, call, unsupported",
    [
        # liblinear's progress output is scikit-learn's to print
        (door_svm.LinearSVC, "sklearn.svm.LinearSVC", "fit", {"verbose": 1}),
        (door_svm.SVC, "sklearn.svm.SVC", "fit", {"probability": True, "max_iter": 50}),
        (door_manifold.TSNE, "sklearn.manifold.TSNE", "fit_transform", {"verbose": 1}),
    ],
)
def test_fallback_doors_give_scikit_learns_answer_and_say_why(
    ours, stock, call, unsupported, caplog
):
    import importlib

    module, _, name = stock.rpartition(".")
    stock_cls = getattr(importlib.import_module(module), name)
    X, y = datasets.load_iris(return_X_y=True)
    X = X[::3]
    y = y[::3]
    params = {"random_state": 0} if "random_state" in stock_cls().get_params() else {}
    params.update(unsupported)
    if name == "TSNE":
        params["perplexity"] = 10.0
    with caplog.at_level(logging.INFO, logger="rustyml.sklearn"):
        door.dispatch_stats(reset=True)
        a = getattr(ours(**params), call)(X, y)
    assert f"{name}.{call}: scikit-learn (" in caplog.text
    assert _ran(name, call, "scikit-learn") == 1
    b = getattr(stock_cls(**params), call)(X, y)
    if name == "TSNE":
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_array_equal(a.predict(X), b.predict(X))
        assert type(pickle.loads(pickle.dumps(a))) is ours
