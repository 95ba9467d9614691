"""Runtime gate thresholds, one submodule per kernel family (mirrors ``rustyml::tuning``).

Every gate has ``set_<name>(value)`` / ``get_<name>()``; ``usize::MAX`` (2**64 - 1) forces
serial, ``0`` forces parallel. ``rustyml.tuning.matmul.backend`` holds every gemmkit knob
(bare getters such as ``parallel_threshold()``, setters ``set_parallel_threshold(v)``); a
setter shadows the matching ``GEMMKIT_*`` environment variable for the rest of the process.
Gates deploy the same way: each reads ``RUSTYML_<FAMILY>_<NAME>`` (``RUSTYML_REDUCTION_SUM_F64``)
once, on first use; an unparsable value warns on stderr and is ignored; a setter shadows it.
A deployment profile (``calibrations/*.env``, shipped in the wheel) measured on this host's
class (``host_class()``: arch, instruction set, cores) is applied at import and fills every
gate and knob that no setter and no variable has set; ``RUSTYML_PROFILE=none`` turns it off,
``RUSTYML_PROFILE=<path>`` chooses a file (``python -m rustyml calibrate`` writes one).
Precedence: per-call argument > ``set_*`` > environment variable > profile > default.
``gate_sources()``, ``knob_sources()`` and ``active_profile()`` tell where each value came
from. A gate changes how a kernel runs, never its result.
"""

from rustyml import _native
from rustyml._modules import alias_tree

_tuning = _native.tuning
alias_tree(_tuning, __name__)

gates = _tuning.gates
gate_sources = _tuning.gate_sources
knob_sources = _tuning.knob_sources
host_class = _tuning.host_class
shipped_profiles = _tuning.shipped_profiles
active_profile = _tuning.active_profile
active_profile()  # choose and apply the deployment profile once, before any kernel runs
SERIAL = 2**64 - 1
PARALLEL = 0

for _family in dir(_tuning):
    _module = getattr(_tuning, _family)
    if type(_module).__name__ == "module":
        globals()[_family] = _module

__all__ = [
    "active_profile",
    "gate_sources",
    "gates",
    "host_class",
    "knob_sources",
    "shipped_profiles",
    "SERIAL",
    "PARALLEL",
] + [name for name in dir(_tuning) if type(getattr(_tuning, name)).__name__ == "module"]
