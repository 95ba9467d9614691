"""rustyml.sklearn.metrics: the regression scores added to the door.

scikit-learn's own function is the oracle. Where the native kernel does scikit-learn's
arithmetic in scikit-learn's order the door must give its bits (median absolute error);
where it sums the same terms in another order the two agree to rounding, each tolerance
derived next to its check. Every native call is
counted by ``dispatch_stats``; the calls the door leaves to scikit-learn must fall back
(and give scikit-learn's value, warnings and errors).
"""

import warnings

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from sklearn import metrics as sk

import rustyml.sklearn as door
from rustyml.sklearn import metrics as ours

EPS = np.finfo(np.float64).eps


def _calls(name, path="rustyml"):
    return door.dispatch_stats().get(("metrics", name, path), 0)


def _run(fn, *args, **kwargs):
    """``(result, [(category, message)])`` of one call, every warning recorded."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(*args, **kwargs)
    return out, [(w.category, str(w.message)) for w in caught]


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
