"""Normalisation layers: over the batch, each sample, groups or instances of channels, or to unit norm."""

from rustyml.neural_network.layers.base import Layer, _check_positive_int, _register


@_register
class BatchNormalization(Layer):
    """Normalises over the batch (and every non-channel axis) with running statistics."""

    _CONFIG = ("momentum", "epsilon")

    def __init__(self, momentum=0.99, epsilon=1e-3, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.momentum = float(momentum)
        self.epsilon = float(epsilon)


@_register
class LayerNormalization(Layer):
    """Normalises each sample over ``axis`` (default: the last)."""

    _CONFIG = ("axis", "epsilon")

    def __init__(self, axis=-1, epsilon=1e-3, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.axis = axis if isinstance(axis, int) else [int(a) for a in axis]
        self.epsilon = float(epsilon)


@_register
class GroupNormalization(Layer):
    """Normalises each sample over groups of channels."""

    _CONFIG = ("groups", "epsilon")

    def __init__(self, groups=32, epsilon=1e-3, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.groups = _check_positive_int(groups, "groups", "GroupNormalization")
        self.epsilon = float(epsilon)


@_register
class InstanceNormalization(Layer):
    """Normalises each sample and channel over its spatial axes."""

    _CONFIG = ("epsilon",)

    def __init__(self, epsilon=1e-3, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.epsilon = float(epsilon)


@_register
class UnitNormalization(Layer):
    """Scales each sample to unit L2 norm over ``axis``."""

    _CONFIG = ("axis",)

    def __init__(self, axis=-1, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.axis = axis if isinstance(axis, int) else [int(a) for a in axis]
