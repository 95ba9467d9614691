"""Keras-style layers: declarative objects holding a config.

A layer here computes nothing: it is a name plus Keras's constructor arguments. ``Sequential``
hands the list of configs (``get_config()`` plus the class name) to one native model class,
which builds the Rust layers; a saved file stores the same configs. Adding a layer is one class
below (its Keras arguments) plus one entry in the native builder.
"""

import functools
import math

import numpy as np

from rustyml.neural_network import initializers as _initializers
from rustyml.neural_network import regularizers as _regularizers

_REGISTRY = {}

# The largest size or seed any native layer can take (Rust's u64). Larger values are refused
# here with a ValueError; sizes below it that no machine can hold are refused natively, before
# anything is allocated, naming the layer and the bytes.
_MAX_U64 = 2**64 - 1


def _register(cls):
    _REGISTRY[cls.__name__] = cls
    return cls


def _check_positive_int(value, name, layer):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{layer}: {name} must be a positive integer, got {value!r}")
    if value > _MAX_U64:
        raise ValueError(f"{layer}: {name}={value} is too large (at most 2**64 - 1)")
    return value


def _check_seed(seed, layer):
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= _MAX_U64:
        raise ValueError(
            f"{layer}: seed must be None or an integer in [0, 2**64 - 1], got {seed!r}"
        )
    return seed


def _shape_tuple(value, name, layer):
    if value is None:
        return None
    try:
        shape = tuple(int(v) for v in value)
    except TypeError:
        shape = (int(value),)
    if any(v < 1 or v > _MAX_U64 for v in shape):
        raise ValueError(f"{layer}: {name} must hold positive sizes below 2**64, got {value!r}")
    return shape


def _positive_ints(value, rank, name, layer):
    """Keras's int-or-tuple spatial argument (kernel_size, strides, pool_size, dilation_rate)
    as a tuple of ``rank`` positive ints."""
    values = (value,) * rank if isinstance(value, int) and not isinstance(value, bool) else value
    try:
        values = tuple(values)
    except TypeError:
        raise ValueError(f"{layer}: {name} must be an int or {rank} ints, got {value!r}") from None
    if len(values) != rank or any(
        isinstance(v, bool) or not isinstance(v, int) or v < 1 or v > _MAX_U64 for v in values
    ):
        raise ValueError(f"{layer}: {name} must be an int or {rank} positive ints, got {value!r}")
    return values


def _check_bool(value, name, layer):
    if isinstance(value, str) or value not in (0, 1):
        raise ValueError(f"{layer}: {name} must be True or False, got {value!r}")
    return bool(value)


def _check_dropout_rate(value, name, layer):
    """A recurrent dropout rate in [0, 1) (Keras clips instead; see docs/KERAS.md)."""
    try:
        rate = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{layer}: {name} must be a number in [0, 1), got {value!r}") from None
    if not 0.0 <= rate < 1.0:
        raise ValueError(f"{layer}: {name} must be in [0, 1), got {value!r}")
    return rate


def _optional_str(value, name, layer):
    """A name-like argument (``name``, ``activation``, ``padding``, ...): ``None`` or a str."""
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{layer}: {name} must be None or a string, got {type(value).__name__}")
    return value


def _channels_last(data_format, layer):
    """Only channels-last is supported; returns Keras's name for it."""
    if data_format not in (None, "channels_last"):
        raise ValueError(
            f"{layer}: only data_format='channels_last' is supported, got {data_format!r}"
        )
    return "channels_last"


def _takes_initializers(cls):
    """Whether the layer has Keras's ``kernel_initializer``-style arguments (its weights)."""
    name = cls.__name__
    return name in ("Dense", "Embedding", "SimpleRNN", "LSTM", "GRU") or "Conv" in name


class Layer:
    """Base class: Keras's ``name``, ``input_shape`` (without the batch axis) and config."""

    def __init_subclass__(cls, **kwargs):
        # A constructor argument out of any representable range (``float(10**400)``,
        # ``int(float("inf"))``) is a bad value, so a ValueError as for any other bad value,
        # not Python's OverflowError.
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is None:
            return

        @functools.wraps(init)
        def checked_init(self, *args, **kw):
            if _takes_initializers(cls):
                _initializers._take_layer_arguments(self, kw)
            _regularizers.take_layer_arguments(self, kw)
            try:
                init(self, *args, **kw)
            except OverflowError as exc:
                raise ValueError(f"{cls.__name__}: argument out of range: {exc}") from None

        cls.__init__ = checked_init

    def __init__(self, name=None, input_shape=None):
        self.name = _optional_str(name, "name", type(self).__name__)
        self.input_shape = _shape_tuple(input_shape, "input_shape", type(self).__name__)

    def _own_config(self):
        return {}

    def get_config(self):
        """Keras-style config: every constructor argument, JSON-serialisable."""
        config = {"name": self.name}
        if self.input_shape is not None:
            config["input_shape"] = list(self.input_shape)
        config.update(self._own_config())
        config.update(_regularizers.layer_config(self))
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __getstate__(self):
        # the models holding the layer are not part of it
        state = dict(self.__dict__)
        state.pop("_owners", None)
        state.pop("_model_ref", None)
        return state

    def _owner(self):
        model = self.__dict__.get("_model_ref")
        model = model() if model is not None else None
        if model is None:
            raise ValueError(
                f"layer {self.name or type(self).__name__!r} has no weights yet: it gets them "
                "when a model holding it is built"
            )
        index = next(i for i, lay in enumerate(model.layers) if lay is self)
        counts = model._layer_weight_counts()
        start = sum(counts[:index])
        return model, start, counts[index]

    def get_weights(self):
        """This layer's arrays (Keras's order and shapes), from the built model last built
        with it."""
        model, start, n = self._owner()
        return list(model.get_weights()[start : start + n])

    def set_weights(self, weights):
        """Sets this layer's arrays (Keras's order and shapes) in the model last built with
        it; a wrong count, shape or value is refused and nothing changes."""
        model, start, n = self._owner()
        weights = list(weights)
        current = list(model.get_weights())
        if len(weights) != n:
            raise ValueError(
                f"layer {self.name or type(self).__name__!r} has {n} weight arrays, got "
                f"{len(weights)}"
            )
        for i, (new, old) in enumerate(zip(weights, current[start : start + n])):
            if tuple(np.shape(new)) != tuple(old.shape):
                raise ValueError(
                    f"layer {self.name or type(self).__name__!r}: weight {i} must have shape "
                    f"{tuple(old.shape)}, got {tuple(np.shape(new))}"
                )
        current[start : start + n] = weights
        model.set_weights(current)

    @property
    def weights(self):
        return self.get_weights()

    def __call__(self, inputs, *args, **kwargs):
        """Keras's functional API: called on symbolic tensors (``keras.Input``...), records
        the call and returns the output tensor (see ``rustyml.keras.Model``)."""
        from rustyml.keras._functional import call_layer

        return call_layer(self, inputs, *args, **kwargs)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._own_config().items())
        return f"{type(self).__name__}({args})"


def serialize(layer):
    """``{"class_name": ..., "config": ...}`` as Keras writes it."""
    return {"class_name": type(layer).__name__, "config": layer.get_config()}


def deserialize(spec):
    """The layer a ``serialize`` dict describes; ``ValueError`` for an unknown class."""
    name = spec.get("class_name")
    cls = _REGISTRY.get(name)
    if cls is None:
        raise ValueError(f"unknown layer class {name!r}; known: {sorted(_REGISTRY)}")
    return cls.from_config(dict(spec.get("config", {})))


@_register
class Dense(Layer):
    """``activation(x @ kernel + bias)``; kernel ``(in, units)``, bias ``(units,)``."""

    def __init__(
        self, units, activation=None, use_bias=True, name=None, input_shape=None, seed=None
    ):
        super().__init__(name, input_shape)
        self.units = _check_positive_int(units, "units", "Dense")
        self.activation = _optional_str(activation, "activation", type(self).__name__)
        self.use_bias = bool(use_bias)
        self.seed = _check_seed(seed, type(self).__name__)

    def _own_config(self):
        return {
            "units": self.units,
            "activation": self.activation,
            "use_bias": self.use_bias,
            "seed": self.seed,
        }


@_register
class Embedding(Layer):
    """Integer indices ``(batch, steps)`` to vectors ``(batch, steps, output_dim)``.

    ``mask_zero=True``: index 0 is padding; the output carries Keras's mask (``input != 0``)
    to the layers after it, and the recurrent layers skip the masked steps. As in Keras, row 0
    of the table stays, so ``input_dim`` counts it (vocabulary size + 1)."""

    def __init__(
        self, input_dim, output_dim, name=None, input_shape=None, seed=None, mask_zero=False
    ):
        super().__init__(name, input_shape)
        self.input_dim = _check_positive_int(input_dim, "input_dim", "Embedding")
        self.output_dim = _check_positive_int(output_dim, "output_dim", "Embedding")
        self.seed = _check_seed(seed, type(self).__name__)
        self.mask_zero = _check_bool(mask_zero, "mask_zero", "Embedding")

    def _own_config(self):
        return {
            "input_dim": self.input_dim,
            "output_dim": self.output_dim,
            "seed": self.seed,
            "mask_zero": self.mask_zero,
        }


@_register
class Masking(Layer):
    """Keras's ``Masking``: a step whose features all equal ``mask_value`` is padding. The
    output is the input with those steps zeroed, and it carries Keras's mask
    (``any(x != mask_value)`` over the last axis) to the layers after it."""

    def __init__(self, mask_value=0.0, name=None, input_shape=None):
        super().__init__(name, input_shape)
        try:
            value = float(mask_value)
        except (TypeError, ValueError):
            raise ValueError(f"Masking: mask_value must be a number, got {mask_value!r}") from None
        if math.isnan(value):  # NaN equals nothing
            raise ValueError("Masking: mask_value must not be NaN (nothing would be masked)")
        self.mask_value = value

    def _own_config(self):
        return {"mask_value": self.mask_value}


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

    def __init__(self, n, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.n = _check_positive_int(n, "n", "RepeatVector")

    def _own_config(self):
        return {"n": self.n}


@_register
class Identity(Layer):
    """Passes its input through."""


@_register
class Activation(Layer):
    """Applies a named activation (``"relu"``, ``"softmax"``, ...)."""

    def __init__(self, activation, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.activation = _optional_str(activation, "activation", type(self).__name__)

    def _own_config(self):
        return {"activation": self.activation}


def _simple_activation(class_name, doc):
    def _own_config(self):
        return {}

    cls = type(class_name, (Layer,), {"__doc__": doc, "_own_config": _own_config})
    cls.__module__ = __name__
    return _register(cls)


ReLU = _simple_activation("ReLU", "``max(x, 0)``.")
Softmax = _simple_activation("Softmax", "Softmax over the last axis.")
Sigmoid = _simple_activation("Sigmoid", "Logistic sigmoid.")
Tanh = _simple_activation("Tanh", "Hyperbolic tangent.")


@_register
class LeakyReLU(Layer):
    """``x`` for ``x >= 0``, ``negative_slope * x`` below."""

    def __init__(self, negative_slope=0.3, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.negative_slope = float(negative_slope)

    def _own_config(self):
        return {"negative_slope": self.negative_slope}


@_register
class ELU(Layer):
    """``x`` for ``x > 0``, ``alpha (e^x - 1)`` below."""

    def __init__(self, alpha=1.0, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.alpha = float(alpha)

    def _own_config(self):
        return {"alpha": self.alpha}


@_register
class PReLU(Layer):
    """Leaky ReLU with a trainable slope per element (shared along ``shared_axes``)."""

    def __init__(self, alpha_initializer=0.0, shared_axes=None, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.alpha_initializer = float(alpha_initializer)
        self.shared_axes = None if shared_axes is None else [int(a) for a in shared_axes]

    def _own_config(self):
        return {"alpha_initializer": self.alpha_initializer, "shared_axes": self.shared_axes}


@_register
class Dropout(Layer):
    """Zeroes a ``rate`` fraction of inputs in training, scaling the rest by ``1/(1-rate)``."""

    def __init__(self, rate, seed=None, name=None, input_shape=None):
        super().__init__(name, input_shape)
        rate = float(rate)
        if not 0.0 <= rate < 1.0:
            raise ValueError(f"Dropout: rate must be in [0, 1), got {rate}")
        self.rate = rate
        self.seed = _check_seed(seed, type(self).__name__)

    def _own_config(self):
        return {"rate": self.rate, "seed": self.seed}


def _spatial_dropout(class_name, rank):
    def __init__(self, rate, seed=None, name=None, input_shape=None):
        Layer.__init__(self, name, input_shape)
        rate = float(rate)
        if not 0.0 <= rate < 1.0:
            raise ValueError(f"{class_name}: rate must be in [0, 1), got {rate}")
        self.rate = rate
        self.seed = _check_seed(seed, type(self).__name__)

    def _own_config(self):
        return {"rate": self.rate, "seed": self.seed}

    doc = f"Drops whole channels of {rank}-D feature maps in training (Keras's {class_name})."
    cls = type(
        class_name, (Layer,), {"__doc__": doc, "__init__": __init__, "_own_config": _own_config}
    )
    cls.__module__ = __name__
    return _register(cls)


SpatialDropout1D = _spatial_dropout("SpatialDropout1D", 1)
SpatialDropout2D = _spatial_dropout("SpatialDropout2D", 2)
SpatialDropout3D = _spatial_dropout("SpatialDropout3D", 3)


@_register
class GaussianNoise(Layer):
    """Adds ``N(0, stddev)`` noise in training."""

    def __init__(self, stddev, seed=None, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.stddev = float(stddev)
        self.seed = _check_seed(seed, type(self).__name__)

    def _own_config(self):
        return {"stddev": self.stddev, "seed": self.seed}


@_register
class GaussianDropout(Layer):
    """Multiplies by ``N(1, rate / (1 - rate))`` noise in training."""

    def __init__(self, rate, seed=None, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.rate = float(rate)
        self.seed = _check_seed(seed, type(self).__name__)

    def _own_config(self):
        return {"rate": self.rate, "seed": self.seed}


@_register
class BatchNormalization(Layer):
    """Normalises over the batch (and every non-channel axis) with running statistics."""

    def __init__(self, momentum=0.99, epsilon=1e-3, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.momentum = float(momentum)
        self.epsilon = float(epsilon)

    def _own_config(self):
        return {"momentum": self.momentum, "epsilon": self.epsilon}


@_register
class LayerNormalization(Layer):
    """Normalises each sample over ``axis`` (default: the last)."""

    def __init__(self, axis=-1, epsilon=1e-3, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.axis = axis if isinstance(axis, int) else [int(a) for a in axis]
        self.epsilon = float(epsilon)

    def _own_config(self):
        return {"axis": self.axis, "epsilon": self.epsilon}


@_register
class GroupNormalization(Layer):
    """Normalises each sample over groups of channels."""

    def __init__(self, groups=32, epsilon=1e-3, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.groups = _check_positive_int(groups, "groups", "GroupNormalization")
        self.epsilon = float(epsilon)

    def _own_config(self):
        return {"groups": self.groups, "epsilon": self.epsilon}


@_register
class InstanceNormalization(Layer):
    """Normalises each sample and channel over its spatial axes."""

    def __init__(self, epsilon=1e-3, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.epsilon = float(epsilon)

    def _own_config(self):
        return {"epsilon": self.epsilon}


@_register
class UnitNormalization(Layer):
    """Scales each sample to unit L2 norm over ``axis``."""

    def __init__(self, axis=-1, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.axis = axis if isinstance(axis, int) else [int(a) for a in axis]

    def _own_config(self):
        return {"axis": self.axis}


# --- nnshape family: border (padding / cropping) and upsampling layers ---


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

    def __init__(self, size=2, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.size = _check_positive_int(size, "size", "UpSampling1D")

    def _own_config(self):
        return {"size": self.size}


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


__all__ = [  # noqa: RUF022 - grouped: base and helpers, then layers
    "Layer",
    "deserialize",
    "serialize",
    "Activation",
    "BatchNormalization",
    "Dense",
    "Dropout",
    "ELU",
    "Embedding",
    "Masking",
    "Flatten",
    "GaussianDropout",
    "GaussianNoise",
    "GroupNormalization",
    "Identity",
    "InstanceNormalization",
    "LayerNormalization",
    "LeakyReLU",
    "PReLU",
    "Permute",
    "ReLU",
    "RepeatVector",
    "Reshape",
    "Sigmoid",
    "Softmax",
    "SpatialDropout1D",
    "SpatialDropout2D",
    "SpatialDropout3D",
    "Tanh",
    "UnitNormalization",
    # nnshape family
    "Cropping1D",
    "Cropping2D",
    "Cropping3D",
    "UpSampling1D",
    "UpSampling2D",
    "UpSampling3D",
    "ZeroPadding1D",
    "ZeroPadding2D",
    "ZeroPadding3D",
]


# --- pooling family ---------------------------------------------------------------------------


class _Pooling(Layer):
    """Max or average windows over ``_rank`` spatial axes of channels-last inputs."""

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

    def __init__(self, data_format=None, keepdims=False, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.data_format = _channels_last(data_format, type(self).__name__)
        self.keepdims = bool(keepdims)

    def _own_config(self):
        return {"data_format": self.data_format, "keepdims": self.keepdims}


@_register
class MaxPooling1D(_Pooling):
    """Maximum over windows of ``pool_size`` steps of ``(batch, steps, channels)`` inputs."""

    _rank = 1


@_register
class MaxPooling2D(_Pooling):
    """Maximum over ``pool_size`` windows of ``(batch, height, width, channels)`` inputs."""

    _rank = 2

    def __init__(
        self,
        pool_size=(2, 2),
        strides=None,
        padding="valid",
        data_format=None,
        name=None,
        input_shape=None,
    ):
        super().__init__(pool_size, strides, padding, data_format, name, input_shape)


@_register
class MaxPooling3D(_Pooling):
    """Maximum over ``pool_size`` windows of ``(batch, depth, height, width, channels)`` inputs."""

    _rank = 3

    def __init__(
        self,
        pool_size=(2, 2, 2),
        strides=None,
        padding="valid",
        data_format=None,
        name=None,
        input_shape=None,
    ):
        super().__init__(pool_size, strides, padding, data_format, name, input_shape)


@_register
class AveragePooling1D(_Pooling):
    """Mean over windows of ``(batch, steps, channels)`` inputs (``same``: over real cells)."""

    _rank = 1


@_register
class AveragePooling2D(_Pooling):
    """Mean over windows of ``(batch, height, width, channels)`` inputs (``same``: over real cells)."""

    _rank = 2

    def __init__(
        self,
        pool_size=(2, 2),
        strides=None,
        padding="valid",
        data_format=None,
        name=None,
        input_shape=None,
    ):
        super().__init__(pool_size, strides, padding, data_format, name, input_shape)


@_register
class AveragePooling3D(_Pooling):
    """Mean over windows of ``(batch, depth, height, width, channels)`` inputs."""

    _rank = 3

    def __init__(
        self,
        pool_size=(2, 2, 2),
        strides=None,
        padding="valid",
        data_format=None,
        name=None,
        input_shape=None,
    ):
        super().__init__(pool_size, strides, padding, data_format, name, input_shape)


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


__all__ += [  # pooling family
    "AveragePooling1D",
    "AveragePooling2D",
    "AveragePooling3D",
    "GlobalAveragePooling1D",
    "GlobalAveragePooling2D",
    "GlobalAveragePooling3D",
    "GlobalMaxPooling1D",
    "GlobalMaxPooling2D",
    "GlobalMaxPooling3D",
    "MaxPooling1D",
    "MaxPooling2D",
    "MaxPooling3D",
]


# nnconv: the standard and transposed convolutions (channels-last, Keras's arguments)


class _Conv(Layer):
    """Shared arguments of Conv1D/2D/3D and their transposes (Keras's names and defaults)."""

    _rank = 0
    # Keras allows "causal" on Conv1D alone.
    _paddings = ("valid", "same")

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
        self.activation = _optional_str(activation, "activation", type(self).__name__)
        self.use_bias = bool(use_bias)
        self.seed = _check_seed(seed, type(self).__name__)

    def _own_config(self):
        return {
            "filters": self.filters,
            "kernel_size": self.kernel_size,
            "strides": self.strides,
            "padding": self.padding,
            "dilation_rate": self.dilation_rate,
            "activation": self.activation,
            "use_bias": self.use_bias,
            "seed": self.seed,
        }


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


__all__ += [  # nnconv
    "Conv1D",
    "Conv1DTranspose",
    "Conv2D",
    "Conv2DTranspose",
    "Conv3D",
    "Conv3DTranspose",
]


# Depthwise and separable convolutions (nndepth).


class _DepthwiseFamily(Layer):
    """Shared arguments of the depthwise and separable convolutions (channels-last only)."""

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
        self.activation = _optional_str(activation, "activation", type(self).__name__)
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


@_register
class DepthwiseConv1D(_DepthwiseFamily):
    """Per-channel 1-D convolution: ``(batch, steps, C)`` to ``(batch, out, C * depth_multiplier)``;
    kernel ``(k, C, depth_multiplier)``, bias ``(C * depth_multiplier,)``."""

    _RANK = 1

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
        super().__init__(
            None,
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
        )


@_register
class DepthwiseConv2D(_DepthwiseFamily):
    """Per-channel 2-D convolution: ``(batch, h, w, C)`` to ``(batch, oh, ow, C * depth_multiplier)``;
    kernel ``(kh, kw, C, depth_multiplier)``, bias ``(C * depth_multiplier,)``."""

    _RANK = 2

    def __init__(
        self,
        kernel_size,
        strides=(1, 1),
        padding="valid",
        depth_multiplier=1,
        data_format=None,
        dilation_rate=(1, 1),
        activation=None,
        use_bias=True,
        name=None,
        input_shape=None,
        seed=None,
    ):
        super().__init__(
            None,
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
        )


@_register
class SeparableConv1D(_DepthwiseFamily):
    """Depthwise 1-D convolution then a pointwise one: ``(batch, steps, C)`` to
    ``(batch, out, filters)``; kernels ``(k, C, dm)`` and ``(1, C * dm, filters)``, bias
    ``(filters,)``."""

    _RANK = 1
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
        super().__init__(
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
        )


@_register
class SeparableConv2D(_DepthwiseFamily):
    """Depthwise 2-D convolution then a pointwise (1x1) one: ``(batch, h, w, C)`` to
    ``(batch, oh, ow, filters)``; kernels ``(kh, kw, C, dm)`` and ``(1, 1, C * dm, filters)``,
    bias ``(filters,)``."""

    _RANK = 2
    _SEPARABLE = True

    def __init__(
        self,
        filters,
        kernel_size,
        strides=(1, 1),
        padding="valid",
        data_format=None,
        dilation_rate=(1, 1),
        depth_multiplier=1,
        activation=None,
        use_bias=True,
        name=None,
        input_shape=None,
        seed=None,
    ):
        super().__init__(
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
        )


__all__ += ["DepthwiseConv1D", "DepthwiseConv2D", "SeparableConv1D", "SeparableConv2D"]


# --- recurrent family (nnrnn) ---


class _Recurrent(Layer):
    """Shared Keras arguments of SimpleRNN, LSTM and GRU (input ``(batch, timesteps, features)``)."""

    def __init__(
        self,
        units,
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias=True,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        seed=None,
        name=None,
        input_shape=None,
    ):
        super().__init__(name, input_shape)
        layer = type(self).__name__
        self.units = _check_positive_int(units, "units", layer)
        self.activation = _optional_str(activation, "activation", type(self).__name__)
        self.recurrent_activation = _optional_str(
            recurrent_activation, "recurrent_activation", type(self).__name__
        )
        self.use_bias = bool(use_bias)
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.seed = _check_seed(seed, type(self).__name__)
        if self.return_state:
            raise ValueError(
                f"{layer}: return_state=True returns several tensors, which a Sequential model "
                "cannot pass on; use return_sequences instead"
            )

    def _set_dropout(self, dropout, recurrent_dropout, zero_output_for_mask):
        """Keras's ``dropout`` / ``recurrent_dropout`` (training only) and
        ``zero_output_for_mask`` (masked steps output zeros instead of the carried state)."""
        layer = type(self).__name__
        self.dropout = _check_dropout_rate(dropout, "dropout", layer)
        self.recurrent_dropout = _check_dropout_rate(recurrent_dropout, "recurrent_dropout", layer)
        self.zero_output_for_mask = _check_bool(zero_output_for_mask, "zero_output_for_mask", layer)

    def _own_config(self):
        return {
            "units": self.units,
            "activation": self.activation,
            "recurrent_activation": self.recurrent_activation,
            "use_bias": self.use_bias,
            "return_sequences": self.return_sequences,
            "return_state": self.return_state,
            "go_backwards": self.go_backwards,
            "seed": self.seed,
            "dropout": getattr(self, "dropout", 0.0),
            "recurrent_dropout": getattr(self, "recurrent_dropout", 0.0),
            "zero_output_for_mask": getattr(self, "zero_output_for_mask", False),
        }


@_register
class SimpleRNN(_Recurrent):
    """``h_t = activation(x_t @ kernel + h_{t-1} @ recurrent_kernel + bias)``.

    Weights as Keras: kernel ``(features, units)``, recurrent_kernel ``(units, units)``, bias ``(units,)``.
    """

    def __init__(
        self,
        units,
        activation="tanh",
        use_bias=True,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        seed=None,
        name=None,
        input_shape=None,
        dropout=0.0,
        recurrent_dropout=0.0,
        zero_output_for_mask=False,
    ):
        super().__init__(
            units,
            activation,
            "sigmoid",
            use_bias,
            return_sequences,
            return_state,
            go_backwards,
            seed,
            name,
            input_shape,
        )
        self._set_dropout(dropout, recurrent_dropout, zero_output_for_mask)

    def _own_config(self):
        config = super()._own_config()
        del config["recurrent_activation"]
        return config


@_register
class LSTM(_Recurrent):
    """Keras's LSTM; gate blocks ``[i | f | c | o]`` in kernel ``(features, 4 units)``,
    recurrent_kernel ``(units, 4 units)`` and bias ``(4 units,)``."""

    def __init__(
        self,
        units,
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias=True,
        unit_forget_bias=True,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        seed=None,
        name=None,
        input_shape=None,
        dropout=0.0,
        recurrent_dropout=0.0,
        zero_output_for_mask=False,
    ):
        super().__init__(
            units,
            activation,
            recurrent_activation,
            use_bias,
            return_sequences,
            return_state,
            go_backwards,
            seed,
            name,
            input_shape,
        )
        self._set_dropout(dropout, recurrent_dropout, zero_output_for_mask)
        self.unit_forget_bias = bool(unit_forget_bias)

    def _own_config(self):
        return {**super()._own_config(), "unit_forget_bias": self.unit_forget_bias}


@_register
class GRU(_Recurrent):
    """Keras's GRU; gate blocks ``[z | r | h]``. With ``reset_after=True`` (Keras's default) the
    bias is ``(2, 3 units)`` (input row, recurrent row), else ``(3 units,)``."""

    def __init__(
        self,
        units,
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias=True,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        reset_after=True,
        seed=None,
        name=None,
        input_shape=None,
        dropout=0.0,
        recurrent_dropout=0.0,
        zero_output_for_mask=False,
    ):
        super().__init__(
            units,
            activation,
            recurrent_activation,
            use_bias,
            return_sequences,
            return_state,
            go_backwards,
            seed,
            name,
            input_shape,
        )
        self._set_dropout(dropout, recurrent_dropout, zero_output_for_mask)
        self.reset_after = bool(reset_after)

    def _own_config(self):
        return {**super()._own_config(), "reset_after": self.reset_after}


@_register
class Bidirectional(Layer):
    """Runs ``layer`` forwards and a copy of it backwards, merging the outputs
    (``merge_mode`` one of ``"concat"``, ``"sum"``, ``"mul"``, ``"ave"``).

    Weights as Keras lists them: the forward layer's arrays, then the backward layer's.
    """

    _MODES = ("concat", "sum", "mul", "ave")

    def __init__(self, layer, merge_mode="concat", name=None, input_shape=None):
        super().__init__(name, input_shape)
        if isinstance(layer, dict):
            layer = deserialize(layer)
        if not isinstance(layer, _Recurrent):
            raise ValueError(  # noqa: TRY004 - Keras raises ValueError here
                f"Bidirectional: layer must be a SimpleRNN, LSTM or GRU, got {type(layer).__name__}"
            )
        if merge_mode not in self._MODES:
            raise ValueError(
                f"Bidirectional: merge_mode must be one of {self._MODES} (a list of outputs "
                f"cannot feed a Sequential model), got {merge_mode!r}"
            )
        if getattr(layer, "activity_regularizer", None) is not None:
            raise ValueError(
                "Bidirectional: an activity_regularizer on the wrapped layer is not supported by "
                "rustyml (its kernel, recurrent and bias regularizers are)"
            )
        self.layer = layer
        self.merge_mode = _optional_str(merge_mode, "merge_mode", type(self).__name__)

    def _own_config(self):
        return {"layer": serialize(self.layer), "merge_mode": self.merge_mode}


__all__ += ["GRU", "LSTM", "Bidirectional", "SimpleRNN"]


# --- preprocessing layers that compute inside a network, and the time-step wrapper ----------


def _float32_policy(dtype, layer):
    """Keras's ``dtype`` argument (a name or the ``DTypePolicy`` config Keras writes): rustyml
    networks compute in float32 only."""
    name = dtype
    if isinstance(dtype, dict):
        name = (dtype.get("config") or {}).get("name")
    if dtype is not None and str(name) != "float32":
        raise NotImplementedError(
            f"{layer}: dtype {name!r} is not implemented in rustyml (networks compute in float32)"
        )


def _keras_base(layer, trainable, dtype):
    """Keras's base-layer arguments every config Keras writes holds."""
    _float32_policy(dtype, type(layer).__name__)
    layer.trainable = bool(trainable)


def _finite_number(value, name, layer):
    """A real scalar (a Python or NumPy number), refused with a ValueError naming ``name``
    when it is not finite."""
    import math

    import numpy as np

    if isinstance(value, dict) or np.ndim(value) != 0:
        raise NotImplementedError(
            f"{layer}: a per-channel {name} (array) is not implemented in rustyml; give one number"
        )
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{layer}: {name} must be a number, got {value!r}")  # noqa: TRY004 - a bad argument value, as Keras
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{layer}: {name} must be a finite number, got {value!r}")
    return value


@_register
class Rescaling(Layer):
    """``inputs * scale + offset`` on every element, in float32 (Keras's preprocessing
    layer; ``scale=1/255`` maps pixel values to ``[0, 1]``). No weights; the gradient flows
    through, multiplied by ``scale``."""

    def __init__(self, scale, offset=0.0, name=None, input_shape=None, trainable=True, dtype=None):
        super().__init__(name, input_shape)
        self.scale = _finite_number(scale, "scale", "Rescaling")
        self.offset = _finite_number(offset, "offset", "Rescaling")
        _keras_base(self, trainable, dtype)

    def _own_config(self):
        return {
            "trainable": self.trainable,
            "dtype": "float32",
            "scale": self.scale,
            "offset": self.offset,
        }


def _statistic(value, name):
    """A ``mean``/``variance`` argument as nested lists of floats (its NumPy shape kept)."""
    import numpy as np

    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"Normalization: {name} must be a number or an array of numbers, got {value!r}"
        ) from None
    if not np.all(np.isfinite(a)):
        raise ValueError(f"Normalization: {name} must hold finite numbers, got {value!r}")
    if name == "variance" and np.any(a < 0):
        raise ValueError(f"Normalization: variance must be >= 0, got {value!r}")
    return a


@_register
class Normalization(Layer):
    """Keras 3's ``Normalization``: ``(inputs - mean) / max(sqrt(variance), 1e-7)``
    (``invert=True``: ``mean + inputs * max(sqrt(variance), 1e-7)``) with one mean and
    variance per index of ``axis`` (``None``: one scalar pair), broadcast over the other axes.

    The statistics are given (``mean=``, ``variance=``: the layer then has no weights, as in
    Keras) or computed by :meth:`adapt` (then they are the non-trainable weights ``mean``,
    ``variance`` and ``count``, in Keras's order and shapes). The gradient flows through
    (divided by the standard deviation), so the layer can sit inside a trained model."""

    # its weights are statistics: never trained, listed as non-trainable
    _statistics_only = True

    def __init__(
        self,
        axis=-1,
        mean=None,
        variance=None,
        invert=False,
        name=None,
        input_shape=None,
        trainable=True,
        dtype=None,
    ):
        super().__init__(name, input_shape)
        if axis is None:
            axis = ()
        elif isinstance(axis, (int,)) and not isinstance(axis, bool):
            axis = (axis,)
        try:
            axis = tuple(axis)
        except TypeError:
            raise ValueError(
                f"Normalization: axis must be an int, a tuple of ints or None, got {axis!r}"
            ) from None
        if any(isinstance(a, bool) or not isinstance(a, int) for a in axis):
            raise ValueError(
                f"Normalization: axis must be an int, a tuple of ints or None, got {axis!r}"
            )
        if len(set(axis)) != len(axis):
            raise ValueError(f"Normalization: axis {axis!r} names an axis twice")
        if (mean is None) != (variance is None):
            raise ValueError(
                "Normalization: mean and variance must be given together (or neither, for "
                f"adapt), got mean={mean!r} and variance={variance!r}"
            )
        if mean is not None:
            m, v = _statistic(mean, "mean"), _statistic(variance, "variance")
            if m.shape != v.shape:
                raise ValueError(
                    f"Normalization: mean and variance must have the same shape, got {m.shape} "
                    f"and {v.shape}"
                )
            if m.ndim > len(axis):
                raise ValueError(
                    f"Normalization: mean of shape {m.shape} has more axes than the "
                    f"{len(axis)} kept by axis={axis!r}"
                )
            mean, variance = m.tolist(), v.tolist()
        self.axis = axis
        self.mean = mean
        self.variance = variance
        self.invert = bool(invert)
        self._adapted = None
        _keras_base(self, trainable, dtype)

    def _own_config(self):
        return {
            "trainable": self.trainable,
            "dtype": "float32",
            "axis": list(self.axis),
            "invert": self.invert,
            "mean": self.mean,
            "variance": self.variance,
        }

    def adapt(self, data):
        """Computes the mean and population variance of ``data`` (a NumPy array, or an
        iterable of batches such as a list of arrays or a generator; ``(x, y)`` tuples give
        their ``x``) over every axis except ``axis``, in Rust with the crate's deterministic
        reduction, and stores them as the layer's weights, as Keras's ``adapt``. A model that
        already holds the layer is updated too. On error nothing changes."""
        import numpy as np

        from rustyml import _native

        if self.mean is not None:
            raise ValueError(
                "Normalization.adapt: this layer was given mean and variance; build it without "
                "them to adapt it"
            )
        if isinstance(data, (str, bytes, dict)):
            raise ValueError(f"Normalization.adapt: data must be an array or batches, got {data!r}")  # noqa: TRY004
        if hasattr(data, "shape") or not hasattr(data, "__iter__"):
            batches = [data]
        else:
            batches = [b[0] if isinstance(b, tuple) else b for b in data]
            if not batches:
                raise ValueError("Normalization.adapt: data is an empty iterable (no batches)")
        arrays = []
        for i, b in enumerate(batches):
            raw = np.asarray(b)
            if raw.dtype.kind not in "fiub":
                raise ValueError(
                    f"Normalization.adapt: data batch {i} has dtype {raw.dtype}, not real numbers"
                )
            arrays.append(np.ascontiguousarray(raw, dtype=np.float64))
        expected = self._adapted[0].shape if self._adapted is not None else None
        if self.input_shape is not None:
            full = (None, *self.input_shape)
            for i, a in enumerate(arrays):
                if a.ndim != len(full):
                    raise ValueError(
                        f"Normalization.adapt: data batch {i} of shape {a.shape} does not match "
                        f"the layer's input_shape {self.input_shape} (rank {len(full)} with the "
                        "batch axis)"
                    )
        mean, variance = _native.neural_network.normalization_adapt(arrays, list(self.axis))
        if expected is not None and mean.shape != expected and self._live_owners():
            raise ValueError(
                f"Normalization.adapt: data whose kept axes measure {mean.shape} does not fit "
                f"the model this layer is in (built for {expected})"
            )
        previous = self._adapted
        self._adapted = (mean, variance)
        try:
            for model in self._live_owners():
                model._load_adapted_statistics(self)
        except ValueError:
            self._adapted = previous
            raise

    def _live_owners(self):
        owners = [ref() for ref in self.__dict__.get("_owners", [])]
        return [m for m in owners if m is not None]


def remember_model(model, layers):
    """Each of ``layers`` remembers (weakly) the built ``model`` holding it, for its
    ``get_weights`` / ``set_weights``."""
    import weakref

    for layer in layers:
        if isinstance(layer, Layer):
            layer._model_ref = weakref.ref(model)


def apply_adapted_statistics(model, native, layers, weight_counts):
    """Loads every adapted ``Normalization``'s statistics into ``native`` (the freshly built
    model of ``layers``; ``weight_counts``: each layer's number of weight arrays) and
    remembers ``model`` in the layer, so a later ``adapt`` updates it too."""
    import weakref

    adapted = [
        (i, layer)
        for i, layer in enumerate(layers)
        if isinstance(layer, Normalization) and layer.mean is None
    ]
    if not adapted:
        return
    arrays = list(native.get_weights())
    starts = [sum(weight_counts[:i]) for i in range(len(weight_counts))]
    for i, layer in adapted:
        owners = [r for r in layer.__dict__.get("_owners", []) if r() not in (None, model)]
        layer._owners = [*owners, weakref.ref(model)]
        if layer._adapted is None:
            continue
        at = starts[i]
        for k, stat in enumerate(layer._adapted):
            if arrays[at + k].shape != stat.shape:
                raise ValueError(
                    f"Normalization {layer.name or i}: adapted on data whose kept axes measure "
                    f"{stat.shape}, but the model feeds it inputs whose kept axes measure "
                    f"{arrays[at + k].shape}"
                )
            arrays[at + k] = stat
    native.set_weights(arrays)


def adapted_layer_weights(native, layers, weight_counts, layer):
    """``native``'s weights with ``layer``'s adapted statistics in place of its own."""
    arrays = list(native.get_weights())
    i = next(k for k, lay in enumerate(layers) if lay is layer)
    at = sum(weight_counts[:i])
    for k, stat in enumerate(layer._adapted):
        if arrays[at + k].shape != stat.shape:
            raise ValueError(
                f"Normalization.adapt: data whose kept axes measure {stat.shape} does not fit "
                f"the model this layer is in (built for {arrays[at + k].shape})"
            )
        arrays[at + k] = stat
    return arrays


def _deserialize_keras(spec):
    """A layer from ``{"class_name", "config"}`` as Keras writes it: Keras's base-layer keys
    (``trainable``, a float32 ``dtype``) and its unset options (``None``-valued keys such as
    ``kernel_regularizer``) that the rustyml class does not take are dropped."""
    import inspect

    cls = _REGISTRY.get(spec.get("class_name"))
    if cls is None:
        return deserialize(spec)  # the unknown-class error
    config = dict(spec.get("config") or {})
    params = inspect.signature(cls.__init__).parameters
    trainable = config.get("trainable", True)
    if "trainable" not in params:
        config.pop("trainable", None)
    if "dtype" not in params:
        _float32_policy(config.pop("dtype", None), cls.__name__)
    for key in [k for k, v in config.items() if v is None and k not in params]:
        del config[key]
    layer = cls.from_config(config)
    if not trainable:
        layer.trainable = False
    return layer


@_register
class TimeDistributed(Layer):
    """Applies ``layer`` (one set of weights) to every slice of ``(batch, time, ...)`` inputs
    along axis 1; its weights are the wrapped layer's, in Keras's names and order. The inner
    layer sees the ``batch * time`` slices as one batch (Keras 3 calls it once per step: the
    same for every layer whose samples are independent; a ``BatchNormalization`` inside
    trains on statistics over all steps at once)."""

    def __init__(self, layer, name=None, input_shape=None, trainable=True, dtype=None):
        super().__init__(name, input_shape)
        if isinstance(layer, dict):
            layer = _deserialize_keras(layer)
        if not isinstance(layer, Layer):
            raise ValueError(  # noqa: TRY004 - Keras raises ValueError here
                f"TimeDistributed: layer must be a layer instance (e.g. Dense(8)), got {layer!r}"
            )
        if isinstance(layer, Bidirectional):
            raise NotImplementedError(
                "TimeDistributed(Bidirectional(...)) is not implemented in rustyml"
            )
        self.layer = layer
        _keras_base(self, trainable, dtype)

    def _own_config(self):
        return {"trainable": self.trainable, "dtype": "float32", "layer": serialize(self.layer)}


__all__ += ["Normalization", "Rescaling", "TimeDistributed"]
