"""``sklearn.decomposition`` with rustyml's engines behind PCA.

``PCA`` fits natively where scikit-learn would take an exact solver
(``svd_solver`` "full" or "covariance_eigh", or "auto" resolving to one of them, or
"arpack" run to machine precision, ``tol=0``, on at most 1,000 features with the kept
components' eigenvalues apart from the rest), and on float64 input with the randomized
solver. Sparse input (where scikit-learn takes it: "arpack", "covariance_eigh", or
"auto", which is "arpack" for it) is fitted from a dense copy of at most 2^22 entries.
Tall data (``n_samples >= n_features``): the engine returns the whole spectrum of
the covariance (signs as scikit-learn's ``svd_flip`` sets them). Wide data: the Gram matrix
of the centred rows from the product engine, whose eigenvectors give the right singular
vectors. Randomized: scikit-learn's range finder on the same Gaussian draws, every product
on the product engine; the sampled range depends on the draws alone, so the answer is
scikit-learn's to rounding. The rest (``n_components`` as an int, a variance fraction or
"mle", ``noise_variance_``, truncation) follows scikit-learn's definitions here. A tie in
the kept spectrum, a sign that ``svd_flip`` would decide between two opposite entries of
one size, or an axis of zero variance kept leaves the answer to LAPACK's rounding, and so
to scikit-learn's own fit. Transform, inverse transform and scoring are scikit-learn's own,
on those attributes.
"""

import numbers

import numpy as np
import scipy.linalg
from scipy.sparse import issparse
from sklearn import decomposition as _sk
from sklearn.decomposition._pca import _infer_dimension
from sklearn.utils import check_random_state
from sklearn.utils._arpack import _init_arpack_v0
from sklearn.utils.extmath import svd_flip
from sklearn.utils.validation import validate_data

from rustyml.machine_learning import PCA as _PCA
from rustyml.math.matmul import dot as _dot
from rustyml.sklearn._dispatch import dense_copy, native_path, require

__all__ = ["PCA"]

_SkPCA = _sk.PCA
# Above this many features the whole spectrum costs more than ARPACK's few components.
_ARPACK_MAX_FEATURES = 1_000
# The kept and the dropped eigenvalues must be apart by more than this (relative to the
# largest) for ARPACK's subspace to be rounding's choice-free.
_MIN_GAP = 1e-6
_EPS = np.finfo(np.float64).eps


def _native_solver(est, X, sparse):
    """scikit-learn's solver choice for ``X`` (``sparse`` if given as a sparse matrix)
    when rustyml runs it, else None."""
    n_samples, n_features = X.shape
    n_components = min(X.shape) if est.n_components is None else est.n_components
    solver = est.svd_solver
    if solver == "auto" and sparse:
        solver = "arpack"
    if solver == "auto":
        if n_features <= 1_000 and n_samples >= 10 * n_features:
            return "covariance_eigh"
        if max(X.shape) <= 500 or n_components == "mle":
            return "full"
        if 1 <= n_components < 0.8 * min(X.shape):
            return "randomized"
        return "full"
    if solver == "arpack" and est.tol == 0 and n_features <= _ARPACK_MAX_FEATURES:
        # ARPACK run to machine precision (tol=0) finds the exact leading subspace: the
        # whole spectrum's first components, when the spectrum is split cleanly there
        return "arpack"
    return solver if solver in ("full", "covariance_eigh", "randomized") else None


class PCA(_SkPCA):
    __doc__ = _SkPCA.__doc__

    @native_path(_SkPCA.fit, fits=True)
    def fit(self, X, y=None):
        self._fit_native(X)
        return self

    @native_path(_SkPCA.fit_transform, fits=True)
    def fit_transform(self, X, y=None):
        X, scores = self._fit_native(X)
        # the randomized solver's scores are U S (or whitened U), which differ from the
        # projection of X by the part of X outside its sampled range: scikit-learn's.
        # Otherwise scikit-learn's projection of the X it has just validated, as its
        # covariance_eigh fit returns it (no second validation)
        return self._transform(X, np, x_is_centered=False) if scores is None else scores

    def _fit_native(self, X):
        self._validate_params()
        sparse = issparse(X)
        require(
            not sparse or self.svd_solver in ("auto", "arpack", "covariance_eigh"),
            f"sparse X with svd_solver={self.svd_solver!r} (scikit-learn's error)",
        )
        X = validate_data(
            self,
            X,
            dtype=[np.float64, np.float32],
            accept_sparse=("csr", "csc"),
            ensure_2d=True,
            copy=False,
        )
        if sparse:
            # the same spectrum from the same values: the exact solvers' answer to
            # rounding, as scikit-learn's implicitly centred sparse fit gives it
            X = dense_copy(X)
        require(isinstance(X, np.ndarray), "an array type NumPy does not own")
        n_samples, n_features = X.shape
        solver = _native_solver(self, X, sparse)
        require(solver is not None, f"svd_solver={self.svd_solver!r}")
        require(n_samples >= 2, "a single sample")
        if self.n_components is not None:
            n_components = self.n_components
        else:
            # arpack finds at most min(X.shape) - 1 components
            n_components = min(X.shape) - (solver == "arpack")
        if solver in ("arpack", "randomized"):
            # scikit-learn's own errors for the rest
            top = min(X.shape) + (solver == "randomized")
            require(
                isinstance(n_components, numbers.Integral) and 1 <= n_components < top,
                f"n_components={n_components!r} with svd_solver={solver!r}",
            )
        if n_components == "mle":
            require(n_samples >= n_features, "'mle' with fewer samples than features")
        elif not 0 <= n_components <= min(n_samples, n_features):
            raise ValueError(
                f"n_components={n_components} must be between 0 and "
                f"min(n_samples, n_features)={min(n_samples, n_features)} with "
                f"svd_solver={solver!r}"
            )
        self._fit_svd_solver = solver
        if solver == "randomized":
            require(X.dtype == np.float64, "float32 X (scikit-learn's randomized SVD runs in it)")
            return X, self._fit_randomized(X, n_components)
        if n_samples >= n_features:
            native = _PCA(n_components=None).fit(np.asarray(X, dtype=np.float64))
            mean = np.asarray(native.mean_, dtype=np.float64)
            variance = np.maximum(np.asarray(native.explained_variance_, dtype=np.float64), 0.0)
            components = np.asarray(native.components_, dtype=np.float64)
            require(len(variance) == n_features, "the engine returned a truncated spectrum")
        else:
            mean, variance, components = _wide_spectrum(np.asarray(X, dtype=np.float64))
        ratio = variance / variance.sum()
        if solver == "arpack":
            gap = variance[n_components - 1] - variance[n_components]
            require(gap > _MIN_GAP * variance[0], "a near-tie at the last component kept")
            # ARPACK's start vector is drawn from random_state: draw it, so that a shared
            # RandomState advances as in scikit-learn
            _init_arpack_v0(min(X.shape), check_random_state(self.random_state))
        if n_components == "mle":
            n_components = _infer_dimension(variance, n_samples)
        elif 0 < n_components < 1.0:
            n_components = int(np.searchsorted(np.cumsum(ratio), n_components, side="right") + 1)
        # A near-tie among the kept components, or between the last kept and the first
        # dropped, leaves their basis to rounding (LAPACK's in scikit-learn's fit); so
        # does a sign decided by two opposite entries of one size.
        require(_well_separated(variance, n_components), "near-equal variances kept")
        # with fewer samples than features the last axis has no variance, and any unit
        # vector orthogonal to the others is LAPACK's choice for it
        kept_rank = n_features if n_samples >= n_features else n_samples - 1
        require(n_components <= kept_rank, "an axis of no variance kept")
        require(_signs_decided(components[:n_components]), "a component's sign hangs on a tie")
        dtype = X.dtype
        self.mean_ = mean.astype(dtype)
        if n_components < min(n_features, n_samples):
            self.noise_variance_ = dtype.type(variance[n_components:].mean())
        else:
            self.noise_variance_ = 0.0
        self.n_samples_ = n_samples
        self.n_components_ = n_components
        self.components_ = components[:n_components].astype(dtype, copy=True)
        self.explained_variance_ = variance[:n_components].astype(dtype, copy=True)
        self.explained_variance_ratio_ = ratio[:n_components].astype(dtype, copy=True)
        self.singular_values_ = np.sqrt(variance[:n_components] * (n_samples - 1)).astype(dtype)
        return X, None

    def _fit_randomized(self, X, n_components):
        """scikit-learn's randomized solver (Halko et al.) on the same Gaussian draws from
        ``random_state``, its products on rustyml's product engine. The range it samples is
        a function of the draws alone (LU, QR or no normalisation between the power
        iterations change the basis, not the span), and the answer a function of that range,
        so the two runs agree to rounding where the sampled spectrum has gaps."""
        n_samples, n_features = X.shape
        random_state = check_random_state(self.random_state)
        mean = X.mean(axis=0)
        centred = X - mean
        wide = n_samples < n_features
        # (the product engine reads transposed views as they are: no copies of the data)
        M = centred.T if wide else centred
        n_iter = self.iterated_power
        if n_iter == "auto":
            n_iter = 7 if n_components < 0.1 * min(X.shape) else 4
        normalizer = self.power_iteration_normalizer
        if normalizer == "auto":
            normalizer = "none" if n_iter <= 2 else "LU"
        Q = random_state.normal(size=(M.shape[1], n_components + self.n_oversamples))
        for _ in range(n_iter):
            Q = _normalised(_dot(M, Q), normalizer)
            Q = _normalised(_dot(M.T, Q), normalizer)
        Q = scipy.linalg.qr(_dot(M, Q), mode="economic")[0]
        Uhat, sv, Vt = scipy.linalg.svd(_dot(Q.T, M), full_matrices=False)
        variance = sv**2
        # the kept values apart from each other and from the next sampled one
        require(_well_separated(variance, n_components), "near-equal singular values kept")
        U = _dot(Q, Uhat[:, :n_components])
        if wide:
            U, Vt = Vt[:n_components].T, U.T
        else:
            Vt = Vt[:n_components]
        require(_signs_decided(Vt), "a component's sign hangs on a tie")
        U, Vt = svd_flip(U, Vt, u_based_decision=False)
        sv = sv[:n_components]
        # squared in place, as scikit-learn does (the products above are done with it)
        total_var = np.sum(np.square(centred, out=centred)) / (n_samples - 1)
        self.mean_ = mean
        self.n_samples_ = n_samples
        self.components_ = Vt
        self.n_components_ = n_components
        self.explained_variance_ = sv**2 / (n_samples - 1)
        self.explained_variance_ratio_ = self.explained_variance_ / total_var
        self.singular_values_ = sv.copy()
        if n_components < min(n_features, n_samples):
            self.noise_variance_ = (total_var - np.sum(self.explained_variance_)) / (
                min(n_features, n_samples) - n_components
            )
        else:
            self.noise_variance_ = 0.0
        return U * (np.sqrt(n_samples - 1) if self.whiten else sv)


def _normalised(Q, normalizer):
    """scikit-learn's normalisation between power iterations (a new basis of the same
    span)."""
    if normalizer == "LU":
        return scipy.linalg.lu(Q, permute_l=True, check_finite=False)[0]
    if normalizer == "QR":
        return scipy.linalg.qr(Q, mode="economic", check_finite=False)[0]
    return Q


def _wide_spectrum(X):
    """Mean, variances and principal axes of ``X`` with fewer samples than features: the
    n x n Gram matrix of the centred rows by the product engine, its eigenvectors U and the
    axes ``U^T X_c / s`` (scikit-learn's SVD's right singular vectors), signs as
    ``svd_flip`` sets them."""
    n_samples = X.shape[0]
    mean = X.mean(axis=0)
    centred = X - mean
    evals, evecs = np.linalg.eigh(_dot(centred, centred.T))
    order = np.argsort(evals)[::-1]
    evals, evecs = np.maximum(evals[order], 0.0), evecs[:, order]
    sv = np.sqrt(evals)
    # The centred rows span at most n - 1 directions: the last singular value is rounding's
    # and so is its axis; an axis from the Gram matrix carries an error of about
    # n eps s_max^2 / (s gap), kept small by the gap check of the caller.
    alive = sv > np.sqrt(n_samples * _EPS) * sv[0]
    axes = np.zeros((n_samples, X.shape[1]))
    axes[alive] = _dot(evecs[:, alive].T, centred) / sv[alive, None]
    signs = np.sign(axes[np.arange(n_samples), np.argmax(np.abs(axes), axis=1)])
    signs[signs == 0] = 1.0
    return mean, evals / (n_samples - 1), axes * signs[:, None]


def _well_separated(variance, count):
    """The first ``count`` variances apart from each other and from the next one by more
    than ``_MIN_GAP`` times the largest (a component with none left is fine)."""
    head = variance[: count + 1]
    return len(head) < 2 or bool(np.all(-np.diff(head) > _MIN_GAP * variance[0]))


def _signs_decided(components):
    """Each component's largest entry in absolute value (the one ``svd_flip`` makes
    positive) stands clear of any entry of the opposite sign."""
    for row in components:
        top = np.abs(row).max()
        rivals = np.abs(row[np.sign(row) != np.sign(row[np.argmax(np.abs(row))])])
        if len(rivals) and top - rivals.max() <= 1e-9 * top:
            return False
    return True
