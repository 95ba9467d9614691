"""Keras loss names and objects; the computation is Rust's."""

_ALIASES = {
    "mse": "mean_squared_error",
    "mean_squared_error": "mean_squared_error",
    "mae": "mean_absolute_error",
    "mean_absolute_error": "mean_absolute_error",
    "binary_crossentropy": "binary_crossentropy",
    "categorical_crossentropy": "categorical_crossentropy",
    "sparse_categorical_crossentropy": "sparse_categorical_crossentropy",
}


class Loss:
    name = None

    def __init__(self, from_logits=False):
        self.from_logits = bool(from_logits)

    def get_config(self):
        return {"name": self.name, "from_logits": self.from_logits}

    def __repr__(self):
        return f"{type(self).__name__}(from_logits={self.from_logits})"


class MeanSquaredError(Loss):
    name = "mean_squared_error"


class MeanAbsoluteError(Loss):
    name = "mean_absolute_error"


class BinaryCrossentropy(Loss):
    name = "binary_crossentropy"


class CategoricalCrossentropy(Loss):
    name = "categorical_crossentropy"


class SparseCategoricalCrossentropy(Loss):
    name = "sparse_categorical_crossentropy"


_BY_NAME = {
    cls.name: cls
    for cls in (
        MeanSquaredError,
        MeanAbsoluteError,
        BinaryCrossentropy,
        CategoricalCrossentropy,
        SparseCategoricalCrossentropy,
    )
}


def get(identifier):
    """A loss from a Keras name (``"mse"``, ``"sparse_categorical_crossentropy"``) or object."""
    if isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, str):
        name = _ALIASES.get(identifier.lower())
        if name is None:
            raise ValueError(f"unknown loss {identifier!r}; known: {sorted(_ALIASES)}")
        return _BY_NAME[name]()
    if isinstance(identifier, dict):
        loss = get(str(identifier.get("name", "")))
        return type(loss)(from_logits=identifier.get("from_logits", False))
    raise ValueError(f"loss must be a name or a Loss, got {identifier!r}")


__all__ = [
    "BinaryCrossentropy",
    "CategoricalCrossentropy",
    "Loss",
    "MeanAbsoluteError",
    "MeanSquaredError",
    "SparseCategoricalCrossentropy",
    "get",
]
