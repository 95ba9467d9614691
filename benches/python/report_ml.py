"""Fit + predict of every estimator against its scikit-learn peer, side by side in one run.

    python benches/python/report_ml.py [NAME ...]
    python benches/python/report_ml.py --issue25 [ROUNDS] [knn|kmeans]

Prints a markdown table of median wall times (interleaved runs) and the ratio
scikit-learn / rustyml (above 1 means rustyml is faster). Large shapes follow issue 3; the
small shape (200 x 4) shows per-call overhead.

``--issue25``: issue 25's two shapes only (KNN 10,000 train x 10,000 queries, d=64, k=5;
KMeans 200,000 x 8, k=16, n_init=1), each through ``rustyml.machine_learning`` and through
the scikit-learn door ``rustyml.sklearn``, scikit-learn limited to rustyml's thread count,
medians of ROUNDS (default 5) interleaved rounds with a settle pause before every timed call;
``knn`` or ``kmeans`` runs only that half.
"""

import os
import statistics
import sys
import time

import numpy as np
from sklearn import cluster, decomposition, ensemble, linear_model, neighbors, tree
from threadpoolctl import threadpool_limits

import rustyml
import rustyml.machine_learning as rml


def blobs(n, d, k, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.uniform(-10, 10, (k, d))
    labels = rng.integers(0, k, n)
    return centers[labels] + rng.standard_normal((n, d)), labels


def classification(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    w = rng.standard_normal(d)
    y = (X @ w + 0.5 * rng.standard_normal(n) > 0).astype(np.float64)
    return X, y


def case(name, ours, theirs, data, predict="predict"):
    return name, ours, theirs, data, predict


def cases(small):
    def sz(big, little):
        return little if small else big

    X_km, _ = blobs(sz(100_000, 200), sz(16, 4), 8)
    X_cls, y_cls = classification(sz(50_000, 200), sz(20, 4))
    X_knn, y_knn = classification(sz(20_000, 200), sz(32, 4), seed=1)
    Xq = X_knn[: sz(5_000, 200)]
    X_db, _ = blobs(sz(10_000, 200), 2, 5, seed=2)
    X_if, _ = blobs(sz(50_000, 200), sz(16, 4), 3, seed=3)
    X_pca, _ = blobs(sz(50_000, 200), sz(20, 4), 4, seed=4)
    ncomp = sz(8, 2)
    out = []
    if hasattr(rml, "KMeans"):
        out.append(
            case(
                "KMeans",
                lambda: rml.KMeans(8, n_init=1, random_state=0).fit(X_km).predict(X_km),
                lambda: cluster.KMeans(8, n_init=1, random_state=0).fit(X_km).predict(X_km),
                None,
            )
        )
    if hasattr(rml, "KNN"):
        out.append(
            case(
                "KNN (brute)",
                lambda: rml.KNN(n_neighbors=5).fit(X_knn, y_knn).predict(Xq),
                lambda: (
                    neighbors.KNeighborsClassifier(5, algorithm="brute")
                    .fit(X_knn, y_knn)
                    .predict(Xq)
                ),
                None,
            )
        )
    if hasattr(rml, "DecisionTree"):
        out.append(
            case(
                "DecisionTree",
                lambda: rml.DecisionTree(max_depth=10).fit(X_cls, y_cls).predict(X_cls),
                lambda: tree.DecisionTreeClassifier(max_depth=10).fit(X_cls, y_cls).predict(X_cls),
                None,
            )
        )
    if hasattr(rml, "LogisticRegression"):
        out.append(
            case(
                "LogisticRegression",
                lambda: rml.LogisticRegression().fit(X_cls, y_cls).predict(X_cls),
                lambda: linear_model.LogisticRegression().fit(X_cls, y_cls).predict(X_cls),
                None,
            )
        )
    if hasattr(rml, "PCA"):
        out.append(
            case(
                "PCA",
                lambda: rml.PCA(ncomp).fit(X_pca).transform(X_pca),
                lambda: decomposition.PCA(ncomp).fit(X_pca).transform(X_pca),
                None,
            )
        )
    if hasattr(rml, "DBSCAN"):
        out.append(
            case(
                "DBSCAN",
                lambda: rml.DBSCAN(eps=0.3, min_samples=5).fit_predict(X_db),
                lambda: cluster.DBSCAN(eps=0.3, min_samples=5).fit_predict(X_db),
                None,
            )
        )
    if hasattr(rml, "IsolationForest"):
        out.append(
            case(
                "IsolationForest",
                lambda: rml.IsolationForest(random_state=0).fit(X_if).predict(X_if),
                lambda: ensemble.IsolationForest(random_state=0).fit(X_if).predict(X_if),
                None,
            )
        )
    return out


def median_time(fn, rounds):
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


# scikit-learn's OpenMP / OpenBLAS workers spin for a while after a call: timed right after
# it, the next call would find one of the two cores taken. Every timed call starts after this.
SETTLE_SECONDS = 0.3


def settled_medians(fns, rounds):
    """Median wall time of each function over `rounds` rounds, alternating between them."""
    times = [[] for _ in fns]
    for fn in fns:
        fn()  # warm up
    for _ in range(rounds):
        for t, fn in zip(times, fns):
            time.sleep(SETTLE_SECONDS)
            start = time.perf_counter()
            fn()
            t.append(time.perf_counter() - start)
    return [statistics.median(t) for t in times]


def issue25(rounds, only=None):
    threads = rustyml.parallel.current_num_threads()
    load = os.getloadavg()
    print(
        f"threads {threads} each side; settle {SETTLE_SECONDS} s; medians of {rounds} "
        f"interleaved rounds; load average at start {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}\n"
    )
    print("| case | scikit-learn (ms) | rustyml (ms) | sklearn / rustyml |")
    print("|---|---:|---:|---:|")
    with threadpool_limits(threads):
        if only != "kmeans":
            issue25_knn(rounds)
        if only != "knn":
            issue25_kmeans(rounds)


def issue25_knn(rounds):
    from rustyml.sklearn import neighbors as door_neighbors

    X, y = classification(20_000, 64, seed=25)
    X_train, y_train, X_query = X[:10_000], y[:10_000], X[10_000:]
    sk_knn = neighbors.KNeighborsClassifier(5, algorithm="brute").fit(X_train, y_train)
    ours = rml.KNN(n_neighbors=5).fit(X_train, y_train)
    via_door = door_neighbors.KNeighborsClassifier(5).fit(X_train, y_train)
    t_sk, t_ours, t_door = settled_medians(
        [
            lambda: sk_knn.predict(X_query),
            lambda: ours.predict(X_query),
            lambda: via_door.predict(X_query),
        ],
        rounds,
    )
    shape = "KNN 10000 train x 10000 queries, d=64, k=5, predict"
    print(
        f"| {shape}, machine_learning.KNN | {t_sk * 1e3:.0f} | {t_ours * 1e3:.0f} "
        f"| {t_sk / t_ours:.2f}x |"
    )
    print(
        f"| {shape}, sklearn door | {t_sk * 1e3:.0f} | {t_door * 1e3:.0f} | {t_sk / t_door:.2f}x |",
        flush=True,
    )


def issue25_kmeans(rounds):
    from rustyml.sklearn import cluster as door_cluster

    # Structureless data: the number of Lloyd passes depends on the k-means++ draw, and
    # machine_learning.KMeans draws differently from scikit-learn (the door draws as
    # scikit-learn does): totals over five random_states, and the cost of one pass.
    X = np.random.default_rng(25).standard_normal((200_000, 8))
    seeds = range(5)
    fits = {
        "scikit-learn": lambda s: cluster.KMeans(16, n_init=1, random_state=s).fit(X),
        "machine_learning.KMeans": lambda s: rml.KMeans(16, n_init=1, random_state=s).fit(X),
        "sklearn door": lambda s: door_cluster.KMeans(16, n_init=1, random_state=s).fit(X),
    }
    iters = {}

    def all_seeds(name, fit):
        iters[name] = sum(fit(s).n_iter_ for s in seeds)  # the same in every round

    times = settled_medians(
        [lambda n=name, f=fit: all_seeds(n, f) for name, fit in fits.items()], rounds
    )
    t_sk, sk_iter = times[0], iters["scikit-learn"]
    for name, t in zip(list(fits)[1:], times[1:]):
        print(
            f"| KMeans 200000x8 N(0,1), k=16, n_init=1, fit, random_state 0-4 in total, "
            f"{name} (n_iter_ sklearn {sk_iter}, ours {iters[name]}; ms per pass "
            f"{t_sk / sk_iter * 1e3:.2f} vs {t / iters[name] * 1e3:.2f}) "
            f"| {t_sk * 1e3:.0f} | {t * 1e3:.0f} | {t_sk / t:.2f}x |",
            flush=True,
        )
    init = X[:16].copy()
    t_sk, t_ours, t_door = settled_medians(
        [
            lambda: cluster.KMeans(16, init=init, n_init=1, max_iter=50, tol=0.0).fit(X),
            lambda: rml.KMeans(16, init=init, n_init=1, max_iter=50, tol=0.0).fit(X),
            lambda: door_cluster.KMeans(16, init=init, n_init=1, max_iter=50, tol=0.0).fit(X),
        ],
        rounds,
    )
    for name, t in (("machine_learning.KMeans", t_ours), ("sklearn door", t_door)):
        print(
            f"| KMeans 200000x8 k=16, same init, 50 passes (tol=0), {name} "
            f"| {t_sk * 1e3:.0f} | {t * 1e3:.0f} | {t_sk / t:.2f}x |",
            flush=True,
        )


def main():
    if "--issue25" in sys.argv:
        rest = [a for a in sys.argv[1:] if a != "--issue25"]
        numbers = [int(a) for a in rest if a.isdigit()]
        parts = [a for a in rest if a in ("knn", "kmeans")]
        issue25(numbers[0] if numbers else 5, parts[0] if parts else None)
        return
    wanted = set(sys.argv[1:])
    print("| estimator | shape | rustyml (ms) | scikit-learn (ms) | sklearn / rustyml |")
    print("|---|---|---:|---:|---:|")
    for small in (False, True):
        for name, ours, theirs, _data, _ in cases(small):
            if wanted and name.split()[0] not in wanted:
                continue
            ours()
            theirs()  # warm up both
            rounds = 30 if small else 3
            t_ours, t_theirs = [], []
            for _ in range(rounds):  # interleave to share the machine's noise
                t_ours.append(median_time(ours, 1))
                t_theirs.append(median_time(theirs, 1))
            a, b = statistics.median(t_ours), statistics.median(t_theirs)
            shape = "small (200 x 4)" if small else "large (issue 3)"
            print(
                f"| {name} | {shape} | {a * 1e3:.2f} | {b * 1e3:.2f} | {b / a:.1f}x |", flush=True
            )


if __name__ == "__main__":
    main()
