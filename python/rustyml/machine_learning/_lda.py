import numpy as np

from rustyml import _native
from rustyml._base import BaseEstimator, ClassifierMixin, param_constraints
from rustyml._validation import as_float_array, fit_array
from rustyml.machine_learning._labels import decode_labels, fitted_classes, prepare_labels


class LDA(ClassifierMixin, BaseEstimator):
    """Linear discriminant analysis, like scikit-learn's ``LinearDiscriminantAnalysis``.

    A classifier with a covariance shared by all classes, and a supervised projection
    (``transform``) onto at most ``min(n_classes - 1, n_features)`` discriminant directions.
    ``solver="svd"`` works with singular covariances; ``solver="eigen"`` solves the generalised
    eigenproblem and refuses a singular within-class covariance. No shrinkage.
    """

    _native_class = _native.machine_learning.LDA
    _param_constraints = param_constraints(
        {
            "n_components": ("int", "none"),
            "tol": ("real",),
        }
    )

    def __init__(self, solver="svd", n_components=None, priors=None, tol=1e-4):
        self.solver = solver
        self.n_components = n_components
        self.priors = priors
        self.tol = tol

    def fit(self, X, y):
        """Fit to ``X`` (n_samples, n_features) and labels ``y``. Returns ``self``."""
        X = fit_array(X)
        y_labels = y
        y, classes = prepare_labels(y, self)
        priors = None if self.priors is None else [float(p) for p in np.ravel(self.priors)]
        native = self._build_native(self.solver, self.n_components, priors, self.tol)
        native.fit(X, y)
        self._native = native
        self.classes_ = fitted_classes(y_labels, native.classes_, classes)
        self._encoded = classes is not None
        self.n_features_in_ = X.shape[1]
        return self

    def transform(self, X):
        """Project ``X`` onto the discriminant directions, shape (n, n_components)."""
        return self._check_fitted().transform(as_float_array(X, "X", 2))

    def fit_transform(self, X, y):
        """``fit(X, y).transform(X)``."""
        return self.fit(X, y).transform(X)

    def decision_function(self, X):
        """Class scores: shape (n,) for two classes (positive favours ``classes_[1]``),
        (n, n_classes) otherwise."""
        scores = self._check_fitted().decision_function(as_float_array(X, "X", 2))
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict_proba(self, X):
        """Class probabilities, shape (n, n_classes)."""
        return self._check_fitted().predict_proba(as_float_array(X, "X", 2))

    def predict_log_proba(self, X):
        """Natural log of ``predict_proba``."""
        return np.log(self.predict_proba(X))

    def predict(self, X):
        """Predicted labels for ``X``."""
        pred = self._check_fitted().predict(as_float_array(X, "X", 2))
        return decode_labels(pred, self.classes_, self._encoded)

    @property
    def means_(self):
        return self._check_fitted().means_

    @property
    def priors_(self):
        return self._check_fitted().priors_

    @property
    def xbar_(self):
        return self._check_fitted().xbar_

    @property
    def scalings_(self):
        return self._check_fitted().scalings_

    @property
    def explained_variance_ratio_(self):
        return self._check_fitted().explained_variance_ratio_

    @property
    def coef_(self):
        return self._check_fitted().coef_

    @property
    def intercept_(self):
        return self._check_fitted().intercept_


LinearDiscriminantAnalysis = LDA
