from rustyml import _native
from rustyml._base import (
    BaseEstimator,
    ClassifierMixin,
    RegressorMixin,
    available_if,
    param_constraints,
)
from rustyml._validation import as_float_array, fit_array, target_array
from rustyml.machine_learning._labels import decode_labels, fitted_classes, prepare_labels


class DecisionTree(BaseEstimator):
    """Decision tree classifier (``is_classifier=True``) or regressor.

    ``algorithm`` picks the classification criterion: ``"cart"`` (gini impurity), ``"id3"``
    (information gain) or ``"c45"`` (gain ratio among splits of at least average gain). All
    splits are binary thresholds at midpoints between consecutive distinct values; a sample
    goes left when ``x[feature] <= threshold``. Regression trees minimise the squared error
    whatever ``algorithm`` says. ``random_state`` only reorders features to break ties between
    equally good splits; ``None`` keeps the lowest feature index, so every fit is reproducible.
    """

    _native_class = _native.machine_learning.DecisionTree
    _param_constraints = param_constraints(
        {
            "max_depth": ("int", "none"),
            "min_samples_split": ("int",),
            "min_samples_leaf": ("int",),
            "random_state": ("int", "none"),
        }
    )

    def __init__(
        self,
        algorithm="cart",
        is_classifier=True,
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=1,
        random_state=None,
    ):
        self.algorithm = algorithm
        self.is_classifier = is_classifier
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.random_state = random_state

    @property
    def _estimator_type(self):
        return "classifier" if self.is_classifier else "regressor"

    def fit(self, X, y):
        """Fit to ``X`` (n_samples, n_features) and ``y`` (labels or targets). Returns ``self``."""
        X = fit_array(X)
        native = self._build_native(
            self.algorithm,
            self.is_classifier,
            self.max_depth,
            self.min_samples_split,
            self.min_samples_leaf,
            self.random_state,
        )
        if self.is_classifier:
            y_native, encoded = prepare_labels(y, self)
            native.fit(X, y_native)
            self.classes_ = fitted_classes(y, native.classes_, encoded)
            self.n_classes_ = len(self.classes_)
            self._encoded_labels = encoded is not None
        else:
            native.fit(X, target_array(y, self))
        self._native = native
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        """Predicted class labels (classifier) or values (regressor)."""
        native = self._check_fitted()
        pred = native.predict(as_float_array(X, "X", 2))
        if self.is_classifier:
            return decode_labels(pred, self.classes_, self._encoded_labels)
        return pred

    @available_if(lambda self: self.is_classifier, "only when is_classifier=True")
    def predict_proba(self, X):
        """Class probabilities (n_samples, n_classes), columns in ``classes_`` order (only
        when ``is_classifier=True``)."""
        native = self._check_fitted()
        return native.predict_proba(as_float_array(X, "X", 2))

    def score(self, X, y):
        """Accuracy (classifier) or R² (regressor) of ``predict(X)`` against ``y``."""
        mixin = ClassifierMixin if self.is_classifier else RegressorMixin
        return mixin.score(self, X, y)

    def get_depth(self):
        """Depth of the tree (0 for a single leaf)."""
        return self._check_fitted().get_depth()

    def get_n_leaves(self):
        """Number of leaves."""
        return self._check_fitted().get_n_leaves()

    @property
    def node_count_(self):
        return self._check_fitted().node_count

    @property
    def feature_importances_(self):
        return self._check_fitted().feature_importances_
