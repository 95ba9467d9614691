"""Learning-rate schedules (Keras 3's ``keras.optimizers.schedules``), evaluated per optimizer
step in Rust.

Pass one as an optimizer's ``learning_rate``: before each batch's update the optimizer's rate
becomes ``schedule(step)``, ``step`` counting the updates made so far (0 for the first), as in
Keras. Calling a schedule here gives the same float32 value the native optimizer uses.
"""

import math

import numpy as np

from rustyml.neural_network._config import _Configurable, _real

_F = np.float32


def _decay_steps(value, what):
    v = _real(value, what, "decay_steps")
    if v <= 0:
        raise ValueError(f"Argument `decay_steps` must be > 0. Received: decay_steps={value}")
    return value


class LearningRateSchedule(_Configurable):
    """Base class. Only the built-in schedules run in the native optimizers: a subclass with
    its own ``__call__`` is refused at ``compile``."""

    def __call__(self, step):
        raise NotImplementedError(
            f"Learning rate schedule '{type(self).__name__}' must override `__call__(self, step)`."
        )

    def get_config(self):
        raise NotImplementedError(
            f"Learning rate schedule '{type(self).__name__}' must override `get_config()`."
        )


class ExponentialDecay(LearningRateSchedule):
    """``initial_learning_rate * decay_rate ** (step / decay_steps)`` (exponent floored with
    ``staircase``)."""

    def __init__(
        self,
        initial_learning_rate,
        decay_steps,
        decay_rate,
        staircase=False,
        name="ExponentialDecay",
    ):
        what = type(self).__name__
        _real(initial_learning_rate, what, "initial_learning_rate")
        _real(decay_rate, what, "decay_rate")
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = _decay_steps(decay_steps, what)
        self.decay_rate = decay_rate
        self.staircase = bool(staircase)
        self.name = name

    def _ratio(self, step):
        p = _F(step) / _F(self.decay_steps)
        return np.floor(p) if self.staircase else p

    def __call__(self, step):
        return float(
            _F(self.initial_learning_rate) * np.power(_F(self.decay_rate), self._ratio(step))
        )

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "decay_rate": self.decay_rate,
            "staircase": self.staircase,
            "name": self.name,
        }


class InverseTimeDecay(ExponentialDecay):
    """``initial_learning_rate / (1 + decay_rate * step / decay_steps)`` (ratio floored with
    ``staircase``)."""

    def __init__(
        self,
        initial_learning_rate,
        decay_steps,
        decay_rate,
        staircase=False,
        name="InverseTimeDecay",
    ):
        super().__init__(initial_learning_rate, decay_steps, decay_rate, staircase, name)

    def __call__(self, step):
        denom = _F(1) + _F(self.decay_rate) * self._ratio(step)
        return float(_F(self.initial_learning_rate) / denom)


class PiecewiseConstantDecay(LearningRateSchedule):
    """``values[0]`` while ``step <= boundaries[0]``, ``values[i]`` while ``boundaries[i-1] <
    step <= boundaries[i]``, ``values[-1]`` after the last boundary."""

    def __init__(self, boundaries, values, name="PiecewiseConstant"):
        boundaries, values = list(boundaries), list(values)
        if len(boundaries) != len(values) - 1:
            raise ValueError(
                "The length of boundaries should be 1 less than the length of values. "
                f"Received: boundaries={boundaries} of length {len(boundaries)}, and "
                f"values={values} of length {len(values)}."
            )
        if not boundaries:
            raise ValueError("PiecewiseConstantDecay: boundaries must not be empty")
        for v in values:
            _real(v, "PiecewiseConstantDecay", "values")
        for b in boundaries:
            _real(b, "PiecewiseConstantDecay", "boundaries")
        self.boundaries = boundaries
        self.values = values
        self.name = name

    def __call__(self, step):
        # Keras casts the boundaries to the step's integer type.
        for b, v in zip(self.boundaries, self.values):
            if step <= int(b):
                return float(_F(v))
        return float(_F(self.values[-1]))

    def get_config(self):
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}

    def _native_config(self):
        return {"boundaries": [int(b) for b in self.boundaries], "values": self.values}


class PolynomialDecay(LearningRateSchedule):
    """``(initial - end) * (1 - step / decay_steps) ** power + end``, the step capped at
    ``decay_steps`` (or with ``cycle`` the decay stretched to the first multiple of
    ``decay_steps`` reaching the step)."""

    def __init__(
        self,
        initial_learning_rate,
        decay_steps,
        end_learning_rate=0.0001,
        power=1.0,
        cycle=False,
        name="PolynomialDecay",
    ):
        what = type(self).__name__
        _real(initial_learning_rate, what, "initial_learning_rate")
        _real(end_learning_rate, what, "end_learning_rate")
        _real(power, what, "power")
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = _decay_steps(decay_steps, what)
        self.end_learning_rate = end_learning_rate
        self.power = power
        self.cycle = bool(cycle)
        self.name = name

    def __call__(self, step):
        global_step, steps = _F(step), _F(self.decay_steps)
        if self.cycle:
            steps = steps * (_F(1) if global_step == 0 else np.ceil(global_step / steps))
        else:
            global_step = min(global_step, steps)
        p = global_step / steps
        lr0, end = _F(self.initial_learning_rate), _F(self.end_learning_rate)
        return float((lr0 - end) * np.power(_F(1) - p, _F(self.power)) + end)

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "end_learning_rate": self.end_learning_rate,
            "power": self.power,
            "cycle": self.cycle,
            "name": self.name,
        }


class CosineDecay(LearningRateSchedule):
    """Cosine decay to ``alpha`` times the rate over ``decay_steps``, after an optional
    linear warm-up of ``warmup_steps`` from ``initial_learning_rate`` to ``warmup_target``."""

    def __init__(
        self,
        initial_learning_rate,
        decay_steps,
        alpha=0.0,
        name="CosineDecay",
        warmup_target=None,
        warmup_steps=0,
    ):
        what = type(self).__name__
        _real(initial_learning_rate, what, "initial_learning_rate")
        _real(alpha, what, "alpha")
        if warmup_target is not None:
            _real(warmup_target, what, "warmup_target")
        if _real(warmup_steps, what, "warmup_steps") < 0:
            raise ValueError(f"{what}: warmup_steps must be >= 0, got {warmup_steps!r}")
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = _decay_steps(decay_steps, what)
        self.alpha = alpha
        self.name = name
        self.warmup_target = warmup_target
        self.warmup_steps = warmup_steps

    def _decayed(self, step, start):
        fraction = step / _F(self.decay_steps)
        cosine = _F(0.5) * (_F(1) + np.cos(_F(math.pi) * fraction))
        alpha = _F(self.alpha)
        return start * ((_F(1) - alpha) * cosine + alpha)

    def __call__(self, step):
        lr0, steps = _F(self.initial_learning_rate), _F(self.decay_steps)
        global_step = _F(step)
        if self.warmup_target is None:
            return float(self._decayed(min(global_step, steps), lr0))
        target, warmup = _F(self.warmup_target), _F(self.warmup_steps)
        global_step = min(global_step, steps + warmup)
        if global_step < warmup:
            return float((target - lr0) * (global_step / warmup) + lr0)
        return float(self._decayed(global_step - warmup, target))

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "alpha": self.alpha,
            "name": self.name,
            "warmup_target": self.warmup_target,
            "warmup_steps": self.warmup_steps,
        }


_BUILT_IN = {
    cls.__name__: cls
    for cls in (
        ExponentialDecay,
        InverseTimeDecay,
        PiecewiseConstantDecay,
        PolynomialDecay,
        CosineDecay,
    )
}


def serialize(schedule):
    return {"class_name": type(schedule).__name__, "config": schedule.get_config()}


def deserialize(config, custom_objects=None):
    name = config.get("class_name") if isinstance(config, dict) else None
    cls = (custom_objects or {}).get(name) or _BUILT_IN.get(name)
    if cls is None:
        raise ValueError(f"unknown learning-rate schedule {config!r}")
    return cls.from_config(dict(config.get("config", {})))


def _native_spec(schedule):
    """The config the native optimizers evaluate; refuses a schedule they cannot run."""
    cls = _BUILT_IN.get(type(schedule).__name__)
    if cls is not type(schedule):
        raise ValueError(
            f"learning-rate schedule {type(schedule).__name__} cannot run in rustyml's native "
            f"optimizers (they evaluate the schedule per step in Rust); use one of "
            f"{sorted(_BUILT_IN)}"
        )
    native = getattr(schedule, "_native_config", None)
    config = native() if native else schedule.get_config()
    config.pop("name", None)
    return {"class_name": type(schedule).__name__, "config": config}


__all__ = [
    "CosineDecay",
    "ExponentialDecay",
    "InverseTimeDecay",
    "LearningRateSchedule",
    "PiecewiseConstantDecay",
    "PolynomialDecay",
    "deserialize",
    "serialize",
]
