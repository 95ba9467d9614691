"""Class labels for the classifiers.

Numeric labels go to the native model as float64 as they are (it finds the classes itself);
other labels (strings, objects, integers beyond 2**53) are encoded as codes
``0..n_classes`` first. Predictions come back in the labels' own dtype either way.
"""

import numpy as np

from rustyml._base import BaseEstimator, ClassifierMixin
from rustyml._validation import as_float_array, column_or_1d, fit_array

_EXACT = 2**53  # integers below this survive the float64 round trip


def check_classification_targets(y):
    """Refuse what cannot be class labels: complex values (``ValueError``), NaN or infinity,
    and non-integral floats (scikit-learn's "Unknown label type: continuous"). Returns ``y``."""
    kind = y.dtype.kind
    if kind == "c":
        raise ValueError(f"Complex data not supported: y has dtype {y.dtype}")
    if kind == "f":
        if not np.isfinite(y).all():
            raise ValueError("Input y contains NaN or infinity.")
        if not np.array_equal(y, np.floor(y)):
            raise ValueError(
                "Unknown label type: continuous. Maybe you are trying to fit a classifier, which "
                "expects discrete classes on a regression target with continuous values."
            )
    return y


def prepare_labels(y, estimator):
    """Return ``(y_native, classes)``: float64 labels for the native model, and the sorted
    distinct labels when they had to be encoded (``None`` when numeric labels pass as they
    are). ``None``, complex labels and a wrong dimensionality raise ``ValueError``; a column
    vector is raveled with a ``DataConversionWarning``."""
    y = check_classification_targets(column_or_1d(y, estimator))
    kind = y.dtype.kind
    if kind in "fb" or (
        kind in "iu" and (y.size == 0 or (int(y.min()) > -_EXACT and int(y.max()) < _EXACT))
    ):
        return (y if y.dtype == np.float64 else y.astype(np.float64)), None
    classes, codes = np.unique(y, return_inverse=True)
    return codes.reshape(-1).astype(np.float64), classes


def fitted_classes(y, native_classes, encoded):
    """``classes_`` after a fit: the encoded labels, or the native classes in ``y``'s dtype."""
    if encoded is not None:
        return encoded
    dtype = y.dtype if isinstance(y, np.ndarray) else np.asarray(y).dtype
    return native_classes.astype(dtype)


def decode_labels(pred, classes, encoded):
    """Labels for the native model's predictions (label values, or codes when ``encoded``).

    Each prediction is looked up in the sorted ``classes`` rather than cast, so a prediction
    that is no fitted class (a damaged saved model) is a ``ValueError``, never a garbage
    label."""
    key = np.arange(len(classes), dtype=np.float64) if encoded else classes.astype(np.float64)
    idx = np.searchsorted(key, pred)
    found = idx < len(key)
    found[found] = key[idx[found]] == pred[found]
    if not found.all():
        bad = pred[~found][0]
        raise ValueError(
            f"the model predicted {bad!r}, which is none of its classes: its fitted state is "
            "inconsistent (a damaged saved model?)"
        )
    return classes[idx]


class LabelClassifier(ClassifierMixin, BaseEstimator):
    """A classifier over a native model that takes any labels: they are prepared for the
    native fit (``classes_``, ``_encoded``), and its predictions decoded back."""

    def _native_kwargs(self):
        """The keyword arguments of the native model (the estimator's parameters)."""
        return self.get_params()

    def _fit_labels(self, X, y, fit_native=lambda native, X, y: native.fit(X, y)):
        """Fit a fresh native model to ``X`` and the prepared ``y`` with ``fit_native``;
        the estimator changes only once that succeeds. Returns ``self``."""
        X = fit_array(X)
        y_labels = y
        y, classes = prepare_labels(y, self)
        native = self._build_native(**self._native_kwargs())
        fit_native(native, X, y)
        self._native = native
        self.classes_ = fitted_classes(y_labels, native.classes_, classes)
        self._encoded = classes is not None
        self.n_features_in_ = X.shape[1]
        return self

    def _decision_scores(self, X):
        """The native scores, raveled to shape (n,) when there is one column."""
        scores = self._check_fitted().decision_function(as_float_array(X, "X", 2))
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Predicted labels for ``X``."""
        pred = self._check_fitted().predict(as_float_array(X, "X", 2))
        return decode_labels(pred, self.classes_, self._encoded)
