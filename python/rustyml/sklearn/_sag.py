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

float32 input runs scikit-learn's fit: its ``sag32`` keeps weights, sums and predictions in
single precision but computes some products in double (the step factors, the binomial
gradient), which a replica would have to follow operation by operation.
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

_L1_RATIO_NONE = (
    "'l1_ratio=None' was deprecated in version 1.8 and will "
    "trigger an error in 1.10. Use 0<=l1_ratio<=1 instead."
)
_PENALTY_DEPRECATED = (
    "'penalty' was deprecated in version 1.8 and will be removed in"
    " 1.10. To avoid this warning, leave 'penalty' set to its default"
    " value and use 'l1_ratio' or 'C' instead."
    " Use l1_ratio=0 instead of penalty='l2',"
    " l1_ratio=1 instead of penalty='l1',"
    " l1_ratio set to a float between 0 and 1 instead of"
    " penalty='elasticnet', and C=np.inf instead of penalty=None."
)


def _penalty_strengths(estimator):
    """``(alpha, beta, notes)``: the L2 and L1 strengths scikit-learn hands its SAG solver,
    from ``penalty`` (deprecated), ``l1_ratio`` and ``C`` as its ``fit`` and
    ``_logistic_regression_path`` derive them, and the warnings its ``fit`` gives on the way
    (``(message, category)``, in order). Combinations scikit-learn refuses are
    ``Unsupported``, so its own fit raises."""
    solver, C, l1_ratio = estimator.solver, estimator.C, estimator.l1_ratio
    explicit = estimator.penalty
    notes = []
    if explicit == "deprecated":
        if l1_ratio is None or l1_ratio == 0:
            penalty = "l2"
            if l1_ratio is None:
                notes.append((_L1_RATIO_NONE, FutureWarning))
        elif l1_ratio == 1:
            penalty = "l1"
        else:
            penalty = "elasticnet"
        if C == np.inf:
            penalty = None
    else:
        penalty = explicit
        notes.append((_PENALTY_DEPRECATED, FutureWarning))
    require(
        solver == "saga" or penalty in ("l2", None),
        f"solver={solver!r} with penalty {penalty!r} (scikit-learn's error)",
    )
    if penalty != "elasticnet" and l1_ratio is not None and 0 < l1_ratio < 1:
        notes.append(
            (
                (
                    "l1_ratio parameter is only used when penalty is 'elasticnet'. "
                    f"Got (penalty={penalty})"
                ),
                UserWarning,
            )
        )
    if (explicit == "l2" and l1_ratio != 0) or (explicit == "l1" and l1_ratio != 1):
        notes.append(
            (
                (
                    f"Inconsistent values: penalty={explicit} with l1_ratio={l1_ratio}. "
                    "penalty is deprecated. Please use l1_ratio only."
                ),
                UserWarning,
            )
        )
    # scikit-learn's errors: an elastic net without its ratio, and (in its path's
    # arithmetic) no penalty from C=inf with l1_ratio=None
    refused = l1_ratio is None and (
        penalty == "elasticnet" or (explicit == "deprecated" and penalty is None)
    )
    require(not refused, "l1_ratio=None with an elastic net or C=inf (scikit-learn's error)")
    if explicit is None:
        if C != 1.0:
            notes.append(
                ("Setting penalty=None will ignore the C and l1_ratio parameters", UserWarning)
            )
        C, penalty = np.inf, "l2"
    if estimator.n_jobs is not None:
        notes.append(
            (
                (
                    "'n_jobs' has no effect since 1.8 and will be removed in 1.10. "
                    f"You provided 'n_jobs={estimator.n_jobs}', please leave it unspecified."
                ),
                FutureWarning,
            )
        )
    if penalty == "l1":
        return 0.0, 1.0 / C, notes
    if penalty == "l2":
        return 1.0 / C, 0.0, notes
    # elastic net, and no penalty (C infinite: both strengths zero)
    return (1.0 / C) * (1 - l1_ratio), (1.0 / C) * l1_ratio, notes


def warm_start_coef(estimator, n_rows_of_coef, n_columns):
    """The previous fit's ``coef_`` (with ``intercept_`` as its last column) as scikit-learn's
    path reads a warm start (for every solver), in its ``(n_classes or 1, n_features + fit_intercept)`` shape;
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
    require(not estimator.verbose, "verbose output")
    require(not estimator.dual, "dual=True (scikit-learn's error)")
    estimator._validate_params()
    alpha, beta, notes = _penalty_strengths(estimator)
    try:
        X, y = validate_data(
            estimator,
            X,
            y,
            accept_sparse="csr",
            dtype=[np.float64, np.float32],
            order="C",
            accept_large_sparse=False,
        )
        check_classification_targets(y)
    except (TypeError, ValueError) as why:
        # scikit-learn warns (``notes``) before it refuses the input: let it do both.
        require(not notes, f"input scikit-learn refuses after its warnings ({why})")
        raise
    require(X.dtype == np.float64, "float32 X")
    sparse = issparse(X)
    if sparse:
        require(
            X.indptr.dtype == np.int32 and X.indices.dtype == np.int32,
            "sparse X with 64-bit indices",
        )
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
    warm = warm_start_coef(estimator, n_columns, width)
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
    # scikit-learn's warnings before its fit, given once the fit is sure to stand (a
    # warning turned into an error leaves the generator as scikit-learn would)
    try:
        for message, category in notes:
            warnings.warn(message, category)
    except Warning:
        rng.set_state(rng_state)
        raise
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
