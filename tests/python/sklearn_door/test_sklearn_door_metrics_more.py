"""rustyml.sklearn.metrics: the regression and clustering scores added to the door.

scikit-learn's own function is the oracle. Where the native kernel does scikit-learn's
arithmetic in scikit-learn's order the door must give its bits (median absolute error,
Fowlkes-Mallows from exact pair counts); where it sums the same terms in another order the
two agree to rounding, each tolerance derived next to its check. Every native call is
counted by ``dispatch_stats``; the calls the door leaves to scikit-learn must fall back
(and give scikit-learn's value, warnings and errors).
"""

import math

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from metric_checks import calls as _calls
from metric_checks import run as _run
from sklearn import metrics as sk
from sklearn.metrics.cluster import contingency_matrix
from sklearn.metrics.cluster._expected_mutual_info_fast import expected_mutual_information

import rustyml.sklearn as door
from rustyml.sklearn import metrics as ours

EPS = np.finfo(np.float64).eps


def _both(name, *args, path="rustyml", **kwargs):
    """Door and scikit-learn results of one call, warnings equal (messages and categories;
    NumPy's divide warnings included); the door took ``path``."""
    before = _calls(name, path)
    mine, my_warnings = _run(getattr(ours, name), *args, **kwargs)
    theirs, their_warnings = _run(getattr(sk, name), *args, **kwargs)
    assert my_warnings == their_warnings
    assert _calls(name, path) == before + 1, door.dispatch_stats()
    assert type(mine) is type(theirs)
    return mine, theirs


def _exact(name, *args, **kwargs):
    mine, theirs = _both(name, *args, **kwargs)
    np.testing.assert_array_equal(mine, theirs)
    assert np.asarray(mine).dtype == np.asarray(theirs).dtype


def _close(name, tol, *args, **kwargs):
    mine, theirs = _both(name, *args, **kwargs)
    np.testing.assert_allclose(mine, theirs, rtol=0, atol=tol)
    return mine


def _falls_back(name, *args, **kwargs):
    """scikit-learn's body ran: same result (NaN equal to NaN), same warnings."""
    mine, theirs = _both(name, *args, path="scikit-learn", **kwargs)
    if isinstance(mine, tuple):  # a curve: its arrays one by one
        assert len(mine) == len(theirs)
        for a, b in zip(mine, theirs):
            np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_array_equal(mine, theirs)


def _errors_alike(name, *args, **kwargs):
    """scikit-learn's error, word for word, through the door's fallback."""
    with pytest.raises(Exception) as theirs:
        getattr(sk, name)(*args, **kwargs)
    before = _calls(name, "scikit-learn")
    with pytest.raises(type(theirs.value)) as mine:
        getattr(ours, name)(*args, **kwargs)
    assert str(mine.value) == str(theirs.value)
    assert _calls(name, "scikit-learn") == before + 1


# --- regression -------------------------------------------------------------------------


def _regression(seed, n, outputs=None):
    rng = np.random.default_rng(seed)
    shape = (n,) if outputs is None else (n, outputs)
    y = rng.normal(size=shape) * 3 + 1
    return y, y + rng.normal(size=shape)


MULTIOUTPUT = ("raw_values", "uniform_average", "variance_weighted", [0.2, 0.5, 0.3])
# the scores without a variance have no variance_weighted average
UNWEIGHTED = ("raw_values", "uniform_average", [0.2, 0.5, 0.3])


@pytest.mark.parametrize("n", [2, 7, 50, 1001])
@pytest.mark.parametrize("multioutput", MULTIOUTPUT)
def test_explained_variance_agrees_to_rounding(n, multioutput):
    # score = 1 - N / D, N and D sums of n squares: summed in two orders each is within
    # 2 n eps of the other, relatively (the means' own rounding enters squared: the first
    # order term sum(x - mean) vanishes); so |score - score'| <= 4 n eps (|1 - score| + 1),
    # and the output weights (variances, the same sums) move an average by as little.
    y, p = _regression(n, n, 3)
    mine = _close("explained_variance_score", 8 * n * EPS * 4, y, p, multioutput=multioutput)
    assert np.all(np.asarray(mine) <= 1)
    one_y, one_p = y[:, 1], p[:, 1]
    _close("explained_variance_score", 8 * n * EPS * 4, one_y, one_p)


def test_explained_variance_constant_targets_as_scikit_learn():
    # A constant y_true whose copies sum exactly: scikit-learn's zero denominator rule,
    # force_finite or its NaN / -inf with NumPy's warnings; bit for bit.
    y = np.array([[2.0, 1.0, 0.5], [2.0, 2.0, 0.5], [2.0, 3.0, 0.5], [2.0, 4.0, 0.5]])
    perfect = y.copy()
    perfect[:, 1] += 0.25  # a constant residual: its mean is exact
    off = y.copy()
    off[:, 0] = [2.0, 2.5, 2.0, 2.0]
    for pred in (perfect, off, y + 1):
        for force_finite in (True, False):
            for mo in ("raw_values", "uniform_average", "variance_weighted"):
                _exact(
                    "explained_variance_score", y, pred, multioutput=mo, force_finite=force_finite
                )
    # one sample: 0 / 0, scikit-learn's 1.0
    _exact("explained_variance_score", [3.0], [5.0])
    # every output constant: variance_weighted weighs them uniformly
    _exact(
        "explained_variance_score",
        y[:, [0, 2]],
        y[:, [0, 2]] + [[0], [1], [0], [0]],
        multioutput="variance_weighted",
    )


def test_explained_variance_left_to_scikit_learn():
    y, p = _regression(3, 30)
    _falls_back("explained_variance_score", y, p, sample_weight=np.arange(30.0))
    # a constant 0.1 sums with rounding: scikit-learn's tiny denominator, not 0
    _falls_back("explained_variance_score", [0.1] * 3, [0.1, 0.2, 0.3])
    # constant residuals over a constant target, their mean rounding
    _falls_back("explained_variance_score", [0.0] * 3, [0.1] * 3)
    _falls_back("explained_variance_score", y.astype(np.float32), p.astype(np.float32))
    _errors_alike("explained_variance_score", y, p[:-1])


@pytest.mark.parametrize("n", [1, 2, 5, 6, 101, 1000])
@pytest.mark.parametrize("multioutput", UNWEIGHTED)
def test_median_absolute_error_is_scikit_learns_bit_for_bit(n, multioutput):
    # the same errors |p - t|, the same middle value or (lower + upper) / 2 as NumPy's mean
    y, p = _regression(n + 10, n, 3)
    _exact("median_absolute_error", y, p, multioutput=multioutput)
    _exact("median_absolute_error", y[:, 0], p[:, 0])
    # ties: rounded values repeat
    _exact("median_absolute_error", np.round(y), np.round(p), multioutput=multioutput)


def test_median_absolute_error_integers_and_lists():
    _exact("median_absolute_error", [3, -1, 2, 7], [2, 0, 2, 8])
    _exact("median_absolute_error", np.array([3, 1, 2, 7]), np.array([1, 2, 3, 4]))
    _exact(
        "median_absolute_error",
        [[1, 2], [3, 4], [5, 7]],
        [[1, 3], [2, 2], [5, 5]],
        multioutput="raw_values",
    )
    _falls_back("median_absolute_error", [1.0, 2.0, 3.0], [2.0, 2.0, 2.0], sample_weight=[1, 2, 1])
    _falls_back(
        "median_absolute_error", np.array([1, 2, 3], np.float32), np.array([2, 2, 2], np.float32)
    )
    _errors_alike("median_absolute_error", [1.0, np.nan], [1.0, 2.0])


@pytest.mark.parametrize("n", [1, 3, 64, 1000])
@pytest.mark.parametrize("multioutput", UNWEIGHTED)
def test_mean_absolute_percentage_error_agrees_to_rounding(n, multioutput):
    # the same n non-negative terms |p - t| / max(|t|, eps) summed in two orders: each sum
    # within (n - 1) eps of the exact one relatively, so 2 n eps |mape| apart
    y, p = _regression(n + 20, n, 3)
    y[0, 1] = 0.0  # divided by eps
    mine = ours.mean_absolute_percentage_error(y, p, multioutput="raw_values")
    scale = np.max(np.abs(mine))
    _close("mean_absolute_percentage_error", 2 * n * EPS * scale, y, p, multioutput=multioutput)


def test_mean_absolute_percentage_error_left_to_scikit_learn():
    y, p = _regression(5, 20)
    _falls_back("mean_absolute_percentage_error", y, p, sample_weight=np.ones(20))
    _errors_alike("mean_absolute_percentage_error", y, p[:-1])
    _errors_alike("mean_absolute_percentage_error", y, p, multioutput=[1.0, 2.0])


# --- clustering: two labelings ----------------------------------------------------------


def _labelings(seed, n, k_true, k_pred, names=False):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, k_true, n)
    b = np.where(rng.random(n) < 0.6, a % k_pred, rng.integers(0, k_pred, n))
    if names:
        a = np.array([f"class {i}" for i in range(k_true)])[a]
    return a, b


def _mi_tolerance(a, b):
    """The MI terms (c/n)(ln c - ln n) + (c/n)(ln n^2 - ln(a_i b_j)) are the same up to the
    logarithms' rounding (a few ulp of each log, at most 4 ln n in all per unit of c/n), and
    summed over the non-empty cells in another order: with Sum c/n = 1 the sums are within
    8 (cells + 4) eps max(1, ln n) of each other."""
    cells = contingency_matrix(a, b, sparse=True).nnz
    return 8 * (cells + 4) * EPS * max(1.0, math.log(len(a)))


def _entropy(labels):
    p = np.unique(labels, return_counts=True)[1] / len(labels)
    return float(-(p * np.log(p)).sum())


CASES = [
    (0, 200, 4, 5, False),
    (1, 200, 4, 5, True),
    (2, 1000, 10, 3, False),
    (3, 30, 2, 2, True),
    (4, 500, 7, 7, False),
]


@pytest.mark.parametrize("case", CASES)
def test_mutual_information_family_agrees_to_rounding(case):
    a, b = _labelings(*case)
    tol = _mi_tolerance(a, b)
    mi = _close("mutual_info_score", tol, a, b)
    h = min(_entropy(a), _entropy(b))
    # a ratio MI / H moves by tol / H for MI's rounding, and by (MI / H) tol / H for the
    # entropy's (the same kind of sum, fewer terms)
    ratio_tol = 2 * tol / h
    for method in ("min", "geometric", "arithmetic", "max"):
        _close("normalized_mutual_info_score", ratio_tol, a, b, average_method=method)
    for name in ("homogeneity_score", "completeness_score"):
        _close(name, ratio_tol, a, b)
    # V is a smooth mean of the two ratios, each within ratio_tol
    _close("v_measure_score", 2 * ratio_tol, a, b)
    _close("v_measure_score", 4 * ratio_tol, a, b, beta=3.5)
    mine, theirs = _both("homogeneity_completeness_v_measure", a, b, beta=0.5)
    np.testing.assert_allclose(mine, theirs, rtol=0, atol=4 * ratio_tol)
    assert mi >= 0


@pytest.mark.parametrize("case", CASES)
def test_adjusted_mutual_information_agrees_to_rounding(case):
    _ami_agrees_to_rounding(*_labelings(*case))


def _ami_agrees_to_rounding(a, b, methods=("min", "geometric", "arithmetic", "max")):
    n = len(a)
    # EMI is a sum of terms t * exp(G), G a signed sum of about 10 log-factorials of at most
    # n ln n each, which scikit-learn takes from gammaln and rustyml from a compensated table:
    # each term within 16 n ln n eps relatively, so EMI (<= min(H)) within 16 n ln n eps H.
    # AMI = (MI - EMI) / (norm - EMI): numerator and denominator move by that plus MI's
    # tolerance, divided by the denominator.
    emi = expected_mutual_information(contingency_matrix(a, b, sparse=True), n)
    ha, hb = _entropy(a), _entropy(b)
    for method, norm in (
        ("min", min(ha, hb)),
        ("geometric", math.sqrt(ha * hb)),
        ("arithmetic", (ha + hb) / 2),
        ("max", max(ha, hb)),
    ):
        if method not in methods:
            continue
        den = abs(norm - emi)
        err = 16 * n * math.log(n) * EPS * max(ha, hb) + _mi_tolerance(a, b)
        _close("adjusted_mutual_info_score", 2 * err / den, a, b, average_method=method)


@pytest.mark.parametrize("case", CASES)
def test_fowlkes_mallows_is_scikit_learns_bit_for_bit(case):
    # exact integer pair counts, then the same two divisions and square roots
    a, b = _labelings(*case)
    _exact("fowlkes_mallows_score", a, b)
    _exact("fowlkes_mallows_score", a, a)
    _exact("fowlkes_mallows_score", np.arange(len(a)), b)  # no pair together: 0.0


def test_single_clusters_and_identical_labelings():
    one, two = np.zeros(10, int), np.array([0, 1] * 5)
    for x, y in ((one, one), (one, two), (two, one), (two, two), (["a"] * 4, [1, 1, 2, 2])):
        _exact("mutual_info_score", x, y)
        _exact("normalized_mutual_info_score", x, y)
        _exact("homogeneity_completeness_v_measure", x, y)
        _exact("fowlkes_mallows_score", x, y)
    # no split on either side: 1.0; one side unsplit: 0.0
    _exact("adjusted_mutual_info_score", one, one)
    _exact("adjusted_mutual_info_score", one, two)


def test_adjusted_mutual_information_of_refinements():
    """One labeling refining the other: the engine's MI is the coarser entropy exactly,
    scikit-learn's to its sum's rounding, so the scores agree to rounding, perfect matches
    included; two singleton labelings score 1 exactly in both. Where the score is 0 / 0 (a
    singleton labeling under "min") scikit-learn's is its rounding's ratio: its body."""
    rng = np.random.default_rng(4)
    for n in (12, 60, 400):
        fine = rng.integers(0, n // 4, n)
        for coarse in (fine % 3, fine // 5, rng.permutation(n)[fine]):  # the last: relabeled
            _ami_agrees_to_rounding(fine, coarse)
            _ami_agrees_to_rounding(coarse, fine)
        singletons = rng.permutation(n)
        for x, y in ((singletons, fine), (fine, singletons)):
            _ami_agrees_to_rounding(x, y, methods=("geometric", "arithmetic", "max"))
            _falls_back("adjusted_mutual_info_score", x, y, average_method="min")
    # scikit-learn's perfect matches (its test_perfect_matches): 1 as scikit-learn gives it
    for n in (2, 3, 4, 17, 100, 1000):
        for method in ("min", "geometric", "arithmetic", "max"):
            a, b = np.arange(n), rng.permutation(n) + 7
            _exact("adjusted_mutual_info_score", a, b, average_method=method)
            assert ours.adjusted_mutual_info_score(a, b, average_method=method) == 1.0


def test_clustering_calls_left_to_scikit_learn():
    a, b = _labelings(9, 60, 3, 4)
    # a singleton labeling under "min": scikit-learn's (MI - EMI) / (H - EMI) is 0 / 0
    _falls_back("adjusted_mutual_info_score", np.arange(60), b, average_method="min")
    _falls_back("mutual_info_score", None, None, contingency=contingency_matrix(a, b))
    # empty labelings: scikit-learn's 1.0 / 0.0 conventions
    _falls_back("homogeneity_completeness_v_measure", [], [])
    _falls_back("normalized_mutual_info_score", [], [])
    _falls_back("fowlkes_mallows_score", [], [])
    # continuous labels: scikit-learn's warning, then its score
    x = np.linspace(0, 1, 20)
    _falls_back("mutual_info_score", x, b[:20])
    _errors_alike("mutual_info_score", a, b[:-1])
    _errors_alike("homogeneity_score", a.reshape(-1, 2), b.reshape(-1, 2))


# --- clustering: data and labels --------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("names", [False, True])
def test_calinski_harabasz_agrees_to_rounding(seed, names):
    # The centroids (means of at most n rows) are within n eps |x| of scikit-learn's, the
    # dispersions sums of n d squares within 2 n d eps of each other relatively; with data
    # of unit scale whose clusters are apart by about 1, each dispersion is within
    # 4 n d eps (relatively) and the ratio within 8 n d eps.
    rng = np.random.default_rng(seed)
    n, d, k = [(40, 2, 3), (300, 5, 4), (1000, 3, 7), (7, 1, 2)][seed]
    labels = np.r_[np.arange(k), rng.integers(0, k, n - k)]
    X = rng.normal(size=(n, d)) + labels[:, None] * 0.7
    if names:
        labels = np.array([f"cluster {i}" for i in range(k)])[labels]
    score = sk.calinski_harabasz_score(X, labels)
    _close("calinski_harabasz_score", 8 * n * d * EPS * score, X, labels)
    # integer X (scikit-learn's float64 means of it)
    Xi = np.round(X * 10).astype(np.int64)
    score = sk.calinski_harabasz_score(Xi, labels)
    _close("calinski_harabasz_score", 8 * n * d * EPS * score, Xi, labels)


def test_calinski_harabasz_left_to_scikit_learn():
    X = np.array([[0.0, 1.0], [0.0, 1.0], [2.0, 3.0], [2.0, 3.0]])
    # every cluster a single point: scikit-learn's 1.0 hangs on its means' rounding
    _falls_back("calinski_harabasz_score", X, [0, 0, 1, 1])
    _errors_alike("calinski_harabasz_score", X, [0, 0, 0, 0])
    _errors_alike("calinski_harabasz_score", X, [0, 1, 2, 3])
    _falls_back(
        "calinski_harabasz_score", X * 2.0**500 + [[0, 0], [1, 0], [0, 0], [0, 0]], [0, 0, 1, 1]
    )


# --- classification scores from the confusion matrix -------------------------------------


def _classes(seed, n, k, names=False, weights=None):
    rng = np.random.default_rng(seed)
    y_true = rng.integers(0, k, n)
    y_pred = np.where(rng.random(n) < 0.6, y_true, rng.integers(0, k + 1, n))
    if names:
        pool = np.array([f"label {i}" for i in range(k + 1)])
        y_true, y_pred = pool[y_true], pool[y_pred]
    w = {
        None: None,
        "int": rng.integers(0, 5, n),
        "float": rng.random(n) * 3,
        "bool": rng.random(n) < 0.7,
    }[weights]
    return y_true, y_pred, w


CLASS_CASES = [(0, 100, 2), (1, 300, 4), (2, 50, 7), (3, 2000, 3)]


@pytest.mark.parametrize("case", CLASS_CASES)
@pytest.mark.parametrize("names", [False, True])
@pytest.mark.parametrize("weights", [None, "int", "float", "bool"])
def test_confusion_scores_are_scikit_learns_bit_for_bit(case, names, weights):
    # The native confusion matrix is scikit-learn's, cell for cell (int64 counts, or the
    # weights summed in sample order as its coo_array sums them); each score then runs
    # scikit-learn's arithmetic over it: the same floats. y_pred holds a class absent from
    # y_true: balanced accuracy's warning.
    y_true, y_pred, w = _classes(*case, names=names, weights=weights)
    for adjusted in (False, True):
        _exact("balanced_accuracy_score", y_true, y_pred, sample_weight=w, adjusted=adjusted)
    _exact("matthews_corrcoef", y_true, y_pred, sample_weight=w)
    for kappa_weights in (None, "linear", "quadratic"):
        _exact("cohen_kappa_score", y_true, y_pred, weights=kappa_weights, sample_weight=w)
    # labels= selects and orders the classes, an absent one included
    present = np.unique(y_true)
    absent = "no such label" if names else 99
    chosen = list(present[::-1][:3]) + [absent]
    _exact("cohen_kappa_score", y_true, y_pred, labels=chosen, weights="linear", sample_weight=w)


def test_confusion_scores_edge_cases():
    # one class in both: MCC 0, kappa undefined (scikit-learn's warning and its value)
    one = np.zeros(6, int)
    _exact("matthews_corrcoef", one, one)
    _exact("balanced_accuracy_score", one, one)
    _exact("cohen_kappa_score", one, one)
    _exact("cohen_kappa_score", one, one, replace_undefined_by=0.5)
    # perfect and inverted binary predictions, booleans
    y = np.array([True, False, True, True, False])
    _exact("matthews_corrcoef", y, y)
    _exact("matthews_corrcoef", y, ~y)
    _exact("balanced_accuracy_score", y, ~y, adjusted=True)
    _exact("cohen_kappa_score", y, ~y, weights="quadratic")
    # labels= naming only classes y2 never uses
    _exact("cohen_kappa_score", [0, 0, 1, 1], [2, 2, 2, 2], labels=[0, 1])
    # zero weights everywhere but one class
    _exact("cohen_kappa_score", [0, 1, 2], [0, 1, 2], sample_weight=[1.0, 0.0, 0.0])


def test_confusion_scores_left_to_scikit_learn():
    multilabel = np.array([[0, 1], [1, 1], [1, 0]])
    _errors_alike("matthews_corrcoef", multilabel, multilabel)
    _errors_alike("balanced_accuracy_score", [0.5, 1.5], [0.5, 1.5])
    _errors_alike("cohen_kappa_score", [0, 1], [0, 1, 1])
    # labels= naming no class of y1: scikit-learn's own message
    _errors_alike("cohen_kappa_score", [0, 0, 1], [0, 1, 1], labels=[5, 6])
    _falls_back("cohen_kappa_score", [0, 1, 1], [0, 1, 0], labels=[0, 1, 1])


# --- ranking: binary curves and average precision ------------------------------------------


def _ranked(seed, n, ties=False, labels=(0, 1)):
    rng = np.random.default_rng(seed)
    y = np.asarray(labels)[rng.integers(0, 2, n)]
    score = rng.random(n)
    if ties:
        score = np.round(score, 1)
    return y, score


RANK_CASES = [(0, 10, False), (1, 200, True), (2, 1000, False), (3, 57, True)]


@pytest.mark.parametrize("case", RANK_CASES)
@pytest.mark.parametrize("drop", [True, False])
def test_curves_are_scikit_learns_bit_for_bit(case, drop):
    # One point per distinct score, in decreasing order, with the cumulative integer counts;
    # scikit-learn's corner and vertical-run rules drop the same points; the rates are the
    # same integers over the same totals: the same floats.
    y, score = _ranked(*case)
    _exact_tuple("roc_curve", y, score, drop_intermediate=drop)
    _exact_tuple("precision_recall_curve", y, score, drop_intermediate=drop)
    # {-1, 1}, strings with pos_label, booleans, integer and float32 scores
    _exact_tuple("roc_curve", 2 * y - 1, score, drop_intermediate=drop)
    names = np.array(["neg", "pos"])[y]
    _exact_tuple("roc_curve", names, score, pos_label="pos", drop_intermediate=drop)
    _exact_tuple("precision_recall_curve", names, score, pos_label="neg")
    _exact_tuple("roc_curve", y.astype(bool), (score * 10).astype(np.int64))
    _exact_tuple("precision_recall_curve", y, score.astype(np.float32))
    # a multiclass y_true with pos_label: one class against the rest
    three = np.where(score > 0.8, 2, y)
    _exact_tuple("roc_curve", three, score, pos_label=2, drop_intermediate=drop)


def _exact_tuple(name, *args, **kwargs):
    mine, theirs = _both(name, *args, **kwargs)
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype


def test_curves_of_one_class_warn_as_scikit_learn():
    score = np.array([0.3, 0.1, 0.3, 0.9])
    for y in ([1, 1, 1, 1], [0, 0, 0, 0]):
        _exact_tuple("roc_curve", y, score)
        _exact_tuple("precision_recall_curve", y, score)
        _exact("average_precision_score", y, score)
    _exact_tuple("roc_curve", [0, 1], [0.5, 0.5])  # one threshold


@pytest.mark.parametrize("case", RANK_CASES)
def test_average_precision_is_scikit_learns_bit_for_bit(case):
    # the same curve, then scikit-learn's own step integral over it
    y, score = _ranked(*case)
    _exact("average_precision_score", y, score)
    _exact("average_precision_score", np.array(["a", "b"])[y], score, pos_label="a")
    # multilabel indicators and multiclass targets: each column's binary score, averaged
    # as scikit-learn averages them
    rng = np.random.default_rng(case[0])
    n = case[1]
    Y = rng.integers(0, 2, (n, 4))
    Y[:, 3] = 0  # a label without positives: its warning, weight 0
    S = np.round(rng.random((n, 4)), 2)
    for average in (None, "micro", "macro", "weighted", "samples"):
        _exact("average_precision_score", Y, S, average=average)
    _exact("average_precision_score", Y, (S * 100).astype(np.int64))
    k = rng.integers(0, 3, n)
    k[:3] = [0, 1, 2]
    P = rng.random((n, 3))
    P /= P.sum(axis=1, keepdims=True)
    for average in (None, "macro", "weighted"):
        _exact("average_precision_score", k, P, average=average)


@pytest.mark.parametrize("case", RANK_CASES)
@pytest.mark.parametrize("drop", [True, False])
def test_weighted_curves_are_scikit_learns_bit_for_bit(case, drop):
    """Weight sums in scikit-learn's order (scores decreasing, equal scores in sample order,
    each added in turn), samples of weight 0 left out: the same floats at every point, so
    the same dropped points, rates, areas and average precision."""
    y, score = _ranked(*case)
    rng = np.random.default_rng(case[0] + 100)
    n = len(y)
    fractional = rng.random(n) * 10.0 ** rng.integers(-3, 4, n)  # sums that round
    fractional[rng.random(n) < 0.2] = 0.0
    for w in (fractional, fractional.astype(np.float32), rng.integers(0, 4, n) + (y == 1)):
        _exact_tuple("roc_curve", y, score, sample_weight=w, drop_intermediate=drop)
        _exact_tuple("precision_recall_curve", y, score, sample_weight=w, drop_intermediate=drop)
        _exact("average_precision_score", y, score, sample_weight=w)
        _exact("roc_auc_score", y, score, sample_weight=w)
        _exact("roc_auc_score", y, score, sample_weight=w, max_fpr=0.3)
    names = np.array(["neg", "pos"])[y]
    _exact_tuple("roc_curve", names, score, pos_label="pos", sample_weight=fractional)
    _exact("roc_auc_score", names, score, sample_weight=list(fractional))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_weighted_averages_of_binary_scores_are_scikit_learns(seed):
    """Indicator and multiclass targets with sample_weight: each label's (or sample's, or
    the raveled matrix's) weighted score natively, averaged with scikit-learn's weights."""
    rng = np.random.default_rng(seed)
    n = 120
    Y = rng.integers(0, 2, (n, 4))
    Y[:, 3] = 0  # a label without positives: its warning, weight 0
    S = np.round(rng.random((n, 4)), 2)
    w = rng.random(n) * 3
    w[rng.random(n) < 0.1] = 0.0
    integer_w = rng.integers(0, 3, n)
    k = rng.integers(0, 3, n)
    P = rng.random((n, 3))
    for weight in (w, integer_w, list(w)):
        for average in (None, "micro", "macro", "weighted", "samples"):
            _exact("average_precision_score", Y, S, average=average, sample_weight=weight)
            _exact("roc_auc_score", Y, S, average=average, sample_weight=weight)
        _exact("roc_auc_score", Y, S, sample_weight=weight, max_fpr=0.5)
        for average in (None, "macro", "weighted"):
            _exact("average_precision_score", k, P, average=average, sample_weight=weight)


def test_weighted_curves_of_a_class_without_weight_warn_as_scikit_learn():
    y = np.array([1, 0, 1, 0, 1])
    score = np.array([0.9, 0.8, 0.7, 0.3, 0.1])
    for w in ([0.0, 1.0, 0.0, 2.0, 0.0], [1.0, 0.0, 2.0, 0.0, 1.0]):
        _exact_tuple("roc_curve", y, score, sample_weight=w)
        _exact_tuple("precision_recall_curve", y, score, sample_weight=w)
        _exact("average_precision_score", y, score, sample_weight=w)
        # scikit-learn's NaN rates make its area NaN, with its warnings: its body
        _falls_back("roc_auc_score", y, score, sample_weight=w)


def test_ranking_left_to_scikit_learn():
    y, score = _ranked(5, 40)
    w = np.arange(40.0) - 3.0  # negative weights: whether a sum is 0 hangs on its order
    _falls_back("roc_curve", y, score, sample_weight=w)
    _falls_back("precision_recall_curve", y, score, sample_weight=w)
    _falls_back("average_precision_score", y, score, sample_weight=w)
    _errors_alike("roc_curve", y, score, sample_weight=np.zeros(40))
    Y = np.column_stack([y, 1 - y, np.zeros_like(y)])
    S = np.column_stack([score, score, score])
    _falls_back("average_precision_score", Y, S, sample_weight=w)
    # negative weights: scikit-learn's curve is not monotone here, and its area its error
    _errors_alike("roc_auc_score", Y[:, ::-1], S, sample_weight=w)
    # a label whose negatives have no weight: scikit-learn's NaN area, once, after its
    # warning for the label before it
    only = np.where(Y[:, 0] == 1, 1.0, 0.0)
    _falls_back("roc_auc_score", Y[:, ::-1], S, sample_weight=only, average=None)
    zero = score.copy()
    zero[:2] = [0.0, -0.0]
    _falls_back("roc_curve", y, zero)
    _errors_alike("roc_curve", np.array(["a", "b"])[y], score)
    _errors_alike("roc_curve", np.r_[y[:-1], 2], score)
    _errors_alike("precision_recall_curve", y, np.r_[score[:-1], np.nan])
    _errors_alike("average_precision_score", y, score, pos_label=7)
    _errors_alike("average_precision_score", np.r_[y[:-1], 2], score)


# --- top-k accuracy ------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("names", [False, True])
def test_top_k_accuracy_is_scikit_learns_bit_for_bit(seed, names):
    # the same hits (ties ranked in scikit-learn's column order), an integer count over n
    rng = np.random.default_rng(seed)
    n, c = [(50, 3), (400, 5), (1000, 8)][seed]
    y = np.r_[np.arange(c), rng.integers(0, c, n - c)]
    scores = np.round(rng.random((n, c)), 1)  # many ties
    if names:
        y = np.array([f"class {i}" for i in range(c)])[y]
    for k in range(1, c + 1):
        _exact("top_k_accuracy_score", y, scores, k=k)
        _exact("top_k_accuracy_score", y, scores, k=k, normalize=False)
    _exact("top_k_accuracy_score", y, (scores * 10).astype(np.int64), k=2)
    # labels= naming a class y never holds, in order
    pool = np.unique(y)
    extra = "zzz" if names else c
    wide = np.c_[scores, rng.random(n)]
    _exact("top_k_accuracy_score", y, wide, k=2, labels=np.r_[pool, [extra]])


def test_top_k_accuracy_left_to_scikit_learn():
    y = np.array([0, 1, 1, 0])
    s = np.array([0.2, 0.7, 0.6, 0.1])
    _falls_back("top_k_accuracy_score", y, s, k=1)  # binary: scikit-learn's threshold rule
    y3, s3 = np.array([0, 1, 2, 2]), np.eye(4)[:, :3]
    _falls_back("top_k_accuracy_score", y3, s3, sample_weight=[1.0, 2.0, 1.0, 1.0])
    _errors_alike("top_k_accuracy_score", y3, s3[:, :2])
    _errors_alike("top_k_accuracy_score", y3, s3, labels=[2, 1, 0])
    _errors_alike("top_k_accuracy_score", y3, np.r_[s3[:3], [[np.nan, 0, 0]]])


# --- log loss -------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("names", [False, True])
def test_log_loss_agrees_to_rounding(seed, names):
    # Each sample's term is -log of one clipped probability (scikit-learn's xlogy over a
    # one-hot row adds zeros to it), the logarithms within an ulp of each other; the n
    # positive terms are summed in two orders, so the means are within 2 (n + 2) eps of
    # each other relatively (and the sums, normalize=False, n times the mean, likewise).
    rng = np.random.default_rng(seed)
    n, c = [(30, 2), (500, 3), (2000, 6)][seed]
    y = np.r_[np.arange(c), rng.integers(0, c, n - c)]
    P = rng.random((n, c))
    P[:5] = np.eye(c)[(y[:5] + 1) % c]  # certain mistakes: clipped at eps
    P /= P.sum(axis=1, keepdims=True)
    if names:
        y = np.array([f"class {i}" for i in range(c)])[y]
    for normalize in (True, False):
        value = sk.log_loss(y, P, normalize=normalize)
        _close("log_loss", 2 * (n + 2) * EPS * value, y, P, normalize=normalize)
    if c == 2:
        value = sk.log_loss(y, P[:, 1])
        _close("log_loss", 2 * (n + 2) * EPS * value, y, P[:, 1])  # the positive column
        _close("log_loss", 2 * (n + 2) * EPS * value, y, P[:, 1:])
    # labels= naming a class absent from y_true; probabilities that do not sum to one warn
    extra = "zzz" if names else c
    wide = np.c_[P, np.zeros(n)]
    value = sk.log_loss(y, wide, labels=np.r_[np.unique(y), [extra]])
    _close("log_loss", 2 * (n + 2) * EPS * value, y, wide, labels=np.r_[np.unique(y), [extra]])
    value = sk.log_loss(y, P * 0.9)
    _close("log_loss", 2 * (n + 2) * EPS * value, y, P * 0.9)


def test_log_loss_left_to_scikit_learn():
    y = np.array([0, 1, 1, 0])
    p = np.array([0.2, 0.7, 0.6, 0.1])
    _falls_back("log_loss", y, p, sample_weight=[1.0, 2.0, 1.0, 1.0])
    _falls_back("log_loss", y, p.astype(np.float32))
    _falls_back("log_loss", y, p.astype(np.float16))
    _falls_back("log_loss", y, np.c_[1 - p, p], labels=[1, 0])  # its ordering warning
    _errors_alike("log_loss", y, p + 0.5)
    _errors_alike("log_loss", [1, 1, 1], [0.5, 0.5, 0.5])
    _errors_alike("log_loss", [0, 1, 2], np.full((3, 2), 0.5))
    _errors_alike("log_loss", y, p[:3])
