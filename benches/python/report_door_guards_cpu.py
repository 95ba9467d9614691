"""CPU time of three door calls whose answers hang on comparing distances (KMeans fit,
DBSCAN fit, KNeighborsClassifier predict), on one thread, best of five (KNN three).

CPU time on one thread, rather than wall-clock time on two, so that a loaded host matters
less when a before/after pair is compared: run it with ``RAYON_NUM_THREADS=1`` once per
build (``PYTHONPATH`` at each build's package), interleaved.

    RAYON_NUM_THREADS=1 PYTHONPATH=<package> python benches/python/report_door_guards_cpu.py
"""

import time

import numpy as np
from threadpoolctl import threadpool_limits

import rustyml.sklearn as door
from rustyml.sklearn.cluster import DBSCAN, KMeans
from rustyml.sklearn.neighbors import KNeighborsClassifier


def best(call, repeats=5):
    times = []
    for _ in range(repeats):
        start = time.process_time()
        call()
        times.append(time.process_time() - start)
    return min(times)


def main():
    rng = np.random.default_rng(25)
    with threadpool_limits(1):
        X = rng.standard_normal((200_000, 8))
        kmeans = best(lambda: KMeans(16, n_init=1, random_state=0).fit(X))
        Xd = rng.standard_normal((20_000, 3))
        dbscan = best(lambda: DBSCAN(eps=0.3, min_samples=10).fit(Xd))
        Xk = rng.standard_normal((20_000, 64))
        yk = rng.integers(0, 5, 20_000)
        knn = KNeighborsClassifier(5).fit(Xk[:10_000], yk[:10_000])
        neighbours = best(lambda: knn.predict(Xk[10_000:]), 3)
    print(
        f"kmeans {kmeans * 1e3:.1f} ms  dbscan {dbscan * 1e3:.1f} ms  "
        f"knn {neighbours * 1e3:.1f} ms  native: {door.dispatch_stats()}"
    )


if __name__ == "__main__":
    main()
