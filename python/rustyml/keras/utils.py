"""``keras.utils``: ``to_categorical``, ``set_random_seed``, ``pad_sequences``, ``normalize``."""

import random

import numpy as np

from rustyml.keras import _seeding
from rustyml.keras._missing import stand_ins, unknown_attribute
from rustyml.neural_network._batches import PyDataset
from rustyml.utils import to_categorical as _to_categorical


def to_categorical(x, num_classes=None):
    """One-hot rows for integer class labels (Keras's float64 result)."""
    y = np.asarray(x)
    if y.ndim > 1 and y.shape[-1] == 1:
        y = y.reshape(y.shape[:-1])
    flat = y.reshape(-1).astype(np.int64, copy=False) if y.dtype.kind in "iub" else y.reshape(-1)
    out = np.asarray(_to_categorical(flat, num_classes), dtype=np.float64)
    return out.reshape((*y.shape, out.shape[-1]))


def set_random_seed(seed):
    """Seed Python's ``random``, NumPy's global generator and the stream rustyml.keras
    models draw their weights from when built without a seed."""
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"set_random_seed needs a non-negative integer, got {seed!r}")
    random.seed(int(seed))
    np.random.seed(int(seed) % 2**32)
    _seeding.set_seed(int(seed))


def normalize(x, axis=-1, order=2):
    """``x`` divided by its ``order``-norm along ``axis`` (zero norms left as they are)."""
    x = np.asarray(x)
    norm = np.atleast_1d(np.linalg.norm(x, order, axis))
    norm[norm == 0] = 1
    return x / np.expand_dims(norm, axis)


def pad_sequences(
    sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre", value=0.0
):
    """Lists of sequences as one ``(n, maxlen)`` array, as Keras pads and truncates them
    (``"pre"``: at the start, ``"post"``: at the end)."""
    if padding not in ("pre", "post"):
        raise ValueError(f'padding must be "pre" or "post", got {padding!r}')
    if truncating not in ("pre", "post"):
        raise ValueError(f'truncating must be "pre" or "post", got {truncating!r}')
    seqs = [np.asarray(s) for s in sequences]
    if maxlen is None:
        maxlen = max((len(s) for s in seqs), default=0)
    tail = next((s.shape[1:] for s in seqs if len(s)), ())
    out = np.full((len(seqs), maxlen, *tail), value, dtype=dtype)
    for i, s in enumerate(seqs):
        if not len(s) or maxlen == 0:
            continue
        kept = s[-maxlen:] if truncating == "pre" else s[:maxlen]
        if padding == "post":
            out[i, : len(kept)] = kept
        else:
            out[i, -len(kept) :] = kept
    return out


globals().update(
    stand_ins(
        __name__,
        [
            "plot_model",
            "image_dataset_from_directory",
            "text_dataset_from_directory",
            "timeseries_dataset_from_array",
            "get_file",
        ],
    )
)
__getattr__ = unknown_attribute(__name__)
Sequence = PyDataset
__all__ = [
    "PyDataset",
    "Sequence",
    "normalize",
    "pad_sequences",
    "set_random_seed",
    "to_categorical",
]
