"""``keras.activations``: the activation functions, usable on arrays (``gelu(x)``) and as a
layer's ``activation`` (``Dense(8, activation=keras.activations.gelu)``, the same as
``activation="gelu"``). They compute in float32 in rustyml's Rust core, with the maps the
layers use, and return float32 NumPy arrays."""

import numpy as np

from rustyml import _native
from rustyml.keras._missing import stand_ins, unknown_attribute


def _apply(name, x, approximate=False, alpha=None):
    try:
        array = np.asarray(x, dtype=np.float32)
    except (TypeError, ValueError):
        raise TypeError(
            f"keras.activations.{name}: x must be an array of numbers, got {type(x).__name__}"
        ) from None
    out = _native.neural_network.apply_activation(
        np.ascontiguousarray(array), name, approximate, alpha
    )
    return out.reshape(array.shape)


def _activation(name, doc):
    def fn(x):
        return _apply(name, x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    # what a layer's ``activation`` argument reads (the name Keras writes in configs)
    fn.keras_activation_name = name
    return fn


linear = _activation("linear", "``x``.")
sigmoid = _activation("sigmoid", "``1 / (1 + e^-x)``.")
tanh = _activation("tanh", "Hyperbolic tangent.")
softplus = _activation("softplus", "``log(1 + e^x)``.")
softsign = _activation("softsign", "``x / (1 + |x|)``.")
selu = _activation("selu", "Scaled ELU with Klambauer et al.'s constants.")
exponential = _activation("exponential", "``e^x``.")
hard_sigmoid = _activation("hard_sigmoid", "``clip(x / 6 + 1/2, 0, 1)``.")
silu = _activation("silu", "``x * sigmoid(x)`` (alias ``swish``).")
swish = silu
mish = _activation("mish", "``x * tanh(softplus(x))``.")


def gelu(x, approximate=False):
    """``x Φ(x)`` (Φ the standard normal CDF); ``approximate=True``: the tanh approximation
    ``x/2 (1 + tanh(√(2/π) (x + 0.044715 x³)))``."""
    if not isinstance(approximate, (bool, np.bool_)):
        raise TypeError(f"keras.activations.gelu: approximate must be a bool, got {approximate!r}")
    return _apply("gelu", x, approximate=bool(approximate))


def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    """``max(x, 0)``; only Keras's default ``negative_slope``, ``max_value`` and
    ``threshold`` are supported."""
    if negative_slope != 0.0 or max_value is not None or threshold != 0.0:
        raise NotImplementedError(
            "keras.activations.relu with negative_slope, max_value or threshold is not "
            "implemented in rustyml"
        )
    return _apply("relu", x)


def leaky_relu(x, negative_slope=0.2):
    """``x`` for ``x >= 0``, ``negative_slope * x`` below (``negative_slope > 0``)."""
    return _apply("leaky_relu", x, alpha=float(negative_slope))


def elu(x, alpha=1.0):
    """``x`` for ``x > 0``, ``alpha (e^x - 1)`` below (``alpha > 0``)."""
    return _apply("elu", x, alpha=float(alpha))


def softmax(x, axis=-1):
    """Softmax over the last axis (the only ``axis`` supported); ``x`` needs 2 axes or more."""
    if axis != -1:
        raise NotImplementedError(
            "keras.activations.softmax over an axis other than -1 is not implemented in rustyml"
        )
    return _apply("softmax", x)


for _fn in (gelu, relu, leaky_relu, elu, softmax):
    _fn.keras_activation_name = _fn.__name__


_MISSING = [
    "celu",
    "glu",
    "hard_shrink",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "log_sigmoid",
    "log_softmax",
    "relu6",
    "soft_shrink",
    "sparse_plus",
    "sparse_sigmoid",
    "sparsemax",
    "squareplus",
    "tanh_shrink",
    "threshold",
]
globals().update(stand_ins(__name__, _MISSING))
__getattr__ = unknown_attribute(__name__)
__all__ = [
    "elu",
    "exponential",
    "gelu",
    "hard_sigmoid",
    "leaky_relu",
    "linear",
    "mish",
    "relu",
    "selu",
    "sigmoid",
    "silu",
    "softmax",
    "softplus",
    "softsign",
    "swish",
    "tanh",
]
