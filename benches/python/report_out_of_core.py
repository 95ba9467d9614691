"""Training on data larger than memory: StandardScaler (partial_fit), KMeans (partial_fit),
LinearRegression (streaming normal equations on rustyml's product) and a Sequential MLP
(fit on a PyDataset), each in its own process, on the same float32 data generated block by
block from a seed and never held at once. Prints each model's time and peak RSS.

    python benches/python/report_out_of_core.py [--gib 26] [--features 16]

The data: block ``i`` of ``--block-rows`` rows is ``U[0, 1)`` features drawn from
``default_rng([seed, i])``, targets ``y = X w + 0.01 (u - 0.5)`` with a fixed ``w``. NumPy's
uniform float32 draw is the cheapest seeded generator, so the generation does not dominate.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

SEED = 2026


def block(i, rows, features):
    rng = np.random.default_rng([SEED, i])
    x = rng.random((rows, features), dtype=np.float32)
    w = np.linspace(-1.0, 1.0, features, dtype=np.float32)
    y = x @ w + np.float32(0.01) * (rng.random(rows, dtype=np.float32) - np.float32(0.5))
    return x, y


def peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_scaler(n_blocks, rows, features):
    from rustyml.utils import StandardScaler

    s = StandardScaler()
    for i in range(n_blocks):
        s.partial_fit(block(i, rows, features)[0])
    # uniform features: mean 1/2, variance 1/12
    return f"max |mean - 1/2| = {np.abs(s.mean_ - 0.5).max():.1e}"


def run_kmeans(n_blocks, rows, features):
    from rustyml.machine_learning import KMeans

    km = KMeans(8, random_state=0)
    for i in range(n_blocks):
        km.partial_fit(block(i, rows, features)[0])
    return f"{km.n_steps_} mini-batch steps, last batch inertia / row {km.inertia_ / rows:.3f}"


def run_linear(n_blocks, rows, features):
    from rustyml._normal_equations import NormalEquations
    from rustyml.math.matmul import dot

    d = features + 1  # the column of ones for the intercept
    gram = np.zeros((d, d))
    xty = np.zeros(d)
    for i in range(n_blocks):
        x, y = block(i, rows, features)
        xa = np.empty((rows, d))
        xa[:, :features] = x
        xa[:, features] = 1.0
        gram += dot(xa.T.copy(), xa)
        xty += dot(xa.T.copy(), y.astype(np.float64)[:, None])[:, 0]
    coef = NormalEquations(gram).solve(xty[:, None])[:, 0]
    w = np.linspace(-1.0, 1.0, features, dtype=np.float32).astype(np.float64)
    return f"max |coef - w| = {np.abs(coef[:features] - w).max():.1e}"


def run_mlp(n_blocks, rows, features, batch=8192):
    from rustyml.neural_network import PyDataset, Sequential, layers

    per_block = rows // batch

    class Blocks(PyDataset):
        """Batch ``j`` is a slice of block ``j // per_block``; the block is drawn again for
        each of its batches' turns only while it is the current one (one block held)."""

        def __init__(self):
            super().__init__()
            self.cached = (None, None)

        def __len__(self):
            return n_blocks * per_block

        def __getitem__(self, j):
            b, k = divmod(j, per_block)
            if self.cached[0] != b:
                self.cached = (b, block(b, rows, features))
            x, y = self.cached[1]
            return x[k * batch : (k + 1) * batch], y[k * batch : (k + 1) * batch]

    model = Sequential(
        [
            layers.Dense(32, activation="relu", input_shape=(features,)),
            layers.Dense(1),
        ],
        seed=0,
    )
    model.compile(optimizer="adam", loss="mse")
    history = model.fit(Blocks(), epochs=1, shuffle=False, verbose=0)
    return f"{n_blocks * per_block} steps, loss {history.history['loss'][-1]:.2e}"


MODELS = {
    "StandardScaler.partial_fit": run_scaler,
    "KMeans(8).partial_fit": run_kmeans,
    "LinearRegression (normal equations)": run_linear,
    "Sequential 16-32-1 fit(PyDataset)": run_mlp,
}


def child(name, n_blocks, rows, features):
    start = time.perf_counter()
    check = MODELS[name](n_blocks, rows, features)
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "peak_mib": peak_rss_mib(), "check": check}))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gib", type=float, default=26.0)
    parser.add_argument("--features", type=int, default=16)
    parser.add_argument("--block-rows", type=int, default=1 << 20)
    parser.add_argument("--child", default=None)
    args = parser.parse_args()
    rows, d = args.block_rows, args.features
    n_blocks = int(np.ceil(args.gib * 2**30 / (rows * d * 4)))
    if args.child:
        child(args.child, n_blocks, rows, d)
        return
    from _host import cpu_name

    total = n_blocks * rows * d * 4 / 2**30
    print(f"CPU: {cpu_name()}, {os.cpu_count()} logical cores")
    with open("/proc/meminfo") as fh:
        print(fh.readline().strip())
    print(
        f"{n_blocks} blocks of {rows:,} x {d} float32 = {n_blocks * rows:,} rows, "
        f"{total:.1f} GiB of features per pass, generated block by block from a seed"
    )
    print()
    print("| model | passes | time (s) | peak RSS (MiB) | check |")
    print("|---|---:|---:|---:|---|")
    for name in MODELS:
        out = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                name,
                "--gib",
                str(args.gib),
                "--features",
                str(d),
                "--block-rows",
                str(rows),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        res = json.loads(out.stdout.strip().splitlines()[-1])
        print(
            f"| {name} | 1 | {res['seconds']:.0f} | {res['peak_mib']:.0f} | {res['check']} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
