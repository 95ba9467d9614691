"""Runtime gate thresholds, one submodule per kernel family (mirrors ``rustyml::tuning``).

Every gate has ``set_<name>(value)`` / ``get_<name>()``; ``usize::MAX`` (2**64 - 1) forces
serial, ``0`` forces parallel. ``rustyml.tuning.matmul.backend`` holds every gemmkit knob
(bare getters such as ``parallel_threshold()``, setters ``set_parallel_threshold(v)``); a
setter shadows the matching ``GEMMKIT_*`` environment variable for the rest of the process.
Gates deploy the same way: each reads ``RUSTYML_<FAMILY>_<NAME>`` (``RUSTYML_REDUCTION_SUM_F64``)
once, on first use; an unparsable value warns on stderr and is ignored; a setter shadows it.
``gate_sources()`` tells where each value came from. A gate changes how a kernel runs, never
its result.
"""

from rustyml import _native
from rustyml._modules import alias_tree

_tuning = _native.tuning
alias_tree(_tuning, __name__)

gates = _tuning.gates
gate_sources = _tuning.gate_sources
SERIAL = 2**64 - 1
PARALLEL = 0

for _family in dir(_tuning):
    _module = getattr(_tuning, _family)
    if type(_module).__name__ == "module":
        globals()[_family] = _module

__all__ = ["gate_sources", "gates", "SERIAL", "PARALLEL"] + [
    name for name in dir(_tuning) if type(getattr(_tuning, name)).__name__ == "module"
]
