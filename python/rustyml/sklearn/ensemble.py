"""``sklearn.ensemble`` door for IsolationForest.

scikit-learn's ``IsolationForest.fit`` runs unchanged (its validation, its draw of the
regression targets, ``max_samples``, the path-length tables and ``offset_``); only the
building of the trees (``BaseBagging._fit``) is native. Each tree's seeds and subsample are
drawn by scikit-learn's own bagging functions from the same ``random_state``, and rustyml's
random-split grower then repeats scikit-learn's random splitter draw for draw (see the crate's
``machine_learning::sklearn_tree``), so ``estimators_`` hold scikit-learn's trees, node
for node, and every score is scikit-learn's.
"""

import numbers

import numpy as np
from scipy.sparse import issparse
from sklearn import ensemble as _sk
from sklearn.ensemble._bagging import MAX_INT, BaseBagging, _generate_bagging_indices
from sklearn.utils import check_random_state
from sklearn.utils._metadata_requests import _routing_enabled

from rustyml import _native
from rustyml.sklearn._dispatch import native_path, require
from rustyml.sklearn.tree import sklearn_tree

__all__ = ["IsolationForest"]

_SkIsolationForest = _sk.IsolationForest
_RAND_R_MAX = 2147483647
# The tree options the grower reproduces: IsolationForest's ExtraTreeRegressor.
_TREE_DEFAULTS = {
    "criterion": "squared_error",
    "splitter": "random",
    "min_samples_split": 2,
    "min_samples_leaf": 1,
    "min_weight_fraction_leaf": 0.0,
    "max_leaf_nodes": None,
    "min_impurity_decrease": 0.0,
    "ccp_alpha": 0.0,
    "monotonic_cst": None,
}


class _NativeBagging(BaseBagging):
    """Stands between scikit-learn's IsolationForest and ``BaseBagging`` in the door's
    method order, so that the ``super()._fit`` in scikit-learn's ``fit`` lands here."""

    def fit(
        self, X, y, max_samples=None, max_depth=None, check_input=True, sample_weight=None, **params
    ):
        require(sample_weight is None, "sample_weight")
        require(not params and not _routing_enabled(), "fit parameters or metadata routing")
        require(self.verbose <= 1, "verbose > 1 (scikit-learn prints per tree)")
        if issparse(X):
            # the trees read scikit-learn's CSC matrix as it is (it does not sort it here)
            require(X.format == "csc" and X.dtype == np.float32, "sparse X not float32 CSC")
            int32 = X.indices.dtype == np.intc and X.indptr.dtype == np.intc
            require(int32 and X.has_canonical_format, "sparse X unsorted or 64-bit indexed")
            require(bool(np.isfinite(X.data).all()), "missing or infinite values in X")
            data, sparse = None, (X.shape[0], X.indptr, X.indices, X.data)
        else:
            X = np.asarray(X)
            require(X.dtype == np.float32 and X.ndim == 2, "X not float32")
            require(bool(np.isfinite(X).all()), "missing or infinite values in X")
            data, sparse = np.ascontiguousarray(X), None
        estimator = self._get_estimator()
        tree_params = estimator.get_params()
        require(
            all(tree_params.get(k) == v for k, v in _TREE_DEFAULTS.items())
            and isinstance(tree_params.get("max_features"), numbers.Integral),
            "a tree estimator other than IsolationForest's",
        )
        n_samples, n_features = X.shape
        if max_samples is None:
            max_samples = self.max_samples
        require(
            isinstance(max_samples, numbers.Integral)
            and max_samples >= 1
            and (self.bootstrap or max_samples <= n_samples),
            "max_samples not a count of at most n_samples",
        )
        if isinstance(self.max_features, numbers.Integral):
            max_features = self.max_features
        else:
            max_features = int(self.max_features * n_features)
        require(max_features <= n_features, f"max_features={self.max_features!r}")
        max_features = max(1, int(max_features))
        growing = self.warm_start and hasattr(self, "estimators_")
        kept = len(self.estimators_) if growing else 0
        # scikit-learn raises (too few estimators) or warns (no new tree) itself
        require(self.n_estimators > kept, "no new trees to grow")

        # From here on, scikit-learn's _fit step by step (no failure can follow).
        random_state = check_random_state(self.random_state)
        self._n_samples = n_samples
        y = np.ascontiguousarray(self._validate_y(y), dtype=np.float64)
        self._validate_estimator(estimator)
        if max_depth is not None:
            self.estimator_.max_depth = max_depth
        self._max_samples = int(max_samples)
        self._max_features = int(max_features)
        self._sample_weight = None
        if kept:
            random_state.randint(MAX_INT, size=kept)  # the seeds of the kept trees
        seeds = random_state.randint(MAX_INT, size=self.n_estimators - kept)
        self._seeds = seeds
        estimators, columns, samples, tree_seeds = [], [], [], []
        make_tree = self._tree_maker()
        for seed in seeds:
            est = make_tree(seed)
            features, indices = _generate_bagging_indices(
                seed,
                self.bootstrap_features,
                self.bootstrap,
                n_features,
                n_samples,
                max_features,
                max_samples,
                None,
            )
            # scikit-learn's splitter seeds its xorshift with one draw from the tree's state
            tree_seeds.append(int(check_random_state(est.random_state).randint(0, _RAND_R_MAX)))
            estimators.append(est)
            columns.append(features)
            samples.append(indices)
        # scikit-learn indexes the columns only when it keeps fewer than all of them or draws
        # them with replacement (the drawn order of a full set is recorded but not applied)
        if max_features == n_features and not self.bootstrap_features:
            used_columns = np.tile(np.arange(n_features, dtype=np.int64), (len(seeds), 1))
        else:
            used_columns = np.asarray(columns, dtype=np.int64)
        tree = self.estimator_
        depth = np.iinfo(np.int32).max if tree.max_depth is None else tree.max_depth
        grown = _native.machine_learning.grow_random_split_forest_arrays(
            data,
            y,
            np.asarray(samples, dtype=np.int64),
            used_columns,
            tree_seeds,
            sparse=sparse,
            max_features=int(tree.max_features),
            max_depth=int(depth),
            min_samples_split=2,
            min_samples_leaf=1,
        )
        for est, arrays in zip(estimators, grown):
            est.n_features_in_ = max_features
            est.n_outputs_ = 1
            est.max_features_ = int(tree.max_features)
            est.tree_ = sklearn_tree(arrays, max_features, [1])
        self.estimators_ = (self.estimators_ if kept else []) + estimators
        self.estimators_features_ = (self.estimators_features_ if kept else []) + columns
        return self

    def _tree_maker(self):
        """``seed -> tree`` equal to scikit-learn's ``_make_estimator(append=False,
        random_state=seed)``. That clones ``estimator_`` (reading its signature) and draws the
        tree's ``random_state`` from ``RandomState(seed)`` per tree, most of a forest's fit time;
        with plain-valued parameters and no nested estimator, one reading of the parameters
        serves every tree."""
        params = self.estimator_.get_params(deep=False)
        plain = all(v is None or isinstance(v, (numbers.Number, str)) for v in params.values())
        nested = any("__" in key for key in self.estimator_.get_params(deep=True))
        if self.estimator_params or not plain or nested or "random_state" not in params:
            return lambda seed: self._make_estimator(append=False, random_state=seed)
        klass, int32_max = type(self.estimator_), np.iinfo(np.int32).max

        def make(seed):
            tree = klass(**params)
            tree.random_state = np.random.RandomState(seed).randint(int32_max)
            return tree

        return make

    # recorded as the door's ``fit``: the native path of the trees' building
    _fit = native_path(BaseBagging._fit, fits=True)(fit)
    del fit


class IsolationForest(_SkIsolationForest, _NativeBagging):
    __doc__ = _SkIsolationForest.__doc__
