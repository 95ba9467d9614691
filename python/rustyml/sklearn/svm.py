"""``sklearn.svm`` doors for SVC and LinearSVC.

SVC's fit runs rustyml's replica of scikit-learn's libsvm C-SVC training
(``machine_learning::sklearn_svm`` in the crate): the same zero-weight removal, class
grouping and one-vs-one pair order, libsvm's SMO step for step (second-order working-set
selection, clipping, shrinking and un-shrinking, ``rho``) over kernel values rounded to
float32 as libsvm's cache holds them, and libsvm's support-vector and coefficient layout.
scikit-learn's dense libsvm forms dot products with BLAS ``ddot`` and the replica sums
them in order (as scikit-learn's sparse libsvm does), so the float32 kernel entries, and
with them the iterates, support vectors and ``n_iter_``, come out libsvm's, and the
coefficients agree to rounding. The fitted attributes are the ones scikit-learn's fit
sets, so ``predict``, ``decision_function``, pickling and ``clone`` are scikit-learn's own
code over them.

A fit runs natively for dense input (kernels ``linear``, ``poly``, ``rbf``, ``sigmoid``,
``precomputed`` and callables, whose Gram matrix scikit-learn's own helper computes) and
for sparse input of at most 2^22 entries (read from a dense copy: the replica's ordered
sums are then the sparse libsvm's to the bit; the support vectors and coefficients are
stored sparse, as scikit-learn stores them), ``sample_weight`` and ``class_weight``,
``shrinking`` either way and any ``max_iter``; ``probability=True`` too when ``max_iter``
is unlimited: libsvm's Platt scaling (per pair, a 5-fold cross-validation over the
permutation libsvm's ``std::mt19937`` draws from scikit-learn's seed, then the sigmoid's
Newton fit) sets ``probA_`` / ``probB_``. Otherwise (``probability=True`` with a
limited ``max_iter``, ``verbose``, a class left without a sample of positive weight, a sparse ``X`` for a
callable kernel) scikit-learn's fit runs. ``cache_size`` only sets how many kernel rows
are kept (at least 200 MB). The fit validates with scikit-learn's functions and draws
the seed scikit-learn's fit draws from ``random_state``.

LinearSVC's fit runs rustyml's replica of scikit-learn's liblinear training
(``machine_learning::sklearn_liblinear``): the same sparse rows (a dense X's zeros skipped,
the bias feature last and regularised), zero-weight removal, class grouping and costs, the
dual coordinate descent for the hinge and squared hinge (with its shrinking), TRON in the
primal, the L1-regularised coordinate descent and Crammer-Singer's multi-class solver, each
visiting coordinates in the order liblinear's mt19937 draws them from the one seed
scikit-learn draws from ``random_state``. The coordinate-descent solvers give
scikit-learn's ``coef_``, ``intercept_`` and ``n_iter_`` bit for bit; TRON's vector
operations go through BLAS in scikit-learn's build, so it agrees to rounding (and on
ill-conditioned data, where an ulp of input moves scikit-learn's own TRON result by its
tolerance, to that tolerance). ``verbose``, a single class and combinations liblinear
refuses run scikit-learn's fit.
"""

import warnings

import numpy as np
from scipy import sparse as sp
from sklearn import config_context, get_config
from sklearn import svm as _sk
from sklearn.svm._classes import _validate_dual_parameter
from sklearn.utils import check_random_state
from sklearn.utils._sparse import _align_api_if_sparse
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _num_samples,
    check_consistent_length,
    validate_data,
)

from rustyml import _native
from rustyml.sklearn._dispatch import SPARSE_DENSE_MAX, Unsupported, native_path, require
from rustyml.sklearn._liblinear import fit_liblinear

__all__ = ["SVC", "LinearSVC"]

_SkSVC = _sk.SVC
_SkLinearSVC = _sk.LinearSVC


class SVC(_SkSVC):
    __doc__ = _SkSVC.__doc__

    # libsvm takes these as C ints
    _INT_MAX = np.iinfo(np.intc).max

    @native_path(_SkSVC.fit, fits=True)
    def fit(self, X, y, sample_weight=None):
        # scikit-learn's fit is wrapped by `_fit_context`: its parameter check, then nested
        # validation skipped
        if not get_config()["skip_parameter_validation"]:
            self._validate_params()
        with config_context(skip_parameter_validation=True):
            return self._fit_libsvm_replica(X, y, sample_weight)

    def _check_supported(self, X):
        """`Unsupported` for what the replica leaves to scikit-learn, before any change."""
        if self.probability not in (False, "deprecated"):
            # libsvm's fold models would report hitting max_iter through its status
            require(self.max_iter == -1, "probability=True with a limited max_iter")
        if sp.issparse(X):
            require(not callable(self.kernel), "sparse X for a callable kernel")
            require(self.kernel != "precomputed", "a sparse precomputed kernel")
        require(not self.verbose, "verbose")
        require(self.degree <= self._INT_MAX, "degree beyond a C int")
        require(self.max_iter <= self._INT_MAX, "max_iter beyond a C int")

    def _fit_libsvm_replica(self, X, y, sample_weight):
        """scikit-learn's ``BaseLibSVM.fit`` for C-SVC, libsvm's training replaced by the
        replica; the checks, warnings and attributes in scikit-learn's order."""
        self._check_supported(X)
        rnd = check_random_state(self.random_state)
        self._sparse = sp.issparse(X)
        if callable(self.kernel):
            check_consistent_length(X, y)
        else:
            X, y = validate_data(
                self,
                X,
                y,
                dtype=np.float64,
                order="C",
                accept_sparse="csr",
                accept_large_sparse=False,
            )
        # errors scikit-learn raises further on, and the inputs it would reject in libsvm's
        # wrapper: leave them to its fit, before the warnings of target validation
        weights = np.asarray([] if sample_weight is None else sample_weight, dtype=np.float64)
        n_samples = _num_samples(X)
        require(weights.ndim == 1, "sample_weight not one-dimensional")
        require(weights.shape[0] in (0, n_samples), "sample_weight of another length")
        if self.kernel == "precomputed":
            require(X.shape[0] == X.shape[1], "a precomputed kernel that is not square")
        require(_each_class_weighs(y, weights), "a class without a sample of positive weight")
        if self._sparse:
            _check_sparse_copy(X)

        y = self._validate_targets(y)
        self._effective_probability = False
        if self.probability != "deprecated":
            _warn_probability_deprecated()
            self._effective_probability = bool(self.probability)
        require(n_samples == y.shape[0], "X and y of different lengths")
        kernel = "precomputed" if callable(self.kernel) else self.kernel
        if kernel == "precomputed":
            self._gamma = 0.0
        elif isinstance(self.gamma, str):
            if self.gamma == "scale":
                X_var = (X.multiply(X)).mean() - (X.mean()) ** 2 if self._sparse else X.var()
                self._gamma = 1.0 / (X.shape[1] * X_var) if X_var != 0 else 1.0
            else:
                self._gamma = 1.0 / X.shape[1]
        else:
            self._gamma = self.gamma
        # scikit-learn draws libsvm's seed (used by Platt scaling only) all the same; put
        # the state back if its fit is to run after all
        saved = rnd.get_state()
        seed = int(rnd.randint(np.iinfo("i").max))
        gram = X
        if self._sparse:
            # as scikit-learn's sparse fit does to the validated matrix, in place
            X.data = np.asarray(X.data, dtype=np.float64, order="C")
            X.sort_indices()
            # the replica sums each dense row in order: with the zero products adding
            # nothing, that is the sparse libsvm's merge of stored entries
            gram = X.toarray()
        if callable(self.kernel):
            self._BaseLibSVM__Xfit = X
            gram = self._compute_kernel(X)
            if gram.shape[0] != gram.shape[1]:
                raise ValueError("X.shape[0] should be equal to X.shape[1]")
        try:
            rows = self._store_replica_fit(gram, y, weights, kernel, seed)
        except Unsupported:
            rnd.set_state(saved)
            raise
        if self._sparse:
            self._store_sparse_layout(X, rows)
        self._warn_from_fit_status()
        self.shape_fit_ = X.shape if hasattr(X, "shape") else (n_samples,)
        self._intercept_ = self.intercept_.copy()
        self._dual_coef_ = self.dual_coef_
        if len(self.classes_) == 2:
            self.intercept_ *= -1
            self.dual_coef_ = -self.dual_coef_
        dual_coef = self._dual_coef_.data if self._sparse else self._dual_coef_
        finite = np.isfinite(self._intercept_).all() and np.isfinite(dual_coef).all()
        if not finite:
            raise ValueError(
                "The dual coefficients or intercepts are not finite."
                " The input data may contain large values and need to be"
                " preprocessed."
            )
        self.n_iter_ = self._num_iter
        return self

    def _store_replica_fit(self, X, codes, weights, kernel, seed):
        """Trains the replica and sets the attributes libsvm's wrapper returns."""
        n_samples = X.shape[0]
        if weights.shape[0] == 0:
            weights = np.ones(n_samples, dtype=np.float64)
        # the Gram matrix of a callable kernel may hold anything: libsvm's answer then
        require(bool(np.isfinite(X).all()), "a Gram matrix with non-finite values")
        try:
            fitted = _native.machine_learning.fit_sklearn_svc(
                np.ascontiguousarray(X, dtype=np.float64),
                codes.astype(np.int64),
                len(self.classes_),
                np.ascontiguousarray(weights),
                np.ascontiguousarray(self.class_weight_, dtype=np.float64),
                kernel=kernel,
                degree=int(self.degree),
                gamma=float(self._gamma),
                coef0=float(self.coef0),
                c=float(self.C),
                tol=float(self.tol),
                shrinking=bool(self.shrinking),
                max_iter=int(self.max_iter),
                cache_bytes=int(max(float(self.cache_size), 200.0) * (1 << 20)),
                probability_seed=seed if self._effective_probability else None,
            )
        except ValueError as err:  # an input the replica refuses: scikit-learn decides
            raise Unsupported(f"the replica refused its input: {err}") from err
        support, rows, n_support, dual_coef, intercept, n_iter, hit_max_iter, prob_a, prob_b = (
            fitted
        )
        self.support_ = support
        if kernel == "precomputed" or self._sparse:
            self.support_vectors_ = np.empty((0, 0), dtype=np.float64)
        else:
            self.support_vectors_ = np.ascontiguousarray(X[rows])
        self._n_support = n_support
        self.dual_coef_ = dual_coef
        self.intercept_ = intercept
        self._probA = prob_a
        self._probB = prob_b
        self.fit_status_ = int(hit_max_iter)
        self._num_iter = n_iter
        return rows

    def _store_sparse_layout(self, X, rows):
        """The support vectors and coefficients as scikit-learn's sparse fit stores them:
        the support rows' stored entries, and the coefficients as a CSR matrix."""
        sv = X[rows]
        self.support_vectors_ = _align_api_if_sparse(
            sp.csr_array(
                (
                    np.asarray(sv.data, dtype=np.float64),
                    np.asarray(sv.indices, dtype=np.int32),
                    np.asarray(sv.indptr, dtype=np.int32),
                ),
                (len(rows), X.shape[1]),
            )
        )
        n_class = len(self.classes_) - 1
        n_sv = len(rows)
        if not n_sv:
            self.dual_coef_ = _align_api_if_sparse(sp.csr_array([[]]))
            return
        indices = np.tile(np.arange(n_sv), n_class)
        indptr = np.arange(0, indices.size + 1, indices.size / n_class)
        self.dual_coef_ = _align_api_if_sparse(
            sp.csr_array((self.dual_coef_.ravel(), indices, indptr), (n_class, n_sv))
        )


def _each_class_weighs(y, weights):
    """Whether every class keeps a sample of positive weight (libsvm drops the others and
    would train fewer classes); True when ``y`` is not yet a valid target (scikit-learn's
    target checks then raise their own errors)."""
    if weights.shape[0] == 0:
        return True
    try:
        classes, codes = np.unique(np.ravel(y), return_inverse=True)
    except TypeError:
        return True
    if codes.shape[0] != weights.shape[0]:
        return True
    kept = np.zeros(len(classes), dtype=bool)
    kept[codes[weights > 0]] = True
    return bool(kept.all())


def _check_sparse_copy(X):
    """`Unsupported` for a sparse ``X`` the replica cannot read as libsvm does: one too
    large for a dense copy, or with repeated entries (libsvm's merge would read each)."""
    require(X.shape[0] * X.shape[1] <= SPARSE_DENSE_MAX, "sparse X too large to copy")
    if not X.has_canonical_format:
        probe = X.copy()
        probe.sort_indices()
        require(probe.has_canonical_format, "sparse X with repeated entries")


def _warn_probability_deprecated():

    warnings.warn(
        "The `probability` parameter was deprecated in 1.9 and "
        "will be removed in version 1.11. "
        "Use `CalibratedClassifierCV(SVC(), ensemble=False)` "
        "instead of `SVC(probability=True)`",
        FutureWarning,
    )


# scikit-learn's LinearSVC with liblinear's training replicated in the crate
# (``machine_learning::sklearn_liblinear``): the same sparse rows (zeros of a dense ``X``
# skipped, the bias feature last), the same class grouping, per-sample C and one-vs-rest
# problems, and the same coordinate orders (``std::mt19937`` seeded by the one number
# scikit-learn draws from ``random_state``). The coordinate-descent solvers (``loss="hinge"``;
# ``"squared_hinge"`` when ``dual`` resolves to True; ``penalty="l1"``) give scikit-learn's
# ``coef_``, ``intercept_`` and ``n_iter_`` to the bit, as does ``multi_class="crammer_singer"``
# (one joint problem over the classes); TRON (``"squared_hinge"`` with the L2 penalty and
# ``dual`` resolving to False) agrees to rounding (scikit-learn hands its vector operations
# to BLAS). ``verbose`` runs scikit-learn's fit.
class LinearSVC(_SkLinearSVC):
    __doc__ = _SkLinearSVC.__doc__

    @native_path(_SkLinearSVC.fit, fits=True)
    def fit(self, X, y, sample_weight=None):
        self._validate_params()
        require(not self.verbose, "verbose: liblinear's progress output")
        require(self.multi_class in ("ovr", "crammer_singer"), "an unknown multi_class")
        # combinations liblinear lacks are scikit-learn's errors to raise (Crammer-Singer
        # ignores penalty, loss and dual)
        lacking = self.multi_class == "ovr" and (
            (self.loss == "hinge" and (self.penalty == "l1" or self.dual is False))
            or (self.penalty == "l1" and self.dual is True)
        )
        require(not lacking, f"no liblinear solver for {self.penalty}/{self.loss}/dual={self.dual}")
        X, y = validate_data(
            self,
            X,
            y,
            accept_sparse="csr",
            dtype=np.float64,
            order="C",
            accept_large_sparse=False,
        )
        check_classification_targets(y)
        dual = _validate_dual_parameter(self.dual, self.loss, self.penalty, self.multi_class, X)
        coef, intercept, n_iter = fit_liblinear(
            X,
            y,
            C=self.C,
            fit_intercept=self.fit_intercept,
            intercept_scaling=self.intercept_scaling,
            class_weight=self.class_weight,
            penalty=self.penalty,
            dual=dual,
            max_iter=self.max_iter,
            tol=self.tol,
            random_state=self.random_state,
            multi_class=self.multi_class,
            loss=self.loss,
            sample_weight=sample_weight,
        )
        self.classes_ = np.unique(y)
        self.coef_, self.intercept_ = coef, intercept
        self.n_iter_ = n_iter.max().item()
        if self.multi_class == "crammer_singer" and len(self.classes_) == 2:
            # scikit-learn keeps one row for two classes: the second class's minus the first's
            self.coef_ = (coef[1] - coef[0]).reshape(1, -1)
            if self.fit_intercept:
                self.intercept_ = np.array([intercept[1] - intercept[0]])
        return self
