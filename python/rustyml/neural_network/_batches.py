"""Data that is not one in-memory array: Python generators, iterables of batches, Keras-3
``PyDataset``-like objects and dask arrays, read one batch at a time.

Only a few batches are alive at once (the one training, the one being read, a dask block
being cut into batches), so ``fit`` / ``evaluate`` / ``predict`` run on data larger than
memory. Epochs follow Keras 3's ``EpochIterator``:

- without ``steps``, every epoch starts a fresh pass over the data (a new ``iter()`` of an
  iterable, the batch indices of a ``PyDataset``, the blocks of a dask array); a generator
  can be read only once, so the epoch after the one that exhausted it has no batches and
  training stops with Keras's "ran out of data" warning (Keras 3 replays the two batches it
  peeked at to learn the shapes; we keep no batches aside);
- with ``steps``, epochs take that many batches each, continuing where the last epoch
  stopped; running out (or reaching a dataset's known length) ends the epoch early with
  the same warning and the next epoch starts a fresh pass.
"""

import itertools
import math
import numbers
import warnings

import numpy as np

_RAN_OUT = (
    "Your input ran out of data; interrupting training. Make sure that your dataset or "
    "generator can generate at least `steps_per_epoch * epochs` batches."
)


def end_empty_epoch(kind, first_epoch, stacklevel):
    """``fit`` read no batch this epoch: on its first epoch the source is refused (empty, or
    a generator already consumed); later it ran out, which a warning says (``stacklevel``:
    the caller's, for ``warnings.warn``). Either way the training stops."""
    if first_epoch:
        raise ValueError(
            f"fit: the {kind} yielded no batches (empty, or a generator already consumed)"
        )
    warnings.warn(_RAN_OUT, UserWarning, stacklevel=stacklevel + 1)


class PyDataset:
    """Keras 3's ``PyDataset`` (also ``Sequence``): subclass it with ``__len__`` (the number of
    batches) and ``__getitem__(i)`` (batch ``i`` as ``(x, y)``, ``(x, y, sample_weight)`` or
    ``(x,)``); ``on_epoch_begin`` / ``on_epoch_end`` are called around every epoch.

    ``workers``, ``use_multiprocessing`` and ``max_queue_size`` are accepted for Keras
    compatibility; batches are read in the training thread, one at a time, so at most one
    batch beyond the one training is alive."""

    def __init__(self, workers=1, use_multiprocessing=False, max_queue_size=10):
        self.workers = workers
        self.use_multiprocessing = use_multiprocessing
        self.max_queue_size = max_queue_size

    def __getitem__(self, index):
        raise NotImplementedError

    @property
    def num_batches(self):
        """The number of batches, or ``None`` for an endless dataset."""
        if hasattr(self, "__len__"):
            return len(self)
        raise NotImplementedError("a PyDataset needs __len__ or a num_batches property")

    def on_epoch_begin(self):
        pass

    def on_epoch_end(self):
        pass


def is_dask_array(x):
    return type(x).__module__.split(".")[0] == "dask" and hasattr(x, "blocks")


def is_batch_source(x):
    """Whether ``x`` is read batch by batch (generator, iterator, iterable of batches,
    PyDataset-like) rather than converted to one array. Arrays, nested lists, tuples,
    pandas objects and anything exposing ``__array__`` are data, as before; a dask array has
    its own path. Deciding this before any conversion matters: NumPy converts any object
    with ``__len__`` and ``__getitem__`` by reading every item, which for a dataset of
    batches means the whole data set in memory."""
    if x is None or is_dask_array(x):
        return False
    if isinstance(x, (np.ndarray, list, tuple, dict, str, bytes, bytearray, range, memoryview)):
        return False
    if isinstance(x, numbers.Number):
        return False
    if hasattr(x, "__array__") or hasattr(x, "__array_interface__") or hasattr(x, "tocsr"):
        return False
    return (
        isinstance(x, PyDataset)
        or _is_keras_py_dataset(x)
        or hasattr(x, "__next__")
        or (hasattr(x, "__getitem__") and (hasattr(x, "__len__") or hasattr(x, "num_batches")))
        or hasattr(x, "__iter__")
    )


def _is_keras_py_dataset(x):
    return any(
        cls.__name__ == "PyDataset" and cls.__module__.startswith("keras")
        for cls in type(x).__mro__
    )


def unpack(batch, kind):
    """A batch as ``(x, y, sample_weight)`` (missing parts ``None``), in Keras's rules: a
    generator yields tuples; a PyDataset may also return a bare array or a list."""
    if kind != "generator":
        if isinstance(batch, np.ndarray):
            batch = (batch,)
        elif isinstance(batch, list):
            batch = tuple(batch)
    if not isinstance(batch, tuple) or len(batch) not in (1, 2, 3):
        shown = repr(batch)
        raise ValueError(
            f"a {kind} must yield batches as tuples (x,), (x, y) or (x, y, sample_weight); "
            f"got {type(batch).__name__}: {shown[:80]}{'...' if len(shown) > 80 else ''}"
        )
    return batch + (None,) * (3 - len(batch))


class _OneShot:
    """A generator or iterator: read once, never restarted."""

    kind = "generator"
    num_batches = None

    def __init__(self, it):
        self.it = it

    def iterator(self, _epoch):
        return self.it

    def on_epoch_begin(self):
        pass

    def on_epoch_end(self):
        pass


class _Iterable(_OneShot):
    """Any re-iterable of batches (a list of batches is an array to NumPy, so it is not one
    of these): a fresh ``iter()`` per pass; its length, if it has one, is the batch count."""

    kind = "iterable"

    def __init__(self, it):
        super().__init__(it)
        try:
            self.num_batches = len(it)
        except TypeError:
            self.num_batches = None

    def iterator(self, _epoch):
        return iter(self.it)


class _Dataset:
    """A PyDataset-like object: ``num_batches`` (or ``len``) and ``__getitem__``. With
    ``shuffle`` the batch order is permuted every epoch (seeded from the model's seed and the
    epoch when the model has one), as Keras shuffles a PyDataset's batch indices."""

    kind = "PyDataset"

    def __init__(self, ds, shuffle, seed):
        self.ds = ds
        num = getattr(ds, "num_batches", None) if hasattr(ds, "num_batches") else len(ds)
        self.num_batches = None if num is None else int(num)
        self.shuffle = bool(shuffle) and self.num_batches is not None
        if shuffle and self.num_batches is None:
            warnings.warn(
                "`shuffle=True` was passed, but will be ignored since the data `x` was "
                "provided as an infinite PyDataset.",
                UserWarning,
                stacklevel=8,
            )
        self.seed = seed

    def iterator(self, epoch):
        if self.num_batches is None:
            return (self.ds[i] for i in itertools.count())
        order = np.arange(self.num_batches)
        if self.shuffle:
            rng = np.random.default_rng(None if self.seed is None else [self.seed, epoch])
            rng.shuffle(order)
        return (self.ds[int(i)] for i in order)

    def on_epoch_begin(self):
        hook = getattr(self.ds, "on_epoch_begin", None)
        if callable(hook):
            hook()

    def on_epoch_end(self):
        hook = getattr(self.ds, "on_epoch_end", None)
        if callable(hook):
            hook()


class _DaskRows:
    """A dask array (and its targets) read one row block at a time and cut into batches of
    ``batch_size`` rows, batches running across block boundaries: with ``shuffle=False`` the
    batches are those of the same data in memory. Each block of ``x`` is computed together
    with the matching rows of ``y`` (one ``dask.compute``, so a graph they share runs once);
    nothing is computed whole. ``shuffle`` permutes the block order and the rows within each
    block per epoch: shuffling bounded by a block, not Keras's global row permutation."""

    kind = "dask array"

    def __init__(self, x, y, batch_size, shuffle, seed):
        import dask

        self._compute = dask.compute
        if x.ndim == 0 or any(math.isnan(c) for c in x.shape):
            raise ValueError("x is a dask array of unknown shape; call compute_chunk_sizes() first")
        x = x.rechunk({a: -1 for a in range(1, x.ndim)})
        self.row_chunks = x.chunks[0]
        self.x = x
        self.y = None
        if y is not None:
            if is_dask_array(y):
                if y.shape[0] != x.shape[0]:
                    raise ValueError(
                        f"x and y have different numbers of samples ({x.shape[0]} and {y.shape[0]})"
                    )
                y = y.rechunk({0: self.row_chunks, **{a: -1 for a in range(1, y.ndim)}})
            else:
                y = np.asarray(y)
                if len(y) != x.shape[0]:
                    raise ValueError(
                        f"x and y have different numbers of samples ({x.shape[0]} and {len(y)})"
                    )
            self.y = y
        self.starts = np.concatenate([[0], np.cumsum(self.row_chunks)]).astype(np.int64)
        self.n = int(x.shape[0])
        if self.n == 0:
            raise ValueError("x is empty: found 0 samples")
        self.batch_size = batch_size
        self.num_batches = -(-self.n // batch_size)
        self.shuffle = bool(shuffle)
        self.seed = seed

    def _block(self, b):
        if self.y is None:
            return self._compute(self.x.blocks[b])[0], None
        if is_dask_array(self.y):
            return self._compute(self.x.blocks[b], self.y.blocks[b])
        yb = self.y[self.starts[b] : self.starts[b + 1]]
        return self._compute(self.x.blocks[b])[0], yb

    def iterator(self, epoch):
        rng = None
        if self.shuffle:
            rng = np.random.default_rng(None if self.seed is None else [self.seed, epoch])
        order = np.arange(len(self.row_chunks))
        if rng is not None:
            rng.shuffle(order)
        bs = self.batch_size
        carry_x, carry_y, carried = [], [], 0
        for b in order:
            xb, yb = self._block(int(b))
            xb = np.asarray(xb)
            if rng is not None:
                perm = rng.permutation(len(xb))
                xb = xb[perm]
                yb = None if yb is None else np.asarray(yb)[perm]
            at = 0
            if carried:
                take = min(bs - carried, len(xb))
                carry_x.append(xb[:take])
                carry_y.append(None if yb is None else yb[:take])
                carried += take
                at = take
                if carried < bs:
                    continue
                yield _joined(carry_x, carry_y)
                carry_x, carry_y, carried = [], [], 0
            while len(xb) - at >= bs:
                yield (xb[at : at + bs], None if yb is None else yb[at : at + bs])
                at += bs
            if at < len(xb):
                carry_x, carry_y, carried = (
                    [xb[at:]],
                    [None if yb is None else yb[at:]],
                    len(xb) - at,
                )
        if carried:
            yield _joined(carry_x, carry_y)

    def on_epoch_begin(self):
        pass

    def on_epoch_end(self):
        pass


def _joined(xs, ys):
    x = np.concatenate(xs) if len(xs) > 1 else xs[0]
    if ys[0] is None:
        return (x, None)
    return (x, np.concatenate(ys) if len(ys) > 1 else ys[0])


def source(x, y, *, what, batch_size, shuffle, seed):
    """The batch source for ``x`` (a generator, iterable, PyDataset or dask array); ``y`` must
    be ``None`` except with a dask ``x``, as Keras asks of its data adapters."""
    if is_dask_array(x):
        if what == "fit" and y is None:
            raise ValueError("fit on a dask array x needs y (a dask or NumPy array)")
        return _DaskRows(x, y, batch_size, shuffle, seed)
    if hasattr(x, "__next__") and not isinstance(x, PyDataset):
        kind = "generator"
    elif isinstance(x, PyDataset) or _is_keras_py_dataset(x) or hasattr(x, "__getitem__"):
        kind = "PyDataset"
    else:
        kind = "iterable"
    if y is not None:
        raise ValueError(
            f"When providing `x` as a {kind}, `y` should not be passed. Instead, the targets "
            f"should be included as part of the {kind}."
        )
    if kind == "PyDataset":
        return _Dataset(x, shuffle, seed)
    if shuffle and what == "fit":
        warnings.warn(
            f"`shuffle=True` was passed, but will be ignored since the data `x` was provided "
            f"as a {kind}. The {kind} is expected to yield already-shuffled data.",
            UserWarning,
            stacklevel=7,
        )
    return _OneShot(x) if kind == "generator" else _Iterable(x)


class Epochs:
    """Keras 3's epoch iteration over a batch source (see the module's docstring)."""

    def __init__(self, src, steps):
        self.src = src
        self.steps = steps
        self.num_batches = src.num_batches
        self.current = None
        self.seen = 0

    @property
    def total(self):
        """Batches in the coming epoch, if known (for the progress bar)."""
        return self.steps or self.num_batches

    def epoch(self, index):
        """The raw batches of epoch ``index``."""
        self.src.on_epoch_begin()
        if self.current is None or self.steps is None:
            self.current = iter(self.src.iterator(index))
            self.seen = 0
        taken = 0
        while self.steps is None or taken < self.steps:
            if self.num_batches is not None and self.seen >= self.num_batches:
                if self.steps:
                    warnings.warn(_RAN_OUT, UserWarning, stacklevel=6)
                break
            try:
                batch = next(self.current)
            except StopIteration:
                if self.num_batches is None:
                    self.num_batches = self.seen
                if self.steps:
                    warnings.warn(_RAN_OUT, UserWarning, stacklevel=6)
                self.seen = self.num_batches or 0
                break
            self.seen += 1
            taken += 1
            yield batch
        if self.num_batches is not None and self.seen >= self.num_batches:
            self.current = None
        self.src.on_epoch_end()
