"""Recurrent layers: SimpleRNN, LSTM and GRU (input ``(batch, timesteps, features)``)."""

from rustyml.neural_network.layers.base import (
    Layer,
    _activation_arg,
    _arguments,
    _check_bool,
    _check_positive_int,
    _check_seed,
    _register,
)


def _check_dropout_rate(value, name, layer):
    """A recurrent dropout rate in [0, 1) (Keras clips instead; see docs/KERAS.md)."""
    try:
        rate = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{layer}: {name} must be a number in [0, 1), got {value!r}") from None
    if not 0.0 <= rate < 1.0:
        raise ValueError(f"{layer}: {name} must be in [0, 1), got {value!r}")
    return rate


class _Recurrent(Layer):
    """Shared Keras arguments of SimpleRNN, LSTM and GRU (input ``(batch, timesteps, features)``).

    Each subclass's signature is its public description (Keras's order and defaults); its
    body hands every argument on here by name (``_arguments(locals())``)."""

    def __init__(self, recurrent_activation="sigmoid", **arguments):
        # SimpleRNN has no recurrent_activation; LSTM's unit_forget_bias and GRU's reset_after
        # are what is left of ``arguments`` at the end
        super().__init__(arguments.pop("name"), arguments.pop("input_shape"))
        layer = type(self).__name__
        self.units = _check_positive_int(arguments.pop("units"), "units", layer)
        self.activation = _activation_arg(arguments.pop("activation"), "activation", layer)
        self.recurrent_activation = _activation_arg(
            recurrent_activation, "recurrent_activation", layer
        )
        self.use_bias = bool(arguments.pop("use_bias"))
        self.return_sequences = bool(arguments.pop("return_sequences"))
        self.return_state = bool(arguments.pop("return_state"))
        self.go_backwards = bool(arguments.pop("go_backwards"))
        self.seed = _check_seed(arguments.pop("seed"), layer)
        if self.return_state:
            raise ValueError(
                f"{layer}: return_state=True returns several tensors, which a Sequential model "
                "cannot pass on; use return_sequences instead"
            )
        # Keras's dropout / recurrent_dropout (training only) and zero_output_for_mask (masked
        # steps output zeros instead of the carried state)
        self.dropout = _check_dropout_rate(arguments.pop("dropout"), "dropout", layer)
        self.recurrent_dropout = _check_dropout_rate(
            arguments.pop("recurrent_dropout"), "recurrent_dropout", layer
        )
        self.zero_output_for_mask = _check_bool(
            arguments.pop("zero_output_for_mask"), "zero_output_for_mask", layer
        )
        for switch, value in arguments.items():
            setattr(self, switch, bool(value))

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
        super().__init__(**_arguments(locals()))

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
        super().__init__(**_arguments(locals()))

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
        super().__init__(**_arguments(locals()))

    def _own_config(self):
        return {**super()._own_config(), "reset_after": self.reset_after}
