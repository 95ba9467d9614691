"""The config round trip Keras's serializable objects share (optimizers, schedules,
initializers, regularizers): ``cls.from_config(obj.get_config())`` rebuilds ``obj``, and the
repr shows the same config."""


class _Configurable:
    """Mixin over a ``get_config()`` whose keys are the constructor's arguments."""

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())
        return f"{type(self).__name__}({args})"
