"""scikit-learn's ``_fit_liblinear`` with liblinear's training replaced by rustyml's replica
(``machine_learning::sklearn_liblinear``), for the LinearSVC and LogisticRegression doors.

The preparation is scikit-learn's own, in its order: the label encoding, the class weights,
the bias from ``intercept_scaling``, the sample weights; then the one seed scikit-learn
draws from ``random_state`` and the replica's training, and scikit-learn's slicing of the
weights and its ``ConvergenceWarning``. Anything the replica does not answer raises
``Unsupported`` before the seed is drawn, so scikit-learn's own fit then draws it.
"""

import warnings

import numpy as np
from scipy.sparse import issparse
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import LabelEncoder
from sklearn.svm._base import _get_liblinear_solver_type
from sklearn.utils import check_random_state, compute_class_weight
from sklearn.utils.validation import _check_sample_weight

from rustyml import _native
from rustyml.sklearn._dispatch import require

# liblinear's solvers the replica runs: 0 (L2 logistic, primal), 1 and 3 (L2 squared hinge /
# hinge, dual), 2 (L2 squared hinge, primal), 4 (Crammer-Singer), 5 (L1 squared hinge),
# 6 (L1 logistic, newGLMNET), 7 (L2 logistic, dual)
REPLICATED_SOLVERS = (0, 1, 2, 3, 4, 5, 6, 7)
# the primal solvers (trust-region Newton), deterministic but sensitive to rounding
TRON_SOLVERS = (0, 2)
# the largest relative move of a TRON answer under 4 ulp of input for which the replica's
# answer, summed in another order than scikit-learn's BLAS, still stands for scikit-learn's
TRON_SPREAD = 1e-9
_TINY = np.finfo(np.float64).tiny


def fit_liblinear(
    X,
    y,
    *,
    C,
    fit_intercept,
    intercept_scaling,
    class_weight,
    penalty,
    dual,
    max_iter,
    tol,
    random_state,
    multi_class="ovr",
    loss="logistic_regression",
    sample_weight=None,
):
    """``(coef_, intercept_, n_iter_)`` as scikit-learn's ``_fit_liblinear`` returns them,
    for a float64 (or exactly converted float32) ``X``, dense or CSR."""
    codes = LabelEncoder().fit_transform(y)
    classes = np.unique(y)
    require(len(classes) >= 2, "a single class (scikit-learn's error)")
    class_weight = compute_class_weight(
        class_weight, classes=classes, y=y, sample_weight=sample_weight
    )
    require(
        not fit_intercept or intercept_scaling > 0, "intercept_scaling <= 0 (scikit-learn's error)"
    )
    bias = float(intercept_scaling) if fit_intercept else -1.0
    sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
    solver = _get_liblinear_solver_type(multi_class, penalty, loss, dual)
    require(solver in REPLICATED_SOLVERS, f"liblinear solver {solver}")
    present = np.unique(codes[sample_weight > 0])
    require(len(present) == len(classes), "a class without positive sample weight")

    def train(values, seed, probe_ulps=None):
        """``(coef, n_iter, probe)``: the fit on ``values`` and, with ``probe_ulps``, its
        ``(coef, n_iter)`` on the values moved by that many ulp, trained side by side."""
        coef, n_iter, _labels, probe = _native.machine_learning.train_liblinear(
            None if issparse(X) else values,
            np.ascontiguousarray(codes, dtype=np.intc),
            np.ascontiguousarray(sample_weight),
            sparse=(X.indptr, X.indices, values) if issparse(X) else None,
            n_features=X.shape[1],
            solver=solver,
            tol=float(tol),
            c=float(C),
            class_weight=np.ascontiguousarray(class_weight, dtype=np.float64),
            max_iter=int(max_iter),
            seed=seed,
            bias=bias,
            probe_ulps=probe_ulps,
        )
        return coef, n_iter, probe

    values = np.ascontiguousarray(X.data if issparse(X) else X, dtype=np.float64)
    if solver in TRON_SOLVERS:
        # TRON draws nothing, and where the problem is ill-conditioned its answer hangs on
        # rounding: an ulp of input moves scikit-learn's own result by tens of percent on
        # unscaled data (breast cancer, wine), as its BLAS summation order does. The replica
        # answers only where moving every input by 4 ulp leaves its answer in place.
        # (the probe: entry k of the values, row-major, times 1 - 4 eps where k % 3 == 1,
        # else 1 + 4 eps)
        raw_coef, n_iter, (moved_coef, moved_iter) = train(values, 0, probe_ulps=4)
        spread = np.max(np.abs(moved_coef - raw_coef)) / max(np.max(np.abs(raw_coef)), _TINY)
        require(
            spread <= TRON_SPREAD and np.array_equal(moved_iter, n_iter),
            f"TRON's answer hangs on rounding here (4 ulp of input move it by {spread:.0e})",
        )
        check_random_state(random_state).randint(np.iinfo("i").max)  # scikit-learn's draw
    else:
        raw_coef, n_iter, _ = train(
            values, int(check_random_state(random_state).randint(np.iinfo("i").max))
        )
    raw_coef = np.asfortranarray(raw_coef)  # liblinear's weights come column-major
    if n_iter.max() >= max_iter:
        warnings.warn(
            "Liblinear failed to converge, increase the number of iterations.",
            ConvergenceWarning,
        )
    if fit_intercept:
        return raw_coef[:, :-1], intercept_scaling * raw_coef[:, -1], n_iter
    return raw_coef, 0.0, n_iter
