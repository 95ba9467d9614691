"""``sklearn.linear_model`` with rustyml's L-BFGS behind LogisticRegression.

``LogisticRegression`` fits natively with the ``lbfgs`` solver and an L2 penalty (``C``
finite, ``l1_ratio`` 0) on a binary target, dense float64 input without ``sample_weight`` or
``class_weight``, when it converges within ``max_iter`` (else scikit-learn's run is kept):
the same objective (``C`` times the summed log-loss plus half the squared norm of the
coefficients, the intercept unpenalised), the same L-BFGS stopping rule, and scikit-learn's
coefficient layout (one row for two classes). Prediction is scikit-learn's own, from
``coef_`` and ``intercept_``.
"""

import warnings

import numpy as np
from scipy.sparse import issparse
from sklearn import linear_model as _sk
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from rustyml.machine_learning import LogisticRegression as _LogisticRegression
from rustyml.sklearn._dispatch import native_path, require

__all__ = ["LogisticRegression"]

_SkLogisticRegression = _sk.LogisticRegression


class LogisticRegression(_SkLogisticRegression):
    __doc__ = _SkLogisticRegression.__doc__

    @native_path(_SkLogisticRegression.fit, fits=True)
    def fit(self, X, y, sample_weight=None):
        require(sample_weight is None, "sample_weight")
        require(self.solver == "lbfgs", f"solver={self.solver!r}")
        # scikit-learn warns about these spellings in its fit: let it.
        require(self.penalty == "deprecated", f"penalty={self.penalty!r}")
        require(self.l1_ratio is not None and self.l1_ratio == 0, f"l1_ratio={self.l1_ratio!r}")
        require(self.n_jobs is None, "n_jobs")
        require(self.max_iter >= 1, "max_iter=0")
        require(np.isfinite(self.C), "C=inf (no penalty)")
        require(self.class_weight is None, "class_weight")
        require(not self.warm_start, "warm_start")
        require(not self.verbose, "verbose output")
        require(not self.dual, "dual=True")
        require(not issparse(X), "sparse X")
        self._validate_params()
        X, y = validate_data(
            self, X, y, dtype=[np.float64, np.float32], order="C", accept_large_sparse=False
        )
        require(X.dtype == np.float64, "float32 X")
        check_classification_targets(y)
        classes = np.unique(y)
        require(len(classes) >= 2, "a single class (scikit-learn's error)")
        require(len(classes) == 2, "more than two classes")
        codes = np.searchsorted(classes, y).astype(np.float64)
        native = _LogisticRegression(
            penalty="l2",
            C=float(self.C),
            fit_intercept=bool(self.fit_intercept),
            max_iter=int(self.max_iter),
            tol=float(self.tol),
            solver="lbfgs",
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            native.fit(X, codes)
        n_iter = int(np.max(native.n_iter_))
        # Converged, both L-BFGS runs stop at the same optimum within the tolerance; cut
        # short, their iterates differ (other line searches): keep scikit-learn's then.
        require(n_iter < self.max_iter, "not converged within max_iter")
        self.classes_ = classes
        self.coef_ = np.asarray(native.coef_, dtype=np.float64).reshape(-1, X.shape[1])
        intercept = np.asarray(native.intercept_, dtype=np.float64).reshape(-1)
        self.intercept_ = intercept if self.fit_intercept else np.zeros_like(intercept)
        self.n_iter_ = np.array([n_iter], dtype=np.int32)
        return self
