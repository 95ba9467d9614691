"""rustyml.sklearn.svm.SVC (libsvm's C-SVC training replicated) against scikit-learn's own
SVC: the same inputs to the door and to the stock class.

Two oracles:
- scikit-learn's sparse libsvm sums each dot product sequentially over the stored entries,
  as the replica does over the dense row (a zero product adds nothing), so the door's fit
  of dense ``X`` equals stock SVC's fit of ``csr(X)`` to the bit: support, coefficients,
  intercepts and ``n_iter_`` (``gamma`` given as a number: ``"scale"`` is computed by
  another formula for sparse input).
- scikit-learn's dense libsvm forms dot products with BLAS ``ddot`` (blocked, FMA sums),
  which agree with the sequential sum to a few ulps of ``sum |x_k z_k|``. libsvm rounds
  each kernel entry to float32 (2^-24 relative): a few-ulp difference in double changes
  that rounding only for values within a few double ulps of a float32 rounding boundary
  (a chance of about 2^-29 per entry), so the float32 ``Q`` is the same, the selection
  sequence is the same (``support_`` and ``n_iter_`` equal), and only the double parts
  (the diagonal ``QD``, the RBF norms, the gradient sums) carry the few-ulp differences.
  Each SMO step mixes them by at most ``max |Q| / min curvature`` per step, so the
  coefficients agree to ``n_iter`` * that ratio * few ulps; the problems here stay under
  1e-9 relative to the largest coefficient (``_close``).
"""

import pickle
import warnings

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from scipy import sparse as sp
from sklearn import datasets
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC as StockSVC

import rustyml.sklearn as door
from rustyml.sklearn import svm as door_svm

# see the module docstring: the dense oracle's BLAS sums against the sequential ones
RTOL = 1e-9


@pytest.fixture(autouse=True)
def _always_unpatched():
    yield
    door.unpatch_sklearn()


def _native_fit(est, X, y, **kw):
    door.dispatch_stats(reset=True)
    est.fit(X, y, **kw)
    return door.dispatch_stats().get(("SVC", "fit", "rustyml"), 0) == 1


def _close(a, b, scale):
    np.testing.assert_allclose(a, b, rtol=0, atol=RTOL * max(scale, 1.0))


def _blobs(n, n_classes, n_features=4, seed=0, overlap=1.5):
    X, y = datasets.make_blobs(
        n_samples=n,
        centers=n_classes,
        n_features=n_features,
        cluster_std=overlap,
        random_state=seed,
    )
    return X, y


def _same_fit(ours, stock, X, exact):
    np.testing.assert_array_equal(ours.support_, stock.support_)
    np.testing.assert_array_equal(ours._n_support, stock._n_support)
    np.testing.assert_array_equal(ours.classes_, stock.classes_)
    np.testing.assert_array_equal(ours.n_iter_, stock.n_iter_)
    assert ours.fit_status_ == stock.fit_status_
    assert ours.shape_fit_ == stock.shape_fit_
    assert ours._gamma == stock._gamma
    for name in ("support_", "_n_support", "n_iter_"):
        assert getattr(ours, name).dtype == getattr(stock, name).dtype, name
    stock_coef = stock.dual_coef_.toarray() if sp.issparse(stock.dual_coef_) else stock.dual_coef_
    stock_sv = stock.support_vectors_
    if sp.issparse(stock_sv):
        stock_sv = stock_sv.toarray()
    np.testing.assert_array_equal(ours.support_vectors_, stock_sv)
    if exact:
        np.testing.assert_array_equal(ours.dual_coef_, stock_coef)
        np.testing.assert_array_equal(ours.intercept_, stock.intercept_)
        np.testing.assert_array_equal(ours._intercept_, stock._intercept_)
    else:
        scale = float(np.abs(stock_coef).max())
        _close(ours.dual_coef_, stock_coef, scale)
        _close(ours.intercept_, stock.intercept_, scale)
        _close(ours._dual_coef_, stock._dual_coef_, scale)
        dec_scale = scale * max(1.0, float(np.abs(stock_sv).sum(axis=1).max(initial=1.0)))
        _close(ours.decision_function(X), stock.decision_function(X), dec_scale)
        np.testing.assert_array_equal(ours.predict(X), stock.predict(X))


CASES = {
    "binary_rbf": ({"kernel": "rbf"}, 2),
    "binary_linear": ({"kernel": "linear", "C": 0.5}, 2),
    "three_poly": ({"kernel": "poly", "degree": 3, "coef0": 1.0, "gamma": 0.1}, 3),
    "four_sigmoid": ({"kernel": "sigmoid", "gamma": 0.01, "coef0": 0.5}, 4),
    "three_rbf_no_shrinking": ({"kernel": "rbf", "shrinking": False, "gamma": 0.3}, 3),
    "tiny_C": ({"kernel": "rbf", "C": 1e-3, "gamma": 0.5}, 3),
    "large_C": ({"kernel": "rbf", "C": 1e3, "gamma": 0.5}, 2),
    "balanced": ({"kernel": "linear", "class_weight": "balanced", "C": 2.0}, 3),
    "class_weight_dict": ({"kernel": "rbf", "class_weight": {0: 0.5, 2: 3.0}, "gamma": 0.2}, 3),
    "auto_gamma_deg2": ({"kernel": "poly", "degree": 2, "gamma": "auto"}, 2),
    "tight_tol": ({"kernel": "rbf", "tol": 1e-6, "gamma": 0.4}, 3),
}


def _case_data(n_classes, seed=0):
    n = {2: 120, 3: 150, 4: 160}[n_classes]
    return _blobs(n, n_classes, seed=seed, overlap=2.5)


@pytest.mark.parametrize("case", CASES)
def test_dense_fit_matches_stock_svc(case):
    params, n_classes = CASES[case]
    X, y = _case_data(n_classes)
    ours = door_svm.SVC(**params)
    assert _native_fit(ours, X, y)
    _same_fit(ours, StockSVC(**params).fit(X, y), X, exact=False)


@pytest.mark.parametrize("case", CASES)
def test_fit_equals_stock_sparse_fit_bit_for_bit(case):
    params = dict(CASES[case][0])
    if isinstance(params.get("gamma", "scale"), str):
        params["gamma"] = 0.25
    X, y = _case_data(CASES[case][1])
    ours = door_svm.SVC(**params)
    assert _native_fit(ours, X, y)
    stock = StockSVC(**params).fit(sp.csr_array(X), y)
    _same_fit(ours, stock, X, exact=True)


def test_sample_weight_with_zeros_and_string_labels():
    X, y = _blobs(90, 3, seed=3, overlap=2.0)
    names = np.array(["b", "c", "a"])[y]
    rng = np.random.default_rng(0)
    w = rng.uniform(0.1, 3.0, size=len(y))
    w[::7] = 0.0  # dropped by libsvm: support_ then counts the samples kept
    w[5] = -1.0
    params = {"kernel": "rbf", "gamma": 0.3, "C": 3.0}
    ours = door_svm.SVC(**params)
    assert _native_fit(ours, X, names, sample_weight=w)
    _same_fit(ours, StockSVC(**params).fit(X, names, sample_weight=w), X, exact=False)
    stock_sparse = StockSVC(**params).fit(sp.csr_array(X), names, sample_weight=w)
    _same_fit(ours, stock_sparse, X, exact=True)


def test_precomputed_and_callable_kernels():
    X, y = _blobs(80, 3, seed=5, overlap=2.0)
    K = X @ X.T
    ours = door_svm.SVC(kernel="precomputed")
    assert _native_fit(ours, K, y)
    stock = StockSVC(kernel="precomputed").fit(K, y)
    # the Gram matrix is read as given: no dot product differs, so the fits are equal
    _same_fit(ours, stock, K, exact=True)
    assert ours.support_vectors_.shape == (0, 0)

    def kernel(A, B):
        return A @ B.T

    ours = door_svm.SVC(kernel=kernel)
    assert _native_fit(ours, X, y)
    stock = StockSVC(kernel=kernel).fit(X, y)
    _same_fit(ours, stock, X, exact=True)
    np.testing.assert_array_equal(ours.decision_function(X), stock.decision_function(X))


def test_max_iter_hit_warns_and_matches():
    X, y = _blobs(100, 3, seed=1, overlap=3.0)
    params = {"kernel": "rbf", "max_iter": 7, "gamma": 0.5}
    ours = door_svm.SVC(**params)
    door.dispatch_stats(reset=True)
    with pytest.warns(ConvergenceWarning, match="Solver terminated early"):
        ours.fit(X, y)
    assert door.dispatch_stats().get(("SVC", "fit", "rustyml"), 0) == 1
    with pytest.warns(ConvergenceWarning):
        stock = StockSVC(**params).fit(sp.csr_array(X), y)
    assert ours.fit_status_ == 1
    np.testing.assert_array_equal(ours.n_iter_, [7, 7, 7])
    _same_fit(ours, stock, X, exact=True)


def test_larger_rbf_problem_matches():
    X, y = _blobs(600, 2, n_features=10, seed=2, overlap=4.0)
    ours = door_svm.SVC()
    assert _native_fit(ours, X, y)
    _same_fit(ours, StockSVC().fit(X, y), X, exact=False)


def test_random_state_advances_as_scikit_learn():
    X, y = _blobs(60, 2, seed=4)
    a, b = np.random.RandomState(7), np.random.RandomState(7)
    assert _native_fit(door_svm.SVC(random_state=a), X, y)
    StockSVC(random_state=b).fit(X, y)
    assert a.randint(1 << 30) == b.randint(1 << 30)


def test_predict_pickle_and_clone_work_on_a_native_fit():
    X, y = _blobs(90, 3, seed=6)
    ours = door_svm.SVC(decision_function_shape="ovo", gamma=0.2)
    assert _native_fit(ours, X, y)
    again = pickle.loads(pickle.dumps(ours))
    np.testing.assert_array_equal(again.decision_function(X), ours.decision_function(X))
    np.testing.assert_array_equal(again.predict(X), ours.predict(X))
    fresh = clone(ours)
    assert fresh.get_params() == ours.get_params()
    assert not hasattr(fresh, "support_")
    # the binary sign convention: coef_ of a linear fit is -dual_coef_ . support_vectors_
    Xb, yb = _blobs(60, 2, seed=6)
    lin = door_svm.SVC(kernel="linear")
    assert _native_fit(lin, Xb, yb)
    stock = StockSVC(kernel="linear").fit(Xb, yb)
    _close(lin.coef_, stock.coef_, float(np.abs(stock.coef_).max()))


def test_probability_false_warns_like_scikit_learn():
    X, y = _blobs(40, 2, seed=8)
    ours = door_svm.SVC(probability=False)
    door.dispatch_stats(reset=True)
    with pytest.warns(FutureWarning, match="`probability` parameter was deprecated"):
        ours.fit(X, y)
    assert door.dispatch_stats().get(("SVC", "fit", "rustyml"), 0) == 1


@pytest.mark.parametrize(
    "params, why",
    [
        ({"probability": True, "max_iter": 50}, "probability"),
        ({"verbose": True}, "verbose"),
    ],
)
def test_unsupported_settings_fall_back(params, why, caplog):
    X, y = _blobs(40, 2, seed=9)
    ours = door_svm.SVC(**params)
    door.dispatch_stats(reset=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours.fit(X, y)
    assert door.dispatch_stats().get(("SVC", "fit", "scikit-learn"), 0) == 1


def test_an_unweighted_class_falls_back():
    X, y = _blobs(40, 2, seed=9)
    door.dispatch_stats(reset=True)
    w = np.where(y == 1, 0.0, 1.0)
    with pytest.raises(ValueError):  # libsvm is left one class: scikit-learn's error
        door_svm.SVC().fit(X, y, sample_weight=w)
    assert door.dispatch_stats().get(("SVC", "fit", "scikit-learn"), 0) == 1


@pytest.mark.parametrize(
    "params", [{}, {"kernel": "linear", "C": 3.0}, {"kernel": "poly", "gamma": "auto"}]
)
def test_sparse_fit_is_stock_sparse_fit_bit_for_bit(params):
    X, y = _blobs(90, 3, seed=11, overlap=3.0)
    X[X < 0] = 0.0
    ours = door_svm.SVC(**params)
    assert _native_fit(ours, sp.csr_matrix(X), y)
    stock = StockSVC(**params).fit(sp.csr_matrix(X), y)
    for name in ("support_", "_n_support", "n_iter_", "intercept_", "_intercept_", "_gamma"):
        np.testing.assert_array_equal(getattr(ours, name), getattr(stock, name))
    assert ours._sparse and stock._sparse
    # the sparse layout of the support vectors and coefficients, part for part
    for name in ("support_vectors_", "dual_coef_", "_dual_coef_"):
        a, b = getattr(ours, name), getattr(stock, name)
        assert type(a) is type(b) and a.shape == b.shape, name
        for part in ("data", "indices", "indptr"):
            pa, pb = getattr(a, part), getattr(b, part)
            assert pa.dtype == pb.dtype, (name, part)
            np.testing.assert_array_equal(pa, pb)
    Xs = sp.csr_matrix(X)
    np.testing.assert_array_equal(ours.decision_function(Xs), stock.decision_function(Xs))


def _state(est):
    return {k: v for k, v in vars(est).items()}


@pytest.mark.parametrize(
    "make",
    [
        lambda X, y: ({"C": -1.0}, X, y, None),
        lambda X, y: ({"kernel": "cosine"}, X, y, None),
        lambda X, y: ({}, X, y[:-1], None),
        lambda X, y: ({}, X, np.zeros_like(y), None),
        lambda X, y: ({}, np.where(X > 0, np.nan, X), y, None),
        lambda X, y: ({"kernel": "precomputed"}, X, y, None),
        lambda X, y: ({}, X, y, np.ones(len(y) + 1)),
        lambda X, y: ({"class_weight": {7: 1.0}}, X, y, None),
    ],
)
def test_bad_input_gives_scikit_learns_error(make):
    X, y = _blobs(30, 2, seed=10)
    params, X, y, w = make(X, y)
    ours, stock = door_svm.SVC(**params), StockSVC(**params)
    with pytest.raises(Exception) as ours_err:
        ours.fit(X, y, sample_weight=w)
    with pytest.raises(Exception) as stock_err:
        stock.fit(X, y, sample_weight=w)
    assert type(ours_err.value) is type(stock_err.value)
    assert str(ours_err.value) == str(stock_err.value)
    assert set(_state(ours)) == set(_state(stock))


def test_a_late_fallback_puts_the_random_state_back():
    # a callable kernel's Gram matrix is only seen after scikit-learn's seed draw: with a
    # NaN in it the door hands over to scikit-learn, which must draw from the same state
    X, y = _blobs(30, 2, seed=0)

    def kernel(A, B):
        K = A @ B.T
        K[0, 0] = np.nan
        return K

    outcomes = []
    for cls in (door_svm.SVC, StockSVC):
        state = np.random.RandomState(3)
        with pytest.raises(ValueError, match="not finite") as err:
            cls(kernel=kernel, random_state=state).fit(X, y)
        outcomes.append((str(err.value), state.randint(1 << 30)))
    assert outcomes[0] == outcomes[1]


PROBABILITY_CASES = {
    "binary_rbf": ({"kernel": "rbf", "gamma": 0.25}, 2),
    "three_linear": ({"kernel": "linear", "C": 0.5}, 3),
    "four_poly_balanced": ({"kernel": "poly", "gamma": 0.1, "class_weight": "balanced"}, 4),
    "three_rbf_weights": ({"kernel": "rbf", "gamma": 0.3, "class_weight": {0: 2.0}}, 3),
}


def _probability_fits(params, n_classes, make_x, weighted):
    X, y = _case_data(n_classes, seed=3)
    X = make_x(X)
    kw = {}
    if weighted:
        kw["sample_weight"] = np.random.RandomState(0).uniform(0.5, 2.0, size=len(y))
    ours = door_svm.SVC(probability=True, random_state=5, **params)
    stock = StockSVC(probability=True, random_state=5, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        native = _native_fit(ours, X, y, **kw)
        stock.fit(X, y, **kw)
    return native, ours, stock, X


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("case", PROBABILITY_CASES)
def test_probability_sparse_fit_is_stock_bit_for_bit(case, weighted):
    params, n_classes = PROBABILITY_CASES[case]
    native, ours, stock, X = _probability_fits(params, n_classes, sp.csr_matrix, weighted)
    assert native
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        np.testing.assert_array_equal(ours.probA_, stock.probA_)
        np.testing.assert_array_equal(ours.probB_, stock.probB_)
    np.testing.assert_array_equal(ours.predict_proba(X), stock.predict_proba(X))
    np.testing.assert_array_equal(ours.predict_log_proba(X), stock.predict_log_proba(X))


# Dense: the decision values of the fold models agree to RTOL relative (BLAS sums, see the
# module docstring); the sigmoid's Newton solution is a smooth function of them whose
# sensitivity is the inverse Hessian (of order 1 / (n p q) for these overlapping blobs), so
# 100 RTOL relative covers it with two orders of magnitude of room.
PROBA_RTOL = 100 * RTOL


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("case", PROBABILITY_CASES)
def test_probability_dense_fit_matches_stock(case, weighted):
    params, n_classes = PROBABILITY_CASES[case]
    native, ours, stock, X = _probability_fits(params, n_classes, np.asarray, weighted)
    assert native
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        assert ours.probA_.shape == (n_classes * (n_classes - 1) // 2,)
        np.testing.assert_allclose(ours.probA_, stock.probA_, rtol=PROBA_RTOL)
        np.testing.assert_allclose(ours.probB_, stock.probB_, rtol=PROBA_RTOL, atol=PROBA_RTOL)
    np.testing.assert_allclose(
        ours.predict_proba(X), stock.predict_proba(X), rtol=0, atol=PROBA_RTOL
    )


def test_probability_random_state_advances_as_scikit_learn():
    X, y = _blobs(60, 3, seed=4)
    a, b = np.random.RandomState(11), np.random.RandomState(11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        ours = door_svm.SVC(probability=True, random_state=a)
        assert _native_fit(ours, X, y)
        stock = StockSVC(probability=True, random_state=b).fit(X, y)
        # a second fit from the advanced state draws another seed alike
        assert _native_fit(ours, X, y)
        stock.fit(X, y)
        np.testing.assert_allclose(ours.probA_, stock.probA_, rtol=PROBA_RTOL)
    assert a.randint(1 << 30) == b.randint(1 << 30)
