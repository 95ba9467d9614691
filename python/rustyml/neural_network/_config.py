"""The config round trip Keras's serializable objects share (optimizers, schedules,
initializers, regularizers): ``cls.from_config(obj.get_config())`` rebuilds ``obj``, and the
repr shows the same config; ``_arguments``, how a public constructor hands its arguments
on to a shared one; and ``_real``, their check of a real-valued argument."""

import math
import numbers


def _real(value, what, name):
    """``value`` as a float: a finite real number (not a bool or a string), else a ValueError
    naming ``what`` and the argument."""
    if isinstance(value, (bool, str, bytes)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{what}: {name} must be a number, got {value!r}")  # noqa: TRY004
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{what}: {name} must be finite, got {value!r}")
    return v


def _arguments(constructor_locals):
    """A constructor's arguments, by name, from its ``locals()`` (taken first thing): a
    class's signature states its public arguments, order and defaults once, and its body hands
    them all on to the shared constructor without restating the list."""
    return {k: v for k, v in constructor_locals.items() if k not in ("self", "__class__")}


class _Configurable:
    """Mixin over a ``get_config()`` whose keys are the constructor's arguments."""

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())
        return f"{type(self).__name__}({args})"
