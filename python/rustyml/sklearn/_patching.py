"""``patch_sklearn`` / ``unpatch_sklearn``: scikit-learn's public names point at the doors.

Patching replaces attributes of scikit-learn's public modules (``sklearn.neighbors.
KNeighborsClassifier``, ``sklearn.metrics.f1_score`` ...), so code that imports from
``sklearn`` *after* the patch gets the doors; names bound before it keep scikit-learn's
(scikit-learn's own modules bind their metrics at import: its scorers keep its functions).
Each door class subclasses the class it replaces, so ``isinstance`` checks, ``clone``,
pickles and scikit-learn's own methods keep working; a metric door is scikit-learn's
function under its own parameter validation. Unpatching puts back the very objects that
were there.
"""

import importlib
import logging
import sys
import threading

from rustyml.sklearn._dispatch import logger

# The scikit-learn names with a door; the door of ``sklearn.X.Name`` is
# ``rustyml.sklearn.X.Name`` (or in the module _DOOR_MODULES names).
_PATCHABLE = (
    "sklearn.cluster.DBSCAN",
    "sklearn.cluster.KMeans",
    "sklearn.cluster.MeanShift",
    "sklearn.decomposition.PCA",
    "sklearn.discriminant_analysis.LinearDiscriminantAnalysis",
    "sklearn.ensemble.IsolationForest",
    "sklearn.linear_model.LinearRegression",
    "sklearn.linear_model.LogisticRegression",
    "sklearn.manifold.TSNE",
    "sklearn.metrics.accuracy_score",
    "sklearn.metrics.adjusted_mutual_info_score",
    "sklearn.metrics.adjusted_rand_score",
    "sklearn.metrics.average_precision_score",
    "sklearn.metrics.balanced_accuracy_score",
    "sklearn.metrics.calinski_harabasz_score",
    "sklearn.metrics.cohen_kappa_score",
    "sklearn.metrics.completeness_score",
    "sklearn.metrics.confusion_matrix",
    "sklearn.metrics.explained_variance_score",
    "sklearn.metrics.f1_score",
    "sklearn.metrics.fbeta_score",
    "sklearn.metrics.fowlkes_mallows_score",
    "sklearn.metrics.homogeneity_completeness_v_measure",
    "sklearn.metrics.homogeneity_score",
    "sklearn.metrics.log_loss",
    "sklearn.metrics.matthews_corrcoef",
    "sklearn.metrics.mean_absolute_error",
    "sklearn.metrics.mean_absolute_percentage_error",
    "sklearn.metrics.mean_squared_error",
    "sklearn.metrics.median_absolute_error",
    "sklearn.metrics.mutual_info_score",
    "sklearn.metrics.normalized_mutual_info_score",
    "sklearn.metrics.precision_recall_curve",
    "sklearn.metrics.precision_recall_fscore_support",
    "sklearn.metrics.precision_score",
    "sklearn.metrics.r2_score",
    "sklearn.metrics.recall_score",
    "sklearn.metrics.roc_auc_score",
    "sklearn.metrics.roc_curve",
    "sklearn.metrics.root_mean_squared_error",
    "sklearn.metrics.silhouette_score",
    "sklearn.metrics.top_k_accuracy_score",
    "sklearn.metrics.v_measure_score",
    "sklearn.neighbors.KNeighborsClassifier",
    "sklearn.neighbors.KNeighborsRegressor",
    "sklearn.neighbors.NearestNeighbors",
    "sklearn.preprocessing.StandardScaler",
    "sklearn.svm.LinearSVC",
    "sklearn.svm.SVC",
    "sklearn.tree.DecisionTreeClassifier",
    "sklearn.tree.DecisionTreeRegressor",
    "sklearn.tree.ExtraTreeClassifier",
    "sklearn.tree.ExtraTreeRegressor",
    # sklearn.metrics.cluster's public names are the same functions as sklearn.metrics's
    "sklearn.metrics.cluster.adjusted_mutual_info_score",
    "sklearn.metrics.cluster.adjusted_rand_score",
    "sklearn.metrics.cluster.calinski_harabasz_score",
    "sklearn.metrics.cluster.completeness_score",
    "sklearn.metrics.cluster.fowlkes_mallows_score",
    "sklearn.metrics.cluster.homogeneity_completeness_v_measure",
    "sklearn.metrics.cluster.homogeneity_score",
    "sklearn.metrics.cluster.mutual_info_score",
    "sklearn.metrics.cluster.normalized_mutual_info_score",
    "sklearn.metrics.cluster.silhouette_score",
    "sklearn.metrics.cluster.v_measure_score",
)
# scikit-learn modules whose doors live in another rustyml.sklearn module
_DOOR_MODULES = {"sklearn.metrics.cluster": "rustyml.sklearn.metrics"}
_DOORS = {
    tuple(name.rsplit(".", 1)): (
        _DOOR_MODULES.get(name.rsplit(".", 1)[0], "rustyml." + name.rsplit(".", 1)[0]),
        name.rsplit(".", 1)[1],
    )
    for name in _PATCHABLE
}

_lock = threading.Lock()
_saved = {}  # (module, attribute) -> the object scikit-learn had there
_handler = None


def get_patch_names():
    """The scikit-learn names :func:`patch_sklearn` can replace, as ``"module.Name"``."""
    return sorted(f"{mod}.{attr}" for mod, attr in _DOORS)


def _select(names):
    if names is None:
        return list(_DOORS)
    if isinstance(names, str):
        names = [names]
    chosen = []
    for name in names:
        hits = [key for key in _DOORS if name in (key[1], f"{key[0]}.{key[1]}")]
        if not hits:
            raise ValueError(
                f"{name!r} is not a name rustyml can patch; patchable names: "
                f"{', '.join(get_patch_names())}"
            )
        chosen.extend(hits)
    return chosen


def _set_verbose(verbose):
    global _handler
    if verbose and _handler is None:
        _handler = logging.StreamHandler(sys.stderr)
        _handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
        logger.addHandler(_handler)
        logger.setLevel(logging.INFO)
    elif not verbose and _handler is not None:
        logger.removeHandler(_handler)
        logger.setLevel(logging.NOTSET)
        _handler = None


def patch_sklearn(names=None, *, verbose=False):
    """Point scikit-learn's public names at rustyml's doors (all of them, or ``names``:
    class names such as ``"KMeans"`` or ``"sklearn.cluster.KMeans"``). With
    ``verbose=True`` every door call logs to stderr which path ran and why."""
    keys = _select(names)
    with _lock:
        # Import every door before touching scikit-learn: a door module binds the class it
        # subclasses at import, and must bind scikit-learn's, not itself.
        doors = {
            key: getattr(importlib.import_module(_DOORS[key][0]), _DOORS[key][1]) for key in keys
        }
        for (mod_name, attr), door in doors.items():
            module = importlib.import_module(mod_name)
            if (mod_name, attr) not in _saved:
                _saved[(mod_name, attr)] = getattr(module, attr)
            setattr(module, attr, door)
    _set_verbose(verbose)


def unpatch_sklearn(names=None):
    """Restore scikit-learn's own objects (all patched names, or ``names``)."""
    keys = _select(names)
    with _lock:
        for key in keys:
            original = _saved.pop(key, None)
            if original is not None:
                setattr(importlib.import_module(key[0]), key[1], original)
        if not _saved:
            _set_verbose(False)


def sklearn_is_patched(name=None):
    """Whether ``name`` (or, without one, any name) is currently patched."""
    with _lock:
        if name is None:
            return bool(_saved)
        return any(key in _saved for key in _select(name))
