"""Network speed side by side in one run: rustyml against Keras (JAX backend) and, where it is
installed, PyTorch CPU. Prints markdown tables of best-of-N times and ratios (peer / rustyml:
above 1 means rustyml is faster).

    KERAS_BACKEND=jax python benches/python/report_nn.py [--quick]
    python benches/python/report_nn.py --lstm-grid [BATCHES] [UNITS]   # e.g. 32,64,256 64,512

``--lstm-grid``: LSTM training steps (50 steps x 32 features) over batches and unit counts,
rustyml with its recurrent gate as deployed, forced serial and forced parallel, beside
PyTorch: where the gate's crossover lies on this host.

PyTorch is a 6 GB install kept out of CI; install it by hand (``pip install torch``) to get its
column. Each case interleaves the frameworks so they share the machine's noise.
"""

import os
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "jax")

import numpy as np
from _host import cpu_name

import rustyml
from rustyml.neural_network import Sequential, layers, losses, optimizers

try:
    import keras
except ImportError:  # pragma: no cover - optional peer
    keras = None
try:
    import torch
except ImportError:  # pragma: no cover - optional peer
    torch = None

QUICK = "--quick" in sys.argv
REPEAT = 3 if QUICK else 7


def best(fn, repeat=REPEAT, number=1):
    fn()  # warm-up (JIT compilation, first allocations)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return min(times)


# -- models: the same architecture in each framework ------------------------------------------


def cnn_rustyml():
    model = Sequential(
        [
            layers.Conv2D(32, 3, activation="relu", input_shape=(28, 28, 1)),
            layers.MaxPooling2D(2),
            layers.Flatten(),
            layers.Dense(10, activation="softmax"),
        ],
        seed=0,
    )
    model.compile(optimizer=optimizers.SGD(0.01), loss="sparse_categorical_crossentropy")
    return model


def cnn_keras():
    model = keras.Sequential(
        [
            keras.Input((28, 28, 1)),
            keras.layers.Conv2D(32, 3, activation="relu"),
            keras.layers.MaxPooling2D(2),
            keras.layers.Flatten(),
            keras.layers.Dense(10, activation="softmax"),
        ]
    )
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="sparse_categorical_crossentropy")
    return model


def cnn_torch():
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 32, 3),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Flatten(),
        torch.nn.Linear(32 * 13 * 13, 10),
    )
    return model, torch.optim.SGD(model.parameters(), lr=0.01)


def mlp_rustyml(norm):
    stack = [layers.Dense(256, activation="relu", input_shape=(784,))]
    if norm:
        stack += [layers.BatchNormalization(), layers.Dropout(0.2)]
    stack.append(layers.Dense(128, activation="relu"))
    if norm:
        stack += [layers.BatchNormalization(), layers.Dropout(0.2)]
    stack.append(layers.Dense(10))
    model = Sequential(stack, seed=0)
    loss = losses.SparseCategoricalCrossentropy(from_logits=True)
    model.compile(optimizer=optimizers.Adam(1e-3), loss=loss)
    return model


def mlp_keras(norm):
    stack = [keras.Input((784,)), keras.layers.Dense(256, activation="relu")]
    if norm:
        stack += [keras.layers.BatchNormalization(), keras.layers.Dropout(0.2)]
    stack.append(keras.layers.Dense(128, activation="relu"))
    if norm:
        stack += [keras.layers.BatchNormalization(), keras.layers.Dropout(0.2)]
    stack.append(keras.layers.Dense(10))
    model = keras.Sequential(stack)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss=loss)
    return model


def mlp_torch(norm):
    stack = [torch.nn.Linear(784, 256), torch.nn.ReLU()]
    if norm:
        stack += [torch.nn.BatchNorm1d(256), torch.nn.Dropout(0.2)]
    stack += [torch.nn.Linear(256, 128), torch.nn.ReLU()]
    if norm:
        stack += [torch.nn.BatchNorm1d(128), torch.nn.Dropout(0.2)]
    stack.append(torch.nn.Linear(128, 10))
    model = torch.nn.Sequential(*stack)
    return model, torch.optim.Adam(model.parameters(), lr=1e-3)


def torch_fit(model, opt, x, y, batch_size, epochs):
    """The usual PyTorch loop: shuffled mini-batches, forward, loss, backward, step."""
    loss_fn = torch.nn.CrossEntropyLoss()
    n = len(x)
    for _ in range(epochs):
        order = torch.randperm(n)
        for start in range(0, n, batch_size):
            idx = order[start : start + batch_size]
            opt.zero_grad()
            loss_fn(model(x[idx]), y[idx]).backward()
            opt.step()


def lstm_rustyml(steps, features, units):
    model = Sequential([layers.LSTM(units, input_shape=(steps, features)), layers.Dense(1)], seed=0)
    model.compile(optimizer=optimizers.SGD(0.01), loss="mse")
    return model


def lstm_keras(steps, features, units):
    model = keras.Sequential(
        [keras.Input((steps, features)), keras.layers.LSTM(units), keras.layers.Dense(1)]
    )
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
    return model


class _TorchLSTM(torch.nn.Module if torch else object):
    def __init__(self, features, units):
        super().__init__()
        self.lstm = torch.nn.LSTM(features, units, batch_first=True)
        self.head = torch.nn.Linear(units, 1)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


def torch_step(model, opt, loss_fn, x, y):
    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    return step


def row(name, ours, peers):
    cells = [f"{ours * 1e3:.2f} ms"]
    for t in peers:
        cells.append("-" if t is None else f"{t * 1e3:.2f} ms ({t / ours:.2f}x)")
    print(f"| {name} | " + " | ".join(cells) + " |")


def main():
    rng = np.random.default_rng(0)
    print(f"CPU: {cpu_name()}; rayon threads: {rustyml.parallel.current_num_threads()}")
    if torch is not None:
        torch.set_num_threads(rustyml.parallel.current_num_threads())
    print("Ratios in brackets: peer time / rustyml time (above 1: rustyml faster).\n")
    print("| case | rustyml | Keras (JAX) | PyTorch CPU |")
    print("|---|---:|---:|---:|")

    # MLP 784-256-128-10 (issue 8): training step at batch 128, plain and with
    # BatchNormalization + Dropout; inference at batch 1 and 1024
    xm = rng.random((1024, 784), dtype=np.float32)
    ym = rng.integers(0, 10, 1024)
    cases = []
    for norm in (False, True):
        mo = mlp_rustyml(norm)
        mk = mlp_keras(norm) if keras else None
        if torch is not None:
            mt, mopt = mlp_torch(norm)
            mt.train()
            txm, tym = torch.from_numpy(xm), torch.from_numpy(ym)
        label = "MLP 784-256-128-10" + (" +BN +Dropout" if norm else "")
        cases.append(
            (
                f"{label} train step, batch 128",
                lambda mo=mo: mo.train_on_batch(xm[:128], ym[:128]),
                (lambda mk=mk: mk.train_on_batch(xm[:128], ym[:128])) if mk else None,
                torch_step(mt, mopt, torch.nn.CrossEntropyLoss(), txm[:128], tym[:128])
                if torch
                else None,
            )
        )
    mo, mk = mlp_rustyml(False), (mlp_keras(False) if keras else None)
    if torch is not None:
        mt, _ = mlp_torch(False)
        mt.eval()
    for batch in (1, 1024):
        cases.append(
            (
                f"MLP inference, batch {batch}",
                lambda b=batch: mo.predict(xm[:b], batch_size=b),
                (lambda b=batch: mk.predict_on_batch(xm[:b])) if mk else None,
                (lambda b=batch: mt(txm[:b])) if torch else None,
            )
        )

    # small CNN, batch 64 training step; inference at batch 1 and 256
    x = rng.random((256, 28, 28, 1), dtype=np.float32)
    y = rng.integers(0, 10, 256)
    ours = cnn_rustyml()
    ours.predict(x[:1])
    k = cnn_keras() if keras else None
    if torch is not None:
        tm, topt = cnn_torch()
        tx = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2)))
        ty = torch.from_numpy(y)
    cases += [
        (
            "CNN train step, batch 64",
            lambda: ours.train_on_batch(x[:64], y[:64]),
            (lambda: k.train_on_batch(x[:64], y[:64])) if k else None,
            torch_step(tm, topt, torch.nn.CrossEntropyLoss(), tx[:64], ty[:64]) if torch else None,
        ),
        (
            "CNN inference, batch 1",
            lambda: ours.predict(x[:1], batch_size=1),
            (lambda: k.predict_on_batch(x[:1])) if k else None,
            (lambda: tm(tx[:1])) if torch else None,
        ),
        (
            "CNN inference, batch 256",
            lambda: ours.predict(x, batch_size=256),
            (lambda: k.predict_on_batch(x)) if k else None,
            (lambda: tm(tx)) if torch else None,
        ),
    ]

    # LSTM(128), 50 steps of 32 features, batch 64 training step
    steps, features, units = 50, 32, 128
    xs = rng.standard_normal((64, steps, features)).astype(np.float32)
    ys = rng.standard_normal((64, 1)).astype(np.float32)
    lo = lstm_rustyml(steps, features, units)
    lk = lstm_keras(steps, features, units) if keras else None
    if torch is not None:
        lt = _TorchLSTM(features, units)
        lopt = torch.optim.SGD(lt.parameters(), lr=0.01)
    cases.append(
        (
            "LSTM(128) train step, 50x32, batch 64",
            lambda: lo.train_on_batch(xs, ys),
            (lambda: lk.train_on_batch(xs, ys)) if lk else None,
            torch_step(lt, lopt, torch.nn.MSELoss(), torch.from_numpy(xs), torch.from_numpy(ys))
            if torch
            else None,
        )
    )

    for name, fo, fk, ft in cases:
        t_ours, t_k, t_t = [], [], []
        for _ in range(2 if QUICK else 3):  # interleaved rounds
            t_ours.append(best(fo))
            if fk:
                t_k.append(best(fk))
            if ft:
                with torch.no_grad() if "inference" in name else _null():
                    t_t.append(best(ft))
        row(
            name,
            min(t_ours),
            [min(t_k) if t_k else None, min(t_t) if t_t else None],
        )

    fit_throughput(rng)
    conv_ladder(rng)


def lstm_grid(batches, unit_counts):
    """LSTM train steps over a grid: rustyml (gate as deployed, forced serial, forced
    parallel) beside PyTorch, interleaved rounds, best of each."""
    from rustyml.tuning import recurrent

    rng = np.random.default_rng(0)
    steps, features = 50, 32
    threads = rustyml.parallel.current_num_threads()
    if torch is not None:
        torch.set_num_threads(threads)
    deployed = recurrent.get_parallel_min_flops()
    print(f"CPU: {cpu_name()}; rayon threads: {threads}; recurrent gate {deployed} FLOPs")
    print("LSTM train step, 50 steps x 32 features; ratios: PyTorch / rustyml (as deployed).\n")
    print(
        "| batch | units | gate work (MFLOPs) | rustyml | forced serial | forced parallel "
        "| PyTorch CPU | PyTorch / rustyml |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")

    def gate_at(value, fn):
        def run():
            recurrent.set_parallel_min_flops(value)
            try:
                fn()
            finally:
                recurrent.set_parallel_min_flops(deployed)

        return run

    for batch in batches:
        for units in unit_counts:
            xs = rng.standard_normal((batch, steps, features)).astype(np.float32)
            ys = rng.standard_normal((batch, 1)).astype(np.float32)
            model = lstm_rustyml(steps, features, units)
            step = lambda m=model, x=xs, y=ys: m.train_on_batch(x, y)
            runs = [step, gate_at(2**64 - 1, step), gate_at(0, step)]
            if torch is not None:
                lt = _TorchLSTM(features, units)
                opt = torch.optim.SGD(lt.parameters(), lr=0.01)
                loss = torch.nn.MSELoss()
                runs.append(torch_step(lt, opt, loss, torch.from_numpy(xs), torch.from_numpy(ys)))
            work = 2 * steps * batch * units * 4 * units
            repeat = 5 if work < 2e9 else 3
            times = [[] for _ in runs]
            for _ in range(3):  # interleaved rounds
                for i, fn in enumerate(runs):
                    times[i].append(best(fn, repeat=repeat))
            best_times = [min(t) for t in times]
            cells = [f"{t * 1e3:.2f} ms" for t in best_times]
            if torch is None:
                cells += ["-", "-"]
            else:
                cells.append(f"{best_times[3] / best_times[0]:.2f}x")
            print(
                f"| {batch} | {units} | {work / 1e6:.0f} | " + " | ".join(cells) + " |", flush=True
            )


def fit_throughput(rng):
    """``fit`` of the MLP on 60000 x 784 float32, batch 128, shuffled: samples per second."""
    epochs = 1 if QUICK else 10
    x = rng.random((60000, 784), dtype=np.float32)
    y = rng.integers(0, 10, 60000)
    print(f"\n| fit, MLP 784-256-128-10, 60000 x 784, batch 128, {epochs} epoch(s) | samples/s |")
    print("|---|---:|")

    def timed(fn):
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start

    model = mlp_rustyml(False)
    ours = timed(lambda: model.fit(x, y, batch_size=128, epochs=epochs, verbose=0))
    print(f"| rustyml | {60000 * epochs / ours:,.0f} |")
    if keras:
        km = mlp_keras(False)
        t = timed(lambda: km.fit(x, y, batch_size=128, epochs=epochs, verbose=0))
        print(f"| Keras (JAX) | {60000 * epochs / t:,.0f} ({t / ours:.2f}x) |")
    if torch is not None:
        tm, topt = mlp_torch(False)
        tx, ty = torch.from_numpy(x), torch.from_numpy(y)
        t = timed(lambda: torch_fit(tm, topt, tx, ty, 128, epochs))
        print(f"| PyTorch CPU | {60000 * epochs / t:,.0f} ({t / ours:.2f}x) |")


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def conv_ladder(rng):
    """Conv2D forward (predict) and training step (forward + backward + SGD) per shape."""
    print(
        "\n| Conv2D (kernel, channels, size, batch) | rustyml fwd | Keras fwd | PyTorch fwd "
        "| rustyml step | Keras step | PyTorch step |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    shapes = [(3, 8, 32, 1), (3, 32, 32, 32), (1, 64, 16, 32), (3, 64, 64, 1)]
    if not QUICK:
        shapes += [(3, 256, 8, 32), (1, 256, 8, 32), (3, 128, 16, 32)]
    for shape in shapes:
        print(conv_case(rng, *shape))


def conv_case(rng, kern, ch, size, batch):
    x = rng.random((batch, size, size, ch), dtype=np.float32)
    y = rng.random((batch, size - kern + 1, size - kern + 1, ch), dtype=np.float32)
    ours = Sequential([layers.Conv2D(ch, kern, input_shape=(size, size, ch))], seed=0)
    ours.compile(optimizer=optimizers.SGD(0.001), loss="mse")
    # (forward, step) per framework, None where the peer is not installed
    runs = {"ours": (lambda: ours.predict(x, batch_size=batch), lambda: ours.train_on_batch(x, y))}
    if keras:
        km = keras.Sequential([keras.Input((size, size, ch)), keras.layers.Conv2D(ch, kern)])
        km.compile(optimizer=keras.optimizers.SGD(0.001), loss="mse")
        runs["keras"] = (lambda: km.predict_on_batch(x), lambda: km.train_on_batch(x, y))
    if torch is not None:
        tm = torch.nn.Conv2d(ch, ch, kern)
        topt = torch.optim.SGD(tm.parameters(), lr=0.001)
        tx = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2)))
        ty = torch.from_numpy(np.ascontiguousarray(y.transpose(0, 3, 1, 2)))

        def torch_fwd():
            with torch.no_grad():
                tm(tx)

        runs["torch"] = (torch_fwd, torch_step(tm, topt, torch.nn.MSELoss(), tx, ty))
    times = {name: ([], []) for name in runs}
    for _ in range(2 if QUICK else 3):  # interleaved rounds, as for the cases above
        for name, (fwd, step) in runs.items():
            times[name][0].append(best(fwd))
            times[name][1].append(best(step))
    fo, so = min(times["ours"][0]), min(times["ours"][1])
    cells_fwd, cells_step = [], []
    for name in ("keras", "torch"):
        if name in times:
            f, st = min(times[name][0]), min(times[name][1])
            cells_fwd.append(f"{f * 1e3:.2f} ms ({f / fo:.2f}x)")
            cells_step.append(f"{st * 1e3:.2f} ms ({st / so:.2f}x)")
        else:
            cells_fwd.append("-")
            cells_step.append("-")
    return (
        f"| {kern}x{kern}, {ch}, {size}x{size}, {batch} | {fo * 1e3:.2f} ms | "
        + " | ".join(cells_fwd)
        + f" | {so * 1e3:.2f} ms | "
        + " | ".join(cells_step)
        + " |"
    )


if __name__ == "__main__":
    if "--lstm-grid" in sys.argv:
        rest = [a for a in sys.argv[sys.argv.index("--lstm-grid") + 1 :] if not a.startswith("-")]
        grid = [[int(v) for v in a.split(",")] for a in rest[:2]]
        lstm_grid(
            grid[0] if grid else [32, 64, 256], grid[1] if len(grid) > 1 else [64, 128, 256, 512]
        )
    else:
        main()
