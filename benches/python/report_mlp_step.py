"""One MLP 784-256-128-10 (report_nn.py's, Adam) step and one single-row prediction, timed
alone: the figures docs/BENCHMARKS.md compares across builds with compare_builds.sh.

    python benches/python/report_mlp_step.py [ROUNDS]

Each figure is the best of ROUNDS (default 5) means, over 100 ``train_on_batch`` calls at
batch 128 and over 500 ``predict`` calls on one row; the best mean is the least disturbed by
other load on the machine."""

import sys

import numpy as np
import report_nn
from _host import cpu_name


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    rng = np.random.default_rng(0)
    x = rng.standard_normal((128, 784)).astype(np.float32)
    y = rng.integers(0, 10, 128)
    model = report_nn.mlp_rustyml(False)
    step = report_nn.best(lambda: model.train_on_batch(x, y), rounds, 100)
    row = x[:1]
    predict = report_nn.best(lambda: model.predict(row, batch_size=1), rounds, 500)
    print(f"CPU: {cpu_name()}")
    print(f"MLP 784-256-128-10 train_on_batch, batch 128: {step * 1e3:.2f} ms")
    print(f"MLP predict, one row: {predict * 1e6:.1f} us")


if __name__ == "__main__":
    main()
