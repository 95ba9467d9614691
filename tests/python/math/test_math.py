"""math kernels against NumPy / SciPy, bitwise gate checks, boundary errors."""

import numpy as np
import pytest
from conftest import PARALLEL, SERIAL
from scipy.spatial.distance import cdist

import rustyml
from rustyml.math import distance, matmul, reduction
from rustyml.tuning import reduction as reduction_gates


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-12), (np.float32, 1e-4)])
@pytest.mark.parametrize("shape", [(1, 1, 1), (7, 3, 5), (64, 200, 33), (300, 40, 500)])
def test_dot_matches_numpy(rng, dtype, tol, shape):
    m, k, n = shape
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    got = matmul.dot(a, b)
    assert got.dtype == dtype and got.shape == (m, n)
    # tolerance: float rounding of a k-term sum, relative to the magnitude of the terms
    scale = np.abs(a) @ np.abs(b)
    np.testing.assert_array_less(np.abs(got - a @ b), tol * scale + tol)


def test_dot_reads_strided_views_and_promotes_mixed_dtypes(rng):
    big = rng.standard_normal((120, 90))
    a = big[::2, 1::3]  # (60, 30) strided
    b = big[:30, ::-2].copy()  # reversed columns, then owned
    np.testing.assert_allclose(matmul.dot(a, b), a @ b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(matmul.dot(a.T, a), a.T @ a, rtol=1e-12, atol=1e-12)
    mixed = matmul.dot(a.astype(np.float32), b)
    assert mixed.dtype == np.float64
    np.testing.assert_allclose(mixed, a.astype(np.float32).astype(np.float64) @ b, rtol=1e-12)


def test_dot_is_bitwise_identical_at_every_parallelism(rng):
    a = rng.standard_normal((257, 300))
    b = rng.standard_normal((300, 190))
    ref = matmul.dot(a, b, parallelism="serial")
    for par in ["auto", 1, 2, 4, 8, 32]:
        assert np.array_equal(matmul.dot(a, b, parallelism=par), ref), par


def test_matvec_matches_numpy_and_serial_equals_auto(rng):
    a = rng.standard_normal((2000, 300))
    x = rng.standard_normal(300)
    serial = matmul.matvec(a, x, parallelism="serial")
    assert np.array_equal(serial, matmul.matvec(a, x))
    np.testing.assert_allclose(serial, a @ x, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(matmul.matvec(a[:, ::2], x[:150]), a[:, ::2] @ x[:150], atol=1e-10)


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (lambda: matmul.dot(np.ones((2, 3)), np.ones((2, 3))), ValueError, "not aligned"),
        (lambda: matmul.dot(np.ones(3), np.ones((3, 3))), ValueError, "2-dimensional"),
        (
            lambda: matmul.dot(np.ones((2, 2), dtype=np.int64), np.ones((2, 2))),
            TypeError,
            "float32 or float64",
        ),
        (lambda: matmul.dot([[1.0]], np.ones((1, 1))), TypeError, "numpy.ndarray"),
        (
            lambda: matmul.dot(np.ones((2, 2)), np.ones((2, 2)), parallelism="fast"),
            ValueError,
            "parallelism",
        ),
        (lambda: matmul.dot(np.ones((2, 2)), np.ones((2, 2)), parallelism=0), ValueError, ">= 1"),
        (lambda: matmul.matvec(np.ones((2, 3)), np.ones(2)), ValueError, "not aligned"),
        (lambda: reduction.mean_var(np.ones(0)), ValueError, "empty"),
        (lambda: reduction.sum(np.ones(3, dtype=np.complex128)), TypeError, "float"),
        (lambda: distance.euclidean(np.ones(3), np.ones(4)), ValueError, "lengths"),
        (lambda: distance.pairwise(np.ones((2, 3)), np.ones((2, 4))), ValueError, "features"),
        (lambda: distance.pairwise(np.ones((2, 3)), metric="cosine"), ValueError, "unknown metric"),
        (lambda: distance.minkowski(np.ones(3), np.ones(3), 0.5), ValueError, ">= 1"),
    ],
)
def test_bad_input_raises_a_clear_exception(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_empty_product_is_zeros_like_numpy():
    assert np.array_equal(matmul.dot(np.ones((3, 0)), np.ones((0, 4))), np.zeros((3, 4)))


@pytest.mark.parametrize("n", [0, 1, 4095, 4096, 4097, 100_003, 3_000_001])
def test_reductions_match_numpy_and_are_bitwise_gate_independent(rng, gate, n):
    x = rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)
    gate(reduction_gates, "sum_f64", SERIAL)
    serial = (reduction.sum(x), reduction.sq_sum(x), reduction.mean_var(x) if n else None)
    gate(reduction_gates, "sum_f64", PARALLEL)
    parallel = (reduction.sum(x), reduction.sq_sum(x), reduction.mean_var(x) if n else None)
    assert serial == parallel  # float == float: identical values (and no NaN here)
    # math.fsum is exactly rounded: an independent oracle
    import math

    assert abs(serial[0] - math.fsum(x)) <= 1e-12 * math.fsum(np.abs(x)) + 1e-300
    assert abs(serial[1] - math.fsum(x * x)) <= 1e-12 * math.fsum(x * x) + 1e-300
    if n:
        mean, var = serial[2]
        assert abs(mean - x.mean()) <= 1e-12 * np.abs(x).mean()
        assert abs(var - x.var()) <= 1e-10 * x.var() + 1e-300


def test_reductions_read_strided_and_nd_arrays(rng):
    x = rng.standard_normal((300, 40))
    assert reduction.sum(x[:, 3]) == reduction.sum(x[:, 3].copy())
    assert reduction.sum(x) == reduction.sum(x.ravel())
    assert reduction.sum(x.T) == reduction.sum(x.T.copy())  # gathered in C order
    assert reduction.sum(x.astype(np.float32)) == pytest.approx(
        float(x.astype(np.float32).sum(dtype=np.float64))
    )


def test_distances_match_scipy(rng):
    a = rng.standard_normal((40, 6))
    b = rng.standard_normal((25, 6))
    for metric, kw, scipy_metric in [
        ("euclidean", {}, "euclidean"),
        ("sqeuclidean", {}, "sqeuclidean"),
        ("manhattan", {}, "cityblock"),
        ("minkowski", {"p": 3.0}, "minkowski"),
    ]:
        want = cdist(a, b, scipy_metric, **kw)
        # euclidean runs through the product: error relative to the norms (1e-12 * |a|^2)
        np.testing.assert_allclose(
            distance.pairwise(a, b, metric=metric, **kw), want, rtol=1e-10, atol=1e-10
        )
    u, v = a[0], b[0]
    assert distance.euclidean(u, v) == pytest.approx(np.linalg.norm(u - v), rel=1e-14)
    assert distance.squared_euclidean(u, v) == pytest.approx(np.sum((u - v) ** 2), rel=1e-14)
    assert distance.manhattan(u, v) == pytest.approx(np.abs(u - v).sum(), rel=1e-14)
    assert distance.minkowski(u, v, 3) == pytest.approx(
        cdist([u], [v], "minkowski", p=3)[0, 0], rel=1e-13
    )
    np.testing.assert_allclose(
        distance.rowwise(a[:25], b, metric="manhattan"), np.abs(a[:25] - b).sum(1), rtol=1e-14
    )
    np.testing.assert_allclose(distance.pairwise(a), cdist(a, a), atol=1e-7)


def test_scan_gate_is_bitwise(rng, gate):
    a = rng.standard_normal((400, 7))
    gate(reduction_gates, "scan_f64", SERIAL)
    s = distance.pairwise(a, metric="manhattan")
    gate(reduction_gates, "scan_f64", PARALLEL)
    assert np.array_equal(s, distance.pairwise(a, metric="manhattan"))


def test_parallel_module():
    before = rustyml.parallel.current_num_threads()
    assert before >= 1
    try:
        rustyml.parallel.build_global(2)  # works after earlier calls used the pool
        assert rustyml.parallel.current_num_threads() == 2
    finally:
        rustyml.parallel.set_num_threads(before)
    with pytest.raises(ValueError):
        rustyml.parallel.build_global(0)


@pytest.mark.parametrize("bad", [-1, 10**5, 2**70])
def test_build_global_refuses_unusable_sizes_with_value_error(bad):
    # Checked before the pool is touched: a ValueError naming the bound, never an
    # OverflowError from the conversion or minutes spent creating threads.
    with pytest.raises(ValueError, match="num_threads must be between 1 and"):
        rustyml.parallel.build_global(bad)


def test_build_global_refuses_non_integers():
    with pytest.raises(TypeError):
        rustyml.parallel.build_global(2.5)
    with pytest.raises(TypeError):
        rustyml.parallel.build_global(True)


def test_pairwise_euclidean_guards_cancellation_and_propagates_nan():
    # The product form |a|^2 + |b|^2 - 2ab loses everything when the distance is tiny next to
    # the norms; those entries are recomputed from the differences, so these are exact.
    d = distance.pairwise(np.array([[1e8, 1e8 + 1]]), np.array([[1e8 + 1, 1e8]]))
    assert d[0, 0] == np.sqrt(2.0)
    x = np.random.default_rng(0).standard_normal((50, 6)) * 1e4 + 1e6
    assert np.all(np.diag(distance.pairwise(x, x)) == 0.0)
    with_nan = np.array([[0.5, np.nan], [1.0, 2.0]])
    out = distance.pairwise(with_nan, np.array([[3.0, 4.0]]))
    assert np.isnan(out[0, 0]) and np.isfinite(out[1, 0])
