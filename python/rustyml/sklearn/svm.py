"""``sklearn.svm`` doors for SVC and LinearSVC.

Both doors exist so that patching covers them and every call is counted and logged, but
their fits run scikit-learn's own solvers for now: scikit-learn's answers are libsvm's and
liblinear's iterates (libsvm's shrinking heuristics and support-vector layout, liblinear's
randomly permuted coordinate descent with its own random generator), and rustyml's SMO and
primal L-BFGS solvers stop at other points within the solver tolerance, which scikit-learn's
own tests (exact support-vector sets, dual coefficients to several decimals, ``n_iter_``)
tell apart.
"""

from sklearn import svm as _sk

from rustyml.sklearn._dispatch import Unsupported, native_path

__all__ = ["SVC", "LinearSVC"]

_SkSVC = _sk.SVC
_SkLinearSVC = _sk.LinearSVC


class SVC(_SkSVC):
    __doc__ = _SkSVC.__doc__

    @native_path(_SkSVC.fit, fits=True)
    def fit(self, X, y, sample_weight=None):
        raise Unsupported("libsvm's iterates and support-vector layout are not reproduced")


class LinearSVC(_SkLinearSVC):
    __doc__ = _SkLinearSVC.__doc__

    @native_path(_SkLinearSVC.fit, fits=True)
    def fit(self, X, y, sample_weight=None):
        raise Unsupported("liblinear's randomly ordered coordinate descent is not reproduced")
