"""Spine benchmarks, side by side with NumPy in one run.

    python -m pytest benches/python/test_bench_spine.py --benchmark-enable \
        --benchmark-group-by=param --benchmark-columns=min,median,ops

Groups pair rustyml with its peer on the same input; compare medians within a group.
"""

import numpy as np
import pytest

import rustyml
from rustyml.math import matmul, reduction

SERIAL = rustyml.tuning.SERIAL


@pytest.mark.parametrize("n", [1024, 2048])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("impl", ["rustyml", "numpy"])
def test_dot(benchmark, rng, n, dtype, impl):
    a = rng.random((n, n)).astype(dtype)
    b = rng.random((n, n)).astype(dtype)
    benchmark.group = f"dot {n}x{n} {dtype}"
    fn = matmul.dot if impl == "rustyml" else np.matmul
    benchmark.extra_info["gflop"] = 2 * n**3 / 1e9
    benchmark.pedantic(fn, args=(a, b), rounds=5, iterations=1, warmup_rounds=1)


@pytest.mark.parametrize("impl", ["rustyml", "numpy"])
def test_dot_2x2_call_overhead(benchmark, rng, impl):
    a = rng.random((2, 2))
    b = rng.random((2, 2))
    benchmark.group = "dot 2x2 overhead"
    benchmark(matmul.dot if impl == "rustyml" else np.matmul, a, b)


@pytest.mark.parametrize("path", ["serial", "parallel"])
def test_sum_3m(benchmark, rng, path):
    x = rng.standard_normal(3_000_000)
    benchmark.group = "reduction.sum 3M f64"
    before = rustyml.tuning.reduction.get_sum_f64()
    rustyml.tuning.reduction.set_sum_f64(SERIAL if path == "serial" else 0)
    try:
        result = benchmark(reduction.sum, x)
    finally:
        rustyml.tuning.reduction.set_sum_f64(before)
    assert result == pytest.approx(float(np.sum(x)), rel=1e-10)
