"""The base ``Layer`` (Keras's ``name``, ``input_shape`` and config; its weights read
through the model holding it), the class registry behind ``serialize`` / ``deserialize``, and
the argument checks the layer families share."""

import functools

import numpy as np

from rustyml.neural_network import initializers as _initializers
from rustyml.neural_network import regularizers as _regularizers
from rustyml.neural_network._config import _arguments  # noqa: F401 - the layer families' helper

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


def _optional_str(value, name, layer):
    """A name-like argument (``name``, ``activation``, ``padding``, ...): ``None`` or a str."""
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{layer}: {name} must be None or a string, got {type(value).__name__}")
    return value


def _activation_arg(value, name, layer):
    """A layer's ``activation``-style argument as the name Keras writes in configs: ``None``,
    a name (``"swish"`` becomes ``"silu"``, as Keras writes it) or a ``keras.activations``
    function (which carries its name)."""
    if value is None:
        return None
    if isinstance(value, str):
        return "silu" if value == "swish" else value
    keras_name = getattr(value, "keras_activation_name", None)
    if callable(value) and isinstance(keras_name, str):
        return keras_name
    raise TypeError(
        f"{layer}: {name} must be None, an activation name or a keras.activations function, "
        f"got {type(value).__name__}"
    )


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
            # the constructed class, not the one defining ``__init__``: a shared base
            # constructor (``_Depthwise``) serves classes that take initializers
            if _takes_initializers(type(self)):
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

    # The constructor arguments the config holds besides ``name`` and ``input_shape``, in
    # Keras's order, each read back from the attribute of its name; a layer whose config
    # writes a value differently overrides ``_own_config``.
    _CONFIG = ()

    def _own_config(self):
        return {key: getattr(self, key) for key in self._CONFIG}

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


def remember_model(model, layers):
    """Each of ``layers`` remembers (weakly) the built ``model`` holding it, for its
    ``get_weights`` / ``set_weights``."""
    import weakref

    for layer in layers:
        if isinstance(layer, Layer):
            layer._model_ref = weakref.ref(model)


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
