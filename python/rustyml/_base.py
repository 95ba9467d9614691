"""scikit-learn conventions for the native estimators.

A wrapper stores its hyper-parameters as plain attributes (so ``sklearn.base.clone``,
``Pipeline`` and ``GridSearchCV`` work), builds its native model in ``fit`` and keeps it in
``self._native``. Pickling stores the hyper-parameters plus the native model's binary
encoding; ``save``/``load`` write the same to a file.
"""

import functools
import inspect
import math
import numbers
import pickle
import sys
import threading
import types

import numpy as np

from rustyml._validation import (
    check_feature_names,
    feature_names,
    frame_values,
    non_finite_error,
)
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


# -- data methods: feature names, missing values, pandas output ------------------------------
#
# Every estimator method that takes ``X`` first is wrapped once, when its class is created
# (``BaseEstimator.__init_subclass__``), so the per-estimator wrappers need no code of their own
# for scikit-learn's DataFrame conventions:
#
# * methods that (re)fit record ``feature_names_in_`` after they succeed (a DataFrame with
#   string column names) or drop a stale one; ``partial_fit`` only on its first call;
# * the others compare a DataFrame's columns with those names first (reordered or missing
#   columns are a ValueError, names on one side only a UserWarning);
# * a native call that fails on input holding NaN or infinity reports it in scikit-learn's
#   words ("Input X contains NaN."); the check runs only after a failure, so it costs nothing;
# * ``transform`` / ``fit_transform`` return a DataFrame under ``set_output(transform="pandas")``
#   (or scikit-learn's global ``transform_output="pandas"``).
#
# A method calling another wrapped method of the same estimator (``fit_transform`` calling
# ``fit``) runs the inner one unwrapped: only the outermost call checks and wraps.

_FITTING = frozenset({"fit", "fit_transform", "fit_predict", "partial_fit"})
_CHECKING = frozenset(
    {
        "predict",
        "predict_proba",
        "predict_log_proba",
        "decision_function",
        "transform",
        "score",
        "score_samples",
        "kneighbors",
    }
)
_OUTPUT = frozenset({"transform", "fit_transform"})
_active = threading.local()


def _takes_X(method):
    try:
        params = list(inspect.signature(method).parameters)
    except (TypeError, ValueError):
        return False
    return len(params) >= 2 and params[1] == "X"


def _output_config(estimator):
    """``"pandas"`` or ``"default"``: the estimator's ``set_output`` choice, else
    scikit-learn's global ``transform_output`` when scikit-learn is in use."""
    chosen = estimator.__dict__.get("_sklearn_output_config", {}).get("transform")
    if chosen is not None:
        return chosen
    sklearn = sys.modules.get("sklearn")
    if sklearn is not None:
        try:
            return sklearn.get_config().get("transform_output", "default")
        except Exception:  # noqa: BLE001 - a partial or foreign sklearn: no global choice
            return "default"
    return "default"


def _as_frame(estimator, out, original):
    import pandas as pd

    try:
        columns = estimator.get_feature_names_out()
    except Exception:  # noqa: BLE001 - scikit-learn also falls back to positional columns
        columns = None
    index = original.index if isinstance(original, pd.DataFrame) else None
    if isinstance(out, pd.DataFrame):
        if columns is not None:
            out.columns = columns
        return out
    return pd.DataFrame(out, index=index, columns=columns, copy=False)


def _data_method(method, name):
    fitting = name in _FITTING
    first_call_only = name == "partial_fit"
    wraps_output = name in _OUTPUT

    def run(self, X, args, kwargs):
        """``method`` on ``X``; a native ``ValueError`` caused by NaN or infinity in ``X`` or
        ``y`` is re-raised in scikit-learn's words (checked only after a failure)."""
        try:
            return method(self, X, *args, **kwargs)
        except InvalidParameterError:
            raise
        except ValueError as exc:
            y = args[0] if args else kwargs.get("y")
            better = non_finite_error(X, "X", self, exc)
            if better is None and y is not None:
                better = non_finite_error(y, "y", self, exc)
            if better is not None:
                raise better from exc
            raise

    @functools.wraps(method)
    def call(self, *args, **kwargs):
        if args:
            X, args = args[0], args[1:]
        else:
            X = kwargs.pop("X", None)
        if X is None:
            return method(self, X, *args, **kwargs)
        if (
            type(X) is np.ndarray
            and "feature_names_in_" not in self.__dict__
            and not (wraps_output and _output_config(self) == "pandas")
        ):
            # The common call: an array has no names to store or compare and nothing is to be
            # wrapped, so the bookkeeping below would do nothing (and costs microseconds).
            return run(self, X, args, kwargs)
        busy = _active.__dict__.setdefault("ids", set())
        key = id(self)
        if key in busy:
            return method(self, X, *args, **kwargs)
        names = feature_names(X)
        reset = fitting and not (first_call_only and "n_features_in_" in self.__dict__)
        if not reset:
            check_feature_names(self, names)
        original, X = X, frame_values(X)
        busy.add(key)
        try:
            out = run(self, X, args, kwargs)
        finally:
            busy.discard(key)
        if reset:
            if names is not None:
                self.feature_names_in_ = names
            else:
                self.__dict__.pop("feature_names_in_", None)
        if wraps_output and _output_config(self) == "pandas":
            out = _as_frame(self, out, original)
        return out

    call._rustyml_data_method = True
    return call


def _wrap_data_methods(cls):
    """Wrap the ``X``-taking methods ``cls`` defines itself or takes from a mixin that is no
    estimator (an estimator base class wrapped its own already; see the comment above)."""
    for name in _FITTING | _CHECKING:
        owner = next((k for k in cls.__mro__ if name in k.__dict__), None)
        if owner is None or (owner is not cls and issubclass(owner, BaseEstimator)):
            continue
        method = owner.__dict__[name]
        if isinstance(method, _AvailableIf):
            inner = method.method
            if _takes_X(inner) and not getattr(inner, "_rustyml_data_method", False):
                method.method = _data_method(inner, name)
        elif (
            callable(method)
            and not getattr(method, "_rustyml_data_method", False)
            and _takes_X(method)
        ):
            setattr(cls, name, _data_method(method, name))


def _is_transformer(estimator):
    cls = type(estimator)
    return any(_takes_X(getattr(cls, m, None)) for m in ("transform", "fit_transform"))


class BaseEstimator:
    """get_params / set_params / repr / pickle / save / load for rustyml estimators."""

    _estimator_type = None
    _native_class = None
    # hyper-parameter name -> the constraints (any one suffices) checked before every fit
    _param_constraints = types.MappingProxyType({})
    # output column names of a transformer: "one-to-one" keeps the input's names, "prefix"
    # numbers the outputs after the class (scikit-learn's two conventions)
    _feature_names_out = "prefix"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _wrap_data_methods(cls)

    # -- feature names and pandas output (transformers only) ------------------------------
    def _names_in(self, input_features, generate):
        fitted = self.__dict__.get("feature_names_in_")
        n_in = self.__dict__.get("n_features_in_")
        if input_features is not None:
            input_features = np.asarray(input_features, dtype=object)
            if fitted is not None and not np.array_equal(fitted, input_features):
                raise ValueError("input_features is not equal to feature_names_in_")
            if n_in is not None and len(input_features) != n_in:
                raise ValueError(
                    f"input_features should have length equal to number of features ({n_in}), "
                    f"got {len(input_features)}"
                )
            return input_features
        if fitted is not None:
            return fitted
        if generate:
            return np.asarray([f"x{i}" for i in range(n_in)], dtype=object)
        return None

    @property
    def _n_features_out(self):
        """Output width of a "prefix" transformer, read from its fitted state."""
        for attr, axis in (
            ("cluster_centers_", 0),
            ("embedding_", 1),
            ("n_components_", None),
            ("eigenvalues_", 0),
            ("explained_variance_ratio_", 0),
            ("components_", 0),
        ):
            value = getattr(self, attr, None)
            if value is not None:
                return int(value) if axis is None else np.shape(value)[axis]
        raise AttributeError(f"{type(self).__name__} does not know its output width")

    @available_if(_is_transformer, "only transformers name their output features")
    def get_feature_names_out(self, input_features=None):
        """Names of the output columns: the input's names for transformers that keep each
        feature (scalers), ``<classname>0, <classname>1, ...`` for those that make new ones
        (PCA: ``pca0, pca1, ...``). ``input_features`` must match ``feature_names_in_``."""
        self._check_fitted()
        if self._feature_names_out == "one-to-one":
            return self._names_in(input_features, generate=True)
        self._names_in(input_features, generate=False)
        prefix = type(self).__name__.lower()
        return np.asarray([f"{prefix}{i}" for i in range(self._n_features_out)], dtype=object)

    @available_if(_is_transformer, "only transformers have an output container")
    def set_output(self, *, transform=None):
        """Choose what ``transform`` and ``fit_transform`` return: ``"pandas"`` a DataFrame
        (columns from ``get_feature_names_out``, the input's index), ``"default"`` a NumPy
        array, ``None`` leaves the choice unchanged. Returns ``self``."""
        if transform is None:
            return self
        if transform not in ("default", "pandas"):
            raise ValueError(
                f"output config must be 'default', 'pandas' or None, got {transform!r}"
            )
        if transform == "pandas":
            import pandas  # noqa: F401 - refuse now, not at the first transform
        self._sklearn_output_config = {"transform": transform}
        return self

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

    def _store_params(self, init_locals):
        """Keep each constructor argument as the attribute of its name, from the constructor's
        ``locals()`` taken first thing: the signature, which ``get_params`` reads, is the one
        place the hyper-parameters are listed."""
        for name, value in init_locals.items():
            if name not in ("self", "__class__"):
                setattr(self, name, value)

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

    def _new_native(self):
        """A fresh native model for a fit, built from ``get_params()``; an estimator whose
        native model takes its parameters otherwise overrides it."""
        return self._build_native(**self.get_params())

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
    # the instance attribute a fit sets to the fitted model (absent or None: not fitted)
    _fitted_attribute = "_native"

    def _check_fitted(self):
        fitted = self.__dict__.get(self._fitted_attribute)
        if fitted is None:
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' with "
                "appropriate arguments before using this estimator."
            )
        return fitted

    def __sklearn_is_fitted__(self):
        return self.__dict__.get(self._fitted_attribute) is not None

    # -- persistence --------------------------------------------------------------------
    def __getstate__(self):
        state = {k: v for k, v in self.__dict__.items() if k != "_native"}
        native = self.__dict__.get("_native")
        state["_native_bytes"] = None if native is None else bytes(native.to_bytes())
        if native is not None and type(native) is not self._native_class:
            # fitted by partial_fit: the incremental engine's state
            state["_native_kind"] = "partial"
        return state

    def __setstate__(self, state):
        state = dict(state)
        data = state.pop("_native_bytes", None)
        kind = state.pop("_native_kind", None)
        self.__dict__.update(state)
        cls = self._partial_native_class if kind == "partial" else self._native_class
        self._native = None if data is None else cls.from_bytes(data)

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
