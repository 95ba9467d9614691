"""rustyml.dask fit time on one vs two workers (processes, one thread each) of a local
cluster, for KMeans, LinearRegression and LogisticRegression on a dask array generated
chunk by chunk from a seed (never held whole by the client).

    python benches/python/report_dask.py [--rows 8000000] [--features 8]
"""

import argparse
import os
import time

import dask.array as da
import numpy as np
from _host import cpu_name
from distributed import Client, LocalCluster

from rustyml import dask as rd


def data(rows, features):
    rs = da.random.RandomState(0)
    X = rs.standard_normal((rows, features), chunks=(500_000, features))
    y = X @ np.arange(1.0, features + 1.0) + rs.standard_normal(rows, chunks=500_000)
    return X.persist(), y.persist()


def timed(model, *args):
    start = time.perf_counter()
    model.fit(*args)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=8_000_000)
    parser.add_argument("--features", type=int, default=8)
    args = parser.parse_args()
    print(f"CPU: {cpu_name()}, {os.cpu_count()} logical cores")
    print(f"{args.rows:,} rows x {args.features} float64 features, chunks of 500,000 rows")
    print()
    print(
        "| workers | KMeans(8), 10 iterations (s) | LinearRegression (s) "
        "| LogisticRegression, 10 iterations (s) |"
    )
    print("|---|---|---|---|")
    for workers in (1, 2):
        with (
            LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
            ) as cluster,
            Client(cluster),
        ):
            X, y = data(args.rows, args.features)
            init = X[:8].compute()
            km = timed(rd.KMeans(8, init=init, max_iter=10, tol=0.0), X)
            lr = timed(rd.LinearRegression(), X, y)
            labels = (y > 0).persist()
            logit = rd.LogisticRegression(max_iter=10, tol=0.0)
            lg = timed(logit, X, labels)
            print(f"| {workers} | {km:.2f} | {lr:.2f} | {lg:.2f} ({logit.n_iter_[0]} iterations) |")


if __name__ == "__main__":
    main()
