"""rustyml.sklearn.ensemble.IsolationForest against scikit-learn's own class: the same
arguments, seeds and data to both; the door's trees must be scikit-learn's node for node, so
every score is compared bit for bit."""

import logging
import pickle

import numpy as np
import pytest
from scipy import sparse

sklearn = pytest.importorskip("sklearn")

from sklearn import datasets
from sklearn.ensemble import IsolationForest as StockIsolationForest
from tree_checks import assert_same_structure

import rustyml.sklearn as door
from rustyml.sklearn.ensemble import IsolationForest


@pytest.fixture(autouse=True)
def _always_unpatched():
    yield
    door.unpatch_sklearn()


def _path(est, X, **kw):
    """Fit ``est`` and say which path built the trees."""
    door.dispatch_stats(reset=True)
    est.fit(X, **kw)
    stats = door.dispatch_stats()
    if stats.get(("IsolationForest", "fit", "rustyml"), 0) == 1:
        return "rustyml"
    assert stats.get(("IsolationForest", "fit", "scikit-learn"), 0) == 1
    return "scikit-learn"


def _same_forest(ours, stock, X):
    assert len(ours.estimators_) == len(stock.estimators_)
    np.testing.assert_array_equal(ours._seeds, stock._seeds)
    assert ours.max_samples_ == stock.max_samples_
    for fa, fb in zip(ours.estimators_features_, stock.estimators_features_):
        np.testing.assert_array_equal(fa, fb)
    for ta, tb in zip(ours.estimators_, stock.estimators_):
        a, b = ta.tree_, tb.tree_
        assert_same_structure(a, b)
        # node means and variances: the same sums in the same order, so the same bits
        np.testing.assert_array_equal(a.value, b.value)
        np.testing.assert_array_equal(a.impurity, b.impurity)
        assert ta.random_state == tb.random_state
        assert (ta.n_features_in_, ta.max_features_) == (tb.n_features_in_, tb.max_features_)
    assert ours.offset_ == stock.offset_
    np.testing.assert_array_equal(ours.score_samples(X), stock.score_samples(X))
    np.testing.assert_array_equal(ours.decision_function(X), stock.decision_function(X))
    np.testing.assert_array_equal(ours.predict(X), stock.predict(X))


def _data_sets():
    rng = np.random.default_rng(0)
    iris = datasets.load_iris().data
    blobs = rng.normal(size=(700, 5))
    blobs[:20] += 6.0  # a few outliers
    # repeated rows and a constant and a two-valued column: constant features on nodes
    repeated = np.repeat(rng.normal(size=(60, 3)), 4, axis=0)
    repeated = np.column_stack([repeated, np.ones(240), rng.integers(0, 2, 240)])
    wide = rng.normal(size=(300, 40)).astype(np.float32)
    return {"iris": iris, "blobs": blobs, "repeated": repeated, "wide": wide}


DATA = _data_sets()
CASES = [
    ("iris", {"random_state": 0}),
    ("blobs", {"random_state": 3}),
    ("blobs", {"random_state": 4, "max_samples": 500, "n_estimators": 20}),
    ("blobs", {"random_state": 5, "max_samples": 0.3, "contamination": 0.05}),
    ("repeated", {"random_state": 6}),
    ("repeated", {"random_state": 7, "max_features": 2}),
    ("wide", {"random_state": 8, "max_features": 0.25, "n_estimators": 30}),
    ("wide", {"random_state": 9, "max_samples": 300}),
    # drawn with replacement: a row drawn k times weighs k in its tree
    ("blobs", {"random_state": 10, "bootstrap": True}),
    ("repeated", {"random_state": 11, "bootstrap": True, "max_samples": 240}),
    ("wide", {"random_state": 12, "max_features": 0.5, "bootstrap": True}),
]


@pytest.mark.parametrize("name, params", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_forest_is_scikit_learns_node_for_node(name, params):
    X = DATA[name]
    ours = IsolationForest(**params)
    assert _path(ours, X) == "rustyml"
    stock = StockIsolationForest(**params).fit(X)
    _same_forest(ours, stock, X)


def test_every_random_state_kind_and_a_shared_generator_advance_alike():
    X = DATA["blobs"]
    for seed in range(6):
        ours, stock = IsolationForest(random_state=seed), StockIsolationForest(random_state=seed)
        assert _path(ours, X) == "rustyml"
        _same_forest(ours, stock.fit(X), X)
    # one RandomState shared with later code: it must be left where scikit-learn leaves it
    mine, theirs = np.random.RandomState(11), np.random.RandomState(11)
    ours = IsolationForest(random_state=mine, n_estimators=10)
    assert _path(ours, X) == "rustyml"
    stock = StockIsolationForest(random_state=theirs, n_estimators=10).fit(X)
    _same_forest(ours, stock, X)
    assert mine.randint(2**31) == theirs.randint(2**31)


def test_calls_it_cannot_answer_run_scikit_learns_fit_and_say_why(caplog):
    X = DATA["blobs"][:200]
    weights = np.linspace(0.5, 2.0, len(X))
    with_nan = X.copy()
    with_nan[3, 1] = np.nan
    for params, fit_kw, data in [
        ({"random_state": 0}, {"sample_weight": weights}, X),
        ({"random_state": 0}, {}, with_nan),
        ({"random_state": 0, "verbose": 2}, {}, X),
    ]:
        with caplog.at_level(logging.INFO, logger="rustyml.sklearn"):
            ours = IsolationForest(**params)
            assert _path(ours, data, **fit_kw) == "scikit-learn"
        stock = StockIsolationForest(**params).fit(data, **fit_kw)
        np.testing.assert_array_equal(ours.score_samples(data), stock.score_samples(data))
    assert "IsolationForest.fit: scikit-learn (sample_weight)" in caplog.text
    assert "missing or infinite values in X" in caplog.text
    assert "verbose > 1" in caplog.text


@pytest.mark.parametrize(
    "params",
    [{}, {"max_features": 0.5, "bootstrap": True}, {"max_samples": 60, "max_features": 3}],
    ids=str,
)
def test_sparse_input_grows_scikit_learns_forest(params):
    # scikit-learn's sparse splitter orders a node's samples its own way (negative values
    # first, positive last, around the zeros); the replica repeats it
    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 6)).round(1)
    X[rng.random(X.shape) < 0.5] = 0.0
    for data in (sparse.csc_matrix(X), sparse.csr_matrix(X)):
        ours = IsolationForest(random_state=2, n_estimators=20, **params)
        assert _path(ours, data) == "rustyml"
        stock = StockIsolationForest(random_state=2, n_estimators=20, **params).fit(data)
        _same_forest(ours, stock, data)


def test_warm_start_grows_the_same_new_trees():
    X = DATA["blobs"]
    ours = IsolationForest(n_estimators=5, warm_start=True, random_state=1)
    assert _path(ours, X) == "rustyml"
    stock = StockIsolationForest(n_estimators=5, warm_start=True, random_state=1).fit(X)
    ours.set_params(n_estimators=9)
    stock.set_params(n_estimators=9)
    assert _path(ours, X) == "rustyml"
    stock.fit(X)
    _same_forest(ours, stock, X)
    # no new tree: scikit-learn's own warning, from its own fit
    with pytest.warns(UserWarning, match="Warm-start fitting without increasing"):
        assert _path(ours, X) == "scikit-learn"


def test_patched_forest_pickles_and_refits_alike():
    X = DATA["iris"]
    door.patch_sklearn()
    from sklearn.ensemble import IsolationForest as Patched

    assert Patched is IsolationForest
    model = Patched(random_state=2).fit(X)
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.score_samples(X), model.score_samples(X))
    door.unpatch_sklearn()
    stock = StockIsolationForest(random_state=2).fit(X)
    _same_forest(again, stock, X)
