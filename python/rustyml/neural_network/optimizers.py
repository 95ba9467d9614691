"""Keras-style optimizers: name, learning rate and hyper-parameters, applied in Rust.

The update rules are Keras 3's: weight decay is decoupled (``p -= p * weight_decay * lr``
before each update) and applies to every trainable variable, biases included; Adam adds
epsilon to the root of the uncorrected second moment; RMSprop and Adagrad add it inside the
root; Adagrad's accumulators start at ``initial_accumulator_value``. ``clipnorm`` clips each
variable's gradient by its own norm, ``global_clipnorm`` all of them by their joint norm,
``clipvalue`` each element; at most one of the three may be set. ``learning_rate`` may be a
schedule from :mod:`rustyml.neural_network.schedules`, evaluated per step as Keras does.
"""

import math
import numbers
import weakref

from rustyml.neural_network import schedules
from rustyml.neural_network._config import _arguments, _Configurable


def _number(value, what, name):
    """A real number (not a string or a bool), as a float; else a ValueError naming it."""
    if isinstance(value, (bool, str, bytes)) or not isinstance(value, numbers.Real):
        # Keras refuses a non-float learning rate with ValueError; the door does the same.
        raise ValueError(f"{what}: {name} must be a number, got {value!r}")  # noqa: TRY004
    return float(value)


def _check_lr(learning_rate, what):
    lr = _number(learning_rate, what, "learning_rate")
    if not (lr >= 0.0 and math.isfinite(lr)):
        raise ValueError(
            f"{what}: learning_rate must be a finite number >= 0, got {learning_rate!r}"
        )
    return lr


def _optional_positive(value, what, name):
    if value is None:
        return None
    v = _number(value, what, name)
    if not (v > 0.0 and math.isfinite(v)):
        raise ValueError(f"{what}: {name} must be a finite number > 0, got {value!r}")
    return v


class Optimizer(_Configurable):
    """Base class: learning rate, weight decay and gradient clipping (Keras's arguments)."""

    def __init__(
        self,
        learning_rate,
        weight_decay=None,
        clipnorm=None,
        clipvalue=None,
        global_clipnorm=None,
    ):
        what = type(self).__name__
        # the models this optimizer is compiled into, weakly held: a learning rate set here
        # reaches their native optimizers, as Keras's optimizer variable does
        self._models = weakref.WeakSet()
        self._schedule = None
        if isinstance(learning_rate, dict):
            learning_rate = schedules.deserialize(learning_rate)
        if isinstance(learning_rate, schedules.LearningRateSchedule):
            self._schedule = learning_rate
            self._learning_rate = learning_rate(0)
        else:
            self.learning_rate = learning_rate
        if weight_decay is not None:
            weight_decay = _number(weight_decay, what, "weight_decay")
            if not (weight_decay >= 0.0 and math.isfinite(weight_decay)):
                raise ValueError(
                    f"{what}: weight_decay must be a finite number >= 0, got {weight_decay!r}"
                )
        self.weight_decay = weight_decay
        self.clipnorm = _optional_positive(clipnorm, what, "clipnorm")
        self.clipvalue = _optional_positive(clipvalue, what, "clipvalue")
        self.global_clipnorm = _optional_positive(global_clipnorm, what, "global_clipnorm")
        if sum(c is not None for c in (clipnorm, clipvalue, global_clipnorm)) > 1:
            raise ValueError(
                f"{what}: only one of clipnorm, clipvalue and global_clipnorm can be set, got "
                f"clipnorm={clipnorm}, clipvalue={clipvalue}, global_clipnorm={global_clipnorm}"
            )

    @property
    def learning_rate(self):
        if self._schedule is not None:
            # Keras reads the rate of the next step: the schedule at the updates made so far
            for model in list(self._models):
                native = getattr(model, "_native", None)
                if native is not None and getattr(model, "optimizer", None) is self:
                    return native.learning_rate
            return self._learning_rate
        return self._learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        if getattr(self, "_schedule", None) is not None:
            raise TypeError(
                "This optimizer was created with a `LearningRateSchedule` object as its "
                "`learning_rate` constructor argument, hence its learning rate is not settable."
            )
        self._learning_rate = _check_lr(value, type(self).__name__)
        for model in list(self._models):
            model._optimizer_learning_rate_changed(self)

    # A built-in optimizer's own hyper-parameters beyond the base's: the real numbers (checked
    # and set as floats, in this order, the error naming the optimizer and the argument), then
    # the on/off switches (set as bools).
    _NUMBERS = ()
    _SWITCHES = ()

    def _init_built_in(self, arguments):
        """The constructor of every built-in optimizer: ``arguments`` are its own, by name
        (``_arguments(locals())``), so its signature is the one place its hyper-parameters and
        Keras's defaults are written."""
        Optimizer.__init__(
            self,
            arguments["learning_rate"],
            arguments["weight_decay"],
            arguments["clipnorm"],
            arguments["clipvalue"],
            arguments["global_clipnorm"],
        )
        for name in self._NUMBERS:
            setattr(self, name, _number(arguments[name], type(self).__name__, name))
        for name in self._SWITCHES:
            setattr(self, name, bool(arguments[name]))

    def _compiled_into(self, model):
        self._models.add(model)

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_models", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("_schedule", None)
        self._models = weakref.WeakSet()

    def get_config(self):
        lr = self.learning_rate if self._schedule is None else schedules.serialize(self._schedule)
        config = {"learning_rate": lr}
        config.update((k, v) for k, v in self.__dict__.items() if not k.startswith("_"))
        return config


class SGD(Optimizer):
    _NUMBERS = ("momentum",)
    _SWITCHES = ("nesterov",)

    def __init__(
        self,
        learning_rate=0.01,
        momentum=0.0,
        nesterov=False,
        weight_decay=None,
        clipnorm=None,
        clipvalue=None,
        global_clipnorm=None,
    ):
        self._init_built_in(_arguments(locals()))


class Adam(Optimizer):
    _NUMBERS = ("beta_1", "beta_2", "epsilon")
    _SWITCHES = ("amsgrad",)

    def __init__(
        self,
        learning_rate=0.001,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-7,
        amsgrad=False,
        weight_decay=None,
        clipnorm=None,
        clipvalue=None,
        global_clipnorm=None,
    ):
        self._init_built_in(_arguments(locals()))


class AdamW(Adam):
    def __init__(
        self,
        learning_rate=0.001,
        weight_decay=0.004,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-7,
        amsgrad=False,
        clipnorm=None,
        clipvalue=None,
        global_clipnorm=None,
    ):
        if weight_decay is None:
            raise ValueError("AdamW: weight_decay must be a float, got None")
        self._init_built_in(_arguments(locals()))


class RMSprop(Optimizer):
    _NUMBERS = ("rho", "momentum", "epsilon")
    _SWITCHES = ("centered",)

    def __init__(
        self,
        learning_rate=0.001,
        rho=0.9,
        momentum=0.0,
        epsilon=1e-7,
        centered=False,
        weight_decay=None,
        clipnorm=None,
        clipvalue=None,
        global_clipnorm=None,
    ):
        self._init_built_in(_arguments(locals()))


class Adagrad(Optimizer):
    _NUMBERS = ("initial_accumulator_value", "epsilon")

    def __init__(
        self,
        learning_rate=0.001,
        initial_accumulator_value=0.1,
        epsilon=1e-7,
        weight_decay=None,
        clipnorm=None,
        clipvalue=None,
        global_clipnorm=None,
    ):
        self._init_built_in(_arguments(locals()))


AdaGrad = Adagrad


class Nadam(Optimizer):
    """Adam with Nesterov momentum (Dozat 2016), Keras 3's update rule."""

    _NUMBERS = ("beta_1", "beta_2", "epsilon")

    def __init__(
        self,
        learning_rate=0.001,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-7,
        weight_decay=None,
        clipnorm=None,
        clipvalue=None,
        global_clipnorm=None,
    ):
        self._init_built_in(_arguments(locals()))


class Adamax(Nadam):
    """Adam with the infinity norm in place of the second moment, Keras 3's update rule."""


_BY_NAME = {
    "sgd": SGD,
    "adam": Adam,
    "adamw": AdamW,
    "rmsprop": RMSprop,
    "adagrad": Adagrad,
    "nadam": Nadam,
    "adamax": Adamax,
}


def get(identifier):
    """An optimizer from a Keras name (``"adam"``), an instance, or a config dict."""
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier.lower())
        if cls is None:
            raise ValueError(f"unknown optimizer {identifier!r}; known: {sorted(_BY_NAME)}")
        return cls()
    if isinstance(identifier, dict):
        cls = _BY_NAME.get(str(identifier.get("class_name", "")).lower())
        if cls is None:
            raise ValueError(f"unknown optimizer config {identifier!r}")
        config = dict(identifier.get("config", {}))
        rule = config.pop("weight_decay_rule", None)
        schedule = config.pop("learning_rate_schedule", None)
        if schedule is not None:
            config["learning_rate"] = schedule
        opt = cls.from_config(config)
        if rule is not None:
            opt._weight_decay_rule = rule
        return opt
    raise ValueError(f"optimizer must be a name or an Optimizer, got {identifier!r}")


def _with_l2_kernel_decay(optimizer):
    """The optimizer with scikit-learn's reading of its weight decay: an L2 term added to the
    gradient of the kernels only (the MLP estimators' ``alpha``), not Keras's decoupled decay of
    every variable."""
    optimizer._weight_decay_rule = "coupled_l2_kernels"
    return optimizer


def serialize(optimizer):
    config = optimizer.get_config()
    if config.get("weight_decay") is None:
        config["weight_decay"] = 0.0
    rule = getattr(optimizer, "_weight_decay_rule", None)
    if rule is not None:
        config["weight_decay_rule"] = rule
    schedule = getattr(optimizer, "_schedule", None)
    if schedule is not None:
        config["learning_rate"] = schedule(0)
        config["learning_rate_schedule"] = schedules._native_spec(schedule)
    return {"class_name": type(optimizer).__name__, "config": config}


__all__ = [
    "SGD",
    "AdaGrad",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "Nadam",
    "Optimizer",
    "RMSprop",
    "get",
    "schedules",
]
