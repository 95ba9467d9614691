"""``sklearn.linear_model`` with rustyml's engines behind LinearRegression and
LogisticRegression.

``LinearRegression`` fits natively on dense float64 input (``positive=False``; a sparse one
on a dense copy), with or without ``sample_weight``, one or several targets. It solves the
normal equations of the centred data, ``X^T X`` for a tall ``X`` or ``X X^T`` for a wide one
(the minimum-norm solution lies in ``X``'s row space), both from rustyml's product engine,
by eigendecomposition with scikit-learn's ``lstsq`` cutoff: singular values below ``tol``
times the largest count as zero, so rank-deficient and underdetermined fits give lstsq's
minimum-norm solution. One refinement with the residual brings the error down to the
least-squares solver's order (cond * eps) while cond^2 * eps over the kept values stays
below 1e-3. A singular value too near the cutoff to tell its side, or worse conditioning,
runs scikit-learn's ``lstsq``. ``singular_`` is the square root of the Gram matrix's
eigenvalues (zero for those cut off, where lstsq reports rounding noise).

``LogisticRegression`` fits natively with the ``lbfgs`` solver and an L2 penalty or none
(``C=inf``; ``l1_ratio`` 0) on dense float64 input, binary or multinomial (one row of
coefficients per class, no class dropped, as scikit-learn), with or without
``sample_weight`` and ``class_weight`` (their product, ``"balanced"`` from
``compute_class_weight``, weights ``>= 0``), at any ``tol`` and ``max_iter``: a replica of
SciPy's L-BFGS-B run as scikit-learn calls it (``maxls=50``, ``ftol=64 eps``, ``gtol=tol``)
minimises the same objective (the weighted mean log-loss plus the squared norm of the
coefficients over ``2 C`` times the weight sum, the intercepts unpenalised) over the same
parameter vector, with SciPy's compact L-BFGS matrices, Moré-Thuente line search, memory
restarts and stopping tests, so both runs stop after the same iterations (``n_iter_``
equal, scikit-learn's ConvergenceWarning where SciPy reports no convergence) at the same
point to rounding. Where a step or stopping decision lies within rounding of its threshold,
scikit-learn's fit runs. Prediction is scikit-learn's own, from ``coef_`` and
``intercept_``.

With ``solver="newton-cholesky"`` it fits natively under the same conditions, also without
a penalty (``C=inf``), binary or multinomial at any ``tol``, when scikit-learn's Newton run
converges within ``max_iter`` on its own: the native solver takes scikit-learn's steps
(the Hessian from the product engine, the Newton step by Cholesky over the identifiable
parameters, a multinomial's last intercept, or without penalty its last class, held fixed),
its backtracking line search and its stopping rule (largest gradient entry and half the
Newton decrement at most ``tol``), so both stop after the same iterations (``n_iter_``
equal) at the same point to rounding. Where scikit-learn would hand over to lbfgs (a
Hessian that is not positive definite or nearly singular, a failed line search), or a step
decision lies within rounding of its threshold, scikit-learn's fit runs. A run cut by
``max_iter`` is answered natively as scikit-learn's: its iterate after ``max_iter``
iterations, centred as its solver finalizes every run, ``n_iter_`` ``max_iter`` and its
ConvergenceWarning ("Newton solver did not converge after ... iterations.").

With ``solver="newton-cg"`` likewise: scikit-learn's truncated conjugate-gradient directions
(all parameters, no reference class) and stopping rule, where every Wolfe line search takes
its first trial step (``1``, or ``min(1, 2.02 (f_k - f_{k-1}) / g.p)`` after the first
iteration), which is the usual case; a line search that would refine its step, or a
decision within rounding runs scikit-learn's fit, as does a run cut by ``max_iter``:
scikit-learn's warning then prints the loss of its own last iterate, a number the native
run only matches to rounding.

Both Newton solvers take ``warm_start`` as scikit-learn does: newton-cg starts at the
previous ``coef_`` and ``intercept_`` as given, newton-cholesky re-centres a multinomial
start first (without penalty every class less the last one, intercept included; with one,
the intercepts less the last intercept) and tests convergence only after a step.
"""

import warnings

import numpy as np
from scipy.sparse import issparse
from sklearn import linear_model as _sk
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model._base import _preprocess_data
from sklearn.linear_model._logistic import _LOGISTIC_SOLVER_CONVERGENCE_MSG
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, validate_data

from rustyml import _native
from rustyml._normal_equations import NormalEquations
from rustyml.math.matmul import dot as _dot
from rustyml.sklearn._dispatch import Unsupported, dense_copy, native_path, require
from rustyml.sklearn._liblinear import fit_liblinear
from rustyml.sklearn._sag import SAG_SOLVERS, fit_sag, warm_start_coef

__all__ = ["LinearRegression", "LogisticRegression"]

_SkLogisticRegression = _sk.LogisticRegression
_SkLinearRegression = _sk.LinearRegression


class LinearRegression(_SkLinearRegression):
    __doc__ = _SkLinearRegression.__doc__

    @native_path(_SkLinearRegression.fit, fits=True)
    def fit(self, X, y, sample_weight=None):
        require(not self.positive, "positive=True")
        self._validate_params()
        X, y = validate_data(
            self,
            X,
            y,
            accept_sparse=["csr", "csc", "coo"],
            y_numeric=True,
            multi_output=True,
            force_writeable=True,
        )
        require(X.dtype == np.float64, f"X of dtype {X.dtype}")
        sparse = issparse(X)
        if sparse:
            # scikit-learn's sparse fit is lsqr, stopped at tol (1e-6) of the least-squares
            # solution this path computes exactly, on a dense copy of at most 2^22 entries.
            X = dense_copy(X)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(
                sample_weight, X, dtype=X.dtype, ensure_non_negative=True
            )
        Xc, yc, X_offset, y_offset, _, _ = _preprocess_data(
            X, y, fit_intercept=self.fit_intercept, copy=self.copy_X, sample_weight=sample_weight
        )
        Xc = np.ascontiguousarray(Xc, dtype=np.float64)
        rhs = np.ascontiguousarray(yc.reshape(len(yc), -1), dtype=np.float64)
        # scikit-learn's sparse path runs lsqr from zero, whose iterates stay in X's row
        # space: it stops near the same minimum-norm solution.
        equations, why = _pseudo_inverse(Xc, self.tol)
        require(why is None, why)
        coef = _least_squares(Xc, rhs, equations)
        residual = rhs - _dot(Xc, coef)
        coef += _least_squares(Xc, residual, equations)
        if not sparse:  # scikit-learn's lsqr path reports neither
            self.rank_ = equations.rank()
            self.singular_ = equations.singular_values()
        self.coef_ = coef.T
        if yc.ndim == 1:
            self.coef_ = np.ravel(self.coef_)
        self._set_intercept(X_offset, y_offset)
        return self


def _pseudo_inverse(Xc, tol):
    """Normal equations for scikit-learn's ``lstsq(Xc, y, cond=tol)``: of ``Xc^T Xc`` for a
    tall ``Xc``, of ``Xc Xc^T`` for a wide one (the minimum-norm solution lies in its row
    space), singular values below ``tol`` times the largest cut off; and why not, if not."""
    n, d = Xc.shape
    if n > d:
        equations = NormalEquations(_dot(Xc.T, Xc), inner=n, cutoff=tol)
    else:
        equations = NormalEquations(_dot(Xc, Xc.T), inner=d, cutoff=tol)
    return equations, equations.unsolvable()


def _least_squares(Xc, rhs, equations):
    """The (pseudo-inverse) least-squares coefficients from normal equations of either shape."""
    if Xc.shape[0] > Xc.shape[1]:
        return equations.solve(_dot(Xc.T, rhs))
    return _dot(Xc.T, equations.solve(rhs))


class LogisticRegression(_SkLogisticRegression):
    __doc__ = _SkLogisticRegression.__doc__

    @native_path(_SkLogisticRegression.fit, fits=True)
    def fit(self, X, y, sample_weight=None):
        if self.solver == "liblinear":
            return self._fit_liblinear(X, y, sample_weight)
        if self.solver in SAG_SOLVERS:
            return self._fit_sag(X, y, sample_weight)
        native_fit = _NATIVE_SOLVERS.get(self.solver)
        require(native_fit is not None, f"solver={self.solver!r}")
        # scikit-learn warns about these spellings in its fit: let it.
        require(self.penalty == "deprecated", f"penalty={self.penalty!r}")
        require(self.l1_ratio is not None and self.l1_ratio == 0, f"l1_ratio={self.l1_ratio!r}")
        require(self.n_jobs is None, "n_jobs")
        require(self.max_iter >= 1, "max_iter=0")
        require(not self.verbose, "verbose output")
        require(not self.dual, "dual=True")
        self._validate_params()
        X, y = validate_data(
            self,
            X,
            y,
            accept_sparse="csr",
            dtype=[np.float64, np.float32],
            order="C",
            accept_large_sparse=True,  # (as scikit-learn's fit, for these solvers)
        )
        require(X.dtype == np.float64, "float32 X")
        if issparse(X):
            # the same objective from the same values (its products summed in another
            # order, as BLAS sums a dense X's): the fit agrees to rounding, as a dense one
            X = dense_copy(X)
        check_classification_targets(y)
        classes = np.unique(y)
        require(len(classes) >= 2, "a single class (scikit-learn's error)")
        codes = np.searchsorted(classes, y)
        weights = self._sample_weights(X, y, classes, codes, sample_weight)
        return native_fit(self, X, classes, codes, weights)

    def _fit_liblinear(self, X, y, sample_weight):
        """scikit-learn's liblinear path (two classes) with liblinear's training replicated:
        the L2 penalty in the primal (TRON, to rounding: its vector operations are BLAS
        calls in scikit-learn) or the dual (coordinate descent), the L1 penalty by newGLMNET
        (both bit for bit)."""
        require(self.penalty == "deprecated", f"penalty={self.penalty!r}")
        require(self.l1_ratio in (0, 1), f"l1_ratio={self.l1_ratio!r}")
        penalty = "l1" if self.l1_ratio == 1 else "l2"
        require(np.isfinite(self.C), "C=inf (scikit-learn's error for liblinear)")
        require(self.n_jobs is None, "n_jobs")
        require(not self.verbose, "verbose output")
        require(not (self.dual and penalty == "l1"), "dual=True with L1 (scikit-learn's error)")
        self._validate_params()
        X, y = validate_data(
            self,
            X,
            y,
            accept_sparse="csr",
            dtype=[np.float64, np.float32],
            order="C",
            accept_large_sparse=False,
        )
        check_classification_targets(y)
        classes = np.unique(y)
        require(len(classes) == 2, "not two classes (scikit-learn's error for liblinear)")
        require(np.max(X) <= 1e30, "X above 1e30 (scikit-learn's error for liblinear)")
        coef, intercept, n_iter = fit_liblinear(
            X,
            y,
            C=self.C,
            fit_intercept=self.fit_intercept,
            intercept_scaling=self.intercept_scaling,
            class_weight=self.class_weight,
            penalty=penalty,
            dual=bool(self.dual),
            max_iter=self.max_iter,
            tol=self.tol,
            random_state=self.random_state,
            sample_weight=sample_weight,
        )
        self.classes_ = classes
        self.coef_, self.intercept_ = coef, intercept
        self.n_iter_ = np.asarray(n_iter, dtype=np.int32)
        return self

    def _fit_sag(self, X, y, sample_weight):
        """scikit-learn's sag/saga path with its SAG training replicated step for step
        (every penalty ``l1_ratio`` and ``C`` give, warm start, dense or CSR float64), so the
        fit is scikit-learn's bit for bit (see ``rustyml.sklearn._sag``)."""
        return fit_sag(self, X, y, sample_weight)

    def _fit_lbfgs(self, X, classes, codes, weights):
        # scikit-learn's run replicated: SciPy's L-BFGS-B iterates (its line searches,
        # memory restarts and stopping tests) on scikit-learn's objective and parameter
        # order, so n_iter_ and the stopping point agree to rounding, converged or cut by
        # max_iter. A decision within rounding of its threshold leaves the fit to
        # scikit-learn (nothing set yet).
        start = self._warm_start_point(X.shape[1], len(classes))
        try:
            fit = _native.machine_learning.fit_sklearn_logistic_lbfgs(
                X,
                codes.astype(np.int64),
                weights,
                n_classes=len(classes),
                c=float(self.C),
                fit_intercept=bool(self.fit_intercept),
                max_iter=int(self.max_iter),
                tol=float(self.tol),
                max_probe_gap=_LBFGS_PROBE_GAP,
                **start,
            )
        except (ValueError, RuntimeError) as why:  # e.g. X too large for the products
            raise Unsupported(f"lbfgs: {why}") from None
        coef, intercept, n_iter, status, _ = fit
        require(
            status != "fragile",
            "lbfgs: a step decision within rounding, or rounding-sized moves change the run",
        )
        if status != "converged":
            _warn_lbfgs_not_converged(status, n_iter, self.max_iter)
        self.classes_ = classes
        self.coef_ = np.asarray(coef, dtype=np.float64)
        self.intercept_ = np.asarray(intercept, dtype=np.float64)
        self.n_iter_ = np.array([n_iter], dtype=np.int32)
        return self

    def _warm_start_point(self, n_features, n_classes):
        """The previous fit's coefficients and intercepts where ``warm_start`` starts there
        (as keyword arguments of the native fit); a previous fit of another shape is left
        to scikit-learn (its error)."""
        n_out = 1 if n_classes == 2 else n_classes
        warm = warm_start_coef(self, n_out, n_features + int(self.fit_intercept))
        if warm is None:
            return {}
        start = {"start_coef": np.ascontiguousarray(warm[:, :n_features], dtype=np.float64)}
        if self.fit_intercept:
            start["start_intercept"] = np.ascontiguousarray(warm[:, -1], dtype=np.float64)
        return start

    def _fit_newton_cholesky(self, X, classes, codes, weights):
        # The same Newton steps and stopping rule as scikit-learn's, so a run ends at its
        # point to rounding after the same iterations, converged or cut by max_iter (then
        # centred all the same, as scikit-learn's finalize does, with its warning). Where
        # scikit-learn would go on with L-BFGS, or a step decision lies within rounding of
        # its threshold, the native run says so and scikit-learn's fit runs.
        native = self._native_model("newton-cholesky", X, codes, weights)
        stop = native.stop_
        require(
            stop in ("converged", "max_iter"),
            "newton-cholesky: a Hessian or line search scikit-learn hands to lbfgs, "
            "or a step decision within rounding",
        )
        if stop == "max_iter":
            # NewtonSolver.solve's warning (stacklevel 1: it names the solver's line, as
            # scikit-learn's names its own), raised before any attribute is set.
            warnings.warn(
                f"Newton solver did not converge after {int(native.n_iter_)} iterations.",
                ConvergenceWarning,
            )
        return self._set_fitted(native, classes)

    def _fit_newton_cg(self, X, classes, codes, weights):
        # scikit-learn's newton-cg directions and stopping rule; only runs whose every Wolfe
        # line search takes its first trial step are replicated (MINPACK's refinement is
        # not), so the iterates and n_iter_ agree to rounding where the door answers. A run
        # cut by max_iter stays scikit-learn's: its warning prints the loss of its own last
        # iterate (``failed to converge at loss = ...``), a double the native run only
        # matches to rounding.
        native = self._native_model("newton-cg", X, codes, weights)
        stop = native.stop_
        require(
            stop != "max_iter",
            "newton-cg cut by max_iter (scikit-learn's warning prints its own loss value)",
        )
        require(
            stop == "converged",
            "newton-cg: a line search past its first trial, or a decision within rounding",
        )
        return self._set_fitted(native, classes)

    def _native_model(self, solver, X, codes, weights):
        """rustyml's fit of this problem with ``solver`` (``C=inf``: no penalty), started
        where ``warm_start`` starts scikit-learn's run."""
        penalised = bool(np.isfinite(self.C))
        native = _native.machine_learning.LogisticRegression(
            penalty="l2" if penalised else None,
            C=float(self.C) if penalised else 1.0,  # unused without a penalty
            fit_intercept=bool(self.fit_intercept),
            max_iter=int(self.max_iter),
            tol=float(self.tol),
            solver=solver,
            learning_rate=0.1,  # unused by the Newton solvers
        )
        start = self._warm_start_point(X.shape[1], int(codes.max()) + 1)
        try:
            native.fit_weighted(X, codes.astype(np.float64), weights, **start)
        except (ValueError, RuntimeError) as why:  # e.g. X too large for the products
            raise Unsupported(f"{solver}: {why}") from None
        return native

    def _set_fitted(self, native, classes):
        n_features = np.asarray(native.coef_).shape[-1]
        self.classes_ = classes
        self.coef_ = np.asarray(native.coef_, dtype=np.float64).reshape(-1, n_features)
        intercept = np.asarray(native.intercept_, dtype=np.float64).reshape(-1)
        self.intercept_ = intercept if self.fit_intercept else np.zeros_like(intercept)
        self.n_iter_ = np.array([int(native.n_iter_)], dtype=np.int32)
        return self

    def _sample_weights(self, X, y, classes, codes, sample_weight):
        """scikit-learn's per-sample weights: ``sample_weight`` (ones if absent) times the
        class weight of each sample's class; ``None`` when neither is given. Input that
        scikit-learn's checks refuse, and negative weights, which it accepts but which make
        the objective non-convex, are left to its own fit."""
        if sample_weight is None and self.class_weight is None:
            return None
        try:
            weights = _check_sample_weight(sample_weight, X, dtype=X.dtype, copy=True)
            if self.class_weight is not None:
                per_class = compute_class_weight(
                    self.class_weight, classes=classes, y=y, sample_weight=weights
                )
                weights *= per_class[codes]
        except (TypeError, ValueError) as why:
            raise Unsupported(f"sample or class weights scikit-learn refuses ({why})") from None
        require(np.all(weights >= 0), "negative sample weights")
        require(np.sum(weights) > 0, "sample weights sum to zero")
        return weights


# The door answers where a native run and its probe (the same run with rounding-sized moves
# of every value and gradient entry) end within this distance of each other, relative to
# the coefficients' scale: such runs are stable under the rounding that tells SciPy's run
# from the native one. Runs that amplify rounding (hundreds of iterations on ill-conditioned
# problems) part further and are left to scikit-learn.
_LBFGS_PROBE_GAP = 1e-8

# SciPy's status and message for each way an unconverged native lbfgs run ended.
_LBFGS_ENDS = {
    "max_iter": (1, "STOP: TOTAL NO. OF ITERATIONS REACHED LIMIT"),
    "max_fun": (1, "STOP: TOTAL NO. OF F,G EVALUATIONS EXCEEDS LIMIT"),
    "line_search": (2, "ABNORMAL: "),
}


def _warn_lbfgs_not_converged(status, n_iter, max_iter):
    """scikit-learn's ConvergenceWarning for an lbfgs run that SciPy reports unconverged
    (``_check_optimize_result``'s text)."""
    code, message = _LBFGS_ENDS[status]
    text = f"lbfgs failed to converge after {n_iter} iteration(s) (status={code}):\n{message}\n"
    if n_iter == max_iter:
        text += (
            f"\nIncrease the number of iterations to improve the convergence (max_iter={max_iter})."
        )
    text += (
        "\nYou might also want to scale the data as shown in:\n"
        "    https://scikit-learn.org/stable/modules/preprocessing.html"
        "\n" + _LOGISTIC_SOLVER_CONVERGENCE_MSG
    )
    warnings.warn(text, ConvergenceWarning, stacklevel=4)


# The solvers LogisticRegression's door runs natively, each by its own method.
_NATIVE_SOLVERS = {
    "lbfgs": LogisticRegression._fit_lbfgs,
    "newton-cholesky": LogisticRegression._fit_newton_cholesky,
    "newton-cg": LogisticRegression._fit_newton_cg,
}
