"""rustyml.sklearn.metrics: sample weights and scikit-learn's zero_division, natively.

scikit-learn's own function is the oracle: the door must give its values (the weighted
counts are summed in scikit-learn's sample order, so the ratios are its floats; a weighted
accuracy is a sum in another order, equal to rounding), its dtypes and its warnings, word
for word, while running natively (counted by dispatch_stats).
"""

import warnings

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from metric_checks import calls as _calls
from metric_checks import run as _run
from sklearn import metrics as sk
from sklearn.exceptions import UndefinedMetricWarning

import rustyml.sklearn as door
from rustyml.sklearn import metrics as ours

EPS = np.finfo(np.float64).eps
ZERO_DIVISION = ("warn", 0.0, 1.0, np.nan)
PRF = ("precision_score", "recall_score", "f1_score")


def _same(a, b):
    """Equal values (NaN equal to NaN) and dtypes, tuples entry by entry."""
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
        return
    assert type(a) is type(b)
    if a is None:
        return
    np.testing.assert_array_equal(a, b)
    assert np.asarray(a).dtype == np.asarray(b).dtype


def _agree(name, *args, **kwargs):
    """The door and scikit-learn agree on value, dtype and warnings; the door ran natively."""
    before = _calls(name)
    mine, my_warnings = _run(getattr(ours, name), *args, **kwargs)
    theirs, their_warnings = _run(getattr(sk, name), *args, **kwargs)
    _same(mine, theirs)
    assert my_warnings == their_warnings
    assert _calls(name) == before + 1, door.dispatch_stats()
    return mine, my_warnings


def _agree_prf_family(y_true, y_pred, beta, **kw):
    """`_agree` for precision, recall, F1, the full support tuple and F-beta at `beta`."""
    for name in PRF:
        _agree(name, y_true, y_pred, **kw)
    _agree("precision_recall_fscore_support", y_true, y_pred, **kw)
    _agree("fbeta_score", y_true, y_pred, beta=beta, **kw)


def _data(seed, n=300, k=4, names=None):
    rng = np.random.default_rng(seed)
    y_true = rng.integers(0, k, n)
    y_pred = np.where(rng.random(n) < 0.5, y_true, rng.integers(0, k, n))
    if names is not None:
        y_true, y_pred = np.asarray(names)[y_true], np.asarray(names)[y_pred]
    return y_true, y_pred, rng


@pytest.mark.parametrize("weights", ["float", "int", "bool", "float32"])
def test_weighted_prf_family_is_scikit_learns_bit_for_bit(weights):
    y_true, y_pred, rng = _data(1, names=["ant", "bee", "cat", "dog"])
    w = {
        "float": rng.random(y_true.shape[0]) * 3,
        "int": rng.integers(0, 5, y_true.shape[0]),
        "bool": rng.random(y_true.shape[0]) < 0.7,
        "float32": (rng.random(y_true.shape[0]) * 3).astype(np.float32),
    }[weights]
    for average in (None, "micro", "macro", "weighted"):
        for labels in (None, ["dog", "bee"], ["cat", "eel", "ant"]):
            kw = {"average": average, "labels": labels, "sample_weight": w}
            for name in PRF:
                _agree(name, y_true, y_pred, **kw)
            for beta in (0.0, 0.5, 2.0, np.inf):
                _agree("precision_recall_fscore_support", y_true, y_pred, beta=beta, **kw)
                _agree("fbeta_score", y_true, y_pred, beta=beta, **kw)
    binary_true, binary_pred = y_true == "cat", y_pred == "cat"
    for pos_label in (True, False):
        for name in PRF:
            _agree(name, binary_true, binary_pred, pos_label=pos_label, sample_weight=w)


def test_weighted_confusion_matrix_is_scikit_learns_bit_for_bit():
    y_true, y_pred, rng = _data(2, k=5)
    n = y_true.shape[0]
    for w in (rng.random(n), rng.integers(0, 4, n), rng.random(n) < 0.5, rng.normal(size=n)):
        for normalize in (None, "true", "pred", "all"):
            for labels in (None, [4, 0, 2], [3, 7, 1]):
                cm, _ = _agree(
                    "confusion_matrix",
                    y_true,
                    y_pred,
                    labels=labels,
                    sample_weight=w,
                    normalize=normalize,
                )
                if normalize is None:
                    expected = np.int64 if w.dtype.kind in "bi" else np.float64
                    assert cm.dtype == expected


def test_weighted_accuracy_agrees_to_rounding():
    y_true, y_pred, rng = _data(3, n=2000)
    w = rng.random(y_true.shape[0])
    for normalize in (True, False):
        before = _calls("accuracy_score")
        mine = ours.accuracy_score(y_true, y_pred, normalize=normalize, sample_weight=w)
        theirs = sk.accuracy_score(y_true, y_pred, normalize=normalize, sample_weight=w)
        assert _calls("accuracy_score") == before + 1
        # the same weights summed in another order: n roundings of a sum of at most w.sum()
        assert mine == pytest.approx(theirs, rel=0, abs=y_true.shape[0] * EPS * w.sum())
    # integer weights: exact sums both ways
    w = rng.integers(0, 3, y_true.shape[0])
    for normalize in (True, False):
        _agree("accuracy_score", y_true, y_pred, normalize=normalize, sample_weight=w)


# Targets where some ratio divides by zero: an absent predicted class, an absent true
# class, a label absent from both, and no true positives at all.
ZERO_CASES = [
    (np.array([0, 1, 2, 2, 1, 0]), np.array([0, 1, 1, 1, 1, 0]), None),
    (np.array([0, 0, 1, 1]), np.array([0, 2, 1, 2]), None),
    (np.array([0, 1, 0, 1]), np.array([1, 0, 1, 0]), None),
    (np.array([0, 1, 2, 1]), np.array([0, 1, 2, 2]), [0, 1, 2, 5]),
    (np.array([3, 3, 3]), np.array([3, 3, 3]), [3, 4]),
]


@pytest.mark.parametrize("zero_division", ZERO_DIVISION)
@pytest.mark.parametrize("case", range(len(ZERO_CASES)))
def test_zero_division_values_and_warnings_are_scikit_learns(zero_division, case):
    y_true, y_pred, labels = ZERO_CASES[case]
    w = np.linspace(0.5, 2.0, y_true.shape[0])
    for sample_weight in (None, w):
        for average in (None, "micro", "macro", "weighted"):
            kw = {
                "average": average,
                "labels": labels,
                "sample_weight": sample_weight,
                "zero_division": zero_division,
            }
            _agree_prf_family(y_true, y_pred, 0.5, **kw)


def test_zero_division_warnings_word_for_word():
    y_true = np.array([0, 1, 2, 2, 1, 0])
    y_pred = np.array([0, 1, 1, 1, 1, 0])  # class 2 is never predicted
    door.dispatch_stats(reset=True)
    with pytest.warns(UndefinedMetricWarning) as record:
        value = ours.precision_score(y_true, y_pred, average="macro")
    assert [str(w.message) for w in record] == [
        (
            "Precision is ill-defined and being set to 0.0 in labels with no predicted samples. "
            "Use `zero_division` parameter to control this behavior."
        )
    ]
    assert value == sk.precision_score(y_true, y_pred, average="macro", zero_division=0)
    # one ratio (micro average, binary): "due to"
    with pytest.warns(UndefinedMetricWarning) as record:
        ours.recall_score([0, 0, 0], [0, 1, 0])
    assert [str(w.message) for w in record] == [
        (
            "Recall is ill-defined and being set to 0.0 due to no true samples. "
            "Use `zero_division` parameter to control this behavior."
        )
    ]
    # all three, in scikit-learn's order
    with pytest.warns(UndefinedMetricWarning) as record:
        ours.precision_recall_fscore_support([0, 0], [0, 0], labels=[0, 1])
    assert [str(w.message).split(" is ")[0] for w in record] == ["Precision", "Recall", "F-score"]
    assert "no true nor predicted samples" in str(record[2].message)
    # an explicit zero_division is silent
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ours.f1_score([0, 0], [0, 0], labels=[1], average="macro", zero_division=1.0) == 1
    assert _calls("precision_score", "scikit-learn") == 0
    assert _calls("recall_score", "scikit-learn") == 0


def test_absent_pos_label_and_single_label_matrix():
    # one class present: scikit-learn scores the absent pos_label with zero counts
    for zero_division in ZERO_DIVISION:
        for name in PRF:
            _agree(name, [0, 0, 0], [0, 0, 0], zero_division=zero_division)
    # a single label: scikit-learn's UserWarning, natively
    cm, caught = _agree("confusion_matrix", [1, 1], [1, 1], sample_weight=[0.5, 2])
    assert caught and caught[0][0] is UserWarning
    assert cm.dtype == np.float64


def test_what_still_falls_back():
    y_true, y_pred, _ = _data(4)
    door.dispatch_stats(reset=True)
    # scikit-learn's own errors, in its own order
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        ours.f1_score(y_true, y_pred, average="macro", sample_weight=[1.0, 2.0])
    with pytest.raises(ValueError, match="Target is multiclass but average='binary'"):
        ours.f1_score(y_true, y_pred, sample_weight=[1.0, 2.0])
    with pytest.raises(ValueError, match="pos_label=5 is not a valid label"):
        ours.precision_score(y_true == 1, y_pred == 1, pos_label=5)
    with pytest.raises(ValueError, match="at least one non-zero"):
        ours.accuracy_score([0, 1], [0, 0], sample_weight=[0.0, 0.0])
    with pytest.raises(ZeroDivisionError):
        ours.accuracy_score([0, 1], [0, 0], sample_weight=[1.0, -1.0])
    with pytest.raises(ValueError, match="At least one label specified must be in y_true"):
        ours.confusion_matrix([0, 1], [0, 1], labels=[5])
    # pos_label ignored by an average: scikit-learn's UserWarning
    with pytest.warns(UserWarning, match="pos_label"):
        ours.recall_score(y_true, y_pred, average="macro", pos_label=2)
    stats = door.dispatch_stats()
    assert not any(path == "rustyml" for _, _, path in stats)


def _indicators(seed, n=120, k=5):
    rng = np.random.default_rng(seed)
    y_true = (rng.random((n, k)) < 0.35).astype(np.int64)
    y_pred = np.where(rng.random((n, k)) < 0.6, y_true, rng.random((n, k)) < 0.3).astype(int)
    y_true[:, 3] = 0  # a label never true
    y_pred[:, 4] = 0  # a label never predicted
    y_true[:4] = 0  # samples without true labels
    y_pred[2:6] = 0  # and without predicted ones
    return y_true, y_pred, rng


@pytest.mark.parametrize("zero_division", ZERO_DIVISION)
def test_multilabel_prf_family_is_scikit_learns(zero_division):
    y_true, y_pred, rng = _indicators(5)
    n = y_true.shape[0]
    for sample_weight in (None, rng.random(n) * 2, rng.integers(0, 3, n)):
        for average in (None, "micro", "macro", "weighted", "samples"):
            for labels in (None, [4, 0, 2], [1]):
                kw = {
                    "average": average,
                    "labels": labels,
                    "sample_weight": sample_weight,
                    "zero_division": zero_division,
                }
                _agree_prf_family(y_true, y_pred, 2.0, **kw)


def test_multilabel_accuracy_is_subset_accuracy():
    y_true, y_pred, rng = _indicators(6)
    y_pred[10:40] = y_true[10:40]
    for normalize in (True, False):
        _agree("accuracy_score", y_true, y_pred, normalize=normalize)
        _agree("accuracy_score", y_true, y_pred, normalize=normalize, sample_weight=np.arange(120))
        w = rng.random(y_true.shape[0])
        mine = ours.accuracy_score(y_true, y_pred, normalize=normalize, sample_weight=w)
        theirs = sk.accuracy_score(y_true, y_pred, normalize=normalize, sample_weight=w)
        assert mine == pytest.approx(theirs, rel=0, abs=y_true.shape[0] * EPS * w.sum())


def test_multilabel_cases_left_to_scikit_learn():
    from scipy.sparse import csr_matrix

    y_true, y_pred, _ = _indicators(7)
    door.dispatch_stats(reset=True)
    # sparse indicators (explicit zeros count in scikit-learn's sums)
    for a, b in ((csr_matrix(y_true), csr_matrix(y_pred)),):
        assert ours.f1_score(a, b, average="macro") == sk.f1_score(a, b, average="macro")
    with pytest.raises(ValueError, match="All labels must be in"):
        ours.precision_score(y_true, y_pred, average="macro", labels=[0, 9])
    with pytest.raises(ValueError, match="Target is multilabel-indicator but average='binary'"):
        ours.recall_score(y_true, y_pred)
    assert not any(path == "rustyml" for _, _, path in door.dispatch_stats())


def test_numpy_dtype_quirks_are_kept():
    # integer weights and no entry in the selected labels: NumPy's bincount of nothing is
    # int64, so scikit-learn's support stays int64
    y_true = np.array([[0, 0], [0, 0], [0, 1]])
    y_pred = np.array([[0, 0], [0, 1], [0, 1]])
    for w in (np.array([0, 0, 1]), np.array([0.0, 0.0, 1.0])):
        _agree(
            "precision_recall_fscore_support",
            y_true,
            y_pred,
            labels=[0],
            sample_weight=w,
            zero_division=np.nan,
        )
    # NumPy's dot product of boolean scores and boolean weights is a boolean: scikit-learn's
    # unnormalised accuracy is then 1.0; the door leaves that to scikit-learn
    door.dispatch_stats(reset=True)
    w = np.array([True, True, False])
    assert ours.accuracy_score([0, 1, 1], [0, 1, 1], normalize=False, sample_weight=w) == (
        sk.accuracy_score([0, 1, 1], [0, 1, 1], normalize=False, sample_weight=w)
    )
    assert _calls("accuracy_score", "scikit-learn") == 1
