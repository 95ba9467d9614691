"""Classical estimators and utils against scikit-learn: KNN's minkowski ``p``, constant
features in ``StandardScaler``, overflow refused (LDA, ``standardize`` rows, TSNE), negative
strides read as their contiguous copy, and every numeric hyper-parameter validated."""

import inspect
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import StandardScaler as SkStandardScaler

from rustyml import machine_learning as ml
from rustyml import metrics, utils
from rustyml.machine_learning import KNN, LDA, TSNE
from rustyml.utils import StandardScaler

# -- 1. KNN: scikit-learn's minkowski metric with its p ---------------------------------------


def _knn_data(seed=0, n=300, d=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = rng.integers(0, 3, size=n)
    return X[:250], y[:250], X[250:]


@pytest.mark.parametrize("weights", ["uniform", "distance"])
@pytest.mark.parametrize("p", [1, 1.5, 2, 3, np.inf])
def test_knn_minkowski_p_matches_sklearn(p, weights):
    Xtr, ytr, Xte = _knn_data()
    ours = KNN(n_neighbors=3, weights=weights, p=p).fit(Xtr, ytr)
    theirs = KNeighborsClassifier(n_neighbors=3, weights=weights, p=p, algorithm="brute")
    theirs.fit(Xtr, ytr)
    np.testing.assert_array_equal(ours.predict(Xte), theirs.predict(Xte))
    # distances agree to rounding (a few ulps of the sums), so do the weights
    np.testing.assert_allclose(ours.predict_proba(Xte), theirs.predict_proba(Xte), rtol=1e-12)
    d_ours, i_ours = ours.kneighbors(Xte)
    d_theirs, i_theirs = theirs.kneighbors(Xte)
    np.testing.assert_array_equal(i_ours, i_theirs)
    np.testing.assert_allclose(d_ours, d_theirs, rtol=1e-12)


def test_knn_default_is_minkowski_p2_and_p_is_used():
    # scikit-learn's own toy example, distance weights: p=1 gives [0, 0.4, 0.6]
    X = np.array([[0.0, 0.0], [1.0, 1.0], [3.0, 0.0], [0.0, 3.0], [2.0, 2.0]])
    y = np.array([0, 1, 2, 1, 2])
    q = np.array([[1.5, 1.5]])
    for p in (1, 2, 3):
        ours = KNN(n_neighbors=3, weights="distance", p=p).fit(X, y)
        theirs = KNeighborsClassifier(n_neighbors=3, weights="distance", p=p).fit(X, y)
        np.testing.assert_allclose(ours.predict_proba(q), theirs.predict_proba(q), rtol=1e-12)
    assert KNN().metric == "minkowski" and KNN().p == 2
    a, b = KNN(p=2).fit(X, y), KNN(metric="euclidean").fit(X, y)
    assert a.kneighbors(q)[0].tobytes() == b.kneighbors(q)[0].tobytes()


@pytest.mark.parametrize(
    ("metric", "p"), [("manhattan", 1), ("chebyshev", np.inf), ("euclidean", 2)]
)
def test_knn_metric_names_match_sklearn(metric, p):
    Xtr, ytr, Xte = _knn_data(1)
    ours = KNN(n_neighbors=4, weights="distance", metric=metric).fit(Xtr, ytr)
    theirs = KNeighborsClassifier(n_neighbors=4, weights="distance", metric=metric).fit(Xtr, ytr)
    np.testing.assert_allclose(ours.predict_proba(Xte), theirs.predict_proba(Xte), rtol=1e-12)
    same_p = KNN(n_neighbors=4, weights="distance", p=p).fit(Xtr, ytr)
    assert same_p.predict_proba(Xte).tobytes() == ours.predict_proba(Xte).tobytes()


@pytest.mark.parametrize("p", [0.5, 0, -1, float("nan"), "2", True])
def test_knn_p_below_one_or_not_a_number_is_refused(p):
    X, y, _ = _knn_data()
    with pytest.raises(ValueError, match="p"):
        KNN(p=p).fit(X, y)


def test_knn_with_p_pickles_bit_identically():
    Xtr, ytr, Xte = _knn_data()
    for p in (1, 3, np.inf):
        m = KNN(n_neighbors=5, p=p).fit(Xtr, ytr)
        back = pickle.loads(pickle.dumps(m))
        assert back.predict_proba(Xte).tobytes() == m.predict_proba(Xte).tobytes()


# -- 2. StandardScaler: constant features ---------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 7, 10, 1000, 5000])
@pytest.mark.parametrize("value", [1e-300, 1e-10, 0.1, 1.0 / 3.0, 7.0, -2.5e7, 1e150])
def test_standard_scaler_constant_column_matches_sklearn(value, n):
    X = np.full((n, 1), value)
    X = np.hstack([X, np.arange(n, dtype=float)[:, None]])
    ours, theirs = StandardScaler().fit(X), SkStandardScaler().fit(X)
    assert ours.var_[0] == 0.0 == theirs.var_[0]
    assert ours.scale_[0] == 1.0 == theirs.scale_[0]
    assert ours.mean_[0] == value
    # scikit-learn's summed mean is off the value by its summation error, at most about
    # n * eps * |value| for a strided column summed in order (0.1, n=7: transform 1.4e-17);
    # ours is exact
    tol = (n + 2) * np.finfo(float).eps * abs(value)
    np.testing.assert_allclose(ours.transform(X)[:, 0], theirs.transform(X)[:, 0], atol=tol, rtol=0)
    assert np.all(ours.transform(X)[:, 0] == 0.0)
    np.testing.assert_allclose(ours.var_[1], theirs.var_[1], rtol=1e-13)


def test_standard_scaler_partial_fit_of_constant_batches():
    ours, theirs = StandardScaler(), SkStandardScaler()
    for n in (3, 10, 7):
        batch = np.full((n, 2), [0.1, 1e-10])
        ours.partial_fit(batch)
        theirs.partial_fit(batch)
    np.testing.assert_array_equal(ours.var_, [0.0, 0.0])
    # scikit-learn's batch merges leave a few ulps of mean**2 (1.9e-34 for 0.1): it is
    # within its own constant-feature bound, so its scale_ is 1 as ours
    bound = 20 * np.finfo(float).eps * np.array([0.1, 1e-10]) ** 2
    assert np.all(theirs.var_ <= bound)
    np.testing.assert_array_equal(ours.scale_, theirs.scale_)
    np.testing.assert_array_equal(ours.mean_, [0.1, 1e-10])
    # a later batch with another value makes the column vary again
    ours.partial_fit(np.array([[0.2, 1e-10]]))
    theirs.partial_fit(np.array([[0.2, 1e-10]]))
    np.testing.assert_allclose(ours.var_[0], theirs.var_[0], rtol=1e-12)
    assert ours.var_[1] == 0.0


# -- 3. LDA: an overflowing scatter is refused, never a hang ---------------------------------


def _run_with_timeout(code, timeout=60):
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.mark.parametrize("solver", ["svd", "eigen"])
def test_lda_overflowing_scatter_is_refused_not_a_hang(solver):
    code = f"""
        import numpy as np
        from rustyml.machine_learning import LDA
        X = np.random.default_rng(0).random((30, 4)) * 1e308
        try:
            LDA(solver={solver!r}).fit(X, np.arange(30) % 3)
        except ValueError as e:
            print("ValueError:", e)
        else:
            print("fitted")
    """
    # the bug spun forever in the SVD; a regression fails at the timeout instead of hanging
    out = _run_with_timeout(code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ValueError:"), out.stdout
    assert "too large" in out.stdout or "overflow" in out.stdout


def test_lda_below_the_overflow_still_fits():
    rng = np.random.default_rng(0)
    X = rng.random((30, 4))
    y = np.arange(30) % 3
    a = LDA().fit(X, y).predict(X)
    b = LDA().fit(X * 1e150, y).predict(X * 1e150)
    np.testing.assert_array_equal(a, b)


# -- 4. negative strides: the same bits as the contiguous copy --------------------------------


def _stride_cases():
    return [
        ("KNN", lambda: KNN(n_neighbors=3), True),
        ("KNN-p3", lambda: KNN(n_neighbors=3, p=3), True),
        ("LDA", lambda: LDA(), True),
        ("LinearRegression", lambda: ml.LinearRegression(), True),
        ("LogisticRegression", lambda: ml.LogisticRegression(), True),
        ("LinearSVC", lambda: ml.LinearSVC(), True),
        ("SVC", lambda: ml.SVC(), True),
        ("DecisionTree", lambda: ml.DecisionTree(random_state=0), True),
        ("KMeans", lambda: ml.KMeans(n_clusters=3, random_state=0, n_init=2), False),
        ("DBSCAN", lambda: ml.DBSCAN(eps=1.5, min_samples=3), False),
        ("MeanShift", lambda: ml.MeanShift(bandwidth=2.0), False),
        ("IsolationForest", lambda: ml.IsolationForest(n_estimators=20, random_state=0), False),
        ("PCA", lambda: ml.PCA(n_components=2), False),
        ("KernelPCA", lambda: ml.KernelPCA(n_components=2, kernel="rbf"), False),
        ("TSNE-bh", lambda: TSNE(perplexity=5, random_state=0, max_iter=300), False),
        (
            "TSNE-exact",
            lambda: TSNE(perplexity=5, random_state=0, method="exact", max_iter=300),
            False,
        ),
        ("StandardScaler", lambda: StandardScaler(), False),
        ("MinMaxScaler", lambda: utils.MinMaxScaler(), False),
        ("MaxAbsScaler", lambda: utils.MaxAbsScaler(), False),
        ("RobustScaler", lambda: utils.RobustScaler(), False),
        ("Normalizer", lambda: utils.Normalizer(), False),
    ]


def _outputs(est, X, y, supervised):
    if supervised:
        est.fit(X, y)
        return [est.predict(X)]
    if hasattr(est, "fit_transform"):
        return [est.fit_transform(X)]
    return [est.fit_predict(X) if hasattr(est, "fit_predict") else est.fit(X).predict(X)]


@pytest.mark.parametrize("view", ["cols_reversed", "rows_reversed", "both_reversed", "step_-2"])
@pytest.mark.parametrize(
    ("name", "make", "supervised"), _stride_cases(), ids=lambda c: c if isinstance(c, str) else ""
)
def test_negative_strides_give_the_contiguous_copy_bits(name, make, supervised, view):
    rng = np.random.default_rng(3)
    base = rng.normal(size=(60, 8))
    y = (base[:, 0] + base[:, 3] > 0).astype(int)
    X = {
        "cols_reversed": base[:, ::-1],
        "rows_reversed": base[::-1],
        "both_reversed": base[::-1, ::-1],
        "step_-2": base[:, ::-2],
    }[view]
    yv = y[::-1] if view in ("rows_reversed", "both_reversed") else y
    got = _outputs(make(), X, yv, supervised)
    want = _outputs(make(), np.ascontiguousarray(X), np.ascontiguousarray(yv), supervised)
    for g, w in zip(got, want):
        assert np.asarray(g).tobytes() == np.asarray(w).tobytes(), name


def test_utils_functions_read_negative_strides():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(20, 6))
    for axis in ("row", "column", "global"):
        a = utils.standardize(X[:, ::-1], axis=axis)
        b = utils.standardize(np.ascontiguousarray(X[:, ::-1]), axis=axis)
        assert a.tobytes() == b.tobytes()
        a = utils.normalize(X[::-1, ::-1], axis=axis if axis != "global" else "row")
        b = utils.normalize(
            np.ascontiguousarray(X[::-1, ::-1]), axis=axis if axis != "global" else "row"
        )
        assert a.tobytes() == b.tobytes()


# -- 5. standardize: the row axis refuses overflow as the column axis does -------------------


@pytest.mark.parametrize("axis", ["row", "column", "global"])
def test_standardize_refuses_overflow_on_every_axis(axis):
    X = np.random.default_rng(0).random((5, 4)) * 1e308
    with pytest.raises(ValueError, match="too large"):
        utils.standardize(X, axis=axis)
    small = utils.standardize(X * 1e-160, axis=axis)
    assert np.all(np.isfinite(small))


# -- 6. TSNE: parameters that make the descent overflow ---------------------------------------


@pytest.mark.parametrize("method", ["barnes_hut", "exact"])
@pytest.mark.parametrize("param", ["learning_rate", "early_exaggeration"])
def test_tsne_overflowing_descent_is_refused_naming_the_parameter(param, method):
    X = np.random.default_rng(0).normal(size=(40, 5))
    with pytest.raises(ValueError, match=param):
        TSNE(
            perplexity=5, random_state=0, method=method, max_iter=250, **{param: 1e308}
        ).fit_transform(X)


# -- 7. every numeric hyper-parameter refuses NaN, infinity, None and the wrong type ----------

ESTIMATORS = [
    getattr(ml, n)
    for n in sorted(dir(ml))
    if not n.startswith("_") and inspect.isclass(getattr(ml, n)) and hasattr(getattr(ml, n), "fit")
]
# parameters that take None as a documented value (its default is None, or "no limit")
NONE_OK = {
    "n_components",
    "max_depth",
    "random_state",
    "gamma",
    "bandwidth",
    "p",
    "seeds",
    "priors",
}


def _numeric_params(cls):
    for p in inspect.signature(cls.__init__).parameters.values():
        if p.name == "self" or isinstance(p.default, bool):
            continue
        if isinstance(p.default, (int, float)) or p.name in cls._param_constraints:
            yield p.name


NUMERIC = [(cls, name) for cls in ESTIMATORS for name in _numeric_params(cls)]
BAD = [float("nan"), float("inf"), -float("inf"), None, "bad", [1.0]]


def _fit(est):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = (X[:, 0] > 0).astype(np.int64)
    est.fit(X, y)


def test_every_estimator_declares_its_numeric_parameters():
    for cls in ESTIMATORS:
        numeric = {
            p.name
            for p in inspect.signature(cls.__init__).parameters.values()
            if isinstance(p.default, (int, float)) and not isinstance(p.default, bool)
        }
        assert numeric <= set(cls._param_constraints) | {"p"}, cls.__name__
    assert len(NUMERIC) >= 40


@pytest.mark.parametrize("bad", BAD, ids=repr)
@pytest.mark.parametrize(("cls", "name"), NUMERIC, ids=lambda c: getattr(c, "__name__", c))
def test_bad_numeric_parameter_is_a_value_error_naming_it(cls, name, bad):
    if bad is None and name in NONE_OK:
        pytest.skip("None is a documented value")
    if isinstance(bad, str) and name in {
        "gamma",
        "learning_rate",
        "max_samples",
        "contamination",
        "n_init",
        "n_components",
    }:
        pytest.skip("strings are options here (the native side names a bad one)")
    if bad == float("inf") and name == "p" and cls is KNN:
        pytest.skip("p = inf is the chebyshev metric")
    est = cls(**{name: bad})
    with pytest.raises(ValueError, match=name):
        _fit(est)


@pytest.mark.parametrize(
    ("cls", "name"),
    [
        (ml.LinearRegression, "learning_rate"),
        (ml.LinearRegression, "tol"),
        (ml.LogisticRegression, "learning_rate"),
        (ml.DBSCAN, "p"),
    ],
)
def test_negative_rates_and_tolerances_are_refused(cls, name):
    with pytest.raises(ValueError, match=name):
        _fit(cls(**{name: -1.0}))


def test_bools_are_not_integer_hyper_parameters():
    for cls in ESTIMATORS:
        for name, specs in cls._param_constraints.items():
            if "int" in specs:
                with pytest.raises(ValueError, match=name):
                    _fit(cls(**{name: True}))


def test_valid_parameters_still_fit():
    for cls in ESTIMATORS:
        est = cls()
        if cls is TSNE:
            est = TSNE(perplexity=5, max_iter=250)
        _fit(est)


# -- 8. out-of-range integers are ValueErrors, never OverflowError ---------------------------


@pytest.mark.parametrize("value", [-1, 2**64, 2**70, -(2**64)])
def test_random_state_out_of_range_is_a_value_error(value):
    from rustyml.neural_network import MLPClassifier

    X = np.random.default_rng(0).normal(size=(20, 3))
    y = (X[:, 0] > 0).astype(int)
    for est in (
        MLPClassifier(random_state=value, max_iter=2),
        TSNE(random_state=value, perplexity=5),
    ):
        try:
            est.fit(X, y)
        except OverflowError as e:  # pragma: no cover - the bug
            pytest.fail(f"{type(est).__name__}: OverflowError {e}")
        except ValueError as e:
            assert "random_state" in str(e)
        else:
            pytest.fail(f"{type(est).__name__}(random_state={value}) was accepted")


@pytest.mark.parametrize("n", [-1, -(2**70), 2**70])
def test_to_categorical_num_classes_out_of_range(n):
    with pytest.raises(ValueError, match="num_classes"):
        utils.to_categorical([1, 2], num_classes=n)


@pytest.mark.parametrize("bad", [-1, 2**64, 2**70, 1.5, float("nan")])
@pytest.mark.parametrize("pos", range(4))
def test_confusion_matrix_counts_out_of_range(bad, pos):
    counts = [1, 1, 1, 1]
    counts[pos] = bad
    try:
        metrics.ConfusionMatrix.from_counts(*counts)
    except OverflowError as e:  # pragma: no cover - the bug
        pytest.fail(f"OverflowError {e}")
    except (ValueError, TypeError):
        pass
    else:
        pytest.fail(f"from_counts{tuple(counts)} was accepted")
