"""``keras.optimizers`` (and ``keras.optimizers.schedules``)."""

import sys

from rustyml.keras._missing import stand_ins, unknown_attribute
from rustyml.neural_network import schedules
from rustyml.neural_network.optimizers import (
    SGD,
    Adagrad,
    Adam,
    Adamax,
    AdamW,
    Nadam,
    Optimizer,
    RMSprop,
    get,
    serialize,
)

# `from keras.optimizers.schedules import ExponentialDecay` imports a module of that name
sys.modules[__name__ + ".schedules"] = schedules

globals().update(
    stand_ins(
        __name__,
        ["Adadelta", "Ftrl", "Lion", "Lamb", "LossScaleOptimizer"],
    )
)
__getattr__ = unknown_attribute(__name__)
__all__ = [
    "SGD",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "Nadam",
    "Optimizer",
    "RMSprop",
    "get",
    "schedules",
    "serialize",
]
