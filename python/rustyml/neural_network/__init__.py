"""Neural networks with Keras's API: ``Sequential``, ``layers``, ``optimizers``, ``losses``,
``callbacks``, ``regularizers``, and scikit-learn-style ``MLPClassifier`` / ``MLPRegressor`` on top.

f32, channels-last, Keras's names, arguments and weight shapes; the computation is the Rust
crate's ``neural_network`` module.
"""

from rustyml.neural_network import callbacks, layers, losses, optimizers, regularizers
from rustyml.neural_network._batches import PyDataset
from rustyml.neural_network._mlp import MLPClassifier, MLPRegressor
from rustyml.neural_network._sequential import Sequential

__all__ = [
    "MLPClassifier",
    "MLPRegressor",
    "PyDataset",
    "Sequential",
    "callbacks",
    "layers",
    "losses",
    "optimizers",
    "regularizers",
]
