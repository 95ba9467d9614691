"""Convolution layers: the standard and transposed convolutions (channels-last, Keras's
arguments), and the depthwise and separable ones."""

from rustyml.neural_network.layers.base import (
    Layer,
    _activation_arg,
    _arguments,
    _channels_last,
    _check_positive_int,
    _check_seed,
    _optional_str,
    _positive_ints,
    _register,
)


class _Conv(Layer):
    """Shared arguments of Conv1D/2D/3D and their transposes (Keras's names and defaults)."""

    _rank = 0
    # Keras allows "causal" on Conv1D alone.
    _paddings = ("valid", "same")

    _CONFIG = (
        "filters",
        "kernel_size",
        "strides",
        "padding",
        "dilation_rate",
        "activation",
        "use_bias",
        "seed",
    )

    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        dilation_rate=1,
        activation=None,
        use_bias=True,
        name=None,
        input_shape=None,
        seed=None,
    ):
        super().__init__(name, input_shape)
        layer = type(self).__name__
        self.filters = _check_positive_int(filters, "filters", layer)
        self.kernel_size = _positive_ints(kernel_size, self._rank, "kernel_size", layer)
        self.strides = _positive_ints(strides, self._rank, "strides", layer)
        self.dilation_rate = _positive_ints(dilation_rate, self._rank, "dilation_rate", layer)
        if not isinstance(padding, str) or padding.lower() not in self._paddings:
            allowed = " or ".join(repr(p) for p in self._paddings)
            raise ValueError(f"{layer}: padding must be {allowed}, got {padding!r}")
        self.padding = padding.lower()
        self.activation = _activation_arg(activation, "activation", type(self).__name__)
        self.use_bias = bool(use_bias)
        self.seed = _check_seed(seed, type(self).__name__)


@_register
class Conv1D(_Conv):
    """1D cross-correlation over ``(batch, steps, channels)``; kernel ``(k, channels, filters)``.

    ``padding="causal"`` adds ``dilation_rate * (kernel_size - 1)`` zeros before the sequence
    only, so output step ``t`` never sees a later input (``ceil(steps / strides)`` outputs).
    """

    _rank = 1
    _paddings = ("valid", "same", "causal")


@_register
class Conv2D(_Conv):
    """2D cross-correlation over ``(batch, h, w, channels)``; kernel ``(kh, kw, channels, filters)``."""

    _rank = 2


@_register
class Conv3D(_Conv):
    """3D cross-correlation over ``(batch, d, h, w, channels)``; kernel ``(kd, kh, kw, channels, filters)``."""

    _rank = 3


@_register
class Conv1DTranspose(_Conv):
    """Conv1D's input gradient as a layer; kernel ``(k, filters, channels)``; length ``n*s + max(k-s, 0)`` (valid) or ``n*s`` (same)."""

    _rank = 1


@_register
class Conv2DTranspose(_Conv):
    """Conv2D's input gradient as a layer; kernel ``(kh, kw, filters, channels)``."""

    _rank = 2


@_register
class Conv3DTranspose(_Conv):
    """Conv3D's input gradient as a layer; kernel ``(kd, kh, kw, filters, channels)``."""

    _rank = 3


class _DepthwiseFamily(Layer):
    """Shared arguments of the depthwise and separable convolutions (channels-last only).

    ``_Depthwise`` and ``_Separable`` state each family's public signature (Keras's order and
    defaults) and hand every argument on here by name (``_arguments(locals())``)."""

    _RANK = 1
    _SEPARABLE = False

    def __init__(
        self,
        filters,
        kernel_size,
        strides,
        padding,
        depth_multiplier,
        data_format,
        dilation_rate,
        activation,
        use_bias,
        name,
        input_shape,
        seed,
    ):
        super().__init__(name, input_shape)
        layer = type(self).__name__
        if self._SEPARABLE:
            self.filters = _check_positive_int(filters, "filters", layer)
        self.kernel_size = _positive_ints(kernel_size, self._RANK, "kernel_size", layer)
        self.strides = _positive_ints(strides, self._RANK, "strides", layer)
        self.dilation_rate = _positive_ints(dilation_rate, self._RANK, "dilation_rate", layer)
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError(
                f"{layer}: strides {self.strides} > 1 and dilation_rate {self.dilation_rate} > 1 "
                "cannot be combined (as in Keras)"
            )
        padding = str(padding).lower()
        if padding not in ("valid", "same"):
            raise ValueError(f"{layer}: padding must be 'valid' or 'same', got {padding!r}")
        self.padding = _optional_str(padding, "padding", type(self).__name__)
        _channels_last(data_format, layer)
        self.depth_multiplier = _check_positive_int(depth_multiplier, "depth_multiplier", layer)
        self.activation = _activation_arg(activation, "activation", type(self).__name__)
        self.use_bias = bool(use_bias)
        self.seed = _check_seed(seed, type(self).__name__)

    def _own_config(self):
        config = {"filters": self.filters} if self._SEPARABLE else {}
        config.update(
            {
                "kernel_size": list(self.kernel_size),
                "strides": list(self.strides),
                "padding": self.padding,
                "depth_multiplier": self.depth_multiplier,
                "dilation_rate": list(self.dilation_rate),
                "activation": self.activation,
                "use_bias": self.use_bias,
                "seed": self.seed,
            }
        )
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config.pop("data_format", None)
        return cls(**config)


class _Depthwise(_DepthwiseFamily):
    """Keras's DepthwiseConv1D/2D arguments; the rank is the subclass's (an int stride or
    dilation stands for every axis)."""

    def __init__(
        self,
        kernel_size,
        strides=1,
        padding="valid",
        depth_multiplier=1,
        data_format=None,
        dilation_rate=1,
        activation=None,
        use_bias=True,
        name=None,
        input_shape=None,
        seed=None,
    ):
        super().__init__(filters=None, **_arguments(locals()))


class _Separable(_DepthwiseFamily):
    """Keras's SeparableConv1D/2D arguments (``filters`` first, ``depth_multiplier`` after
    ``dilation_rate``); the rank is the subclass's."""

    _SEPARABLE = True

    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        data_format=None,
        dilation_rate=1,
        depth_multiplier=1,
        activation=None,
        use_bias=True,
        name=None,
        input_shape=None,
        seed=None,
    ):
        super().__init__(**_arguments(locals()))


@_register
class DepthwiseConv1D(_Depthwise):
    """Per-channel 1-D convolution: ``(batch, steps, C)`` to ``(batch, out, C * depth_multiplier)``;
    kernel ``(k, C, depth_multiplier)``, bias ``(C * depth_multiplier,)``."""

    _RANK = 1


@_register
class DepthwiseConv2D(_Depthwise):
    """Per-channel 2-D convolution: ``(batch, h, w, C)`` to ``(batch, oh, ow, C * depth_multiplier)``;
    kernel ``(kh, kw, C, depth_multiplier)``, bias ``(C * depth_multiplier,)``."""

    _RANK = 2


@_register
class SeparableConv1D(_Separable):
    """Depthwise 1-D convolution then a pointwise one: ``(batch, steps, C)`` to
    ``(batch, out, filters)``; kernels ``(k, C, dm)`` and ``(1, C * dm, filters)``, bias
    ``(filters,)``."""

    _RANK = 1


@_register
class SeparableConv2D(_Separable):
    """Depthwise 2-D convolution then a pointwise (1x1) one: ``(batch, h, w, C)`` to
    ``(batch, oh, ow, filters)``; kernels ``(kh, kw, C, dm)`` and ``(1, 1, C * dm, filters)``,
    bias ``(filters,)``."""

    _RANK = 2
