"""How a door method chooses between rustyml's engine and scikit-learn's own code.

A door class subclasses the scikit-learn estimator it stands in for. Each accelerated
method is written as a native path decorated with :func:`native_path`, naming the
scikit-learn method it replaces. The native path first checks that the call is one the
engine answers exactly as scikit-learn would (dense numeric input, supported parameters,
no ``sample_weight``...); if not, it raises :class:`Unsupported` *before changing
anything* (a shared ``RandomState`` it drew from is rewound for it), and scikit-learn's
method runs instead. Every decision is counted
(:func:`dispatch_stats`) and logged on the ``rustyml.sklearn`` logger at INFO, with the
reason for each fallback, so ``logging.basicConfig(level=logging.INFO)`` (or
``patch_sklearn(verbose=True)``) shows per call which path ran and why.
"""

import collections
import functools
import inspect
import logging
import threading

import numpy as np

logger = logging.getLogger("rustyml.sklearn")

_stats_lock = threading.Lock()
_stats = collections.Counter()


class Unsupported(Exception):
    """A call the native engine does not answer like scikit-learn: run scikit-learn's."""


def record(estimator, method, path, reason=None):
    _count(type(estimator).__name__, method, path, reason)


def _count(name, method, path, reason=None):
    with _stats_lock:
        _stats[(name, method, path)] += 1
    if logger.isEnabledFor(logging.INFO):
        if reason is None:
            logger.info("%s.%s: rustyml", name, method)
        else:
            logger.info("%s.%s: scikit-learn (%s)", name, method, reason)


def dispatch_stats(reset=False):
    """Counts of door calls as ``{(class, method, "rustyml" | "scikit-learn"): n}`` (for a
    function, ``class`` is its scikit-learn module's last name: ``("metrics", "r2_score",
    ...)``)."""
    with _stats_lock:
        out = dict(_stats)
        if reset:
            _stats.clear()
    return out


_NO_PARAMETER = object()


def _shared_random_state(estimator):
    """The RandomState a fit of ``estimator`` would draw from and leave advanced, when it is
    state shared beyond this call: its ``random_state`` instance, or NumPy's global one for
    ``None`` (as ``check_random_state`` resolves them); None for a seed or no parameter."""
    return _shared(getattr(estimator, "random_state", _NO_PARAMETER))


def _shared(source):
    if source is None:
        return np.random.mtrand._rand
    return source if isinstance(source, np.random.RandomState) else None


def native_path(fallback, *, fits=False):
    """Make the decorated function the native path of a method whose scikit-learn version
    is ``fallback``. ``fits=True`` marks a method that (re)fits the estimator: when
    scikit-learn's version runs, any engine left by an earlier native fit is dropped so
    later calls cannot mix the two fitted states."""

    def decorate(native):
        @functools.wraps(fallback)
        def method(self, *args, **kwargs):
            # A native path may draw from a shared RandomState (as scikit-learn's fit would)
            # before a later check sends the call to scikit-learn: rewind it first, so
            # scikit-learn's fit draws what it would have drawn alone.
            random_state = _shared_random_state(self)
            drawn_from = None if random_state is None else random_state.get_state()
            try:
                # scikit-learn's fit callbacks observe its own fit loop: keep it.
                if getattr(self, "_skl_callbacks", None):
                    raise Unsupported("fit callbacks are set")
                out = native(self, *args, **kwargs)
            except Unsupported as why:
                if drawn_from is not None:
                    random_state.set_state(drawn_from)
                record(self, native.__name__, "scikit-learn", str(why))
                out = fallback(self, *args, **kwargs)
                if fits:
                    self.__dict__.pop("_rustyml_engine", None)
                return out
            record(self, native.__name__, "rustyml")
            return out

        method.__rustyml_native__ = native
        return method

    return decorate


def native_function(fallback):
    """Make the decorated function the native path of scikit-learn's public function
    ``fallback``. The result is checked by scikit-learn's own parameter validation (its
    constraints, error messages and nested-validation rule), then runs the native path, or
    on :class:`Unsupported` the body of scikit-learn's function. The native path takes
    scikit-learn's arguments and must raise ``Unsupported`` before it warns about
    anything: scikit-learn's body then gives its own warnings once."""
    from sklearn.utils._param_validation import validate_params

    body = fallback.__wrapped__
    group = fallback.__module__.split(".")[1]

    # a keyword-only random_state (silhouette_score's), rewound as native_path's
    random_default = getattr(
        inspect.signature(body).parameters.get("random_state"), "default", _NO_PARAMETER
    )

    def decorate(native):
        name = fallback.__name__

        @functools.wraps(body)
        def function(*args, **kwargs):
            random_state = _shared(kwargs.get("random_state", random_default))
            drawn_from = None if random_state is None else random_state.get_state()
            try:
                out = native(*args, **kwargs)
            except Unsupported as why:
                if drawn_from is not None:
                    random_state.set_state(drawn_from)
                _count(group, name, "scikit-learn", str(why))
                return body(*args, **kwargs)
            _count(group, name, "rustyml")
            return out

        validated = validate_params(
            body._skl_parameter_constraints, prefer_skip_nested_validation=True
        )(function)
        validated.__module__ = native.__module__
        validated.__rustyml_native__ = native
        return validated

    return decorate


def engine(estimator):
    """The native model a native fit left, or :class:`Unsupported` (fitted by scikit-learn,
    or not fitted: scikit-learn's method then raises its own NotFittedError)."""
    found = estimator.__dict__.get("_rustyml_engine")
    if found is None:
        raise Unsupported("fitted by scikit-learn")
    return found


# A sparse input is handed to the native engines as a dense copy of at most this many
# entries (32 MiB of float64); a larger one stays on scikit-learn's sparse code.
SPARSE_DENSE_MAX = 1 << 22


def dense_copy(X):
    """A sparse ``X`` as the dense array the native engines take (its implicit zeros
    written out), or :class:`Unsupported` when that copy would pass ``SPARSE_DENSE_MAX``."""
    require(X.shape[0] * X.shape[1] <= SPARSE_DENSE_MAX, "sparse X too large to copy")
    return X.toarray()


def require(condition, reason):
    if not condition:
        raise Unsupported(reason)
