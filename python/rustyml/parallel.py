"""How many threads rustyml's native calls use.

At import the count comes from what the host set for its workers: ``RAYON_NUM_THREADS``, else
``OMP_NUM_THREADS`` (joblib's loky backend, Dask's nanny and Ray set it in their worker
processes), else the machine's width. It can change at any time, also after first use:

>>> import rustyml
>>> rustyml.parallel.set_num_threads(2)
>>> with rustyml.parallel.num_threads(1):
...     rustyml.parallel.get_num_threads()
1

Calls already running keep their count. Results never depend on it: every kernel gives the same
bits at any worker count. Products (gemmkit) follow it too. When threadpoolctl is installed
(scikit-learn depends on it), rustyml registers with it, so ``threadpool_info()`` lists it
(``user_api="rayon"``, ``internal_api="rustyml"``) and ``threadpool_limits(n)`` caps it.

``current_num_threads`` and ``build_global`` are the former names of ``get_num_threads`` and
``set_num_threads``; ``build_global`` now works at any time.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from rustyml import _native

get_num_threads: Callable[[], int] = _native.parallel.get_num_threads
#: The most threads ``set_num_threads`` accepts (16 per core, at least 256).
MAX_THREADS: int = _native.parallel.max_threads


def set_num_threads(num_threads: int | None) -> None:
    """Use ``num_threads`` threads (an int in ``[1, MAX_THREADS]``) from the next native call
    on; ``None`` goes back to the count chosen at import. ``ValueError`` for a count out of
    range, ``TypeError`` for a non-integer (nothing changes then)."""
    _native.parallel.set_num_threads(num_threads)


@contextlib.contextmanager
def num_threads(num_threads: int | None) -> Iterator[None]:
    """``with num_threads(n):`` runs the block's native calls on ``n`` threads, then restores
    the previous count (also when the block raises). The count is process-wide, like
    threadpoolctl's limits: other Python threads' calls started meanwhile use it too."""
    previous = get_num_threads()
    set_num_threads(num_threads)
    try:
        yield
    finally:
        set_num_threads(previous)


def startup_source() -> str | None:
    """The environment variable that chose the count at import (``"RAYON_NUM_THREADS"`` or
    ``"OMP_NUM_THREADS"``), or ``None`` when it is the machine's width."""
    return _native.parallel.startup_source()


current_num_threads = get_num_threads
build_global = set_num_threads


def _register_with_threadpoolctl() -> bool:
    """Make threadpoolctl see rustyml: its controller finds the extension module among the
    loaded libraries by the two C symbols it exports and calls them, as it calls a BLAS."""
    try:
        import threadpoolctl
    except ImportError:
        return False
    # 3.2 added the registration API, 3.4 the symbol check that keeps other libraries named
    # "_native..." from being taken for rustyml
    try:
        version = tuple(int(p) for p in threadpoolctl.__version__.split(".")[:2])
    except ValueError:
        return False
    if version < (3, 4) or not hasattr(threadpoolctl, "register"):
        return False
    if any(getattr(c, "internal_api", None) == "rustyml" for c in threadpoolctl._ALL_CONTROLLERS):
        return True

    class RustymlController(threadpoolctl.LibController):
        user_api = "rayon"
        internal_api = "rustyml"
        filename_prefixes = ("_native",)
        check_symbols = ("rustyml_get_num_threads", "rustyml_set_num_threads")

        def get_num_threads(self):
            return self.dynlib.rustyml_get_num_threads()

        def set_num_threads(self, num_threads):
            return self.dynlib.rustyml_set_num_threads(int(num_threads))

        def get_version(self):
            return _native.__version__

    threadpoolctl.register(RustymlController)
    return True


_registered_with_threadpoolctl = _register_with_threadpoolctl()

__all__ = [
    "MAX_THREADS",
    "build_global",
    "current_num_threads",
    "get_num_threads",
    "num_threads",
    "set_num_threads",
    "startup_source",
]
