"""Synchronous data-parallel training of a compiled rustyml ``Sequential`` on dask arrays."""

import threading

import dask
import dask.array as da
import numpy as np

from rustyml.dask._chunks import _reported


class _Replica:
    """A copy of the network where the shards live: it travels pickled (config, compile
    settings, weights) once per fit and then takes each step's weights; the lock keeps two
    tasks of one worker process from interleaving set_weights and the gradient pass."""

    def __init__(self, model):
        self.model = model

    def __getstate__(self):
        return {"model": self.model}

    def __setstate__(self, state):
        self.model = state["model"]

    @property
    def lock(self):
        lock = self.__dict__.get("_lock")
        if lock is None:
            lock = self.__dict__.setdefault("_lock", threading.Lock())
        return lock


class _Weights:
    """One step's weights, sent as one object (not unpacked into the task graph)."""

    def __init__(self, arrays):
        self.arrays = arrays


@_reported
def _shard_gradients(replica, weights, x, y, fraction):
    """The shard's mean loss and the gradients of ``fraction`` times it, on the step's
    weights, by the native gradient pass."""
    # Arrays unpickled on a worker may sit at unaligned offsets of the message buffer, which
    # the network's native boundary cannot view: copy those into aligned memory.
    weights = [_aligned(w) for w in weights.arrays]
    with replica.lock:
        replica.model.set_weights(weights)
        return replica.model.compute_gradients(_aligned(x), _aligned(y), fraction)


def _aligned(a):
    a = np.asarray(a)
    return np.require(a, dtype=np.float32 if a.dtype.kind == "f" else None, requirements="CA")


def _row_chunked_any(a, name):
    """``a`` as a dask array chunked along its first axis only."""
    if not isinstance(a, da.Array):
        a = da.from_array(np.asarray(a), chunks=(max(1, len(a)),) + (-1,) * (np.ndim(a) - 1))
    if a.ndim == 0 or a.shape[0] == 0:
        raise ValueError(f"{name} needs a first (sample) axis with at least one sample")
    if any(len(c) != 1 for c in a.chunks[1:]):
        a = a.rechunk({i: -1 for i in range(1, a.ndim)})
    return a


class DataParallelSequential:
    """Trains a compiled ``rustyml.neural_network.Sequential`` on dask arrays, one
    synchronous optimizer step per global batch.

    ``fit`` takes Keras's arguments. Each global batch of ``batch_size`` consecutive rows is
    split into ``n_shards`` shards (as even as ``numpy.array_split`` makes them); the
    arrays are rechunked once so that every shard is one chunk, and each step runs one task
    per shard where that chunk lives: the step's weights are set on a replica of the
    network there and the native gradient pass returns the gradient of the shard's share
    (rows over batch rows) of the batch's mean loss. The client sums the shards' gradients
    in shard order, applies them through the model's compiled optimizer (the same update
    ``fit`` makes) and sends the new weights with the next step's tasks.

    For a fixed ``n_shards`` the result is the same bits on any number of workers. With
    ``n_shards=1`` it is ``model.fit(x, y, batch_size, epochs, shuffle=False)``'s, bit for
    bit; with more shards the gradients differ only by the order of the batch's sums. The
    model must not depend on the batch as a whole (BatchNormalization's batch statistics
    are a shard's here) or on random draws (dropout draws on each replica's stream).
    """

    def __init__(self, model, *, n_shards=2):
        self.model = model
        self.n_shards = n_shards

    def fit(self, x, y, epochs=1, batch_size=32, shuffle=False, verbose=0, initial_epoch=0):
        """Keras's ``fit`` over dask (or NumPy) arrays; returns a ``History`` with the
        per-epoch loss (the sample-weighted mean of the batches' losses, before each step,
        as Keras reports it). ``shuffle=True`` is refused: shuffle the dask array once
        beforehand (an epoch's reshuffle would move every row across the cluster)."""
        from rustyml.neural_network import callbacks as callbacks_module

        model = self.model
        model._check_compiled()
        if shuffle:
            raise ValueError(
                "shuffle=True would move every row across the cluster each epoch; shuffle "
                "the dask array once (for example x[perm], y[perm]) and pass shuffle=False"
            )
        if not (isinstance(self.n_shards, (int, np.integer)) and self.n_shards >= 1):
            raise ValueError(f"n_shards must be an int >= 1, got {self.n_shards!r}")
        for name, value, low in (("batch_size", batch_size, 1), ("epochs", epochs, 0)):
            if not (isinstance(value, (int, np.integer)) and value >= low):
                raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
        X = _row_chunked_any(x, "x")
        Y = _row_chunked_any(y, "y")
        n = X.shape[0]
        if Y.shape[0] != n:
            raise ValueError(f"x and y have different numbers of samples ({n} and {Y.shape[0]})")
        # Build the model and check the shapes on one sample before any cluster work; its
        # gradient pass (no update) lets the layers list the parameters the steps update.
        model.compute_gradients(np.asarray(X[:1]), np.asarray(Y[:1]))
        batch = min(int(batch_size), n)
        # per global batch: (shard rows, share of the batch, chunk index) per shard
        per_batch, chunks = [], []
        for start in range(0, n, batch):
            rows = min(batch, n - start)
            members = []
            for part in np.array_split(np.arange(rows), self.n_shards):
                if len(part):
                    members.append((len(part), len(part) / rows, len(chunks)))
                    chunks.append(len(part))
            per_batch.append(members)
        X, Y = dask.persist(X.rechunk({0: tuple(chunks)}), Y.rechunk({0: tuple(chunks)}))
        x_blocks = X.to_delayed().ravel()
        y_blocks = Y.to_delayed().ravel()
        (replica,) = dask.persist(dask.delayed(_Replica(_copy(model)), traverse=False))
        history = callbacks_module.History()
        history.set_model(model)
        history.on_train_begin()
        for epoch in range(int(initial_epoch), int(epochs)):
            weighted = 0.0
            for members in per_batch:
                weights = dask.delayed(_Weights(model.get_weights()), traverse=False)
                tasks = [
                    dask.delayed(_shard_gradients)(replica, weights, x_blocks[j], y_blocks[j], f)
                    for _, f, j in members
                ]
                results = dask.compute(*tasks)
                total = list(results[0][1])
                for _, grads in results[1:]:
                    total = [a + b for a, b in zip(total, grads)]
                loss = sum(float(lj) * f for (lj, _), (_, f, _) in zip(results, members))
                if not np.isfinite(loss):
                    raise ValueError(f"the loss became {loss} in epoch {epoch}")
                model.apply_gradients(total)
                weighted += loss * sum(r for r, _, _ in members)
            # float32, as the single-process fit reports it
            logs = {"loss": float(np.float32(weighted / n))}
            if verbose:
                print(f"Epoch {epoch + 1}/{epochs} - loss: {logs['loss']:.4f}")
            history.on_epoch_end(epoch, logs)
        model.history = history
        return history


def _copy(model):
    import pickle

    return pickle.loads(pickle.dumps(model))


__all__ = ["DataParallelSequential"]
