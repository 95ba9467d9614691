"""``keras.optimizers`` (and ``keras.optimizers.schedules``)."""

import sys

from rustyml.keras._missing import stand_ins, unknown_attribute
from rustyml.neural_network import optimizers as _optimizers
from rustyml.neural_network import schedules
from rustyml.neural_network.optimizers import *
from rustyml.neural_network.optimizers import serialize

# `from keras.optimizers.schedules import ExponentialDecay` imports a module of that name
sys.modules[__name__ + ".schedules"] = schedules

# rustyml's optimizers as Keras 3 names them: its ``AdaGrad`` alias is not one of them
del AdaGrad  # noqa: F821 - bound by the import above

globals().update(
    stand_ins(
        __name__,
        ["Adadelta", "Ftrl", "Lion", "Lamb", "LossScaleOptimizer"],
    )
)
__getattr__ = unknown_attribute(__name__)
__all__ = [*(n for n in _optimizers.__all__ if n != "AdaGrad"), "serialize"]  # noqa: PLE0604
