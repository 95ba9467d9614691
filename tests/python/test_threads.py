"""Concurrent use from Python threads: eight threads fit, predict and transform at once (the
GIL is released in Rust, so they really overlap) while another thread flips every gate
between forced serial and forced parallel. Every result must equal, bit for bit, the one
computed alone beforehand (a gate chooses how, never what), no call may fail, and fitted
models shared by all threads answer every thread the same.

The scenario runs in a subprocess with a time limit, so a deadlock (a thread waiting for a
model's lock while holding the GIL, say) fails the test instead of hanging the suite."""

import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from rustyml import machine_learning as ml
from rustyml import tuning
from rustyml import utils as ru
from rustyml.math import distance, matmul
from rustyml.neural_network import Sequential, layers

N_THREADS = 8
ROUNDS = 3


def _data():
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(-1.5, 1, size=(60, 5)), rng.normal(1.5, 1, size=(60, 5))])
    return X, np.repeat([0, 1], 60)


def _network():
    model = Sequential(
        [layers.Dense(16, activation="relu", input_shape=(5,)), layers.Dense(2)], seed=0
    )
    model.build()
    return model


def _tasks(shared):
    """Each task fits its own model (or uses a shared fitted one) and returns its output."""
    X, y = _data()
    Xf = X.astype(np.float32)
    return {
        "kmeans": lambda: ml.KMeans(n_clusters=3, random_state=0).fit(X).transform(X),
        "knn": lambda: ml.KNN(n_neighbors=5).fit(X, y).kneighbors(X)[0],
        "svc": lambda: ml.SVC().fit(X, y).decision_function(X),
        "pca": lambda: ml.PCA(n_components=3).fit_transform(X),
        "logreg": lambda: ml.LogisticRegression().fit(X, y).predict_proba(X),
        "tree": lambda: ml.DecisionTree(random_state=0).fit(X, y).predict_proba(X),
        "dbscan": lambda: ml.DBSCAN(eps=1.0).fit_predict(X),
        "tsne": lambda: ml.TSNE(perplexity=10, max_iter=250, random_state=0).fit_transform(X),
        "scaler": lambda: ru.StandardScaler().fit_transform(X),
        "pairwise": lambda: distance.pairwise(X, X[:33]),
        "dot": lambda: matmul.dot(X, X.T),
        "shared knn predict": lambda: shared["knn"].predict_proba(X),
        "shared scaler transform": lambda: shared["scaler"].transform(X),
        "shared network predict": lambda: shared["network"].predict(Xf, verbose=0),
    }


def _bits(value):
    return np.ascontiguousarray(value).tobytes()


def _flip_gates(stop, errors, flips):
    gates = [(family, name) for family, name, *_ in tuning.gates()]
    saved = [getattr(getattr(tuning, f), f"get_{n}")() for f, n in gates]
    try:
        i = 0
        while not stop.is_set():
            family, name = gates[i % len(gates)]
            value = 0 if (i // len(gates)) % 2 == 0 else tuning.SERIAL
            getattr(getattr(tuning, family), f"set_{name}")(value)
            i += 1
            flips[0] = i
    except Exception as exc:  # noqa: BLE001 - reported to the main thread
        errors.append(exc)
    finally:
        for (family, name), value in zip(gates, saved):
            getattr(getattr(tuning, family), f"set_{name}")(value)


def _scenario():
    X, y = _data()
    shared = {
        "knn": ml.KNN(n_neighbors=5).fit(X, y),
        "scaler": ru.StandardScaler().fit(X),
        "network": _network(),
    }
    tasks = _tasks(shared)
    reference = {name: _bits(task()) for name, task in tasks.items()}

    stop, flip_errors, flips = threading.Event(), [], [0]
    flipper = threading.Thread(target=_flip_gates, args=(stop, flip_errors, flips))
    flipper.start()
    try:
        jobs = [name for _ in range(ROUNDS) for name in tasks] * N_THREADS
        with ThreadPoolExecutor(max_workers=N_THREADS) as pool:
            results = list(pool.map(lambda name: (name, _bits(tasks[name]())), jobs))
    finally:
        stop.set()
        flipper.join()
    assert not flip_errors
    assert flips[0] >= 2 * len(tuning.gates())  # every gate went both ways during the run
    assert len(results) == len(jobs)
    differing = sorted({name for name, bits in results if bits != reference[name]})
    assert not differing, f"results changed under concurrency and flipping gates: {differing}"


def test_eight_threads_with_gates_flipping_give_the_results_computed_alone():
    here = Path(__file__).parent
    code = (
        f"import sys; sys.path.insert(0, {str(here)!r}); "
        "import test_threads; test_threads._scenario()"
    )
    try:
        run = subprocess.run(
            [sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=300
        )
    except subprocess.TimeoutExpired:
        raise AssertionError("deadlock: the threads did not finish within 300 s") from None
    assert run.returncode == 0, run.stderr[-3000:]
