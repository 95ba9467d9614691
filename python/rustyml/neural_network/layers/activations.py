"""Activation layers: ``Activation`` (a named activation) and one class per activation."""

from rustyml.neural_network.layers.base import Layer, _activation_arg, _register


@_register
class Activation(Layer):
    """Applies a named activation (``"relu"``, ``"softmax"``, ...)."""

    _CONFIG = ("activation",)

    def __init__(self, activation, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.activation = _activation_arg(activation, "activation", type(self).__name__)


def _simple_activation(class_name, doc):
    cls = type(class_name, (Layer,), {"__doc__": doc})
    cls.__module__ = __name__
    return _register(cls)


ReLU = _simple_activation("ReLU", "``max(x, 0)``.")


Softmax = _simple_activation("Softmax", "Softmax over the last axis.")


Sigmoid = _simple_activation("Sigmoid", "Logistic sigmoid.")


Tanh = _simple_activation("Tanh", "Hyperbolic tangent.")


@_register
class LeakyReLU(Layer):
    """``x`` for ``x >= 0``, ``negative_slope * x`` below."""

    _CONFIG = ("negative_slope",)

    def __init__(self, negative_slope=0.3, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.negative_slope = float(negative_slope)


@_register
class ELU(Layer):
    """``x`` for ``x > 0``, ``alpha (e^x - 1)`` below."""

    _CONFIG = ("alpha",)

    def __init__(self, alpha=1.0, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.alpha = float(alpha)


@_register
class PReLU(Layer):
    """Leaky ReLU with a trainable slope per element (shared along ``shared_axes``)."""

    _CONFIG = ("alpha_initializer", "shared_axes")

    def __init__(self, alpha_initializer=0.0, shared_axes=None, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.alpha_initializer = float(alpha_initializer)
        self.shared_axes = None if shared_axes is None else [int(a) for a in shared_axes]
