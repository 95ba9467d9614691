"""``keras.regularizers``."""

from rustyml.keras._missing import unknown_attribute
from rustyml.neural_network import regularizers as _regularizers
from rustyml.neural_network.regularizers import *

__getattr__ = unknown_attribute(__name__)
__all__ = list(_regularizers.__all__)
