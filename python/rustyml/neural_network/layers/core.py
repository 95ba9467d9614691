"""Core layers: Dense, Embedding, Masking, Identity."""

import math

from rustyml.neural_network.layers.base import (
    Layer,
    _activation_arg,
    _check_bool,
    _check_positive_int,
    _check_seed,
    _register,
)


@_register
class Dense(Layer):
    """``activation(x @ kernel + bias)``; kernel ``(in, units)``, bias ``(units,)``."""

    _CONFIG = ("units", "activation", "use_bias", "seed")

    def __init__(
        self, units, activation=None, use_bias=True, name=None, input_shape=None, seed=None
    ):
        super().__init__(name, input_shape)
        self.units = _check_positive_int(units, "units", "Dense")
        self.activation = _activation_arg(activation, "activation", type(self).__name__)
        self.use_bias = bool(use_bias)
        self.seed = _check_seed(seed, type(self).__name__)


@_register
class Embedding(Layer):
    """Integer indices ``(batch, steps)`` to vectors ``(batch, steps, output_dim)``.

    ``mask_zero=True``: index 0 is padding; the output carries Keras's mask (``input != 0``)
    to the layers after it, and the recurrent layers skip the masked steps. As in Keras, row 0
    of the table stays, so ``input_dim`` counts it (vocabulary size + 1)."""

    _CONFIG = ("input_dim", "output_dim", "seed", "mask_zero")

    def __init__(
        self, input_dim, output_dim, name=None, input_shape=None, seed=None, mask_zero=False
    ):
        super().__init__(name, input_shape)
        self.input_dim = _check_positive_int(input_dim, "input_dim", "Embedding")
        self.output_dim = _check_positive_int(output_dim, "output_dim", "Embedding")
        self.seed = _check_seed(seed, type(self).__name__)
        self.mask_zero = _check_bool(mask_zero, "mask_zero", "Embedding")


@_register
class Masking(Layer):
    """Keras's ``Masking``: a step whose features all equal ``mask_value`` is padding. The
    output is the input with those steps zeroed, and it carries Keras's mask
    (``any(x != mask_value)`` over the last axis) to the layers after it."""

    _CONFIG = ("mask_value",)

    def __init__(self, mask_value=0.0, name=None, input_shape=None):
        super().__init__(name, input_shape)
        try:
            value = float(mask_value)
        except (TypeError, ValueError):
            raise ValueError(f"Masking: mask_value must be a number, got {mask_value!r}") from None
        if math.isnan(value):  # NaN equals nothing
            raise ValueError("Masking: mask_value must not be NaN (nothing would be masked)")
        self.mask_value = value


@_register
class Identity(Layer):
    """Passes its input through."""
