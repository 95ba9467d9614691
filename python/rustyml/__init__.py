"""rustyml: machine learning with a Rust core and gated rayon parallelism.

Module layout mirrors the Rust crate: ``rustyml.math``, ``rustyml.machine_learning``,
``rustyml.tuning``, ``rustyml.parallel``, ``rustyml.utils``, ``rustyml.metrics`` and
``rustyml.neural_network`` (Keras-style networks).
"""

from rustyml import (
    _native,
    exceptions,
    machine_learning,
    math,
    metrics,
    neural_network,
    parallel,
    tuning,
    utils,
)
from rustyml.exceptions import NotFittedError

__version__ = _native.__version__

__all__ = [
    "NotFittedError",
    "__version__",
    "exceptions",
    "machine_learning",
    "math",
    "metrics",
    "neural_network",
    "parallel",
    "tuning",
    "utils",
]
