"""rustyml.metrics against scikit-learn.metrics on random and edge-case inputs.

Agreement bound: 1e-10 (the issue's), relative, and absolute for values near zero where a
relative bound would demand more than double precision gives."""

import pickle

import numpy as np
import pytest
from conftest import PARALLEL, SERIAL
from sklearn import metrics as sm

import rustyml
from rustyml import metrics as rm

TOL = {"rtol": 1e-10, "atol": 1e-10}


def close(ours, ref):
    np.testing.assert_allclose(ours, ref, **TOL)


# -- regression ------------------------------------------------------------------------------

REGRESSION = [
    "mean_squared_error",
    "root_mean_squared_error",
    "mean_absolute_error",
    "r2_score",
    "explained_variance_score",
    "median_absolute_error",
    "mean_absolute_percentage_error",
]


def regression_cases(rng):
    y = rng.normal(size=201) * 3 + 1
    yield "random", y, y + rng.normal(size=201)
    yield "even length", y[:200], y[:200] * 0.9 + 0.2
    yield "perfect", y, y.copy()
    c = np.full(50, 2.5)
    yield "constant target, perfect", c, c.copy()
    yield "constant target, imperfect", c, c + rng.normal(size=50)
    z = y.copy()
    z[::7] = 0.0
    yield "zeros in y_true", z, z + 0.1
    yield "ints and lists", list(range(10)), [v * 1.5 for v in range(10)]
    yield "float32", y.astype(np.float32), (y + 1).astype(np.float32)


@pytest.mark.parametrize("name", REGRESSION)
def test_regression_matches_sklearn(rng, name):
    for case, t, p in regression_cases(rng):
        ours = getattr(rm, name)(t, p)
        # the reference sees the same values in float64 (rustyml converts float32 once)
        ref = getattr(sm, name)(np.asarray(t, dtype=np.float64), np.asarray(p, dtype=np.float64))
        np.testing.assert_allclose(ours, ref, err_msg=case, **TOL)


@pytest.mark.parametrize("name", REGRESSION)
def test_regression_bad_input(name):
    fn = getattr(rm, name)
    with pytest.raises(ValueError, match="different lengths"):
        fn(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="empty"):
        fn(np.zeros(0), np.zeros(0))
    with pytest.raises(ValueError, match="NaN"):
        fn(np.array([1.0, np.nan]), np.ones(2))
    with pytest.raises(ValueError, match="1-dimensional"):
        fn(np.ones((3, 2)), np.ones((3, 2)))


# -- classification --------------------------------------------------------------------------


def label_cases(rng):
    n = 150
    t = rng.integers(0, 2, n)
    p = np.where(rng.random(n) < 0.8, t, 1 - t)
    yield "binary int", t, p
    yield "binary bool", t.astype(bool), p.astype(bool)
    yield "binary -1/1", 2 * t - 1, 2 * p - 1
    t3 = rng.integers(0, 4, n)
    p3 = np.where(rng.random(n) < 0.6, t3, rng.integers(0, 4, n))
    yield "multiclass", t3, p3
    yield "multiclass float", t3.astype(float) * 2.0, p3.astype(float) * 2.0
    yield "multiclass int32 vs float", t3.astype(np.int32), p3.astype(float)
    names = np.array(["cat", "dog", "emu", "ant"])
    yield "multiclass str", names[t3], names[p3]
    # a class that is never predicted, one never true
    p_missing = np.where(p3 == 3, 0, p3)
    t_missing = np.where(t3 == 2, 1, t3)
    yield "unpredicted class", t3, p_missing
    yield "class only predicted", t_missing, p3
    yield "permuted labels", (t3 + 3) % 4 * 10, (p3 + 3) % 4 * 10


@pytest.mark.parametrize("normalize", [True, False])
def test_accuracy_matches_sklearn(rng, normalize):
    for case, t, p in label_cases(rng):
        close(
            rm.accuracy_score(t, p, normalize=normalize),
            sm.accuracy_score(t, p, normalize=normalize),
        )
    assert rm.accuracy is rm.accuracy_score


def _pos_label(t):
    labels = np.unique(t)
    return labels[-1] if len(labels) == 2 else 1


@pytest.mark.parametrize("average", [None, "binary", "micro", "macro", "weighted"])
@pytest.mark.parametrize("zero_division", ["warn", 0.0, 1.0, np.nan])
def test_precision_recall_f_match_sklearn(rng, average, zero_division):
    import warnings

    for case, t, p in label_cases(rng):
        if average == "binary" and len(np.unique(np.concatenate([t, p]))) > 2:
            with pytest.raises(ValueError, match="multiclass"):
                rm.f1_score(t, p, average="binary")
            continue
        kw = {"average": average, "zero_division": zero_division, "pos_label": _pos_label(t)}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for name in ("precision_score", "recall_score", "f1_score"):
                close(getattr(rm, name)(t, p, **kw), getattr(sm, name)(t, p, **kw))
            for beta in (0.5, 2.0):
                close(rm.fbeta_score(t, p, beta=beta, **kw), sm.fbeta_score(t, p, beta=beta, **kw))
            ours = rm.precision_recall_fscore_support(t, p, **kw)
            ref = sm.precision_recall_fscore_support(t, p, **kw)
        for o, r in zip(ours[:3], ref[:3]):
            close(o, r)
        if average is None:
            np.testing.assert_array_equal(ours[3], ref[3])
        else:
            assert ours[3] is None and ref[3] is None


def test_prf_edge_cases():
    import warnings

    # nothing predicted positive: precision is 0/0
    t = np.array([0, 1, 1, 0])
    none = np.zeros(4, dtype=int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for zd in ("warn", 1.0):
            close(
                rm.precision_score(t, none, zero_division=zd),
                sm.precision_score(t, none, zero_division=zd),
            )
        # single class in both: pos_label absent
        ones = np.ones(4, dtype=int)
        close(rm.f1_score(ones * 0, ones * 0), sm.f1_score(ones * 0, ones * 0))
    with pytest.raises(ValueError, match="pos_label"):
        rm.f1_score(t, t, pos_label=7)
    s = np.array(["a", "b", "b", "a"])
    close(rm.f1_score(s, s[::-1], pos_label="b"), sm.f1_score(s, s[::-1], pos_label="b"))
    with pytest.raises(ValueError, match="pos_label"):
        rm.f1_score(s, s)  # default pos_label=1 is not a label here, as in scikit-learn
    with pytest.raises(ValueError, match="average"):
        rm.precision_score(t, t, average="mean")
    with pytest.raises(ValueError, match="zero_division"):
        rm.recall_score(t, t, zero_division=0.5)
    with pytest.raises(ValueError, match="continuous"):
        rm.accuracy_score([0.5, 1.0], [0.5, 1.0])


def test_confusion_matrix_matches_sklearn(rng):
    for case, t, p in label_cases(rng):
        np.testing.assert_array_equal(rm.confusion_matrix(t, p), sm.confusion_matrix(t, p), case)
        for norm in ("true", "pred", "all"):
            close(
                rm.confusion_matrix(t, p, normalize=norm),
                sm.confusion_matrix(t, p, normalize=norm),
            )
    t = np.array([2, 0, 2, 2, 0, 1])
    p = np.array([0, 0, 2, 2, 0, 2])
    for labels in ([2, 0], [0, 1, 2, 5], [1]):
        np.testing.assert_array_equal(
            rm.confusion_matrix(t, p, labels=labels), sm.confusion_matrix(t, p, labels=labels)
        )
    s = np.array(["b", "a", "b"])
    np.testing.assert_array_equal(
        rm.confusion_matrix(s, s[::-1], labels=["b", "z", "a"]),
        sm.confusion_matrix(s, s[::-1], labels=["b", "z", "a"]),
    )
    assert rm.confusion_matrix(t, p).dtype == np.int64
    with pytest.raises(ValueError, match="At least one label"):
        rm.confusion_matrix(t, p, labels=[7])


@pytest.mark.parametrize("adjusted", [False, True])
def test_balanced_accuracy_and_mcc_match_sklearn(rng, adjusted):
    import warnings

    for case, t, p in label_cases(rng):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = sm.balanced_accuracy_score(t, p, adjusted=adjusted)
        close(rm.balanced_accuracy_score(t, p, adjusted=adjusted), ref)
        close(rm.matthews_corrcoef(t, p), sm.matthews_corrcoef(t, p))
    constant = np.zeros(10, dtype=int)
    close(rm.matthews_corrcoef(constant, constant), sm.matthews_corrcoef(constant, constant))


def test_roc_auc_matches_sklearn(rng):
    n = 300
    t = rng.integers(0, 2, n)
    score = rng.random(n) + 0.3 * t
    close(rm.roc_auc_score(t, score), sm.roc_auc_score(t, score))
    tied = np.round(score, 1)  # many ties
    close(rm.roc_auc_score(t, tied), sm.roc_auc_score(t, tied))
    names = np.array(["neg", "pos"])
    close(rm.roc_auc_score(names[t], score), sm.roc_auc_score(names[t], score))
    close(rm.roc_auc_score(t * 2.0 - 1.0, -score), sm.roc_auc_score(t * 2.0 - 1.0, -score))
    assert rm.roc_auc is rm.roc_auc_score
    t3 = rng.integers(0, 3, n)
    raw = rng.random((n, 3)) + np.eye(3)[t3] * 0.5
    proba = raw / raw.sum(axis=1, keepdims=True)
    for mc, avg in [
        ("ovr", "macro"),
        ("ovr", "weighted"),
        ("ovr", "micro"),
        ("ovo", "macro"),
        ("ovo", "weighted"),
    ]:
        if avg == "micro":
            # scikit-learn's micro ovr AUC over the flattened one-hot problem
            ref = sm.roc_auc_score(np.eye(3)[t3], proba, average="micro")
        else:
            ref = sm.roc_auc_score(t3, proba, multi_class=mc, average=avg)
        close(rm.roc_auc_score(t3, proba, multi_class=mc, average=avg), ref)
    with pytest.raises(ValueError, match="Only one class"):
        rm.roc_auc_score(np.ones(5), rng.random(5))
    with pytest.raises(ValueError, match="multi_class"):
        rm.roc_auc_score(t3, proba)
    with pytest.raises(ValueError, match="probabilities"):
        rm.roc_auc_score(t3, raw, multi_class="ovr")
    with pytest.raises(ValueError, match="different lengths"):
        rm.roc_auc_score(t, score[:-1])
    with pytest.raises(ValueError, match="NaN"):
        rm.roc_auc_score(t, np.where(t == 1, np.nan, 0.5))


def test_log_loss_matches_sklearn(rng):
    n = 200
    t = rng.integers(0, 2, n)
    p1 = np.clip(rng.random(n) * 0.8 + 0.2 * t, 0, 1)
    close(rm.log_loss(t, p1), sm.log_loss(t, p1))
    hard = t.astype(float)  # exact 0/1 probabilities are clipped to [eps, 1-eps]
    close(rm.log_loss(t, 1 - hard), sm.log_loss(t, 1 - hard))
    t3 = rng.integers(0, 3, n)
    raw = rng.random((n, 3)) + 0.1
    proba = raw / raw.sum(axis=1, keepdims=True)
    close(rm.log_loss(t3, proba), sm.log_loss(t3, proba))
    names = np.array(["x", "y", "z"])
    close(rm.log_loss(names[t3], proba), sm.log_loss(names[t3], proba))
    sub = t3[t3 < 2]
    close(
        rm.log_loss(sub, proba[t3 < 2], labels=[0, 1, 2]),
        sm.log_loss(sub, proba[t3 < 2], labels=[0, 1, 2]),
    )
    close(
        rm.log_loss(names[sub], proba[t3 < 2], labels=names),
        sm.log_loss(names[sub], proba[t3 < 2], labels=names),
    )
    with pytest.raises(ValueError, match="greater than 1"):
        rm.log_loss(t, p1 + 1.0)
    with pytest.raises(ValueError, match="lower than 0"):
        rm.log_loss(t, p1 - 1.0)
    with pytest.raises(ValueError, match="only one label"):
        rm.log_loss(np.ones(4, dtype=int), np.full(4, 0.5))
    with pytest.raises(ValueError, match="different number of classes"):
        rm.log_loss(t, proba)
    with pytest.raises(ValueError, match="NaN"):
        rm.log_loss(t, np.full(n, np.nan))


def test_classification_bad_input():
    for fn in (rm.accuracy_score, rm.f1_score, rm.matthews_corrcoef, rm.confusion_matrix):
        with pytest.raises(ValueError, match="different lengths"):
            fn([0, 1, 1], [0, 1])
        with pytest.raises(ValueError, match="empty"):
            fn(np.zeros(0, dtype=int), np.zeros(0, dtype=int))
        with pytest.raises(ValueError, match="NaN"):
            fn(np.array([0.0, np.nan]), np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="Mix of label input types"):
        rm.accuracy_score(["a", "b"], [0, 1])


def test_confusion_matrix_object_matches_counts_and_sklearn(rng):
    t = rng.integers(0, 2, 100).astype(float)
    proba = np.clip(t * 0.6 + rng.random(100) * 0.5, 0, 1)
    cm = rm.ConfusionMatrix(t, proba)
    pred = (proba >= 0.5).astype(int)
    (tn, fp), (fn, tp) = sm.confusion_matrix(t.astype(int), pred)
    assert (cm.tp, cm.fp, cm.tn, cm.fn) == (tp, fp, tn, fn) == cm.get_counts()
    close(cm.accuracy(), sm.accuracy_score(t.astype(int), pred))
    close(cm.precision(), sm.precision_score(t.astype(int), pred))
    close(cm.recall(), sm.recall_score(t.astype(int), pred))
    close(cm.f1_score(), sm.f1_score(t.astype(int), pred))
    close(cm.specificity(), tn / (tn + fp))
    close(cm.mcc(), sm.matthews_corrcoef(t.astype(int), pred))
    close(cm.balanced_accuracy(), sm.balanced_accuracy_score(t.astype(int), pred))
    text = cm.summary()
    assert f"TP: {tp}" in text and "Specificity" in text and str(cm) == text
    assert pickle.loads(pickle.dumps(cm)) == cm
    empty = rm.ConfusionMatrix.from_counts(0, 0, 3, 0)
    assert (empty.precision(), empty.recall(), empty.f1_score()) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="different lengths"):
        rm.ConfusionMatrix([1.0, 0.0], [1.0])


# -- clustering ------------------------------------------------------------------------------

PAIR_SCORES = [
    ("adjusted_rand_score", {}),
    ("mutual_info_score", {}),
    ("normalized_mutual_info_score", {"average_method": "arithmetic"}),
    ("normalized_mutual_info_score", {"average_method": "geometric"}),
    ("normalized_mutual_info_score", {"average_method": "min"}),
    ("normalized_mutual_info_score", {"average_method": "max"}),
    ("adjusted_mutual_info_score", {"average_method": "arithmetic"}),
    ("adjusted_mutual_info_score", {"average_method": "geometric"}),
    ("adjusted_mutual_info_score", {"average_method": "min"}),
    ("adjusted_mutual_info_score", {"average_method": "max"}),
    ("homogeneity_score", {}),
    ("completeness_score", {}),
    ("v_measure_score", {}),
    ("v_measure_score", {"beta": 0.5}),
    ("fowlkes_mallows_score", {}),
]


def labeling_cases(rng):
    n = 300
    a = rng.integers(0, 5, n)
    b = rng.integers(0, 4, n)
    yield "independent", a, b
    yield "correlated", a, np.where(rng.random(n) < 0.7, a, b)
    yield "identical", a, a
    yield "permuted", a, (a * 7 + 3) % 5 + 100
    yield "strings vs ints", np.array(list("abcde"))[a], b
    yield "singletons", a, np.arange(n)
    yield "one cluster each", np.zeros(n, dtype=int), np.zeros(n, dtype=int)
    yield "one cluster vs many", np.zeros(n, dtype=int), b
    yield "floats", a * 0.5, b.astype(float)
    yield "tiny", np.array([0, 0, 1]), np.array([1, 1, 0])


@pytest.mark.parametrize("name,kw", PAIR_SCORES)
def test_pair_scores_match_sklearn(rng, name, kw):
    for case, a, b in labeling_cases(rng):
        np.testing.assert_allclose(
            getattr(rm, name)(a, b, **kw), getattr(sm, name)(a, b, **kw), err_msg=case, **TOL
        )


def test_original_crate_aliases(rng):
    a, b = rng.integers(0, 3, 50), rng.integers(0, 3, 50)
    assert rm.adjusted_rand_index(a, b) == rm.adjusted_rand_score(a, b)
    assert rm.normalized_mutual_info(a, b) == rm.normalized_mutual_info_score(a, b)
    assert rm.adjusted_mutual_info(a, b) == rm.adjusted_mutual_info_score(a, b)
    close(rm.homogeneity_completeness_v_measure(a, b), sm.homogeneity_completeness_v_measure(a, b))


def test_pair_scores_bad_input():
    for fn in (rm.adjusted_rand_score, rm.normalized_mutual_info_score, rm.fowlkes_mallows_score):
        with pytest.raises(ValueError, match="different lengths"):
            fn([0, 1], [0])
        with pytest.raises(ValueError, match="empty"):
            fn(np.zeros(0, dtype=int), np.zeros(0, dtype=int))
        with pytest.raises(ValueError, match="NaN"):
            fn(np.array([0.0, np.nan]), np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match="average_method"):
        rm.normalized_mutual_info_score([0, 1], [0, 1], average_method="median")


def blobs(rng, n=400, d=5, k=4):
    centers = rng.normal(scale=3.0, size=(k, d))
    labels = rng.integers(0, k, n)
    return centers[labels] + rng.normal(size=(n, d)), labels


@pytest.mark.parametrize("metric", ["euclidean", "manhattan", "sqeuclidean"])
def test_silhouette_matches_sklearn(rng, metric):
    X, labels = blobs(rng)
    close(
        rm.silhouette_samples(X, labels, metric=metric),
        sm.silhouette_samples(X, labels, metric=metric),
    )
    close(
        rm.silhouette_score(X, labels, metric=metric), sm.silhouette_score(X, labels, metric=metric)
    )


def test_silhouette_edge_cases(rng):
    X, labels = blobs(rng, n=120)
    # a singleton cluster and duplicate points
    labels = labels.copy()
    labels[0] = 9
    X = X.copy()
    X[5] = X[6]
    close(rm.silhouette_samples(X, labels), sm.silhouette_samples(X, labels))
    D = sm.pairwise_distances(X)
    close(
        rm.silhouette_score(D, labels, metric="precomputed"),
        sm.silhouette_score(D, labels, metric="precomputed"),
    )
    names = np.array(list("abcdefghij"))[labels]
    close(rm.silhouette_score(X, names), sm.silhouette_score(X, names))
    close(
        rm.silhouette_score(X, labels, sample_size=60, random_state=3),
        sm.silhouette_score(X, labels, sample_size=60, random_state=3),
    )
    close(
        rm.silhouette_score(X, labels, metric="minkowski", p=3.0),
        sm.silhouette_score(X, labels, metric="minkowski", p=3.0),
    )
    with pytest.raises(ValueError, match="Number of labels is 1"):
        rm.silhouette_score(X, np.zeros(len(X), dtype=int))
    with pytest.raises(ValueError, match="Number of labels is"):
        rm.silhouette_score(X, np.arange(len(X)))
    with pytest.raises(ValueError, match="NaN"):
        rm.silhouette_score(np.where(X > 2, np.nan, X), labels)
    with pytest.raises(ValueError, match="different lengths"):
        rm.silhouette_score(X, labels[:-1])
    with pytest.raises(ValueError, match="diagonal"):
        rm.silhouette_score(D + 1.0, labels, metric="precomputed")
    with pytest.raises(ValueError, match="metric"):
        rm.silhouette_score(X, labels, metric="cosine-ish")


def test_silhouette_gate_is_bitwise(rng, gate):
    X, labels = blobs(rng, n=700, d=6)
    gate(rustyml.tuning.metrics, "silhouette", SERIAL)
    serial = rm.silhouette_samples(X, labels)
    gate(rustyml.tuning.metrics, "silhouette", PARALLEL)
    parallel = rm.silhouette_samples(X, labels)
    assert serial.tobytes() == parallel.tobytes()


def test_calinski_and_davies_match_sklearn(rng):
    for k in (2, 4, 7):
        X, labels = blobs(rng, n=250, k=k)
        close(rm.calinski_harabasz_score(X, labels), sm.calinski_harabasz_score(X, labels))
        close(rm.davies_bouldin_score(X, labels), sm.davies_bouldin_score(X, labels))
    X = np.repeat(np.array([[0.0, 0.0], [5.0, 5.0]]), 5, axis=0)  # zero within-cluster spread
    lab = np.repeat([0, 1], 5)
    close(rm.calinski_harabasz_score(X, lab), sm.calinski_harabasz_score(X, lab))
    close(rm.davies_bouldin_score(X, lab), sm.davies_bouldin_score(X, lab))
    with pytest.raises(ValueError, match="Number of labels"):
        rm.davies_bouldin_score(X, np.zeros(10, dtype=int))
