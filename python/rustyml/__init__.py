"""rustyml: machine learning with a Rust core and gated rayon parallelism.

Module layout mirrors the Rust crate: ``rustyml.math``, ``rustyml.machine_learning``,
``rustyml.tuning``, ``rustyml.parallel``, ``rustyml.utils``, ``rustyml.metrics`` and
``rustyml.neural_network`` (Keras-style networks).
"""

from __future__ import annotations

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

__version__: str = _native.__version__


def patch_sklearn(names: str | list[str] | None = None, *, verbose: bool = False) -> None:
    """Make code that imports from ``sklearn`` afterwards use rustyml's engines where they
    give scikit-learn's answers (scikit-learn's own code runs for everything else); see
    :mod:`rustyml.sklearn`. Needs scikit-learn."""
    from rustyml.sklearn import patch_sklearn as patch

    patch(names, verbose=verbose)


def unpatch_sklearn(names: str | list[str] | None = None) -> None:
    """Put scikit-learn's own classes back (see :func:`patch_sklearn`)."""
    from rustyml.sklearn import unpatch_sklearn as unpatch

    unpatch(names)


__all__ = [
    "NotFittedError",
    "__version__",
    "exceptions",
    "machine_learning",
    "math",
    "metrics",
    "neural_network",
    "parallel",
    "patch_sklearn",
    "tuning",
    "unpatch_sklearn",
    "utils",
]
