"""Keras's merge layers (several tensors in, one out): ``Add``, ``Subtract``, ``Multiply``,
``Average``, ``Maximum``, ``Minimum``, ``Concatenate``, ``Dot``. Declarative like the other
layers; they are called on a list of symbolic tensors in a functional model
(``rustyml.keras.Model``), whose native graph computes them."""

from rustyml.neural_network import layers as _layers


class _Merge(_layers.Layer):
    def __init__(self, name=None, **kwargs):
        _reject_unknown(type(self).__name__, kwargs)
        super().__init__(name=name)


def _reject_unknown(layer, kwargs):
    kwargs.pop("trainable", None)
    kwargs.pop("dtype", None)
    if kwargs:
        raise TypeError(f"{layer}: unexpected arguments {sorted(kwargs)}")


@_layers._register
class Add(_Merge):
    """Elementwise sum of the inputs (all of one shape)."""


@_layers._register
class Subtract(_Merge):
    """``inputs[0] - inputs[1]`` (exactly two inputs)."""


@_layers._register
class Multiply(_Merge):
    """Elementwise product of the inputs."""


@_layers._register
class Average(_Merge):
    """Elementwise mean of the inputs."""


@_layers._register
class Maximum(_Merge):
    """Elementwise maximum of the inputs (a tie splits the gradient, as JAX does)."""


@_layers._register
class Minimum(_Merge):
    """Elementwise minimum of the inputs."""


@_layers._register
class Concatenate(_layers.Layer):
    """The inputs joined along ``axis`` (counted with the batch axis; default the last)."""

    _CONFIG = ("axis",)

    def __init__(self, axis=-1, name=None, **kwargs):
        _reject_unknown("Concatenate", kwargs)
        super().__init__(name=name)
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise TypeError(f"Concatenate: axis must be an int, got {axis!r}")
        self.axis = axis


@_layers._register
class Dot(_layers.Layer):
    """Batch-wise dot product of two inputs along ``axes`` (one int or a pair), optionally of
    their L2-normalised versions (cosine similarity)."""

    _CONFIG = ("axes", "normalize")

    def __init__(self, axes, normalize=False, name=None, **kwargs):
        _reject_unknown("Dot", kwargs)
        super().__init__(name=name)
        if isinstance(axes, (list, tuple)):
            if len(axes) != 2 or not all(
                isinstance(a, int) and not isinstance(a, bool) for a in axes
            ):
                raise ValueError(f"Dot: axes must be an int or a pair of ints, got {axes!r}")
            axes = list(axes)
        elif isinstance(axes, bool) or not isinstance(axes, int):
            raise TypeError(f"Dot: axes must be an int or a pair of ints, got {axes!r}")
        self.axes = axes
        self.normalize = bool(normalize)


MERGE_LAYERS = (
    "Add",
    "Subtract",
    "Multiply",
    "Average",
    "Maximum",
    "Minimum",
    "Concatenate",
    "Dot",
)
__all__ = list(MERGE_LAYERS)
