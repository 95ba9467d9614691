"""Products against NumPy (OpenBLAS), side by side in one run: where the time goes.

    python benches/python/report_matmul.py [--repeat N] [--sweep] [--only SUBSTRING]

For each product of issue 7's table, interleaved (so both share the machine's noise), best of
``--repeat`` rounds:

- NumPy single-threaded (threadpoolctl) vs rustyml ``parallelism="serial"``: the kernel;
- NumPy with its default threads vs rustyml ``"auto"``: the multi-worker split on top;
- with ``--sweep``, rustyml ``"auto"`` under each candidate gemmkit knob setting
  (``rustyml.tuning.matmul.backend``), every setting restored afterwards.

Prints markdown tables (GFLOP/s and ratios rustyml / NumPy; > 1 means rustyml is faster).
"""

import argparse
import os
import time

import numpy as np
from _host import cpu_name
from threadpoolctl import threadpool_info, threadpool_limits

import rustyml
from rustyml.math import matmul
from rustyml.tuning.matmul import backend


def cases(rng):
    """(label, lhs, rhs) with the operand layouts a caller really has (transposes as views)."""

    def rand(shape, dtype):
        return rng.standard_normal(shape).astype(dtype)

    x784 = rand((4096, 784), np.float32)
    w = rand((784, 256), np.float32)
    g = rand((4096, 256), np.float32)
    return [
        ("1024² f64", rand((1024, 1024), np.float64), rand((1024, 1024), np.float64)),
        ("1024² f32", rand((1024, 1024), np.float32), rand((1024, 1024), np.float32)),
        ("2048² f64", rand((2048, 2048), np.float64), rand((2048, 2048), np.float64)),
        ("2048² f32", rand((2048, 2048), np.float32), rand((2048, 2048), np.float32)),
        ("4096x784 @ 784x256 f32 (dense forward)", x784, w),
        ("(4096x784)ᵀ @ 4096x256 f32 (weight gradient)", x784.T, g),
        ("4096x256 @ (784x256)ᵀ f32 (input gradient)", g, w.T),
        ("100000x32 @ 32x32 f32", rand((100000, 32), np.float32), rand((32, 32), np.float32)),
    ]


def best_of(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


# OpenBLAS's idle workers busy-wait for a while (about 0.1 s) after each call before they
# sleep: timed right after a NumPy product, a rustyml product runs with one of the two cores
# taken. Each block therefore starts after this pause, so neither side pays for the other.
SETTLE_SECONDS = 0.3


def interleaved(fns, rounds, per_round=3):
    """Best time of each function, alternating between them every round."""
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            time.sleep(SETTLE_SECONDS)
            best[i] = min(best[i], best_of(fn, per_round))
    return best


SWEEP = [
    ("default", {}),
    ("pool_classes=0", {"pool_classes": 0}),
    ("pool_classes=1", {"pool_classes": 1}),
    ("pool_classes=3", {"pool_classes": 3}),
    ("parallel_oversample=1", {"parallel_oversample": 1}),
    ("parallel_oversample=2", {"parallel_oversample": 2}),
    ("pool_classes=0, oversample=1", {"pool_classes": 0, "parallel_oversample": 1}),
    ("lhs_pack_threshold=32", {"lhs_pack_threshold": 32}),
    ("lhs_pack_threshold=0", {"lhs_pack_threshold": 0}),
    ("packed_oversample=4", {"packed_oversample": 4}),
    ("packed_oversample=8", {"packed_oversample": 8}),
    ("shared_lhs_mnk=0", {"shared_lhs_mnk": 0}),
    ("mc_reg_panels=16", {"mc_reg_panels": 16}),
    ("rhs_pack_threshold=256", {"rhs_pack_threshold": 256}),
]


class knobs:
    """Set gemmkit knobs for a block, restoring the previous values."""

    def __init__(self, settings):
        self.settings = settings

    def __enter__(self):
        self.saved = {k: getattr(backend, k)() for k in self.settings}
        for k, v in self.settings.items():
            getattr(backend, f"set_{k}")(v)

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            getattr(backend, f"set_{k}")(v)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--sweep", action="store_true", help="also sweep gemmkit knobs")
    parser.add_argument("--only", default="", help="keep cases whose label contains this")
    parser.add_argument(
        "--settings", default="", help="comma-separated sweep settings to keep (default: all)"
    )
    args = parser.parse_args()

    blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    print(
        f"CPU: {cpu_name()}; os.cpu_count {os.cpu_count()}; host class {rustyml.tuning.host_class()}"
    )
    for info in blas:
        print(
            f"NumPy BLAS: {info.get('internal_api')} {info.get('version')} "
            f"({info.get('architecture')}), {info.get('num_threads')} threads"
        )
    print(
        f"rustyml profile: {rustyml.tuning.active_profile()['name']}; load average {os.getloadavg()}"
    )

    rng = np.random.default_rng(0)
    selected = [c for c in cases(rng) if args.only in c[0]]
    print("\n| product | NumPy 1T | rustyml serial | ratio | NumPy 2T | rustyml auto | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, a, b in selected:
        flops = 2 * a.shape[0] * a.shape[1] * b.shape[1]

        def numpy_single(a=a, b=b):
            with threadpool_limits(1, user_api="blas"):
                a @ b

        fns = [
            numpy_single,
            lambda a=a, b=b: matmul.dot(a, b, parallelism="serial"),
            lambda a=a, b=b: a @ b,
            lambda a=a, b=b: matmul.dot(a, b),
        ]
        t = interleaved(fns, args.repeat)
        g = [flops / x / 1e9 for x in t]
        print(
            f"| {label} | {g[0]:.1f} | {g[1]:.1f} | {g[1] / g[0]:.2f}x "
            f"| {g[2]:.1f} | {g[3]:.1f} | {g[3] / g[2]:.2f}x |"
        )

    if not args.sweep:
        return
    print(
        "\nrustyml auto under gemmkit knob settings, GFLOP/s (ratio to NumPy 2T in the same round)"
    )
    header = "| setting | " + " | ".join(c[0] for c in selected) + " | geomean ratio |"
    print(header)
    print("|---|" + "---:|" * (len(selected) + 1))
    keep = [k.strip() for k in args.settings.split(",") if k.strip()]
    for name, settings in SWEEP:
        if keep and name != "default" and name not in keep:
            continue
        cells, ratios = [], []
        with knobs(settings):
            for label, a, b in selected:
                flops = 2 * a.shape[0] * a.shape[1] * b.shape[1]
                t_np, t_rs = interleaved(
                    [lambda a=a, b=b: a @ b, lambda a=a, b=b: matmul.dot(a, b)], args.repeat
                )
                ratios.append(t_np / t_rs)
                cells.append(f"{flops / t_rs / 1e9:.1f} ({t_np / t_rs:.2f}x)")
        geo = float(np.exp(np.mean(np.log(ratios))))
        print(f"| {name} | " + " | ".join(cells) + f" | {geo:.2f}x |")


if __name__ == "__main__":
    main()
