"""Keras-style optimizers: name, learning rate and hyper-parameters, applied in Rust."""


def _check_lr(learning_rate, name):
    lr = float(learning_rate)
    if not (lr > 0.0 and lr < float("inf")):
        raise ValueError(
            f"{name}: learning_rate must be a finite number > 0, got {learning_rate!r}"
        )
    return lr


class Optimizer:
    """Base class. ``clipnorm`` here is Keras's ``global_clipnorm`` (one norm over every gradient)."""

    def __init__(self, learning_rate, global_clipnorm=None, weight_decay=0.0):
        self.learning_rate = _check_lr(learning_rate, type(self).__name__)
        if global_clipnorm is not None:
            global_clipnorm = float(global_clipnorm)
            if not global_clipnorm > 0.0:
                raise ValueError(f"global_clipnorm must be > 0, got {global_clipnorm}")
        self.global_clipnorm = global_clipnorm
        self.weight_decay = float(weight_decay)

    def get_config(self):
        config = dict(self.__dict__)
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())
        return f"{type(self).__name__}({args})"


class SGD(Optimizer):
    def __init__(
        self,
        learning_rate=0.01,
        momentum=0.0,
        nesterov=False,
        weight_decay=0.0,
        global_clipnorm=None,
    ):
        super().__init__(learning_rate, global_clipnorm, weight_decay)
        self.momentum = float(momentum)
        self.nesterov = bool(nesterov)


class Adam(Optimizer):
    def __init__(
        self,
        learning_rate=0.001,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-7,
        weight_decay=0.0,
        global_clipnorm=None,
    ):
        super().__init__(learning_rate, global_clipnorm, weight_decay)
        self.beta_1 = float(beta_1)
        self.beta_2 = float(beta_2)
        self.epsilon = float(epsilon)


class AdamW(Adam):
    def __init__(
        self,
        learning_rate=0.001,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-7,
        weight_decay=0.004,
        global_clipnorm=None,
    ):
        super().__init__(learning_rate, beta_1, beta_2, epsilon, weight_decay, global_clipnorm)


class RMSprop(Optimizer):
    def __init__(
        self, learning_rate=0.001, rho=0.9, epsilon=1e-7, weight_decay=0.0, global_clipnorm=None
    ):
        super().__init__(learning_rate, global_clipnorm, weight_decay)
        self.rho = float(rho)
        self.epsilon = float(epsilon)


class Adagrad(Optimizer):
    def __init__(self, learning_rate=0.001, epsilon=1e-7, weight_decay=0.0, global_clipnorm=None):
        super().__init__(learning_rate, global_clipnorm, weight_decay)
        self.epsilon = float(epsilon)


AdaGrad = Adagrad

_BY_NAME = {"sgd": SGD, "adam": Adam, "adamw": AdamW, "rmsprop": RMSprop, "adagrad": Adagrad}


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
        return cls.from_config(identifier.get("config", {}))
    raise ValueError(f"optimizer must be a name or an Optimizer, got {identifier!r}")


def serialize(optimizer):
    return {"class_name": type(optimizer).__name__, "config": optimizer.get_config()}


__all__ = ["SGD", "AdaGrad", "Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "get"]
