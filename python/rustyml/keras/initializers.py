"""``keras.initializers``."""

from rustyml.keras._missing import unknown_attribute
from rustyml.neural_network import initializers as _initializers
from rustyml.neural_network.initializers import *

# Keras's lower-case function-style aliases
zeros, ones, constant = Zeros, Ones, Constant
glorot_uniform, glorot_normal = GlorotUniform, GlorotNormal
he_uniform, he_normal = HeUniform, HeNormal
lecun_uniform, lecun_normal = LecunUniform, LecunNormal
orthogonal, identity = Orthogonal, Identity
random_normal, random_uniform, truncated_normal = RandomNormal, RandomUniform, TruncatedNormal
variance_scaling = VarianceScaling

__getattr__ = unknown_attribute(__name__)
__all__ = list(_initializers.__all__)
