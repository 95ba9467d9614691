"""The seed stream ``keras.utils.set_random_seed`` starts: each model built without a seed
takes the next draw, so a seeded program builds the same weights on every run."""

import threading

import numpy as np

_lock = threading.Lock()
_stream = None


def set_seed(seed):
    global _stream
    with _lock:
        _stream = np.random.default_rng(seed)


def next_seed():
    """The next seed of the stream, or None (fresh entropy) if no seed was set."""
    with _lock:
        if _stream is None:
            return None
        return int(_stream.integers(0, 2**63))
