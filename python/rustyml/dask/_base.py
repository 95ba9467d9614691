"""The dask plumbing shared by every estimator: row-chunked inputs, per-chunk tasks in
chunk order, and block-wise prediction."""

import dask
import dask.array as da
import numpy as np


def row_chunked(X, name="X"):
    """``X`` as a 2-D float dask array chunked along rows only (features in one chunk).
    NumPy input is accepted too (one chunk per 100,000 rows)."""
    if not isinstance(X, da.Array):
        X = da.from_array(np.asarray(X), chunks=(100_000, -1))
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got {X.ndim} dimensions")
    if X.dtype.kind not in "fiu":
        raise ValueError(f"{name} must be numeric, got dtype {X.dtype}")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} is empty: shape {X.shape}")
    if len(X.chunks[1]) != 1:
        X = X.rechunk({1: -1})
    return X


def aligned_target(y, X):
    """``y`` as a dask array with ``X``'s row chunks."""
    if np.shape(y)[0] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {np.shape(y)[0]}")
    if not isinstance(y, da.Array):
        y = da.from_array(np.asarray(y), chunks=(X.chunks[0],) + ((-1,) if np.ndim(y) == 2 else ()))
    if y.chunks[0] != X.chunks[0]:
        y = y.rechunk({0: X.chunks[0]})
    if y.ndim == 2 and len(y.chunks[1]) != 1:
        y = y.rechunk({1: -1})
    return y


def per_chunk(fn, X, *args, y=None):
    """``fn(chunk, [y_chunk,] *args)`` for every row chunk, computed (where the chunks live
    when a distributed client is active) and returned in chunk order."""
    x_blocks = X.to_delayed().ravel()
    if y is None:
        tasks = [dask.delayed(fn)(xb, *args) for xb in x_blocks]
    else:
        y_blocks = y.to_delayed().ravel()
        tasks = [dask.delayed(fn)(xb, yb, *args) for xb, yb in zip(x_blocks, y_blocks)]
    return list(dask.compute(*tasks))


def map_rows(fn, X, *args, dtype, columns=None):
    """A dask array of ``fn(chunk, *args)`` per row chunk: the chunks stay where they are,
    and the result keeps ``X``'s row chunks."""
    X = row_chunked(X)
    if columns is None:
        return X.map_blocks(fn, *args, dtype=dtype, drop_axis=1)
    return X.map_blocks(fn, *args, dtype=dtype, chunks=(X.chunks[0], (columns,)))
