"""``sklearn.ensemble`` door for IsolationForest.

The door exists so that patching covers it and every call is counted and logged, but its
fit runs scikit-learn's: scikit-learn's forest is drawn from ``random_state`` through
bagging's subsample indices and each extra-tree's own ``rand_r`` generator (random feature
and threshold per node), and rustyml's forest draws its randomness differently, so the
same ``random_state`` would give another forest.
"""

from sklearn import ensemble as _sk

from rustyml.sklearn._dispatch import Unsupported, native_path

__all__ = ["IsolationForest"]

_SkIsolationForest = _sk.IsolationForest


class IsolationForest(_SkIsolationForest):
    __doc__ = _SkIsolationForest.__doc__

    @native_path(_SkIsolationForest.fit, fits=True)
    def fit(self, X, y=None, sample_weight=None):
        raise Unsupported("scikit-learn's random draws of subsamples and splits")
