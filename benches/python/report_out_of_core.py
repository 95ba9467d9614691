"""Training on data larger than memory: StandardScaler (partial_fit), KMeans (partial_fit),
LinearRegression (streaming normal equations on rustyml's product) and a Sequential MLP
(fit on a PyDataset), on float32 data generated block by block from a seed and never held
at once. Prints each model's time and the peak RSS.

    python benches/python/report_out_of_core.py [--gib 26] [--features 16] [--separate]

By default one pass feeds all four models: the MLP's ``fit`` reads the PyDataset, whose
``__getitem__`` draws each block once and hands it to the three ``partial_fit`` models too,
so the process's peak RSS bounds all four at once and the data is generated once (on a
loaded 2-core machine generation costs minutes per pass). ``--separate`` runs each model in
its own process over its own pass instead.

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


_W = {}


def block(i, rows, features, buffers=None):
    """Block ``i``: ``(x, y, x64)``, features as float32 and as float64 (the scalers'
    and k-means's dtype, converted once for all three). Filled into ``buffers`` (reused from
    block to block) when given: fresh 100 MiB arrays per block cost more in page faults
    than the arithmetic on a busy machine."""
    if buffers is None:
        buffers = (
            np.empty((rows, features), np.float32),
            np.empty(rows, np.float32),
            np.empty((rows, features)),
        )
    x, y, x64 = buffers
    w = _W.setdefault(features, np.linspace(-1.0, 1.0, features, dtype=np.float32))
    rng = np.random.default_rng([SEED, i])
    rng.random(out=x, dtype=np.float32)
    rng.random(out=y, dtype=np.float32)
    y -= np.float32(0.5)
    y *= np.float32(0.01)
    y += x @ w
    np.copyto(x64, x)
    return x, y, x64


def peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Scaler:
    name = "StandardScaler.partial_fit"

    def __init__(self, features):
        from rustyml.utils import StandardScaler

        self.model = StandardScaler()

    def update(self, x, y, x64):
        self.model.partial_fit(x64)

    def check(self):
        # uniform features: mean 1/2
        return f"max abs(mean - 1/2) = {np.abs(self.model.mean_ - 0.5).max():.1e}"


class Clusters:
    name = "KMeans(8).partial_fit"

    def __init__(self, features):
        from rustyml.machine_learning import KMeans

        self.model = KMeans(8, random_state=0)

    def update(self, x, y, x64):
        self.model.partial_fit(x64)
        self.rows = len(x)

    def check(self):
        return (
            f"{self.model.n_steps_} mini-batch steps, last batch inertia / row "
            f"{self.model.inertia_ / self.rows:.3f}"
        )


class Linear:
    name = "LinearRegression (normal equations)"

    def __init__(self, features):
        self.features = features
        d = features + 1  # the column of ones for the intercept
        self.gram = np.zeros((d, d))
        self.xty = np.zeros((d, 1))

    def update(self, x, y, x64, rows=1 << 15):
        from rustyml.math.matmul import dot

        # X^T [X 1 y] in slices that stay in cache (a whole-block transpose is a slow
        # strided copy); the intercept column is the column sums
        f = self.features
        for i in range(0, len(x64), rows):
            xs = x64[i : i + rows]
            xt = np.ascontiguousarray(xs.T)
            self.gram[:f, :f] += dot(xt, xs)
            sums = xt.sum(axis=1)
            self.gram[:f, f] += sums
            self.gram[f, :f] += sums
            self.gram[f, f] += len(xs)
            ys = y[i : i + rows].astype(np.float64)
            self.xty[:f, 0] += dot(xt, ys[:, None])[:, 0]
            self.xty[f, 0] += ys.sum()

    def check(self):
        from rustyml._normal_equations import NormalEquations

        coef = NormalEquations(self.gram).solve(self.xty)[:, 0]
        w = np.linspace(-1.0, 1.0, self.features, dtype=np.float32).astype(np.float64)
        return f"max abs(coef - w) = {np.abs(coef[: self.features] - w).max():.1e}"


NETWORK = "Sequential 16-32-1 fit(PyDataset)"


def train(n_blocks, rows, features, others, batch=8192):
    """Fit the MLP on a PyDataset over the blocks; each block, drawn once, also goes to every
    model in ``others``. Returns the seconds spent drawing, in each model, and the check."""
    from rustyml.neural_network import PyDataset, Sequential, layers

    per_block = rows // batch
    spent = {"generation": 0.0, **{m.name: 0.0 for m in others}}
    begun = time.perf_counter()
    buffers = (
        np.empty((rows, features), np.float32),
        np.empty(rows, np.float32),
        np.empty((rows, features)),
    )

    class Blocks(PyDataset):
        """Batch ``j`` is a slice of block ``j // per_block``, drawn when its first batch is
        read (one block held)."""

        def __init__(self):
            super().__init__()
            self.cached = (None, None)

        def __len__(self):
            return n_blocks * per_block

        def __getitem__(self, j):
            b, k = divmod(j, per_block)
            if self.cached[0] != b:
                # the previous block's batches are all trained: its buffers are free
                start = time.perf_counter()
                x, y, x64 = block(b, rows, features, buffers)
                spent["generation"] += time.perf_counter() - start
                for m in others:
                    start = time.perf_counter()
                    m.update(x, y, x64)
                    spent[m.name] += time.perf_counter() - start
                self.cached = (b, (x, y))
                if b % 16 == 0:
                    print(
                        f"block {b}/{n_blocks}, {time.perf_counter() - begun:.0f} s, "
                        f"peak RSS {peak_rss_mib():.0f} MiB",
                        file=sys.stderr,
                        flush=True,
                    )
            x, y = self.cached[1]
            return x[k * batch : (k + 1) * batch], y[k * batch : (k + 1) * batch]

    model = Sequential(
        [layers.Dense(32, activation="relu", input_shape=(features,)), layers.Dense(1)], seed=0
    )
    model.compile(optimizer="adam", loss="mse")
    start = time.perf_counter()
    history = model.fit(Blocks(), epochs=1, shuffle=False, verbose=0)
    total = time.perf_counter() - start
    spent[NETWORK] = total - sum(spent.values())
    checks = {m.name: m.check() for m in others}
    checks[NETWORK] = f"{n_blocks * per_block} steps, loss {history.history['loss'][-1]:.2e}"
    return total, spent, checks


PARTIAL = [Scaler, Clusters, Linear]


def child(name, n_blocks, rows, features):
    """One model alone over its own pass (``--separate``)."""
    if name == NETWORK:
        total, spent, checks = train(n_blocks, rows, features, [])
    else:
        m = next(cls for cls in PARTIAL if cls.name == name)(features)
        spent = {"generation": 0.0, name: 0.0}
        start = time.perf_counter()
        buffers = None
        for i in range(n_blocks):
            t = time.perf_counter()
            x, y, x64 = block(i, rows, features, buffers)
            buffers = (x, y, x64)
            spent["generation"] += time.perf_counter() - t
            m.update(x, y, x64)
        total = time.perf_counter() - start
        spent[name] = total - spent["generation"]
        checks = {name: m.check()}
    print(json.dumps({"spent": spent, "checks": checks, "peak_mib": peak_rss_mib()}))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gib", type=float, default=26.0)
    parser.add_argument("--features", type=int, default=16)
    parser.add_argument("--block-rows", type=int, default=1 << 20)
    parser.add_argument("--separate", action="store_true")
    parser.add_argument("--child", default=None)
    args = parser.parse_args()
    rows, d = args.block_rows, args.features
    n_blocks = int(np.ceil(args.gib * 2**30 / (rows * d * 4)))
    if args.child:
        child(args.child, n_blocks, rows, d)
        return
    from _host import cpu_name

    total = n_blocks * rows * d * 4 / 2**30
    print(f"CPU: {cpu_name()}, {os.cpu_count()} logical cores; load average {os.getloadavg()}")
    with open("/proc/meminfo") as fh:
        print(fh.readline().strip())
    print(
        f"{n_blocks} blocks of {rows:,} x {d} float32 = {n_blocks * rows:,} rows, "
        f"{total:.1f} GiB of features (+ {total / d:.1f} GiB of targets) per pass, "
        "generated block by block from a seed"
    )
    print()
    names = [cls.name for cls in PARTIAL] + [NETWORK]
    if args.separate:
        print("| model | time in the model (s) | generation (s) | peak RSS (MiB) | check |")
        print("|---|---:|---:|---:|---|")
        for name in names:
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
                f"| {name} | {res['spent'][name]:.0f} | {res['spent']['generation']:.0f} | "
                f"{res['peak_mib']:.0f} | {res['checks'][name]} |",
                flush=True,
            )
        return
    start = time.perf_counter()
    _, spent, checks = train(n_blocks, rows, d, [cls(d) for cls in PARTIAL])
    wall = time.perf_counter() - start
    print("| model | time in the model (s) | check |")
    print("|---|---:|---|")
    for name in names:
        print(f"| {name} | {spent[name]:.0f} | {checks[name]} |")
    print()
    print(
        f"One pass: {wall:.0f} s wall, of which {spent['generation']:.0f} s drawing the data; "
        f"peak RSS of the process (all four models, one block, the interpreter): "
        f"{peak_rss_mib():.0f} MiB"
    )


if __name__ == "__main__":
    main()
