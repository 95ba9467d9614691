"""Pooling layers: max and average windows, and global pooling over every position."""

from rustyml.neural_network.layers.base import (
    Layer,
    _channels_last,
    _optional_str,
    _positive_ints,
    _register,
)


class _Pooling(Layer):
    """Max or average windows over ``_rank`` spatial axes of channels-last inputs (an int
    ``pool_size`` or ``strides`` stands for every axis: the default 2 is 2 x 2 in 2-D)."""

    _rank = 1

    def __init__(
        self,
        pool_size=2,
        strides=None,
        padding="valid",
        data_format=None,
        name=None,
        input_shape=None,
    ):
        super().__init__(name, input_shape)
        layer = type(self).__name__
        self.pool_size = _positive_ints(pool_size, self._rank, "pool_size", layer)
        self.strides = (
            self.pool_size
            if strides is None
            else _positive_ints(strides, self._rank, "strides", layer)
        )
        padding = str(padding).lower()
        if padding not in ("valid", "same"):
            raise ValueError(f"{layer}: padding must be 'valid' or 'same', got {padding!r}")
        self.padding = _optional_str(padding, "padding", type(self).__name__)
        self.data_format = _channels_last(data_format, layer)

    def _own_config(self):
        return {
            "pool_size": list(self.pool_size),
            "strides": list(self.strides),
            "padding": self.padding,
            "data_format": self.data_format,
        }


class _GlobalPooling(Layer):
    """One value per channel over every spatial position; ``keepdims`` keeps unit axes."""

    _CONFIG = ("data_format", "keepdims")

    def __init__(self, data_format=None, keepdims=False, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.data_format = _channels_last(data_format, type(self).__name__)
        self.keepdims = bool(keepdims)


@_register
class MaxPooling1D(_Pooling):
    """Maximum over windows of ``pool_size`` steps of ``(batch, steps, channels)`` inputs."""

    _rank = 1


@_register
class MaxPooling2D(_Pooling):
    """Maximum over ``pool_size`` windows of ``(batch, height, width, channels)`` inputs."""

    _rank = 2


@_register
class MaxPooling3D(_Pooling):
    """Maximum over ``pool_size`` windows of ``(batch, depth, height, width, channels)`` inputs."""

    _rank = 3


@_register
class AveragePooling1D(_Pooling):
    """Mean over windows of ``(batch, steps, channels)`` inputs (``same``: over real cells)."""

    _rank = 1


@_register
class AveragePooling2D(_Pooling):
    """Mean over windows of ``(batch, height, width, channels)`` inputs (``same``: over real cells)."""

    _rank = 2


@_register
class AveragePooling3D(_Pooling):
    """Mean over windows of ``(batch, depth, height, width, channels)`` inputs."""

    _rank = 3


@_register
class GlobalMaxPooling1D(_GlobalPooling):
    """Maximum of each channel over all steps: ``(batch, channels)``."""


@_register
class GlobalMaxPooling2D(_GlobalPooling):
    """Maximum of each channel over height and width: ``(batch, channels)``."""


@_register
class GlobalMaxPooling3D(_GlobalPooling):
    """Maximum of each channel over depth, height and width: ``(batch, channels)``."""


@_register
class GlobalAveragePooling1D(_GlobalPooling):
    """Mean of each channel over all steps: ``(batch, channels)``."""


@_register
class GlobalAveragePooling2D(_GlobalPooling):
    """Mean of each channel over height and width: ``(batch, channels)``."""


@_register
class GlobalAveragePooling3D(_GlobalPooling):
    """Mean of each channel over depth, height and width: ``(batch, channels)``."""
