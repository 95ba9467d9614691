"""Unmodified scikit-learn scripts, run stock and with ``python -m rustyml.patch``.

Each script below is plain scikit-learn code; it times its own work (data generation
excluded) and prints ``seconds=<t>``. Both variants run as fresh processes, interleaved,
``--repeats`` times each; the table gives the best time of each and stock / patched (above 1
means the patched run is faster), plus the share of door calls that ran natively.

    python benches/python/report_sklearn_patch.py [--repeats 3] [--only DecisionTree]
"""

import argparse
import os
import platform
import re
import subprocess
import sys
import tempfile
import textwrap

from _host import cpu_name

SCRIPTS = {
    "KMeans 200,000 x 8, k=16, n_init=1": """
        from sklearn.cluster import KMeans
        X = rng.random((200_000, 8))
        start()
        KMeans(n_clusters=16, n_init=1, random_state=0).fit(X)
    """,
    "KNeighborsClassifier 10,000 x 10,000 queries, d=64, k=5": """
        from sklearn.neighbors import KNeighborsClassifier
        X = rng.random((10_000, 64)); y = rng.integers(0, 5, 10_000); Q = rng.random((10_000, 64))
        start()
        KNeighborsClassifier(n_neighbors=5).fit(X, y).predict(Q)
    """,
    "DBSCAN 20,000 x 3": """
        from sklearn.cluster import DBSCAN
        from sklearn.datasets import make_blobs
        X, _ = make_blobs(20_000, n_features=3, centers=8, random_state=0)
        start()
        DBSCAN(eps=0.3, min_samples=10).fit(X)
    """,
    "DBSCAN on a sparse precomputed neighbour graph, 50,000 points": """
        from sklearn.cluster import DBSCAN
        from sklearn.datasets import make_blobs
        from sklearn.neighbors import radius_neighbors_graph
        X, _ = make_blobs(50_000, n_features=3, centers=8, random_state=0)
        G = radius_neighbors_graph(X, 0.5, mode="distance")
        start()
        DBSCAN(eps=0.3, min_samples=10, metric="precomputed").fit(G)
    """,
    "PCA 100,000 x 50 -> 10": """
        from sklearn.decomposition import PCA
        X = rng.random((100_000, 50))
        start()
        PCA(n_components=10).fit_transform(X)
    """,
    "DecisionTreeClassifier 50,000 x 20, 5 classes": """
        from sklearn.tree import DecisionTreeClassifier
        X = rng.standard_normal((50_000, 20)); y = (X[:, :5] > 0.3).sum(axis=1)
        start()
        DecisionTreeClassifier(random_state=0).fit(X, y)
    """,
    "DecisionTreeRegressor 50,000 x 20, max_depth=12": """
        from sklearn.tree import DecisionTreeRegressor
        X = rng.standard_normal((50_000, 20)); y = X[:, 0] * X[:, 1] + np.sin(3 * X[:, 2])
        start()
        DecisionTreeRegressor(max_depth=12, random_state=0).fit(X, y)
    """,
    "DecisionTreeClassifier, sparse 20,000 x 2,000 (1 % non-zero)": """
        import scipy.sparse as sp
        from sklearn.tree import DecisionTreeClassifier
        X = sp.random(20_000, 2_000, density=0.01, format="csc", random_state=0)
        y = (np.asarray(X[:, :50].sum(axis=1)).ravel() > 0.2).astype(int)
        start()
        DecisionTreeClassifier(random_state=0).fit(X, y)
    """,
    "IsolationForest 100,000 x 10, 100 trees": """
        from sklearn.ensemble import IsolationForest
        X = rng.standard_normal((100_000, 10))
        start()
        IsolationForest(random_state=0).fit(X)
    """,
    "StandardScaler + LogisticRegression 100,000 x 20": """
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler
        X = rng.standard_normal((100_000, 20)); y = (X @ rng.standard_normal(20) > 0).astype(int)
        start()
        make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y)
    """,
    "PCA randomized 20,000 x 500 -> 20": """
        from sklearn.decomposition import PCA
        X = rng.standard_normal((20_000, 500)) * np.linspace(3, 0.1, 500)
        start()
        PCA(n_components=20, svd_solver="randomized", random_state=0).fit_transform(X)
    """,
    "LinearDiscriminantAnalysis 100,000 x 50, 5 classes": """
        from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
        X = rng.standard_normal((100_000, 50)); y = rng.integers(0, 5, 100_000)
        X += y[:, None] * 0.1
        start()
        LinearDiscriminantAnalysis().fit(X, y)
    """,
    "LinearDiscriminantAnalysis eigen 100,000 x 50, 5 classes": """
        from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
        X = rng.standard_normal((100_000, 50)); y = rng.integers(0, 5, 100_000)
        X += y[:, None] * 0.1
        start()
        LinearDiscriminantAnalysis(solver="eigen").fit(X, y)
    """,
    "PCA sparse CSR 12,000 x 300 (10 % non-zero) -> 10, arpack": """
        import scipy.sparse
        from sklearn.decomposition import PCA
        X = scipy.sparse.random_array((12_000, 300), density=0.1, rng=0, format="csr")
        X = X.multiply(np.linspace(3, 0.1, 300)).tocsr()
        start()
        PCA(n_components=10, svd_solver="arpack", random_state=0).fit_transform(X)
    """,
    "TSNE 2,000 x 50 (Barnes-Hut)": """
        from sklearn.manifold import TSNE
        X = rng.standard_normal((2_000, 50)); X[:1000] += 2.0
        start()
        TSNE(random_state=0).fit_transform(X)
    """,
    "SVC rbf 5,000 x 20": """
        from sklearn.svm import SVC
        X = rng.standard_normal((5_000, 20)); y = (X[:, 0] * X[:, 1] + X[:, 2] > 0).astype(int)
        start()
        SVC().fit(X, y)
    """,
    "LinearSVC 20,000 x 50": """
        from sklearn.svm import LinearSVC
        X = rng.standard_normal((20_000, 50)); y = (X @ rng.standard_normal(50) > 0).astype(int)
        start()
        LinearSVC(random_state=0).fit(X, y)
    """,
    "LogisticRegression newton-cholesky 100,000 x 20": """
        from sklearn.linear_model import LogisticRegression
        X = rng.standard_normal((100_000, 20)); y = (X @ rng.standard_normal(20) > 0).astype(int)
        start()
        LogisticRegression(solver="newton-cholesky").fit(X, y)
    """,
    "LogisticRegression lbfgs 50,000 x 30, 5 classes": """
        from sklearn.linear_model import LogisticRegression
        X = rng.standard_normal((50_000, 30))
        y = np.argmax(X @ rng.standard_normal((30, 5)) + rng.gumbel(size=(50_000, 5)), axis=1)
        start()
        LogisticRegression(max_iter=500).fit(X, y)
    """,
    "LogisticRegression sag 20,000 x 50": """
        from sklearn.linear_model import LogisticRegression
        X = rng.standard_normal((20_000, 50)); y = (X @ rng.standard_normal(50) > 0).astype(int)
        start()
        LogisticRegression(solver="sag", random_state=0, max_iter=1000).fit(X, y)
    """,
    "LogisticRegression saga elastic net 20,000 x 50": """
        from sklearn.linear_model import LogisticRegression
        X = rng.standard_normal((20_000, 50)); y = (X @ rng.standard_normal(50) > 0).astype(int)
        start()
        LogisticRegression(solver="saga", l1_ratio=0.5, random_state=0, max_iter=1000).fit(X, y)
    """,
}

PRELUDE = """
import time
import numpy as np
rng = np.random.default_rng(0)
_t0 = [0.0]
def start():
    _t0[0] = time.perf_counter()
"""

EPILOGUE = """
print(f"seconds={time.perf_counter() - _t0[0]:.6f}")
try:
    from rustyml.sklearn import dispatch_stats
    stats = dispatch_stats()
    native = sum(n for (_, _, path), n in stats.items() if path == "rustyml")
    print(f"native={native} fallback={sum(stats.values()) - native}")
except ImportError:
    pass
"""


def run(path, patched):
    cmd = [sys.executable, "-m", "rustyml.patch", path] if patched else [sys.executable, path]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    seconds = float(re.search(r"seconds=([0-9.]+)", out.stdout).group(1))
    calls = re.search(r"native=(\d+) fallback=(\d+)", out.stdout)
    return seconds, calls.groups() if calls else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", default="", help="run the scripts whose name has this text")
    args = parser.parse_args()
    print(f"CPU: {cpu_name()}, {os.cpu_count()} logical cores; Python {platform.python_version()}")
    print()
    print("| script | stock (s) | patched (s) | stock / patched | door calls native |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, body in SCRIPTS.items():
            if args.only not in name:
                continue
            path = os.path.join(tmp, "script.py")
            with open(path, "w") as f:
                f.write(PRELUDE + textwrap.dedent(body) + EPILOGUE)
            stock, patched, calls = [], [], None
            for _ in range(args.repeats):
                stock.append(run(path, False)[0])
                seconds, calls = run(path, True)
                patched.append(seconds)
            share = f"{calls[0]} of {int(calls[0]) + int(calls[1])}" if calls else "-"
            print(
                f"| {name} | {min(stock):.3f} | {min(patched):.3f} | "
                f"{min(stock) / min(patched):.2f} | {share} |"
            )


if __name__ == "__main__":
    main()
