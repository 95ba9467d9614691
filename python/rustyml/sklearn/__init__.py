"""scikit-learn's own classes, answered by rustyml's engines where they answer alike.

``rustyml.sklearn`` is laid out like ``sklearn`` (``rustyml.sklearn.neighbors.
KNeighborsClassifier`` ...). Each class *is* the scikit-learn class (a subclass): same
parameters, defaults, fitted attributes, errors and warnings. A call runs natively when the
engine gives scikit-learn's answer for it, otherwise scikit-learn's own code runs; see
:mod:`rustyml.sklearn._dispatch`. ``patch_sklearn()`` makes unmodified scikit-learn code use
these classes; ``python -m rustyml.patch script.py`` runs a script patched.

Requires scikit-learn.
"""

try:
    import sklearn  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("rustyml.sklearn needs scikit-learn: pip install scikit-learn") from exc

from rustyml.sklearn._dispatch import dispatch_stats
from rustyml.sklearn._patching import (
    get_patch_names,
    patch_sklearn,
    sklearn_is_patched,
    unpatch_sklearn,
)

__all__ = [
    "dispatch_stats",
    "get_patch_names",
    "patch_sklearn",
    "sklearn_is_patched",
    "unpatch_sklearn",
]
