"""Clustering speed against scikit-learn, side by side in one run (min of interleaved runs).

python benches/python/report_cluster.py [--quick] [--issue10]  (--issue10: stop after the issue-10 shapes)

scikit-learn's native thread pools are limited to rustyml's rayon thread count, so both use
the same cores.
"""

import sys
import time

import numpy as np
from sklearn import cluster
from sklearn.cluster import kmeans_plusplus
from sklearn.datasets import make_blobs
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

import rustyml
from rustyml.machine_learning import DBSCAN, KMeans, MeanShift


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def compare(label, ours, theirs, rounds):
    t_ours, t_theirs = [], []
    for _ in range(rounds):  # interleaved: both share the machine's noise
        t_ours.append(timed(ours))
        t_theirs.append(timed(theirs))
    a, b = min(t_ours), min(t_theirs)
    print(f"| {label} | {b * 1e3:.2f} | {a * 1e3:.2f} | {b / a:.1f}x |")


def main():
    quick = "--quick" in sys.argv
    threads = rustyml.parallel.current_num_threads()
    print(f"rayon threads: {threads} (scikit-learn limited to the same)\n")
    print("| workload | scikit-learn (ms) | rustyml (ms) | speedup |")
    print("|---|---:|---:|---:|")
    with threadpool_limits(threads):
        X, _ = make_blobs(n_samples=100_000, n_features=16, centers=8, random_state=0)
        for n_init in (1, 10):
            compare(
                f"KMeans 100000x16 k=8 n_init={n_init} fit+predict",
                lambda n_init=n_init: KMeans(8, n_init=n_init, random_state=0).fit(X).predict(X),
                lambda n_init=n_init: (
                    cluster.KMeans(8, n_init=n_init, random_state=0).fit(X).predict(X)
                ),
                2 if quick else 5,
            )
        X, _ = make_blobs(n_samples=10_000, centers=5, cluster_std=0.6, random_state=0)
        X = StandardScaler().fit_transform(X)
        for eps, ms in ((0.05, 5), (0.1, 10), (0.3, 10)):
            compare(
                f"DBSCAN 10000x2 eps={eps} min_samples={ms} fit_predict",
                lambda eps=eps, ms=ms: DBSCAN(eps=eps, min_samples=ms).fit_predict(X),
                lambda eps=eps, ms=ms: cluster.DBSCAN(eps=eps, min_samples=ms).fit_predict(X),
                3 if quick else 7,
            )
        issue10_shapes(quick)
        if "--issue10" in sys.argv:
            return
        X, _ = make_blobs(n_samples=200, n_features=4, centers=3, random_state=0)
        rounds = 5 if quick else 20
        compare(
            "KMeans 200x4 k=3 n_init=10 fit+predict",
            lambda: KMeans(3, random_state=0).fit(X).predict(X),
            lambda: cluster.KMeans(3, n_init=10, random_state=0).fit(X).predict(X),
            rounds,
        )
        compare(
            "DBSCAN 200x4 eps=1 fit_predict",
            lambda: DBSCAN(eps=1.0).fit_predict(X),
            lambda: cluster.DBSCAN(eps=1.0).fit_predict(X),
            rounds,
        )
        compare(
            "MeanShift 200x4 fit+predict",
            lambda: MeanShift().fit(X).predict(X),
            lambda: cluster.MeanShift().fit(X).predict(X),
            3 if quick else 5,
        )
        X, _ = make_blobs(n_samples=2000, centers=4, random_state=0)
        compare(
            "MeanShift 2000x2 bin_seeding fit+predict",
            lambda: MeanShift(bin_seeding=True).fit(X).predict(X),
            lambda: cluster.MeanShift(bin_seeding=True).fit(X).predict(X),
            2 if quick else 3,
        )


def issue10_shapes(quick):
    """The two shapes of issue 10 (point 7): standard normal data, no cluster structure."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30_000, 3))
    compare(
        "DBSCAN 30000x3 N(0,1) eps=0.15 min_samples=5 fit",
        lambda: DBSCAN(eps=0.15, min_samples=5).fit(X),
        lambda: cluster.DBSCAN(eps=0.15, min_samples=5).fit(X),
        3 if quick else 5,
    )
    X = rng.standard_normal((200_000, 8))
    # On structureless data the number of Lloyd passes depends on the k-means++ draw, and the
    # two libraries draw differently: a single random_state compares luck as much as speed.
    # Fair fits: from the same k-means++ centers, and totals over five random_states.
    init = kmeans_plusplus(X, 16, random_state=0)[0]
    ours = KMeans(16, init=init, n_init=1).fit(X).n_iter_
    theirs = cluster.KMeans(16, init=init, n_init=1).fit(X).n_iter_
    compare(
        f"KMeans 200000x8 N(0,1) k=16 fit from the same k-means++ centers "
        f"(n_iter_ sklearn {theirs}, rustyml {ours})",
        lambda: KMeans(16, init=init, n_init=1).fit(X),
        lambda: cluster.KMeans(16, init=init, n_init=1).fit(X),
        2 if quick else 3,
    )
    seeds = range(5)
    ours = sum(KMeans(16, n_init=1, random_state=s).fit(X).n_iter_ for s in seeds)
    theirs = sum(cluster.KMeans(16, n_init=1, random_state=s).fit(X).n_iter_ for s in seeds)
    compare(
        f"KMeans 200000x8 N(0,1) k=16 n_init=1 fit, random_state 0-4 in total "
        f"(n_iter_ sklearn {theirs}, rustyml {ours})",
        lambda: [KMeans(16, n_init=1, random_state=s).fit(X) for s in seeds],
        lambda: [cluster.KMeans(16, n_init=1, random_state=s).fit(X) for s in seeds],
        1 if quick else 2,
    )
    # Same initial centers, tol=0: both run the same 50 Lloyd passes (per-iteration cost).
    init = X[:16].copy()
    compare(
        "KMeans 200000x8 k=16 same init, 50 iterations (tol=0)",
        lambda: KMeans(16, init=init, n_init=1, max_iter=50, tol=0.0).fit(X),
        lambda: cluster.KMeans(16, init=init, n_init=1, max_iter=50, tol=0.0).fit(X),
        2 if quick else 3,
    )


if __name__ == "__main__":
    main()
