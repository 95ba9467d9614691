"""Preprocessing layers that compute inside a network (Rescaling, Normalization), and the
loading of a ``Normalization``'s adapted statistics into the models holding it."""

from rustyml.neural_network.layers.base import Layer, _keras_base, _register


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
