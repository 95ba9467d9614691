"""Property-based tests of the public API (hypothesis): random shapes, dtypes, memory layouts,
NaN/infinity/huge values and random hyper-parameters. Each property holds for every draw:

* finite, moderate input: the call succeeds and agrees with an independent oracle (NumPy,
  SciPy, scikit-learn) within a tolerance from the method's error analysis;
* the same values in another dtype or layout (Fortran order, strided views): the same bits;
* non-finite input: a ValueError naming NaN or infinity; bad hyper-parameters: a ValueError
  naming the parameter. Never another exception type, never a Rust panic (PanicException is
  a BaseException, so it escapes the ``pytest.raises`` below and fails the test).

Draws are derandomized and bounded, so CI runs the same few hundred cases in seconds."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.spatial.distance import cdist
from sklearn import metrics as skm
from sklearn import preprocessing as skp

import rustyml.machine_learning as ml
import rustyml.metrics as mt
import rustyml.utils as ru
from rustyml.math import distance

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
EPS = np.finfo(np.float64).eps

shapes = st.tuples(st.integers(2, 30), st.integers(1, 6))
moderate = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, width=64)
bad_values = st.sampled_from([np.nan, np.inf, -np.inf])


@st.composite
def matrices(draw, elements=moderate, shape=shapes):
    return draw(hnp.arrays(np.float64, draw(shape), elements=elements))


@st.composite
def layouts(draw, x):
    """``x`` as a C array, a Fortran array, or a strided view of a bigger array."""
    kind = draw(st.sampled_from(["C", "F", "strided"]))
    if kind == "C":
        return np.ascontiguousarray(x)
    if kind == "F":
        return np.asfortranarray(x)
    big = np.zeros((x.shape[0] * 2, x.shape[1] * 3))
    big[::2, ::3] = x
    return big[::2, ::3]


def _with_a_bad_value(draw, x):
    x = x.copy()
    i, j = draw(st.integers(0, x.shape[0] - 1)), draw(st.integers(0, x.shape[1] - 1))
    x[i, j] = draw(bad_values)
    return x


# -- distances ----------------------------------------------------------------------------


@SETTINGS
@given(st.data())
def test_pairwise_matches_scipy_in_any_layout(data):
    a = data.draw(matrices())
    b = data.draw(matrices(shape=st.just((data.draw(st.integers(1, 20)), a.shape[1]))))
    metric = data.draw(st.sampled_from(["euclidean", "sqeuclidean", "manhattan"]))
    ours = distance.pairwise(data.draw(layouts(a)), data.draw(layouts(b)), metric=metric)
    ref = cdist(a, b, {"manhattan": "cityblock"}.get(metric, metric))
    # product form: |err| <= (k + 2) u (|a|^2 + |b|^2) on squared distances (with margin 8),
    # entries inside that band are recomputed exactly from the differences
    sq = (a**2).sum(1)[:, None] + (b**2).sum(1)[None, :]
    bound = 8 * (a.shape[1] + 2) * EPS * sq
    if metric == "euclidean":
        np.testing.assert_array_less(np.abs(ours**2 - ref**2), bound + 1e-300)
    elif metric == "sqeuclidean":
        np.testing.assert_array_less(np.abs(ours - ref), bound + 1e-300)
    else:
        np.testing.assert_allclose(ours, ref, rtol=a.shape[1] * EPS * 4, atol=0)
    assert np.array_equal(distance.pairwise(a, b, metric=metric), ours)  # the layout changed no bit


@SETTINGS
@given(st.data())
def test_pairwise_propagates_nan_to_its_rows_and_refuses_infinity(data):
    a = data.draw(matrices())
    b = data.draw(matrices(shape=st.just((data.draw(st.integers(1, 20)), a.shape[1]))))
    i = data.draw(st.integers(0, a.shape[0] - 1))
    a[i, data.draw(st.integers(0, a.shape[1] - 1))] = np.nan
    d = distance.pairwise(a, b)
    assert np.isnan(d[i]).all()
    assert not np.isnan(np.delete(d, i, axis=0)).any()
    a[i] = 0.0
    a[i, data.draw(st.integers(0, a.shape[1] - 1))] = data.draw(st.sampled_from([np.inf, -np.inf]))
    with pytest.raises(ValueError, match="infinity"):
        distance.pairwise(a, b)


# -- scalers ------------------------------------------------------------------------------

SCALERS = [
    (ru.StandardScaler, skp.StandardScaler),
    (ru.MinMaxScaler, skp.MinMaxScaler),
    (ru.MaxAbsScaler, skp.MaxAbsScaler),
    (ru.RobustScaler, skp.RobustScaler),
]


@SETTINGS
@given(st.data(), st.sampled_from(SCALERS))
def test_scalers_match_scikit_learn_and_ignore_dtype_and_layout(data, pair):
    ours_cls, ref_cls = pair
    x = data.draw(matrices())
    dtype = data.draw(st.sampled_from([np.float64, np.float32, np.int64]))
    x = x.astype(dtype).astype(np.float64) if dtype is not np.float64 else x
    ours = ours_cls().fit_transform(data.draw(layouts(x.astype(dtype))))
    ref = ref_cls().fit_transform(x)
    # a few roundings per entry on O(1) outputs; constant columns map to 0 in both
    np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-9)
    assert np.array_equal(ours_cls().fit_transform(x), ours)


@SETTINGS
@given(st.data(), st.sampled_from(SCALERS))
def test_scalers_refuse_non_finite_input_and_keep_their_fit(data, pair):
    ours_cls, _ = pair
    x = data.draw(matrices())
    scaler = ours_cls().fit(x)
    before = scaler.transform(x)
    with pytest.raises(ValueError, match="NaN|infinity"):
        scaler.fit(_with_a_bad_value(data.draw, x))
    assert np.array_equal(scaler.transform(x), before)


# -- estimators ---------------------------------------------------------------------------


def _labels(draw, n):
    y = np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    y[:2] = [0, 1]  # at least two classes
    return y


CLASSIFIERS = [
    lambda: ml.KNN(n_neighbors=1),
    lambda: ml.DecisionTree(random_state=0),
    lambda: ml.LogisticRegression(),
    lambda: ml.LDA(),
    lambda: ml.SVC(),
]


@SETTINGS
@given(st.data(), st.sampled_from(CLASSIFIERS))
def test_classifiers_fit_any_layout_to_the_same_bits_and_refuse_non_finite_x(data, make):
    x = data.draw(matrices(shape=st.tuples(st.integers(6, 30), st.integers(1, 5))))
    y = _labels(data.draw, x.shape[0])
    try:
        reference = make().fit(x, y)
    except ValueError:
        return  # e.g. LDA's singular within-class scatter: refused, which is allowed
    pred = reference.predict(x)
    assert set(pred) <= set(y)
    again = make().fit(data.draw(layouts(x)), y.astype(data.draw(st.sampled_from(["i8", "f8"]))))
    assert np.array_equal(again.predict(x).astype(float), pred.astype(float))
    with pytest.raises(ValueError, match="NaN or infinity"):
        make().fit(_with_a_bad_value(data.draw, x), y)
    with pytest.raises(ValueError, match="NaN or infinity"):
        reference.predict(_with_a_bad_value(data.draw, x))


@SETTINGS
@given(
    st.sampled_from(
        [
            (ml.KMeans, "n_clusters"),
            (ml.KMeans, "max_iter"),
            (ml.KMeans, "n_init"),
            (ml.KNN, "n_neighbors"),
            (ml.DBSCAN, "min_samples"),
            (ml.PCA, "n_components"),
            (ml.DecisionTree, "max_depth"),
            (ml.DecisionTree, "min_samples_split"),
            (ml.IsolationForest, "n_estimators"),
            (ml.LogisticRegression, "max_iter"),
            (ml.TSNE, "max_iter"),
        ]
    ),
    # negative counts, and counts beyond 64 bits (a huge but representable max_iter or
    # n_init is valid: it runs until convergence, as in scikit-learn)
    st.one_of(st.integers(-(2**80), -1), st.integers(2**64, 2**80)),
)
def test_out_of_range_integer_hyper_parameters_are_value_errors_naming_them(pair, value):
    cls, name = pair
    x, y = np.random.default_rng(0).standard_normal((12, 3)), np.repeat([0, 1], 6)
    est = cls(**{name: value})
    with pytest.raises(ValueError, match=name):
        est.fit(x, y) if cls in (ml.KNN, ml.DecisionTree, ml.LogisticRegression) else est.fit(x)


# -- metrics ------------------------------------------------------------------------------


@SETTINGS
@given(st.data())
def test_classification_metrics_match_scikit_learn(data):
    n = data.draw(st.integers(1, 40))
    y_true = np.array(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    y_pred = np.array(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    assert mt.accuracy_score(y_true, y_pred) == skm.accuracy_score(y_true, y_pred)
    average = data.draw(st.sampled_from(["macro", "micro", "weighted"]))
    for ours, ref in [
        (mt.precision_score, skm.precision_score),
        (mt.recall_score, skm.recall_score),
        (mt.f1_score, skm.f1_score),
    ]:
        got = ours(y_true, y_pred, average=average, zero_division=0)
        want = ref(y_true, y_pred, average=average, zero_division=0)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


@SETTINGS
@given(st.data())
def test_regression_metrics_match_scikit_learn_or_refuse_non_finite(data):
    n = data.draw(st.integers(2, 40))
    y_true = data.draw(hnp.arrays(np.float64, n, elements=moderate))
    y_pred = data.draw(hnp.arrays(np.float64, n, elements=moderate))
    # sums of n squared terms: relative error ~ n u
    np.testing.assert_allclose(
        mt.mean_squared_error(y_true, y_pred),
        skm.mean_squared_error(y_true, y_pred),
        rtol=4 * n * EPS,
        atol=1e-300,
    )
    np.testing.assert_allclose(
        mt.mean_absolute_error(y_true, y_pred),
        skm.mean_absolute_error(y_true, y_pred),
        rtol=4 * n * EPS,
        atol=1e-300,
    )
    broken = y_pred.copy()
    broken[data.draw(st.integers(0, n - 1))] = data.draw(bad_values)
    with pytest.raises(ValueError, match="NaN or infinity"):
        mt.mean_squared_error(y_true, broken)


HUGE_USERS = {
    "KNN": lambda x, y: ml.KNN(n_neighbors=1).fit(x, y).predict_proba(x),
    "KMeans": lambda x, y: ml.KMeans(n_clusters=2, n_init=1, random_state=0).fit(x).transform(x),
    "SVC": lambda x, y: ml.SVC().fit(x, y).decision_function(x),
    "LogisticRegression": lambda x, y: ml.LogisticRegression().fit(x, y).predict_proba(x),
    "PCA": lambda x, y: ml.PCA(n_components=1).fit_transform(x),
    "DecisionTree": lambda x, y: ml.DecisionTree(random_state=0).fit(x, y).predict_proba(x),
    "StandardScaler": lambda x, y: ru.StandardScaler().fit_transform(x),
    "MinMaxScaler": lambda x, y: ru.MinMaxScaler().fit_transform(x),
    "pairwise": lambda x, y: distance.pairwise(x, x),
}


@SETTINGS
@given(
    st.data(),
    st.sampled_from(sorted(HUGE_USERS)),
    st.floats(1e100, 1e300, allow_nan=False, allow_infinity=False),  # x stays finite
)
def test_huge_finite_values_give_finite_results_or_a_value_error(data, name, scale):
    x = data.draw(matrices(shape=st.tuples(st.integers(6, 20), st.integers(1, 4)))) * scale
    y = _labels(data.draw, x.shape[0])
    try:
        out = HUGE_USERS[name](x, y)
    except ValueError as exc:
        assert "too large" in str(exc) or "overflow" in str(exc), exc
        return
    assert np.isfinite(np.asarray(out, dtype=float)).all()
