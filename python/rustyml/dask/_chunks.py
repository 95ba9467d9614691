"""Per-chunk kernels, run on the worker that holds the chunk (module-level, so they pickle
by reference), and the fixed-order combination of their results.

Every estimator here reduces a dask array row-chunk by row-chunk: a chunk's partial result
is computed by rustyml's engines where the chunk lives, and the partials are combined on
the client in chunk order. The combination order depends only on the chunking, never on
how many workers there are or in which order they finish, so a fit is bit-identical
whatever the cluster for a given chunking.
"""

import functools

import numpy as np

from rustyml.math import losses as _losses
from rustyml.math.distance import nearest
from rustyml.math.matmul import dot, matvec
from rustyml.math.reduction import sum as native_sum


def _reported(kernel):
    """Turn a failure that is not an ``Exception`` (a native panic surfaces as pyo3's
    ``PanicException``, a ``BaseException``) into a ``RuntimeError``: dask reports an
    ``Exception`` from a task to the client, where other kinds can leave the fit waiting."""

    @functools.wraps(kernel)
    def run(*args):
        try:
            return kernel(*args)
        except Exception:
            raise
        except BaseException as exc:
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            raise RuntimeError(f"{kernel.__name__} failed on a chunk: {exc!r}") from exc

    return run


@_reported
def column_sums(x):
    """(row count, per-column sums) of one chunk."""
    x = np.asarray(x, dtype=np.float64)
    return x.shape[0], np.array([native_sum(np.ascontiguousarray(c)) for c in x.T])


@_reported
def column_extremes(x):
    """Per-column minimum and maximum of one chunk."""
    x = np.asarray(x, dtype=np.float64)
    return x.min(axis=0), x.max(axis=0)


@_reported
def centred_moments(x, mean):
    """Sum of squared deviations from ``mean`` per column, and their plain sum (the
    correction term of the two-pass variance)."""
    dev = np.asarray(x, dtype=np.float64) - mean
    return (
        np.array([native_sum(np.ascontiguousarray(c)) for c in dev.T]),
        np.array([native_sum(np.ascontiguousarray(c * c)) for c in dev.T]),
    )


@_reported
def centred_gram(x, mean):
    """``Xc^T Xc`` of one chunk."""
    xc = np.ascontiguousarray(np.asarray(x, dtype=np.float64) - mean)
    return dot(xc.T, xc)


@_reported
def centred_cross_products(x, y, x_mean, y_mean):
    """``Xc^T Xc`` and ``Xc^T yc`` of one chunk."""
    xc = np.ascontiguousarray(np.asarray(x, dtype=np.float64) - x_mean)
    yc = np.ascontiguousarray(np.asarray(y, dtype=np.float64).reshape(len(xc), -1) - y_mean)
    return dot(xc.T, xc), dot(xc.T, yc)


@_reported
def residual_products(x, y, x_mean, y_mean, coef):
    """``Xc^T (yc - Xc coef)`` of one chunk: the refinement step's right-hand side."""
    xc = np.ascontiguousarray(np.asarray(x, dtype=np.float64) - x_mean)
    yc = np.asarray(y, dtype=np.float64).reshape(len(xc), -1) - y_mean
    residual = np.ascontiguousarray(yc - dot(xc, coef))
    return dot(xc.T, residual)


@_reported
def lloyd_step(x, centers):
    """Per-cluster sums and counts, and the inertia, of one chunk's nearest-center
    assignment (the single-machine KMeans' scan: no n x k distance matrix)."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    labels, d2 = nearest(x, centers)
    k = centers.shape[0]
    counts = np.bincount(labels, minlength=k)
    # per feature, the chunk's rows summed into their cluster in row order
    sums = np.column_stack([np.bincount(labels, weights=col, minlength=k) for col in x.T])
    return sums, counts, native_sum(d2)


@_reported
def nearest_center(x, centers):
    x = np.ascontiguousarray(x, dtype=np.float64)
    return nearest(x, centers)[0].astype(np.int32)


def _codes(y, classes):
    """Each label's index in the sorted ``classes`` (a label outside them is an error: the
    classes were read from the same ``y``)."""
    y = np.asarray(y).ravel()
    codes = np.searchsorted(classes, y)
    codes = np.minimum(codes, len(classes) - 1)
    if not np.array_equal(classes[codes], y):
        raise ValueError("y holds a label outside the classes found in it")
    return codes


@_reported
def chunk_labels(y):
    """The distinct labels of one chunk, sorted."""
    return np.unique(np.asarray(y).ravel())


@_reported
def class_sums(x, y, classes):
    """Per-class row sums (k x d) and counts of one chunk, rows summed in row order."""
    x = np.asarray(x, dtype=np.float64)
    codes = _codes(y, classes)
    k = len(classes)
    counts = np.bincount(codes, minlength=k)
    sums = np.column_stack([np.bincount(codes, weights=col, minlength=k) for col in x.T])
    return sums.reshape(k, x.shape[1]), counts


@_reported
def class_scatter(x, y, classes, means):
    """Per class, the sum of deviations from its mean (d) and their scatter
    ``(x - mean)^T (x - mean)`` (d x d, rustyml's product), of one chunk."""
    x = np.asarray(x, dtype=np.float64)
    codes = _codes(y, classes)
    k, d = means.shape
    dev_sums = np.zeros((k, d))
    scatter = np.zeros((k, d, d))
    for c in range(k):
        rows = codes == c
        if rows.any():
            xc = np.ascontiguousarray(x[rows] - means[c])
            dev_sums[c] = [native_sum(np.ascontiguousarray(col)) for col in xc.T]
            scatter[c] = dot(xc.T, xc)
    return dev_sums, scatter


@_reported
def logistic_loss_grad(x, y, classes, theta, n_out):
    """The summed log-loss of one chunk at ``theta = [coef (n_out x d), intercept]`` and its
    gradient (coefficients' part ``r^T x``, intercepts' part ``sum r``), from rustyml's
    product and fused loss kernels: binary (``n_out == 1``) or multinomial."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    d = x.shape[1]
    codes = _codes(y, classes)
    coef = theta[: n_out * d].reshape(n_out, d)
    z = dot(x, np.ascontiguousarray(coef.T)) + theta[n_out * d :]
    if n_out == 1:
        loss, r, rsum = _losses.logistic_loss_grad(z[:, 0], codes.astype(np.float64))
        grad = matvec(np.ascontiguousarray(x.T), r)
        return loss, grad, np.array([rsum])
    loss, r, colsum = _losses.softmax_loss_grad(z, codes.tolist())
    grad = dot(np.ascontiguousarray(r.T), x)
    return loss, grad.ravel(), colsum


@_reported
def affine_scores(x, coef, intercept):
    """``x @ coef.T + intercept`` of one chunk (rustyml's product)."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    return dot(x, np.ascontiguousarray(coef.T)) + intercept


def ordered_sum(parts):
    """Sum ``parts`` left to right: the order is the chunk order, so the rounding is."""
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total
