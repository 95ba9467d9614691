"""Keras 3's namespace over rustyml's networks: ``import rustyml.keras as keras``.

Laid out like ``keras`` (``layers``, ``models``, ``optimizers``, ``losses``, ``metrics``,
``callbacks``, ``utils``, ``activations``, ``regularizers``, ``saving``, ``Input``, ``Sequential``) over the
same engines as :mod:`rustyml.neural_network`. A Keras name rustyml does not have yet
imports as a stand-in whose use raises ``NotImplementedError`` naming it (so a program fails
where it needs the feature, with a message that says which); ``docs/KERAS.md`` lists what is
provided and how it differs from Keras.
"""

from rustyml.keras import (
    activations,
    callbacks,
    initializers,
    layers,
    losses,
    metrics,
    models,
    optimizers,
    regularizers,
    saving,
    utils,
)
from rustyml.keras._missing import stand_ins, unknown_attribute
from rustyml.keras.layers import Input
from rustyml.keras.models import Model, Sequential

globals().update(
    stand_ins(
        __name__,
        [
            "datasets",
            "applications",
            "ops",
            "constraints",
            "preprocessing",
            "mixed_precision",
            "random",
            "backend",
        ],
        {
            "datasets": "no downloads: load the data with NumPy or scikit-learn",
        },
    )
)
__getattr__ = unknown_attribute(__name__)
__all__ = [
    "Input",
    "Model",
    "Sequential",
    "activations",
    "callbacks",
    "initializers",
    "layers",
    "losses",
    "metrics",
    "models",
    "optimizers",
    "regularizers",
    "saving",
    "utils",
]
