"""``sklearn.tree`` with rustyml's replica of scikit-learn's tree builder behind
DecisionTreeClassifier, DecisionTreeRegressor, ExtraTreeClassifier and ExtraTreeRegressor.

The replica (``machine_learning::sklearn_tree`` in the crate) repeats scikit-learn's
splitters (dense and sparse) and its two builders step for step: the same feature draws from the same seed,
the same in-place sorts and partitions, the same sums in the same order. So a native fit is
scikit-learn's tree to the bit (thresholds, node values, impurities, weights), and
``tree_`` is a genuine scikit-learn ``Tree`` built from its nodes: ``predict``,
``predict_proba``, ``apply``, ``decision_path``, ``feature_importances_``, cost-complexity
pruning, pickling and ``clone`` are scikit-learn's own code over it.

A fit runs natively for finite input, dense or sparse (CSC, as scikit-learn converts it),
the ``best`` and ``random`` splitters, the criteria ``gini``, ``entropy`` / ``log_loss``,
``squared_error`` and ``poisson``, one or several outputs, ``sample_weight`` and ``class_weight`` (not
negative), ``max_features``, ``min_weight_fraction_leaf``, ``min_impurity_decrease`` and
``max_leaf_nodes`` (best-first growth, its frontier heap kept as libstdc++'s heap functions
keep it, as in scikit-learn's Linux builds). Otherwise (missing values, sparse input with
64-bit indices, ``monotonic_cst``, the ``absolute_error`` criterion,
``check_input=False``) scikit-learn's own fit runs. The fit validates its input with
scikit-learn's functions and draws the one number from ``random_state`` that scikit-learn's
splitter draws, so a shared ``RandomState`` advances as it would.
"""

import math
import numbers

import numpy as np
from scipy.sparse import issparse
from sklearn import tree as _sk
from sklearn.tree._tree import NODE_DTYPE, Tree
from sklearn.utils import check_random_state, compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, validate_data

from rustyml import _native
from rustyml.sklearn._dispatch import Unsupported, native_path, require

__all__ = [
    "DecisionTreeClassifier",
    "DecisionTreeRegressor",
    "ExtraTreeClassifier",
    "ExtraTreeRegressor",
]

_SkDecisionTreeClassifier = _sk.DecisionTreeClassifier
_SkDecisionTreeRegressor = _sk.DecisionTreeRegressor
_SkExtraTreeClassifier = _sk.ExtraTreeClassifier
_SkExtraTreeRegressor = _sk.ExtraTreeRegressor

# scikit-learn's splitter seeds its generator with one draw below RAND_R_MAX
_RAND_R_MAX = 2147483647
_CLASSIFICATION_CRITERIA = ("gini", "entropy", "log_loss")


def _check_params(est, classifier):
    # scikit-learn reserves 2 max_leaf_nodes - 1 nodes up front, a MemoryError for absurd sizes
    huge = est.max_leaf_nodes is not None and est.max_leaf_nodes > 2**32
    require(not huge, "max_leaf_nodes beyond what scikit-learn can reserve")
    require(est.monotonic_cst is None, "monotonic_cst")
    if classifier:
        require(est.criterion in _CLASSIFICATION_CRITERIA, f"criterion={est.criterion!r}")
    else:
        require(est.criterion in ("squared_error", "poisson"), f"criterion={est.criterion!r}")


def _max_features(est, n_features):
    mf = est.max_features
    if mf is None:
        return n_features
    if isinstance(mf, str):
        return max(1, int(np.sqrt(n_features) if mf == "sqrt" else np.log2(n_features)))
    if isinstance(mf, numbers.Integral):
        return mf
    return max(1, int(mf * n_features)) if mf > 0.0 else 0


def _fit_tree(est, X, y, sample_weight, check_input, classifier):
    """scikit-learn's ``BaseDecisionTree._fit`` with the tree grown by the replica."""
    require(check_input, "check_input=False")
    est._validate_params()
    _check_params(est, classifier)
    random_state = check_random_state(est.random_state)
    X, y = validate_data(
        est,
        X,
        y,
        validate_separately=(
            {"dtype": np.float32, "accept_sparse": "csc", "ensure_all_finite": False},
            {"ensure_2d": False, "dtype": None},
        ),
    )
    if issparse(X):
        X.sort_indices()  # as scikit-learn's fit does, in place
        int32 = X.indices.dtype == np.intc and X.indptr.dtype == np.intc
        require(int32, "sparse X with 64-bit indices")
        require(X.has_canonical_format, "sparse X with repeated entries")
        require(bool(np.isfinite(X.data).all()), "missing or infinite values in X")
        data, sparse = None, (X.shape[0], X.indptr, X.indices, X.data)
    else:
        require(bool(np.isfinite(X).all()), "missing or infinite values in X")
        data, sparse = X, None
    n_samples, n_features = X.shape
    y = np.atleast_1d(y)
    if y.ndim == 1:
        y = y.reshape(-1, 1)
    require(len(y) == n_samples, "X and y of different lengths")
    n_outputs = y.shape[1]
    if classifier:
        check_classification_targets(y)
        codes = np.zeros(y.shape, dtype=np.float64)
        classes = []
        for k in range(n_outputs):
            classes_k, codes[:, k] = np.unique(y[:, k], return_inverse=True)
            classes.append(classes_k)
        n_classes = [len(c) for c in classes]
        target = codes
        class_weight = (
            None if est.class_weight is None else compute_sample_weight(est.class_weight, y)
        )
    else:
        target = np.ascontiguousarray(y, dtype=np.float64)
        n_classes, class_weight = [], None
        if est.criterion == "poisson":  # scikit-learn's errors for these
            require(not np.any(target < 0) and np.sum(target) > 0, "y not fit for poisson")
    max_depth = np.iinfo(np.int32).max if est.max_depth is None else est.max_depth
    min_leaf = est.min_samples_leaf
    if not isinstance(min_leaf, numbers.Integral):
        min_leaf = math.ceil(min_leaf * n_samples)
    min_split = est.min_samples_split
    if not isinstance(min_split, numbers.Integral):
        min_split = max(2, math.ceil(min_split * n_samples))
    min_split = max(min_split, 2 * min_leaf)
    max_features = _max_features(est, n_features)
    require(max_features >= 1, f"max_features={est.max_features!r}")
    if sample_weight is not None:
        sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
    if class_weight is not None:
        sample_weight = class_weight if sample_weight is None else sample_weight * class_weight
    if sample_weight is None:
        min_weight_leaf = est.min_weight_fraction_leaf * n_samples
    else:
        require(bool(np.all(sample_weight >= 0)), "negative sample weights")
        require(bool(np.any(sample_weight > 0)), "no sample of positive weight")
        min_weight_leaf = est.min_weight_fraction_leaf * np.sum(sample_weight)
    # scikit-learn's splitter draws its seed here; put the state back if its fit is to run
    saved = random_state.get_state()
    seed = int(random_state.randint(0, _RAND_R_MAX))
    try:
        arrays = _native.machine_learning.grow_sklearn_tree_arrays(
            data,
            target,
            None if sample_weight is None else np.ascontiguousarray(sample_weight),
            seed,
            sparse=sparse,
            criterion=est.criterion,
            splitter=est.splitter,
            n_classes=n_classes,
            max_features=int(max_features),
            max_depth=int(max_depth),
            min_samples_split=int(min_split),
            min_samples_leaf=int(min_leaf),
            min_weight_leaf=float(min_weight_leaf),
            min_impurity_decrease=float(est.min_impurity_decrease),
            max_leaf_nodes=est.max_leaf_nodes,
        )
    except ValueError as err:  # an input the replica refuses: scikit-learn decides
        random_state.set_state(saved)
        raise Unsupported(f"the native tree refused its input: {err}") from err
    est.n_outputs_ = n_outputs
    est.max_features_ = max_features
    if classifier:
        est.tree_ = sklearn_tree(arrays, n_features, n_classes)
        est.classes_ = classes[0] if n_outputs == 1 else classes
        n_classes = np.array(n_classes, dtype=np.intp)
        est.n_classes_ = n_classes[0] if n_outputs == 1 else n_classes
    else:
        est.tree_ = sklearn_tree(arrays, n_features, [1] * n_outputs)
    est._prune_tree()
    return est


def sklearn_tree(arrays, n_features, n_classes):
    """scikit-learn's ``Tree`` from the replica's node arrays (``n_classes`` per output;
    ones for regression)."""
    left, right, feature, threshold, impurity, counts, weights, go_left, value, depth = arrays
    columns = {
        "left_child": left,
        "right_child": right,
        "feature": feature,
        "threshold": threshold,
        "impurity": impurity,
        "n_node_samples": counts,
        "weighted_n_node_samples": weights,
        "missing_go_to_left": go_left,
    }
    nodes = np.zeros(len(left), dtype=NODE_DTYPE)
    for name, col in columns.items():
        nodes[name] = col
    n_classes = np.asarray(n_classes, dtype=np.intp)
    tree = Tree(n_features, n_classes, len(n_classes))
    values = np.asarray(value).reshape(len(nodes), len(n_classes), int(n_classes.max()))
    tree.__setstate__(
        {
            "max_depth": int(depth),
            "node_count": len(nodes),
            "nodes": nodes,
            "values": np.ascontiguousarray(values),
        }
    )
    return tree


class DecisionTreeClassifier(_SkDecisionTreeClassifier):
    __doc__ = _SkDecisionTreeClassifier.__doc__

    @native_path(_SkDecisionTreeClassifier.fit, fits=True)
    def fit(self, X, y, sample_weight=None, check_input=True):
        return _fit_tree(self, X, y, sample_weight, check_input, classifier=True)


class DecisionTreeRegressor(_SkDecisionTreeRegressor):
    __doc__ = _SkDecisionTreeRegressor.__doc__

    @native_path(_SkDecisionTreeRegressor.fit, fits=True)
    def fit(self, X, y, sample_weight=None, check_input=True):
        return _fit_tree(self, X, y, sample_weight, check_input, classifier=False)


class ExtraTreeClassifier(_SkExtraTreeClassifier):
    __doc__ = _SkExtraTreeClassifier.__doc__

    @native_path(_SkExtraTreeClassifier.fit, fits=True)
    def fit(self, X, y, sample_weight=None, check_input=True):
        return _fit_tree(self, X, y, sample_weight, check_input, classifier=True)


class ExtraTreeRegressor(_SkExtraTreeRegressor):
    __doc__ = _SkExtraTreeRegressor.__doc__

    @native_path(_SkExtraTreeRegressor.fit, fits=True)
    def fit(self, X, y, sample_weight=None, check_input=True):
        return _fit_tree(self, X, y, sample_weight, check_input, classifier=False)
