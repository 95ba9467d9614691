"""Keras-style layers: declarative objects holding a config.

A layer here computes nothing: it is a name plus Keras's constructor arguments. ``Sequential``
hands the list of configs (``get_config()`` plus the class name) to one native model class,
which builds the Rust layers; a saved file stores the same configs. Adding a layer is one class
below (its Keras arguments) plus one entry in the native builder.
"""

_REGISTRY = {}


def _register(cls):
    _REGISTRY[cls.__name__] = cls
    return cls


def _check_positive_int(value, name, layer):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{layer}: {name} must be a positive integer, got {value!r}")
    return value


def _shape_tuple(value, name, layer):
    if value is None:
        return None
    try:
        shape = tuple(int(v) for v in value)
    except TypeError:
        shape = (int(value),)
    if any(v < 1 for v in shape):
        raise ValueError(f"{layer}: {name} must hold positive sizes, got {value!r}")
    return shape


class Layer:
    """Base class: Keras's ``name``, ``input_shape`` (without the batch axis) and config."""

    def __init__(self, name=None, input_shape=None):
        self.name = name
        self.input_shape = _shape_tuple(input_shape, "input_shape", type(self).__name__)

    def _own_config(self):
        return {}

    def get_config(self):
        """Keras-style config: every constructor argument, JSON-serialisable."""
        config = {"name": self.name}
        if self.input_shape is not None:
            config["input_shape"] = list(self.input_shape)
        config.update(self._own_config())
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)

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

    def __init__(self, units, activation=None, name=None, input_shape=None, seed=None):
        super().__init__(name, input_shape)
        self.units = _check_positive_int(units, "units", "Dense")
        self.activation = activation
        self.seed = seed

    def _own_config(self):
        return {"units": self.units, "activation": self.activation, "seed": self.seed}


@_register
class Embedding(Layer):
    """Integer indices ``(batch, steps)`` to vectors ``(batch, steps, output_dim)``."""

    def __init__(self, input_dim, output_dim, name=None, input_shape=None, seed=None):
        super().__init__(name, input_shape)
        self.input_dim = _check_positive_int(input_dim, "input_dim", "Embedding")
        self.output_dim = _check_positive_int(output_dim, "output_dim", "Embedding")
        self.seed = seed

    def _own_config(self):
        return {"input_dim": self.input_dim, "output_dim": self.output_dim, "seed": self.seed}


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
        self.activation = activation

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
        self.seed = seed

    def _own_config(self):
        return {"rate": self.rate, "seed": self.seed}


def _spatial_dropout(class_name, rank):
    def __init__(self, rate, seed=None, name=None, input_shape=None):
        Layer.__init__(self, name, input_shape)
        rate = float(rate)
        if not 0.0 <= rate < 1.0:
            raise ValueError(f"{class_name}: rate must be in [0, 1), got {rate}")
        self.rate = rate
        self.seed = seed

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
        self.seed = seed

    def _own_config(self):
        return {"stddev": self.stddev, "seed": self.seed}


@_register
class GaussianDropout(Layer):
    """Multiplies by ``N(1, rate / (1 - rate))`` noise in training."""

    def __init__(self, rate, seed=None, name=None, input_shape=None):
        super().__init__(name, input_shape)
        self.rate = float(rate)
        self.seed = seed

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
]


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
        self.activation = activation
        self.recurrent_activation = recurrent_activation
        self.use_bias = bool(use_bias)
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.seed = seed
        if not self.use_bias:
            raise ValueError(f"{layer}: use_bias=False is not supported (the layer always has a bias)")
        if self.return_state:
            raise ValueError(
                f"{layer}: return_state=True returns several tensors, which a Sequential model "
                "cannot pass on; use return_sequences instead"
            )

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
    ):
        super().__init__(
            units, activation, "sigmoid", use_bias, return_sequences, return_state, go_backwards, seed, name, input_shape
        )

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
            raise ValueError(
                f"Bidirectional: layer must be a SimpleRNN, LSTM or GRU, got {type(layer).__name__}"
            )
        if merge_mode not in self._MODES:
            raise ValueError(
                f"Bidirectional: merge_mode must be one of {self._MODES} (a list of outputs "
                f"cannot feed a Sequential model), got {merge_mode!r}"
            )
        self.layer = layer
        self.merge_mode = merge_mode

    def _own_config(self):
        return {"layer": serialize(self.layer), "merge_mode": self.merge_mode}


__all__ += ["Bidirectional", "GRU", "LSTM", "SimpleRNN"]
