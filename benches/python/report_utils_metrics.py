"""Print the utils / metrics speed targets as ratios measured side by side in one run.

python benches/python/report_utils_metrics.py
"""

import time

import numpy as np
import rustyml
import rustyml.metrics as rm
import rustyml.utils as ru
import sklearn.metrics as sm
import sklearn.preprocessing as sp


def best(fn, repeat, number=1):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return min(times)


def pair(name, ours, ref, repeat, number=1, target=None):
    # interleave the two to share the machine's noise
    t_ours, t_ref = [], []
    for _ in range(repeat):
        t_ref.append(best(ref, 1, number))
        t_ours.append(best(ours, 1, number))
    o, r = min(t_ours), min(t_ref)
    goal = f" (target >= {target}x)" if target else ""
    print(f"| {name} | {r * 1e3:.3f} | {o * 1e3:.3f} | {r / o:.1f}x{goal} |")


def main():
    rng = np.random.default_rng(0)
    print(f"rayon threads: {rustyml.parallel.current_num_threads()}")
    print("| call | scikit-learn (ms) | rustyml (ms) | speedup |")
    print("|---|---:|---:|---:|")
    X = rng.normal(size=(12_000, 8))
    labels = rng.integers(0, 5, 12_000)
    assert abs(rm.silhouette_score(X, labels) - sm.silhouette_score(X, labels)) < 1e-10
    pair(
        "silhouette_score 12000x8",
        lambda: rm.silhouette_score(X, labels),
        lambda: sm.silhouette_score(X, labels),
        repeat=3,
        target=2,
    )
    big = rng.normal(size=(1_000_000, 20))
    pair(
        "StandardScaler().fit_transform 1000000x20",
        lambda: ru.StandardScaler().fit_transform(big),
        lambda: sp.StandardScaler().fit_transform(big),
        repeat=5,
        target=1.5,
    )
    t = rng.integers(0, 2, 100)
    p = rng.integers(0, 2, 100)
    for name in ("accuracy_score", "f1_score", "confusion_matrix", "adjusted_rand_score"):
        pair(
            f"{name} on 100 labels",
            lambda name=name: getattr(rm, name)(t, p),
            lambda name=name: getattr(sm, name)(t, p),
            repeat=7,
            number=200,
            target=10,
        )


if __name__ == "__main__":
    main()
