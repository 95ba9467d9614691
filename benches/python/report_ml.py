"""Fit + predict of every estimator against its scikit-learn peer, side by side in one run.

    python benches/python/report_ml.py [NAME ...]

Prints a markdown table of median wall times (interleaved runs) and the ratio
scikit-learn / rustyml (above 1 means rustyml is faster). Large shapes follow issue 3; the
small shape (200 x 4) shows per-call overhead.
"""

import statistics
import sys
import time

import numpy as np
from sklearn import cluster, decomposition, ensemble, linear_model, neighbors, tree

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


def main():
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
