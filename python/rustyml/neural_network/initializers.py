"""Keras 3's weight initializers (``keras.initializers``), given to layers as
``kernel_initializer`` / ``bias_initializer`` / ``recurrent_initializer`` /
``embeddings_initializer`` / ``depthwise_initializer`` / ``pointwise_initializer``.

Distributions, fan computations (``compute_fans``: the last axis is fan-out, the one before it
fan-in, both times the receptive field of the leading axes; a vector uses its length for
both) and parameters are Keras's; the random numbers come from NumPy's generator, not JAX's
stream, so a seed gives the same weights in rustyml on every run, not Keras's weights. An
initializer with ``seed=`` gives the same values on every call, as in Keras; without one, a
model built with a seed draws from a stream fixed by the seed, the layer and the weight.
"""

import math
import numbers

import numpy as np

from rustyml.neural_network._config import _arguments, _Configurable, _real

# The standard deviation of a standard normal truncated to [-2, 2] (Keras's correction).
_TRUNCATED_STDDEV = 0.87962566103423978


def compute_fans(shape):
    """``(fan_in, fan_out)`` of a weight of ``shape``, as Keras computes them."""
    shape = tuple(int(s) for s in shape)
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = math.prod(shape[:-2])
    return shape[-2] * receptive, shape[-1] * receptive


class Initializer(_Configurable):
    """Base class: ``initializer(shape, dtype=None, rng=None)`` returns a float32 array."""

    seed = None
    # The constructor arguments the config holds, in Keras's order, each kept under its name.
    _CONFIG = ()

    def __call__(self, shape, dtype=None, rng=None):
        shape = tuple(int(s) for s in shape)
        if rng is None or self.seed is not None:
            rng = np.random.default_rng(self.seed)
        return np.asarray(self._draw(shape, rng), dtype=np.float32).reshape(shape)

    def _take_arguments(self, arguments):
        """Keep a built-in initializer's constructor arguments (``_arguments(locals())``):
        ``seed`` checked as a seed, every other one as a finite real number."""
        what = type(self).__name__
        for name, value in arguments.items():
            if name == "seed":
                self.seed = _check_seed(value, what)
            else:
                setattr(self, name, _real(value, what, name))

    def get_config(self):
        return {name: getattr(self, name) for name in self._CONFIG}


class Constant(Initializer):
    _CONFIG = ("value",)

    def __init__(self, value=0.0):
        self._take_arguments(_arguments(locals()))

    def _draw(self, shape, rng):
        return np.full(shape, self.value)


class Zeros(Initializer):
    def _draw(self, shape, rng):
        return np.zeros(shape)


class Ones(Initializer):
    def _draw(self, shape, rng):
        return np.ones(shape)


class Identity(Initializer):
    """``gain`` times the identity matrix (2-D weights only)."""

    _CONFIG = ("gain",)

    def __init__(self, gain=1.0):
        self._take_arguments(_arguments(locals()))

    def _draw(self, shape, rng):
        if len(shape) != 2:
            raise ValueError(
                f"Identity matrix initializer can only be used for 2D matrices. Received: "
                f"shape={shape} of rank {len(shape)}."
            )
        return self.gain * np.eye(*shape)


def _check_seed(seed, what):
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"{what}: seed must be an integer >= 0 or None, got {seed!r}")
    return int(seed)


class RandomNormal(Initializer):
    _CONFIG = ("mean", "stddev", "seed")

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self._take_arguments(_arguments(locals()))

    def _draw(self, shape, rng):
        return rng.normal(self.mean, self.stddev, shape)


class RandomUniform(Initializer):
    _CONFIG = ("minval", "maxval", "seed")

    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        self._take_arguments(_arguments(locals()))

    def _draw(self, shape, rng):
        return rng.uniform(self.minval, self.maxval, shape)


def _truncated_normal(rng, shape, stddev):
    """A normal of ``stddev`` truncated to two standard deviations (redrawn outside)."""
    out = rng.standard_normal(shape)
    bad = np.abs(out) > 2.0
    while bad.any():
        out[bad] = rng.standard_normal(int(bad.sum()))
        bad = np.abs(out) > 2.0
    return out * stddev


class TruncatedNormal(Initializer):
    _CONFIG = ("mean", "stddev", "seed")

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self._take_arguments(_arguments(locals()))

    def _draw(self, shape, rng):
        return self.mean + _truncated_normal(rng, shape, self.stddev)


class VarianceScaling(Initializer):
    """Samples of variance ``scale / n``, ``n`` the fan-in, the fan-out or their mean:
    truncated normal (stddev corrected for the truncation), untruncated normal, or uniform
    on ``±sqrt(3 scale / n)``."""

    _CONFIG = ("scale", "mode", "distribution", "seed")

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None):
        what = type(self).__name__
        self.scale = _real(scale, what, "scale")
        if self.scale <= 0:
            raise ValueError(f"Argument `scale` must be positive float. Received: scale={scale}")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid `mode` argument: {mode!r}")
        distribution = distribution.lower()
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError(f"Invalid `distribution` argument: {distribution!r}")
        self.mode, self.distribution = mode, distribution
        self.seed = _check_seed(seed, what)

    def _draw(self, shape, rng):
        fan_in, fan_out = compute_fans(shape)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        variance = self.scale / max(1.0, n)
        if self.distribution == "truncated_normal":
            return _truncated_normal(rng, shape, math.sqrt(variance) / _TRUNCATED_STDDEV)
        if self.distribution == "untruncated_normal":
            return rng.normal(0.0, math.sqrt(variance), shape)
        limit = math.sqrt(3.0 * variance)
        return rng.uniform(-limit, limit, shape)


def _variance_scaling(name, scale, mode, distribution):
    def __init__(self, seed=None):
        VarianceScaling.__init__(self, scale, mode, distribution, seed)

    return type(name, (VarianceScaling,), {"__init__": __init__, "_CONFIG": ("seed",)})


GlorotUniform = _variance_scaling("GlorotUniform", 1.0, "fan_avg", "uniform")
GlorotNormal = _variance_scaling("GlorotNormal", 1.0, "fan_avg", "truncated_normal")
HeUniform = _variance_scaling("HeUniform", 2.0, "fan_in", "uniform")
HeNormal = _variance_scaling("HeNormal", 2.0, "fan_in", "truncated_normal")
LecunUniform = _variance_scaling("LecunUniform", 1.0, "fan_in", "uniform")
LecunNormal = _variance_scaling("LecunNormal", 1.0, "fan_in", "truncated_normal")


class Orthogonal(Initializer):
    """``gain`` times the orthogonal factor of the QR decomposition of a normal matrix
    (signs fixed by the diagonal of R), over the leading axes flattened against the last."""

    _CONFIG = ("gain", "seed")

    def __init__(self, gain=1.0, seed=None):
        self._take_arguments(_arguments(locals()))

    def _draw(self, shape, rng):
        if len(shape) < 2:
            raise ValueError(
                f"The tensor to initialize must be at least two-dimensional. Received: "
                f"shape={shape} of rank {len(shape)}."
            )
        rows, cols = math.prod(shape[:-1]), shape[-1]
        a = rng.standard_normal((max(rows, cols), min(rows, cols)))
        q, r = np.linalg.qr(a)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return self.gain * q.reshape(shape)


_CLASSES = {
    cls.__name__: cls
    for cls in (
        Constant,
        Zeros,
        Ones,
        Identity,
        RandomNormal,
        RandomUniform,
        TruncatedNormal,
        VarianceScaling,
        GlorotUniform,
        GlorotNormal,
        HeUniform,
        HeNormal,
        LecunUniform,
        LecunNormal,
        Orthogonal,
    )
}
_ALIASES = {
    "zeros": Zeros,
    "ones": Ones,
    "constant": Constant,
    "identity": Identity,
    "random_normal": RandomNormal,
    "random_uniform": RandomUniform,
    "truncated_normal": TruncatedNormal,
    "variance_scaling": VarianceScaling,
    "glorot_uniform": GlorotUniform,
    "glorot_normal": GlorotNormal,
    "he_uniform": HeUniform,
    "he_normal": HeNormal,
    "lecun_uniform": LecunUniform,
    "lecun_normal": LecunNormal,
    "orthogonal": Orthogonal,
}


def get(identifier):
    """An initializer from an instance, a Keras name (``"he_normal"``, ``"HeNormal"``) or a
    ``{"class_name", "config"}`` dict."""
    if isinstance(identifier, Initializer):
        return identifier
    if isinstance(identifier, str):
        cls = _ALIASES.get(identifier) or _CLASSES.get(identifier)
        if cls is None:
            raise ValueError(f"unknown initializer {identifier!r}; known: {sorted(_ALIASES)}")
        return cls()
    if isinstance(identifier, dict):
        cls = _CLASSES.get(identifier.get("class_name"))
        if cls is None:
            raise ValueError(f"unknown initializer config {identifier!r}")
        config = dict(identifier.get("config") or {})
        # Keras 3.15's variance-scaling configs name the fan axes of einsum kernels; unset
        # (None), they mean the usual fans computed here
        for key in ("input_axes", "output_axes"):
            if key in config:
                value = config.pop(key)
                if value is not None:
                    raise NotImplementedError(
                        f"{cls.__name__}: {key}={value!r} is not implemented in rustyml"
                    )
        return cls.from_config(config)
    raise ValueError(f"an initializer must be a name or an Initializer, got {identifier!r}")


def serialize(initializer):
    return {"class_name": type(initializer).__name__, "config": initializer.get_config()}


# Keras's layer arguments and the weights each initialises (rustyml's weight names).
_ARGUMENT_WEIGHTS = {
    "kernel_initializer": ("kernel", "weight"),
    "bias_initializer": ("bias",),
    "recurrent_initializer": ("recurrent_kernel",),
    "embeddings_initializer": ("embeddings",),
    "depthwise_initializer": ("depthwise_weight",),
    "pointwise_initializer": ("pointwise_weight",),
}


def _take_layer_arguments(layer, kwargs):
    """Pops Keras's initializer arguments from a layer constructor's ``kwargs`` onto the
    layer (``layer._initializers``: weight name -> initializer)."""
    found = {}
    for arg in _ARGUMENT_WEIGHTS:
        if arg in kwargs:
            value = kwargs.pop(arg)
            if value is not None:
                found[arg] = get(value)
    if not found:
        return
    names = {}
    for arg, init in found.items():
        weights = _ARGUMENT_WEIGHTS[arg]
        # a depthwise convolution's only kernel is its depthwise kernel
        if arg == "depthwise_initializer" and type(layer).__name__.startswith("Depthwise"):
            weights = ("weight",)
        for w in weights:
            names[w] = init
    layer._initializers = names


def _bias_values(layer, init, shape, rng):
    """An LSTM with ``unit_forget_bias`` draws its bias in three parts, the forget gate's as
    ones (Keras's order and shapes: the initializer sees ``(units,)`` and ``(2 units,)``)."""
    if type(layer).__name__ == "LSTM" and getattr(layer, "unit_forget_bias", False):
        units = shape[-1] // 4
        return np.concatenate(
            [init((units,), rng=rng), np.ones(units, np.float32), init((2 * units,), rng=rng)]
        )
    return init(shape, rng=rng)


def _chosen_initializers(layer):
    """The initializer arguments of ``layer`` (a ``TimeDistributed``'s are its inner
    layer's: the weights are the inner layer's)."""
    if type(layer).__name__ == "TimeDistributed":
        layer = layer.layer
    return getattr(layer, "_initializers", None) or {}


def apply_layer_initializers(native, layers, model_seed):
    """Sets the weights of layers built with Keras initializer arguments (the others keep
    the native defaults)."""
    if not any(_chosen_initializers(layer) for layer in layers):
        return
    arrays = list(native.get_weights())
    position = 0
    for index, (layer, names) in enumerate(zip(layers, native.weight_names())):
        chosen = _chosen_initializers(layer)
        for slot, name in enumerate(names):
            init = chosen.get(name)
            if init is not None:
                rng = (
                    np.random.default_rng([model_seed, index, slot])
                    if model_seed is not None
                    else np.random.default_rng()
                )
                shape = arrays[position].shape
                if name == "bias":
                    values = _bias_values(layer, init, shape, rng)
                else:
                    values = init(shape, rng=rng)
                arrays[position] = np.asarray(values, np.float32).reshape(shape)
            position += 1
    native.set_weights(arrays)


__all__ = [*sorted(_CLASSES), "Initializer", "compute_fans", "get", "serialize"]  # noqa: PLE0604
