"""Layers that wrap another layer: Bidirectional (a recurrent layer run both ways) and
TimeDistributed (a layer applied to every time step)."""

from rustyml.neural_network.layers.base import (
    Layer,
    _deserialize_keras,
    _keras_base,
    _optional_str,
    _register,
    deserialize,
    serialize,
)
from rustyml.neural_network.layers.recurrent import _Recurrent


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
