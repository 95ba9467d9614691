"""scikit-learn's ``sag``/``saga`` path of ``LogisticRegression.fit`` with the SAG training
replaced by rustyml's replica (``machine_learning::sklearn_sag``), so the coefficients,
intercepts and ``n_iter_`` are scikit-learn's bit for bit.

The preparation is scikit-learn's own, in its order: the penalty from ``l1_ratio`` and
``C`` (``alpha`` for L2, ``beta`` for L1), the sample weights times the class weights, the
``{0, 1}`` or label-encoded targets, the warm-start coefficients, the largest squared row
norm (scikit-learn's ``row_norms``, the same sum) and the one seed scikit-learn draws from
``random_state``. Anything the replica does not answer raises ``Unsupported`` before the
estimator changes; a run the replica gives up on (overflow, a degenerate step, which
scikit-learn raises for) puts the generator back as it was, so scikit-learn's own fit draws
the same seed.
"""

import warnings

import numpy as np
from scipy.sparse import issparse
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.extmath import row_norms
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from rustyml import _native
from rustyml.sklearn._dispatch import Unsupported, require

SAG_SOLVERS = ("sag", "saga")


def _penalty_strengths(solver, C, l1_ratio):
    """``(alpha, beta)``, the L2 and L1 strengths scikit-learn hands its SAG solver, from
    ``C`` and ``l1_ratio`` as its ``fit`` and ``_logistic_regression_path`` derive them."""
    if C == np.inf:
        penalty = None
    elif l1_ratio == 0:
        penalty = "l2"
    elif l1_ratio == 1:
        penalty = "l1"
    else:
        penalty = "elasticnet"
    require(
        solver == "saga" or penalty in ("l2", None),
        f"solver={solver!r} with l1_ratio={l1_ratio} (scikit-learn's error)",
    )
    require(
        penalty is not None or not 0 < l1_ratio < 1,
        "l1_ratio without a penalty (scikit-learn's warning)",
    )
    if penalty == "l1":
        return 0.0, 1.0 / C
    if penalty == "l2":
        return 1.0 / C, 0.0
    # elastic net, and no penalty (C infinite: both strengths zero)
    return (1.0 / C) * (1 - l1_ratio), (1.0 / C) * l1_ratio


def _warm_start_coef(estimator, n_rows_of_coef, n_columns):
    """The previous fit's ``coef_`` (with ``intercept_`` as its last column) as scikit-learn's
    warm start reads it, in its ``(n_classes or 1, n_features + fit_intercept)`` shape;
    ``None`` without a warm start."""
    if not estimator.warm_start:
        return None
    coef = getattr(estimator, "coef_", None)
    if coef is None:
        return None
    coef = np.asarray(coef)
    if estimator.fit_intercept:
        coef = np.concatenate([coef, np.asarray(estimator.intercept_)[:, None]], axis=1)
    require(
        coef.ndim == 2 and coef.shape == (n_rows_of_coef, n_columns),
        f"warm-start coef of shape {coef.shape} (scikit-learn's error)",
    )
    return coef


def fit_sag(estimator, X, y, sample_weight):
    """``LogisticRegression.fit`` for ``solver`` in ``("sag", "saga")``, natively."""
    solver = estimator.solver
    require(estimator.penalty == "deprecated", f"penalty={estimator.penalty!r}")
    require(estimator.l1_ratio is not None, "l1_ratio=None (scikit-learn's warning)")
    require(estimator.n_jobs is None, "n_jobs")
    require(not estimator.verbose, "verbose output")
    require(not estimator.dual, "dual=True (scikit-learn's error)")
    estimator._validate_params()
    alpha, beta = _penalty_strengths(solver, estimator.C, estimator.l1_ratio)
    X, y = validate_data(
        estimator,
        X,
        y,
        accept_sparse="csr",
        dtype=[np.float64, np.float32],
        order="C",
        accept_large_sparse=False,
    )
    require(X.dtype == np.float64, "float32 X")
    sparse = issparse(X)
    if sparse:
        require(
            X.indptr.dtype == np.int32 and X.indices.dtype == np.int32,
            "sparse X with 64-bit indices",
        )
    check_classification_targets(y)
    classes = np.unique(y)
    n_classes = len(classes)
    require(n_classes >= 2, "a single class (scikit-learn's error)")
    n_features = X.shape[1]
    codes = np.searchsorted(classes, y)
    weights = estimator._sample_weights(X, y, classes, codes, sample_weight)
    if weights is None:
        weights = np.ones(X.shape[0], dtype=np.float64)

    fit_intercept = bool(estimator.fit_intercept)
    binary = n_classes == 2
    n_columns = 1 if binary else n_classes
    width = n_features + int(fit_intercept)
    # scikit-learn's starting point: zeros, or the previous fit's coefficients (float64).
    start = np.zeros((n_columns, width), dtype=np.float64)
    warm = _warm_start_coef(estimator, n_columns, width)
    if warm is not None:
        start[:] = warm
    coef_init = np.ascontiguousarray(start[:, :n_features].T)
    intercept_init = np.ascontiguousarray(start[:, -1]) if fit_intercept else np.zeros(n_columns)
    if binary:
        target = (y == classes[1]).astype(np.float64)
    else:
        target = codes.astype(np.float64)
    max_squared_sum = float(row_norms(X, squared=True).max())

    rng = check_random_state(estimator.random_state)
    rng_state = rng.get_state()
    # scikit-learn's dataset draws its sampler's seed this way (never zero)
    seed = int(rng.randint(1, np.iinfo(np.int32).max))
    data = {"x": X, "sparse": None}
    if sparse:
        data = {"x": None, "sparse": (X.indptr, X.indices, X.data)}
    coef, intercept, n_iter, failure = _native.machine_learning.fit_sklearn_sag(
        data["x"],
        np.ascontiguousarray(target),
        np.ascontiguousarray(weights, dtype=np.float64),
        coef_init,
        intercept_init,
        sparse=data["sparse"],
        n_features=n_features,
        multinomial=not binary,
        alpha=float(alpha),
        beta=float(beta),
        max_squared_sum=max_squared_sum,
        tol=float(estimator.tol),
        max_iter=int(estimator.max_iter),
        fit_intercept=fit_intercept,
        saga=solver == "saga",
        seed=seed,
    )
    if failure is not None:
        rng.set_state(rng_state)
        raise Unsupported(f"{solver}: {failure} (scikit-learn's error)")
    if n_iter == estimator.max_iter:
        warnings.warn(
            "The max_iter was reached which means the coef_ did not converge",
            ConvergenceWarning,
        )

    estimator.classes_ = classes
    estimator.coef_ = np.ascontiguousarray(coef.T)
    estimator.intercept_ = intercept if fit_intercept else np.zeros(n_columns)
    estimator.n_iter_ = np.asarray([n_iter], dtype=np.int32)
    return estimator
