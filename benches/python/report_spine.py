"""Print the spine's speed targets as ratios measured side by side in one run.

python benches/python/report_spine.py
"""

import time

import numpy as np

import rustyml
from rustyml.math import matmul, reduction


def best(fn, *args, repeat=7, number=1):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn(*args)
        times.append((time.perf_counter() - start) / number)
    return min(times)


def main():
    rng = np.random.default_rng(0)
    print(f"rayon threads: {rustyml.parallel.current_num_threads()}")
    print("| product | NumPy GFLOP/s | rustyml GFLOP/s | rustyml / NumPy |")
    print("|---|---:|---:|---:|")
    for dtype in ("float64", "float32"):
        for n in (1024, 2048):
            a = rng.random((n, n)).astype(dtype)
            b = rng.random((n, n)).astype(dtype)
            flops = 2 * n**3
            # interleave the two to share the machine's noise
            t_np, t_rs = [], []
            for _ in range(5):
                t_np.append(best(np.matmul, a, b, repeat=1))
                t_rs.append(best(matmul.dot, a, b, repeat=1))
            g_np, g_rs = flops / min(t_np) / 1e9, flops / min(t_rs) / 1e9
            print(f"| {n}x{n} {dtype} | {g_np:.1f} | {g_rs:.1f} | {g_rs / g_np:.2f}x |")

    x = rng.standard_normal(3_000_000)
    before = rustyml.tuning.reduction.get_sum_f64()
    rustyml.tuning.reduction.set_sum_f64(rustyml.tuning.SERIAL)
    serial_value = reduction.sum(x)
    t_serial = best(reduction.sum, x, repeat=30)
    rustyml.tuning.reduction.set_sum_f64(0)
    parallel_value = reduction.sum(x)
    t_parallel = best(reduction.sum, x, repeat=30)
    rustyml.tuning.reduction.set_sum_f64(before)
    same = np.float64(serial_value).tobytes() == np.float64(parallel_value).tobytes()
    print(
        f"\nreduction.sum 3M f64: serial {t_serial * 1e6:.0f} us, parallel {t_parallel * 1e6:.0f} us, "
        f"speedup {t_serial / t_parallel:.2f}x, identical bits: {same}"
    )

    a = rng.random((2, 2))
    b = rng.random((2, 2))
    t_np = best(np.matmul, a, b, repeat=7, number=20000)
    t_rs = best(matmul.dot, a, b, repeat=7, number=20000)
    print(
        f"dot 2x2 call: NumPy {t_np * 1e6:.2f} us, rustyml {t_rs * 1e6:.2f} us, "
        f"rustyml / NumPy {t_rs / t_np:.2f}x"
    )


if __name__ == "__main__":
    main()
