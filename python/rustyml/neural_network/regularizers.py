"""Keras 3's weight and activity regularizers: ``L1``, ``L2``, ``L1L2``.

A regularizer here is a config: the layers hand it to the native network, which adds the
penalty to the training (and evaluation) loss and its gradient to the weights' (Keras's
``kernel_regularizer``, ``bias_regularizer``, ``activity_regularizer``...). Calling one on an
array computes its penalty in NumPy, as Keras's ``regularizer(x)`` does.
"""

import math

import numpy as np

from rustyml.neural_network._config import _Configurable

DEFAULT_FACTOR = 0.01


def _factor(value, name):
    """A non-negative finite float (Keras's check), else ``ValueError`` naming ``name``."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float, np.floating, np.integer))
        or not math.isfinite(float(value))
        or value < 0
    ):
        raise ValueError(
            f"Invalid value for argument {name}: expected a non-negative float. "
            f"Received: {name}={value!r}"
        )
    return float(value)


class Regularizer(_Configurable):
    """Base class: ``regularizer(x)`` is the penalty of the array ``x``."""

    def __call__(self, x):
        return np.float32(0.0)

    def get_config(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement get_config()")

    def __eq__(self, other):
        return type(self) is type(other) and self.get_config() == other.get_config()

    def __hash__(self):
        return hash((type(self).__name__, tuple(sorted(self.get_config().items()))))


def _l1_term(factor, x):
    return np.float32(factor) * np.float32(np.sum(np.abs(x), dtype=np.float64))


def _l2_term(factor, x):
    return np.float32(factor) * np.float32(np.sum(np.square(x, dtype=np.float64)))


class L1L2(Regularizer):
    """``l1 * sum(|x|) + l2 * sum(x ** 2)``; both factors default to 0 (Keras 3's)."""

    def __init__(self, l1=0.0, l2=0.0):
        self.l1 = _factor(0.0 if l1 is None else l1, "l1")
        self.l2 = _factor(0.0 if l2 is None else l2, "l2")

    def __call__(self, x):
        x = np.asarray(x, np.float32)
        total = np.float32(0.0)
        if self.l1 != 0.0:
            total += _l1_term(self.l1, x)
        if self.l2 != 0.0:
            total += _l2_term(self.l2, x)
        return total

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


class L1(Regularizer):
    """``l1 * sum(|x|)`` (``l1`` defaults to 0.01)."""

    def __init__(self, l1=DEFAULT_FACTOR):
        # Keras 3 keeps L1's factor as a float32 tensor (its config shows the rounded value)
        self.l1 = float(np.float32(_factor(DEFAULT_FACTOR if l1 is None else l1, "l1")))

    def __call__(self, x):
        return _l1_term(self.l1, np.asarray(x, np.float32))

    def get_config(self):
        return {"l1": self.l1}


class L2(Regularizer):
    """``l2 * sum(x ** 2)`` (``l2`` defaults to 0.01)."""

    def __init__(self, l2=DEFAULT_FACTOR):
        self.l2 = _factor(DEFAULT_FACTOR if l2 is None else l2, "l2")

    def __call__(self, x):
        return _l2_term(self.l2, np.asarray(x, np.float32))

    def get_config(self):
        return {"l2": self.l2}


class OrthogonalRegularizer(Regularizer):
    """Keras's ``OrthogonalRegularizer``: not supported by rustyml's networks."""

    def __init__(self, factor=DEFAULT_FACTOR, mode="rows"):
        raise NotImplementedError(
            "keras.regularizers.OrthogonalRegularizer is not implemented in rustyml "
            "(L1, L2 and L1L2 are); docs/KERAS.md lists what rustyml.keras provides"
        )


# Keras's lower-case names (functions in Keras 2, the classes themselves in Keras 3)
l1, l2, l1_l2 = L1, L2, L1L2
orthogonal_regularizer = OrthogonalRegularizer

_CLASSES = {cls.__name__: cls for cls in (Regularizer, L1, L2, L1L2, OrthogonalRegularizer)}
# Keras 3's string identifiers: each class name and its snake_case form ("l1l2", not "l1_l2")
_NAMES = {
    **_CLASSES,
    "regularizer": Regularizer,
    "l1": L1,
    "l2": L2,
    "l1l2": L1L2,
    "orthogonal_regularizer": OrthogonalRegularizer,
}


def serialize(regularizer):
    """Keras's serialized form: ``{"module": "keras.regularizers", "class_name": "L2",
    "config": {"l2": 0.01}, "registered_name": None}``."""
    if regularizer is None:
        return None
    return {
        "module": "keras.regularizers",
        "class_name": type(regularizer).__name__,
        "config": regularizer.get_config(),
        "registered_name": None,
    }


def deserialize(config):
    """The regularizer a ``serialize`` dict (or a bare ``{"class_name", "config"}``) names."""
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"Could not interpret regularizer config: {config!r}")
    cls = _CLASSES.get(config["class_name"])
    if cls is None:
        raise ValueError(
            f"Could not interpret regularizer identifier: {config['class_name']!r} "
            "(rustyml has L1, L2 and L1L2)"
        )
    inner = config.get("config") or {}
    try:
        return cls.from_config(dict(inner))
    except TypeError as exc:
        raise ValueError(f"bad {cls.__name__} config {inner!r}: {exc}") from None


def get(identifier):
    """``None``, a regularizer, a Keras name (``"l1"``, ``"l2"``, ``"l1l2"``, ``"L2"``...) or
    a serialized dict, as a regularizer (``None`` stays ``None``)."""
    if identifier is None or isinstance(identifier, Regularizer):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        cls = _NAMES.get(identifier)
        if cls is None:
            raise ValueError(
                f"Could not interpret regularizer identifier: {identifier!r}; Keras 3's names "
                "are 'l1', 'l2', 'l1l2' (or L1(...), L2(...), L1L2(l1=..., l2=...))"
            )
        return cls()
    raise ValueError(
        f"Could not interpret regularizer identifier: {identifier!r} (rustyml's networks take "
        "L1, L2 or L1L2 regularizers, not arbitrary callables)"
    )


# Keras's layer arguments for regularizers.
ARGUMENTS = (
    "kernel_regularizer",
    "bias_regularizer",
    "recurrent_regularizer",
    "embeddings_regularizer",
    "depthwise_regularizer",
    "pointwise_regularizer",
    "activity_regularizer",
)


def layer_arguments(class_name):
    """The regularizer arguments the layer class ``class_name`` takes (Keras's)."""
    if class_name in ("Dense",) or (
        class_name.startswith("Conv") and class_name[4:6] in ("1D", "2D", "3D")
    ):
        return ("kernel_regularizer", "bias_regularizer", "activity_regularizer")
    if class_name == "Embedding":
        return ("embeddings_regularizer", "activity_regularizer")
    if class_name in ("SimpleRNN", "LSTM", "GRU"):
        return (
            "kernel_regularizer",
            "recurrent_regularizer",
            "bias_regularizer",
            "activity_regularizer",
        )
    if class_name.startswith("DepthwiseConv"):
        return ("depthwise_regularizer", "bias_regularizer", "activity_regularizer")
    if class_name.startswith("SeparableConv"):
        return (
            "depthwise_regularizer",
            "pointwise_regularizer",
            "bias_regularizer",
            "activity_regularizer",
        )
    return ()


def take_layer_arguments(layer, kwargs):
    """Pops Keras's regularizer arguments from a layer constructor's ``kwargs`` onto the layer
    (``layer.kernel_regularizer`` ...). A bad value is a ``ValueError`` naming the argument; an
    argument the layer does not take is a ``TypeError`` naming it, as Python's own."""
    name = type(layer).__name__
    takes = layer_arguments(name)
    for arg in ARGUMENTS:
        if arg not in kwargs:
            continue
        value = kwargs.pop(arg)
        if arg not in takes:
            if value is None:
                continue
            raise TypeError(
                f"{name}: {arg} is not supported by rustyml's {name}"
                + (f" (it takes {', '.join(takes)})" if takes else " (it takes no regularizers)")
            )
        try:
            regularizer = get(value)
        except (ValueError, NotImplementedError) as exc:
            raise type(exc)(f"{name}: {arg}: {exc}") from None
        if regularizer is not None and type(regularizer) not in (L1, L2, L1L2):
            raise ValueError(
                f"{name}: {arg}: rustyml computes L1, L2 and L1L2 regularizers natively; a "
                f"custom one ({type(regularizer).__name__}) is not supported"
            )
        setattr(layer, arg, regularizer)
    for arg in takes:
        if not hasattr(layer, arg):
            setattr(layer, arg, None)


def layer_config(layer):
    """The regularizer entries of a layer's config (Keras's serialized form; ``None`` unset)."""
    return {
        arg: serialize(getattr(layer, arg, None)) for arg in layer_arguments(type(layer).__name__)
    }


__all__ = [
    "L1",
    "L1L2",
    "L2",
    "OrthogonalRegularizer",
    "Regularizer",
    "deserialize",
    "get",
    "l1",
    "l1_l2",
    "l2",
    "orthogonal_regularizer",
    "serialize",
]
