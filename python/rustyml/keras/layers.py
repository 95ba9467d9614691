"""``keras.layers``: rustyml's layers under Keras's names, plus ``Input``."""

from rustyml.keras._missing import stand_ins, unknown_attribute
from rustyml.neural_network import layers as _layers
from rustyml.neural_network import merge_layers as _merge
from rustyml.neural_network.layers import *
from rustyml.neural_network.merge_layers import *

_SHAPE_ERROR = "Input(shape=...) needs a tuple of positive sizes (no batch axis)"


class InputSpec:
    """The sample shape a ``Sequential`` starts from; ``keras.Input`` returns a symbolic
    tensor that is also one (``rustyml.keras._functional.InputTensor``)."""

    def __init__(self, shape, name=None):
        self.shape = (None, *shape)
        self.name = name

    def __repr__(self):
        return f"<Input shape={self.shape}>"


def Input(
    shape=None,
    batch_size=None,
    dtype=None,
    sparse=None,
    batch_shape=None,
    name=None,
    tensor=None,
    optional=False,
):
    """Keras's ``Input``: a symbolic model input (for ``keras.Model(inputs, outputs)`` or as
    the first entry of a ``Sequential``); ``shape`` excludes the batch axis. Sparse, ragged,
    tensor-backed or optional inputs are not supported."""
    if batch_shape is not None:
        if shape is not None:
            raise ValueError("Input: give shape or batch_shape, not both")
        shape = tuple(batch_shape)[1:]
    if shape is None:
        raise ValueError(_SHAPE_ERROR)
    if sparse or tensor is not None or optional:
        raise NotImplementedError(
            "keras.Input with sparse=, tensor= or optional= is not implemented in rustyml"
        )
    if dtype is not None and str(dtype) not in ("float32", "int32", "int64", "float64"):
        raise ValueError(f"Input: unsupported dtype {dtype!r}")
    shape = tuple(shape) if hasattr(shape, "__iter__") else (shape,)
    if any(s is None for s in shape):
        raise NotImplementedError(
            "keras.Input with a None (variable) size is not implemented in rustyml: give every "
            "sample axis a size"
        )
    from rustyml.keras._functional import InputTensor

    return InputTensor(_layers._shape_tuple(shape, "shape", "Input"), name=name)


InputLayer = Input

_MISSING = [
    "TextVectorization",
    "StringLookup",
    "IntegerLookup",
    "MultiHeadAttention",
    "Attention",
    "Lambda",
]
globals().update(stand_ins(__name__, _MISSING))
__getattr__ = unknown_attribute(__name__)
__all__ = [*_layers.__all__, *_merge.MERGE_LAYERS, "Input", "InputLayer", "InputSpec"]  # noqa: PLE0604
