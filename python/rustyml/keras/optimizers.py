"""``keras.optimizers``."""

from rustyml.keras._missing import stand_ins, unknown_attribute
from rustyml.neural_network.optimizers import (
    SGD,
    Adagrad,
    Adam,
    AdamW,
    Optimizer,
    RMSprop,
    get,
    serialize,
)

globals().update(
    stand_ins(
        __name__,
        ["Nadam", "Adamax", "Adadelta", "Ftrl", "Lion", "Lamb", "LossScaleOptimizer", "schedules"],
    )
)
__getattr__ = unknown_attribute(__name__)
__all__ = ["SGD", "Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "get", "serialize"]
