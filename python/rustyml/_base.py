"""scikit-learn conventions for the native estimators.

A wrapper stores its hyper-parameters as plain attributes (so ``sklearn.base.clone``,
``Pipeline`` and ``GridSearchCV`` work), builds its native model in ``fit`` and keeps it in
``self._native``. Pickling stores the hyper-parameters plus the native model's binary
encoding; ``save``/``load`` write the same to a file.
"""

import inspect
import math
import numbers
import pickle
import types

from rustyml.exceptions import InvalidParameterError, NotFittedError


def _satisfies(value, spec):
    """Whether ``value`` meets one constraint: ``"none"``, ``"str"`` (any string: the native
    side checks the options), ``"int"`` / ``"int>=1"`` (an integer, never a bool),
    ``"real"`` / ``"real>0"`` / ``"real>=0"`` (a finite number, never a bool)."""
    if spec == "none":
        return value is None
    if spec == "str":
        return isinstance(value, str)
    kind, _, bound = spec.partition(">")
    if isinstance(value, bool):
        return False
    if kind == "int":
        if not isinstance(value, numbers.Integral):
            return False
    elif not isinstance(value, numbers.Real) or not math.isfinite(value):
        return False
    if bound.startswith("="):
        return value >= float(bound[1:])
    if bound:
        return value > float(bound)
    return True


_WORDS = {
    "none": "None",
    "str": "a str",
    "int": "an int",
    "real": "a finite float",
}


def _describe(spec):
    kind, _, bound = spec.partition(">")
    if not bound:
        return _WORDS[spec]
    word = "an int" if kind == "int" else "a float"
    if bound.startswith("="):
        return f"{word} in the range [{bound[1:]}, inf)"
    return f"{word} in the range ({bound}, inf)"


def param_constraints(constraints):
    """A read-only ``_param_constraints`` table (see :func:`validate_params`)."""
    return types.MappingProxyType(constraints)


def validate_params(estimator):
    """Refuse a hyper-parameter outside ``_param_constraints`` (name -> allowed specs, see
    :func:`_satisfies`) with an :class:`InvalidParameterError` (a ``ValueError``) naming it,
    in the words of the native checks: NaN, infinity, a negative value where a
    size is expected, None or the wrong type are refused before any native work."""
    for name, specs in type(estimator)._param_constraints.items():
        value = getattr(estimator, name)
        if not any(_satisfies(value, spec) for spec in specs):
            allowed = " or ".join(_describe(spec) for spec in specs)
            raise InvalidParameterError(
                f"{name} must be {allowed}, got {value!r} (the {name!r} parameter of "
                f"{type(estimator).__name__})"
            )


def _differs(value, default):
    """``value != default`` for the repr, also for array-valued parameters (always shown)."""
    if value is default:
        return False
    try:
        return bool(value != default)
    except (TypeError, ValueError):  # an array compared elementwise
        return True


class _AvailableIf:
    """A method that exists only when ``check(estimator)`` holds, so ``hasattr`` tells the truth
    (scikit-learn's ``available_if`` convention)."""

    def __init__(self, check, method, reason):
        self.check = check
        self.method = method
        self.reason = reason
        self.__doc__ = method.__doc__

    def __get__(self, obj, owner=None):
        if obj is None:
            return self.method
        if not self.check(obj):
            raise AttributeError(
                f"This {type(obj).__name__} has no attribute {self.method.__name__!r}: "
                f"{self.reason}"
            )
        return types.MethodType(self.method, obj)


def available_if(check, reason):
    """Decorator form of :class:`_AvailableIf`; ``reason`` says when the method exists."""
    return lambda method: _AvailableIf(check, method, reason)


class BaseEstimator:
    """get_params / set_params / repr / pickle / save / load for rustyml estimators."""

    _estimator_type = None
    _native_class = None
    # hyper-parameter name -> the constraints (any one suffices) checked before every fit
    _param_constraints = types.MappingProxyType({})

    @classmethod
    def _param_names(cls):
        # inspect.signature costs tens of microseconds: computed once per class.
        cached = cls.__dict__.get("_param_names_cache")
        if cached is None:
            sig = inspect.signature(cls.__init__)
            cached = tuple(
                sorted(
                    p.name
                    for p in sig.parameters.values()
                    if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                )
            )
            cls._param_names_cache = cached
        return list(cached)

    def get_params(self, deep=True):
        """Hyper-parameters as a dict (``deep`` is accepted for scikit-learn compatibility)."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        """Set hyper-parameters; unknown names raise ``ValueError``. Returns ``self``."""
        valid = self._param_names()
        for key, value in params.items():
            if key not in valid:
                raise ValueError(
                    f"Invalid parameter {key!r} for estimator {type(self).__name__}. "
                    f"Valid parameters are: {valid}."
                )
            setattr(self, key, value)
        return self

    def __repr__(self):
        defaults = {
            p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()
        }
        shown = [
            f"{k}={v!r}"
            for k, v in self.get_params().items()
            if k not in defaults
            or defaults[k] is inspect.Parameter.empty
            or _differs(v, defaults[k])
        ]
        return f"{type(self).__name__}({', '.join(shown)})"

    def _build_native(self, *args, **kwargs):
        """The native model for these hyper-parameters. An integer the native side cannot hold
        (negative where a count is expected, or too large) is a ``ValueError`` naming the
        parameter, as scikit-learn's parameter validation gives, not the conversion's
        ``OverflowError``."""
        validate_params(self)
        try:
            return self._native_class(*args, **kwargs)
        except OverflowError:
            ints = {
                k: v
                for k, v in self.get_params().items()
                if isinstance(v, int) and not isinstance(v, bool)
            }
            negative = [k for k, v in ints.items() if v < 0]
            beyond_64_bits = [k for k, v in ints.items() if v >= 2**64]
            beyond_32_bits = [k for k, v in ints.items() if 2**31 <= v < 2**64]
            for name in beyond_64_bits + negative + beyond_32_bits:
                raise ValueError(
                    f"The '{name}' parameter of {type(self).__name__} must be a non-negative "
                    f"integer small enough for the native model, got {ints[name]!r}."
                ) from None
            raise ValueError(
                f"{type(self).__name__}: an integer hyper-parameter is out of range"
            ) from None

    # -- fitted state -------------------------------------------------------------------
    def _check_fitted(self):
        native = self.__dict__.get("_native")
        if native is None:
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' with "
                "appropriate arguments before using this estimator."
            )
        return native

    def __sklearn_is_fitted__(self):
        return self.__dict__.get("_native") is not None

    # -- persistence --------------------------------------------------------------------
    def __getstate__(self):
        state = {k: v for k, v in self.__dict__.items() if k != "_native"}
        native = self.__dict__.get("_native")
        state["_native_bytes"] = None if native is None else bytes(native.to_bytes())
        return state

    def __setstate__(self, state):
        state = dict(state)
        data = state.pop("_native_bytes", None)
        self.__dict__.update(state)
        self._native = None if data is None else self._native_class.from_bytes(data)

    def save(self, path):
        """Write the estimator (hyper-parameters and fitted state) to ``path``."""
        with open(path, "wb") as fh:
            pickle.dump(self, fh, protocol=pickle.HIGHEST_PROTOCOL)

    @classmethod
    def load(cls, path):
        """Read an estimator written by ``save``; ``TypeError`` if it is another class."""
        with open(path, "rb") as fh:
            obj = pickle.load(fh)
        if not isinstance(obj, cls):
            raise TypeError(f"{path} holds a {type(obj).__name__}, not a {cls.__name__}")
        return obj

    # -- scikit-learn tags (only scikit-learn calls this, so the import is lazy) ----------
    def __sklearn_tags__(self):
        from sklearn.utils import (
            ClassifierTags,
            RegressorTags,
            Tags,
            TargetTags,
            TransformerTags,
        )

        kind = self._estimator_type
        return Tags(
            estimator_type=kind,
            target_tags=TargetTags(required=kind in ("classifier", "regressor")),
            transformer_tags=TransformerTags() if hasattr(self, "transform") else None,
            classifier_tags=ClassifierTags() if kind == "classifier" else None,
            regressor_tags=RegressorTags() if kind == "regressor" else None,
        )


class RegressorMixin:
    """``score`` as R², scikit-learn's regressor convention."""

    _estimator_type = "regressor"

    def score(self, X, y):
        """Coefficient of determination of ``predict(X)`` against ``y`` (``metrics.r2_score``,
        which refuses a length mismatch or a non-finite value naming it)."""
        from rustyml.metrics import r2_score

        return float(r2_score(y, self.predict(X)))


class ClassifierMixin:
    """``score`` as accuracy, scikit-learn's classifier convention."""

    _estimator_type = "classifier"

    def score(self, X, y):
        """Mean accuracy of ``predict(X)`` against ``y`` (``metrics.accuracy_score``, which
        refuses a length mismatch or a non-finite label naming it)."""
        from rustyml.metrics import accuracy_score

        return float(accuracy_score(y, self.predict(X)))


class ClusterMixin:
    """``fit_predict`` as ``fit(X).labels_``, scikit-learn's clusterer convention."""

    _estimator_type = "clusterer"

    def fit_predict(self, X, y=None):
        """Fit to ``X`` and return the training labels."""
        return self.fit(X).labels_
