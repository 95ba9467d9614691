"""rustyml.metrics ranking metrics (ROC / precision-recall curves, average precision, top-k
accuracy) and Cohen's kappa against scikit-learn, plus the issue-10 metric fixes."""

import numpy as np
import pytest
from sklearn import metrics as sm

from rustyml import metrics as rm

TOL = {"rtol": 1e-10, "atol": 1e-12}


def binary_cases(rng):
    y = rng.integers(0, 2, size=300)
    yield "random", y, rng.normal(size=300)
    yield "ties", y, np.round(rng.normal(size=300), 1)
    yield "all tied", y, np.zeros(300)
    yield "plus minus one", np.where(y == 1, 1, -1), rng.random(300)
    yield "bools", y.astype(bool), rng.random(300)
    yield "float labels", y.astype(np.float64), rng.random(300)
    yield "small", np.array([1, 0, 1, 0]), np.array([0.9, 0.6, 0.4, 0.1])


@pytest.mark.parametrize("drop", [True, False])
def test_roc_curve_matches_sklearn(rng, drop):
    for case, y, s in binary_cases(rng):
        ours = rm.roc_curve(y, s, drop_intermediate=drop)
        ref = sm.roc_curve(y, s, drop_intermediate=drop)
        for o, r in zip(ours, ref):
            np.testing.assert_allclose(o, r, err_msg=case, **TOL)


@pytest.mark.parametrize("drop", [True, False])
def test_precision_recall_curve_matches_sklearn(rng, drop):
    for case, y, s in binary_cases(rng):
        ours = rm.precision_recall_curve(y, s, drop_intermediate=drop)
        ref = sm.precision_recall_curve(y, s, drop_intermediate=drop)
        for o, r in zip(ours, ref):
            np.testing.assert_allclose(o, r, err_msg=case, **TOL)


def test_average_precision_matches_sklearn(rng):
    for case, y, s in binary_cases(rng):
        pos = 1 if case != "bools" else True
        np.testing.assert_allclose(
            rm.average_precision_score(y, s, pos_label=pos),
            sm.average_precision_score(y, s, pos_label=pos),
            err_msg=case,
            **TOL,
        )


def test_curves_with_string_labels_need_pos_label(rng):
    y = np.array(["spam", "ham"])[rng.integers(0, 2, size=100)]
    s = rng.random(100)
    for ours, ref in [
        (rm.roc_curve(y, s, pos_label="spam"), sm.roc_curve(y, s, pos_label="spam")),
        (
            rm.precision_recall_curve(y, s, pos_label="ham"),
            sm.precision_recall_curve(y, s, pos_label="ham"),
        ),
    ]:
        for o, r in zip(ours, ref):
            np.testing.assert_allclose(o, r, **TOL)
    np.testing.assert_allclose(
        rm.average_precision_score(y, s, pos_label="spam"),
        sm.average_precision_score(y, s, pos_label="spam"),
        **TOL,
    )
    with pytest.raises(ValueError, match="pos_label"):
        rm.roc_curve(y, s)
    with pytest.raises(ValueError, match="pos_label"):
        rm.average_precision_score(y, s)


def test_ranking_metrics_refuse_bad_input():
    with pytest.raises(ValueError, match="different lengths"):
        rm.roc_curve([0, 1, 1], [0.1, 0.2])
    with pytest.raises(ValueError, match="NaN"):
        rm.precision_recall_curve([0, 1], [0.1, np.nan])
    with pytest.raises(ValueError):
        rm.roc_curve([0, 1, 2], [0.1, 0.2, 0.3])


@pytest.mark.parametrize("average", ["macro", "weighted", "micro", None])
def test_average_precision_multiclass_matches_sklearn(rng, average):
    y = rng.integers(0, 4, size=200)
    s = rng.random((200, 4))
    s /= s.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(
        rm.average_precision_score(y, s, average=average),
        sm.average_precision_score(y, s, average=average),
        **TOL,
    )


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_top_k_accuracy_matches_sklearn(rng, k):
    y = rng.integers(0, 5, size=300)
    s = rng.random((300, 5))
    tied = np.round(s, 1)  # many ties: scikit-learn ranks the later column first
    for scores in (s, tied):
        for normalize in (True, False):
            assert rm.top_k_accuracy_score(y, scores, k=k, normalize=normalize) == pytest.approx(
                sm.top_k_accuracy_score(y, scores, k=k, normalize=normalize)
            )
    labels = np.array([10, 20, 30, 40, 50])
    yl = labels[y]
    assert rm.top_k_accuracy_score(yl, s, k=k, labels=labels) == pytest.approx(
        sm.top_k_accuracy_score(yl, s, k=k, labels=labels)
    )


def test_top_k_accuracy_binary_and_errors(rng):
    y = rng.integers(0, 2, size=100)
    for s in (rng.random(100), rng.normal(size=100)):
        for k in (1, 2):
            assert rm.top_k_accuracy_score(y, s, k=k) == pytest.approx(
                sm.top_k_accuracy_score(y, s, k=k)
            )
    with pytest.raises(ValueError, match="Number of classes"):
        rm.top_k_accuracy_score([0, 1, 2], rng.random((3, 4)))
    with pytest.raises(ValueError, match="unique"):
        rm.top_k_accuracy_score([0, 1, 2], rng.random((3, 3)), labels=[0, 1, 1])


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_matches_sklearn(rng, weights):
    a = rng.integers(0, 4, size=200)
    b = np.where(rng.random(200) < 0.6, a, rng.integers(0, 4, size=200))
    np.testing.assert_allclose(
        rm.cohen_kappa_score(a, b, weights=weights),
        sm.cohen_kappa_score(a, b, weights=weights),
        **TOL,
    )
    names = np.array(["low", "mid", "high", "top"])
    np.testing.assert_allclose(
        rm.cohen_kappa_score(names[a], names[b], weights=weights),
        sm.cohen_kappa_score(names[a], names[b], weights=weights),
        **TOL,
    )
    np.testing.assert_allclose(
        rm.cohen_kappa_score(a, b, labels=[3, 1, 0], weights=weights),
        sm.cohen_kappa_score(a, b, labels=[3, 1, 0], weights=weights),
        **TOL,
    )


def test_cohen_kappa_undefined_and_bad_weights():
    assert np.isnan(rm.cohen_kappa_score([1, 1, 1], [1, 1, 1]))
    assert rm.cohen_kappa_score([1, 1], [1, 1], replace_undefined_by=0.0) == 0.0
    with pytest.raises(ValueError, match="weighting"):
        rm.cohen_kappa_score([0, 1], [0, 1], weights="cubic")


# -- issue 10 ---------------------------------------------------------------------------------


def test_ami_of_identical_singletons_is_one():
    # every sample its own cluster in both: MI = EMI = H, so AMI = 1 (scikit-learn agrees)
    assert rm.adjusted_mutual_info_score([0, 1], [0, 1]) == 1.0
    assert rm.adjusted_mutual_info_score([0, 1], [0, 1]) == pytest.approx(
        sm.adjusted_mutual_info_score([0, 1], [0, 1])
    )
    assert rm.adjusted_mutual_info_score([3, 1, 2, 0], [0, 1, 2, 3]) == pytest.approx(
        sm.adjusted_mutual_info_score([3, 1, 2, 0], [0, 1, 2, 3])
    )


def test_davies_bouldin_and_calinski_on_huge_values(rng):
    x = rng.normal(size=(500, 3))
    labels = rng.integers(0, 4, size=500)
    # both scores are scale-invariant; the reference runs on the unscaled data, where its
    # squared distances do not overflow
    for scale in (1e200, 2.0**900):
        big = x * scale
        ours = rm.davies_bouldin_score(big, labels)
        assert np.isfinite(ours)
        np.testing.assert_allclose(ours, sm.davies_bouldin_score(x, labels), rtol=1e-9)
        np.testing.assert_allclose(
            rm.calinski_harabasz_score(big, labels),
            sm.calinski_harabasz_score(x, labels),
            rtol=1e-9,
        )


@pytest.mark.parametrize("name", ["precision_score", "recall_score", "f1_score"])
@pytest.mark.parametrize("average", ["macro", "micro", "weighted"])
def test_string_labels_with_non_binary_average_ignore_pos_label(rng, name, average):
    names = np.array(["cat", "dog"])
    t = names[rng.integers(0, 2, size=80)]
    p = names[rng.integers(0, 2, size=80)]
    np.testing.assert_allclose(
        getattr(rm, name)(t, p, average=average),
        getattr(sm, name)(t, p, average=average),
        **TOL,
    )
