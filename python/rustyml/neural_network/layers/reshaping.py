"""Layers that move values without computing new ones: Flatten, Reshape, Permute,
RepeatVector, zero padding and cropping at the borders, and upsampling."""

from rustyml.neural_network.layers.base import (
    _MAX_U64,
    Layer,
    _channels_last,
    _check_positive_int,
    _optional_str,
    _register,
)


@_register
class Flatten(Layer):
    """Every axis but the batch axis into one."""


@_register
class Reshape(Layer):
    """To ``target_shape`` (without the batch axis; one entry may be -1)."""

    def __init__(self, target_shape, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.target_shape = tuple(int(v) for v in target_shape)

    def _own_config(self):
        return {"target_shape": list(self.target_shape)}


@_register
class Permute(Layer):
    """Reorders the non-batch axes; ``dims`` counts from 1 as in Keras."""

    def __init__(self, dims, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.dims = tuple(int(v) for v in dims)

    def _own_config(self):
        return {"dims": list(self.dims)}


@_register
class RepeatVector(Layer):
    """``(batch, features)`` to ``(batch, n, features)``."""

    _CONFIG = ("n",)

    def __init__(self, n, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.n = _check_positive_int(n, "n", "RepeatVector")


def _border_pairs(value, rank, name, layer):
    """Keras's padding/cropping forms to ``rank`` ``(before, after)`` pairs: an int (every end),
    a ``rank``-tuple of ints (symmetric per axis; for 1D a pair is ``(before, after)``), or a
    ``rank``-tuple of pairs."""

    def amount(v):
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= _MAX_U64:
            raise ValueError(
                f"{layer}: {name} amounts must be integers in [0, 2**64 - 1], got {value!r}"
            )
        return v

    if isinstance(value, int) and not isinstance(value, bool):
        return [[amount(value)] * 2 for _ in range(rank)]
    items = list(value)
    if rank == 1 and len(items) == 2 and all(isinstance(v, int) for v in items):
        return [[amount(items[0]), amount(items[1])]]
    if len(items) != rank:
        raise ValueError(
            f"{layer}: {name} needs {rank} entries (one per spatial axis), got {value!r}"
        )
    pairs = []
    for v in items:
        if isinstance(v, int) and not isinstance(v, bool):
            pairs.append([amount(v)] * 2)
        else:
            pair = list(v)
            if len(pair) != 2:
                raise ValueError(f"{layer}: {name} entry {v!r} is not a (before, after) pair")
            pairs.append([amount(pair[0]), amount(pair[1])])
    return pairs


def _factors(value, rank, layer):
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,) * rank
    factors = tuple(value)
    if len(factors) != rank:
        raise ValueError(f"{layer}: size needs {rank} factors, got {value!r}")
    for f in factors:
        _check_positive_int(f, "size", layer)
    return factors


class _Border(Layer):
    _rank = 0
    _arg = ""

    def __init__(self, amounts, data_format=None, name=None, input_shape=None):
        super().__init__(name, input_shape)
        _channels_last(data_format, type(self).__name__)
        setattr(self, self._arg, _border_pairs(amounts, self._rank, self._arg, type(self).__name__))

    def _own_config(self):
        return {self._arg: [list(p) for p in getattr(self, self._arg)]}


@_register
class ZeroPadding1D(_Border):
    """Zeros before/after the steps of ``(batch, steps, channels)``."""

    _rank, _arg = 1, "padding"

    def __init__(self, padding=1, data_format=None, name=None, input_shape=None):
        super().__init__(padding, data_format, name, input_shape)


@_register
class ZeroPadding2D(_Border):
    """Zeros around the rows and columns of ``(batch, rows, cols, channels)``."""

    _rank, _arg = 2, "padding"

    def __init__(self, padding=(1, 1), data_format=None, name=None, input_shape=None):
        super().__init__(padding, data_format, name, input_shape)


@_register
class ZeroPadding3D(_Border):
    """Zeros around the 3 spatial axes of ``(batch, d1, d2, d3, channels)``."""

    _rank, _arg = 3, "padding"

    def __init__(self, padding=(1, 1, 1), data_format=None, name=None, input_shape=None):
        super().__init__(padding, data_format, name, input_shape)


@_register
class Cropping1D(_Border):
    """Removes steps at both ends of ``(batch, steps, channels)``."""

    _rank, _arg = 1, "cropping"

    def __init__(self, cropping=(1, 1), name=None, input_shape=None):
        super().__init__(cropping, None, name, input_shape)


@_register
class Cropping2D(_Border):
    """Removes rows and columns at the edges of ``(batch, rows, cols, channels)``."""

    _rank, _arg = 2, "cropping"

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, name=None, input_shape=None):
        super().__init__(cropping, data_format, name, input_shape)


@_register
class Cropping3D(_Border):
    """Removes positions at the edges of the 3 spatial axes of ``(batch, d1, d2, d3, channels)``."""

    _rank, _arg = 3, "cropping"

    def __init__(
        self, cropping=((1, 1), (1, 1), (1, 1)), data_format=None, name=None, input_shape=None
    ):
        super().__init__(cropping, data_format, name, input_shape)


@_register
class UpSampling1D(Layer):
    """Repeats each step of ``(batch, steps, channels)`` ``size`` times."""

    _CONFIG = ("size",)

    def __init__(self, size=2, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.size = _check_positive_int(size, "size", "UpSampling1D")


_INTERPOLATIONS = ("nearest", "bilinear", "bicubic", "lanczos3", "lanczos5")


@_register
class UpSampling2D(Layer):
    """Enlarges rows and columns by ``size``; ``interpolation`` is ``"nearest"`` (repeat),
    ``"bilinear"``, ``"bicubic"``, ``"lanczos3"`` or ``"lanczos5"`` (half-pixel centres, as
    ``keras.ops.image.resize``)."""

    def __init__(
        self, size=(2, 2), data_format=None, interpolation="nearest", name=None, input_shape=None
    ):
        super().__init__(name, input_shape)
        _channels_last(data_format, "UpSampling2D")
        self.size = _factors(size, 2, "UpSampling2D")
        if interpolation not in _INTERPOLATIONS:
            raise ValueError(
                f"UpSampling2D: interpolation must be one of {_INTERPOLATIONS}, got {interpolation!r}"
            )
        self.interpolation = _optional_str(interpolation, "interpolation", type(self).__name__)

    def _own_config(self):
        return {"size": list(self.size), "interpolation": self.interpolation}


@_register
class UpSampling3D(Layer):
    """Repeats positions of ``(batch, d1, d2, d3, channels)`` ``size[k]`` times along axis k."""

    def __init__(self, size=(2, 2, 2), data_format=None, name=None, input_shape=None):
        super().__init__(name, input_shape)
        _channels_last(data_format, "UpSampling3D")
        self.size = _factors(size, 3, "UpSampling3D")

    def _own_config(self):
        return {"size": list(self.size)}
