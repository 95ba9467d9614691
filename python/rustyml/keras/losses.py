"""``keras.losses``."""

from rustyml.keras._missing import stand_ins, unknown_attribute
from rustyml.neural_network import losses as _losses
from rustyml.neural_network.losses import *

globals().update(
    stand_ins(
        __name__,
        [
            "Poisson",
            "BinaryFocalCrossentropy",
            "CategoricalFocalCrossentropy",
            "Dice",
            "Tversky",
            "CTC",
        ],
    )
)
__getattr__ = unknown_attribute(__name__)
__all__ = list(_losses.__all__)
