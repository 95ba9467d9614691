"""rayon's global thread pool, as rayon exposes it.

``RAYON_NUM_THREADS`` is honoured when the pool is first built. ``build_global(n)`` builds it
once (a ``RuntimeError`` if any parallel call already built it). Note: the gemmkit product
backend sizes its own worker tiers from the machine's core count (cached once) and does not
follow this pool's size; use ``rustyml.tuning.matmul.backend.set_par_mnk_per_worker`` to
narrow products.
"""

from rustyml import _native

current_num_threads = _native.parallel.current_num_threads
build_global = _native.parallel.build_global

__all__ = ["build_global", "current_num_threads"]
