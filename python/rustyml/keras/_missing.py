"""What a Keras program reaches for that rustyml does not have: a clear error naming it.

Each ``rustyml.keras`` module lists the Keras 3 names it lacks. Such a name imports (so a
program's import block runs) but is a stand-in: calling or instantiating it raises
``NotImplementedError`` naming the Keras feature. Any other unknown name is an
``AttributeError`` that says the same.
"""


def _keras_path(module, name):
    return module.replace("rustyml.keras", "keras", 1) + "." + name


def _message(module, name, note):
    text = f"{_keras_path(module, name)} is not implemented in rustyml"
    if note:
        text += f" ({note})"
    return text + "; docs/KERAS.md lists what rustyml.keras provides"


class MissingKerasFeature:
    """A Keras name rustyml lacks: any use raises ``NotImplementedError`` naming it."""

    def __init__(self, module, name, note=None):
        self._message = _message(module, name, note)
        self.__name__ = name
        self.__qualname__ = name

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(self._message)

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise NotImplementedError(self._message)

    def __repr__(self):
        return f"<not implemented in rustyml: {self._message.split(' is not')[0]}>"


def stand_ins(module, names, notes=None):
    """``{name: MissingKerasFeature}`` for ``names`` of ``module``."""
    notes = notes or {}
    return {name: MissingKerasFeature(module, name, notes.get(name)) for name in names}


def unknown_attribute(module):
    """A module ``__getattr__`` for names neither provided nor listed as missing."""

    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(_message(module, name, None))

    return __getattr__
