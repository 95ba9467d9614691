from __future__ import annotations

from typing import Any, Literal, Union

import numpy as np

from rustyml import _native
from rustyml._validation import as_float_array
from rustyml.machine_learning._fitted import F64, ArrayLike

Axis = Union[Literal["row", "column", "global", 0, 1], None]

_AXES = {
    "row": "row",
    "column": "column",
    "global": "global",
    1: "row",
    0: "column",
    None: "global",
}


def _axis(axis):
    try:
        return _AXES[axis]
    except (KeyError, TypeError):
        raise ValueError(
            f"axis must be 'row', 'column' or 'global' (or 1, 0, None), got {axis!r}"
        ) from None


def standardize(x: ArrayLike, axis: Axis = "column") -> F64:
    """Zero mean, unit variance per ``"column"`` (axis 0, like ``StandardScaler``), per
    ``"row"`` (axis 1) or over the ``"global"`` matrix (None). Constant lanes are only
    centred."""
    return _native.utils.standardize(as_float_array(x, "x", 2), _axis(axis))


def normalize(
    x: ArrayLike, axis: Axis = "row", order: Literal["l1", "l2", "max"] | float = "l2"
) -> F64:
    """Divide each ``"row"`` (axis 1), ``"column"`` (axis 0) or the ``"global"`` matrix (None)
    by its norm: ``order`` is ``"l1"``, ``"l2"``, ``"max"`` or a number ``p > 0``. Zero lanes
    are left unchanged."""
    return _native.utils.normalize(as_float_array(x, "x", 2), _axis(axis), order)


def _num_samples(a, i):
    if hasattr(a, "shape") and len(a.shape) > 0:
        return int(a.shape[0])
    try:
        return len(a)
    except TypeError:
        raise TypeError(f"array {i} has no length: {type(a).__name__}") from None


def _take(a, idx):
    if hasattr(a, "iloc"):
        return a.iloc[idx]
    if isinstance(a, np.ndarray) or hasattr(a, "tocsr") or hasattr(a, "__array__"):
        try:
            return a[idx]
        except (TypeError, IndexError):
            pass
    return [a[i] for i in idx]


def _random_state(random_state):
    if random_state is None:
        return None
    if isinstance(random_state, (bool, np.bool_)):
        raise TypeError("random_state must be None or a non-negative int, got a bool")
    if isinstance(random_state, (int, np.integer)):
        if not 0 <= int(random_state) < 2**64:
            raise ValueError(f"random_state must be in [0, 2**64), got {random_state}")
        return int(random_state)
    raise TypeError(
        f"random_state must be None or a non-negative int, got {type(random_state).__name__}"
    )


def train_test_split(
    *arrays: Any,
    test_size: float | None = None,
    train_size: float | None = None,
    random_state: int | None = None,
    shuffle: bool = True,
    stratify: ArrayLike | None = None,
) -> list[Any]:
    """Split arrays into random train and test subsets (scikit-learn's size rules).

    Returns ``[a_train, a_test, b_train, b_test, ...]``. Sizes: floats are fractions (test
    rounds up, train down), ints are counts; the test size defaults to 0.25. Indices are drawn
    in Rust from a seeded ChaCha8 stream: ``random_state`` makes splits reproducible (they do
    not match scikit-learn's NumPy-seeded ones). ``stratify`` keeps class proportions.
    """
    if not arrays:
        raise ValueError("At least one array required as input")
    lengths = [_num_samples(a, i) for i, a in enumerate(arrays)]
    if len(set(lengths)) > 1:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: {lengths}")
    n = lengths[0]
    codes = None
    if stratify is not None:
        strata = np.asarray(stratify)
        if strata.ndim == 2:  # multilabel rows: one stratum per distinct row
            strata = np.array([" ".join(map(str, row)) for row in strata])
        if strata.ndim != 1 or strata.shape[0] != n:
            raise ValueError(
                f"stratify must have one label per sample ({n}), got shape {strata.shape}"
            )
        codes = np.unique(strata, return_inverse=True)[1].astype(np.int64).ravel()
    train, test = _native.utils.train_test_indices(
        n, test_size, train_size, _random_state(random_state), bool(shuffle), codes
    )
    out = []
    for a in arrays:
        out.append(_take(a, train))
        out.append(_take(a, test))
    return out
