"""Keras loss names and objects; the computation (value and gradient) is Rust's.

Per-sample losses reduce over the last axis as Keras's do; ``reduction`` then averages them
over the samples (``"sum_over_batch_size"``, the default) or sums them (``"sum"``).
"""

import math
import numbers

_ALIASES = {
    "mse": "mean_squared_error",
    "mean_squared_error": "mean_squared_error",
    "mae": "mean_absolute_error",
    "mean_absolute_error": "mean_absolute_error",
    "binary_crossentropy": "binary_crossentropy",
    "categorical_crossentropy": "categorical_crossentropy",
    "sparse_categorical_crossentropy": "sparse_categorical_crossentropy",
    "huber": "huber",
    "huber_loss": "huber",
    "log_cosh": "log_cosh",
    "logcosh": "log_cosh",
    "mape": "mean_absolute_percentage_error",
    "mean_absolute_percentage_error": "mean_absolute_percentage_error",
    "msle": "mean_squared_logarithmic_error",
    "mean_squared_logarithmic_error": "mean_squared_logarithmic_error",
    "kld": "kl_divergence",
    "kl_divergence": "kl_divergence",
    "kullback_leibler_divergence": "kl_divergence",
    "hinge": "hinge",
    "squared_hinge": "squared_hinge",
    "categorical_hinge": "categorical_hinge",
    "cosine_similarity": "cosine_similarity",
}

_REDUCTIONS = ("sum_over_batch_size", "sum", "mean", "mean_with_sample_weight")


class Loss:
    """``name`` (class attribute) is the loss's native name; ``reduction`` Keras's reduction
    of the per-sample losses (``"none"`` cannot train a model and is refused)."""

    name = None

    def __init__(self, from_logits=False, reduction="sum_over_batch_size"):
        self.from_logits = bool(from_logits)
        if reduction not in _REDUCTIONS:
            raise ValueError(
                f"{type(self).__name__}: reduction must be one of {_REDUCTIONS} to train a "
                f"model, got {reduction!r}"
            )
        self.reduction = reduction

    def get_config(self):
        config = {"name": self.name, "from_logits": self.from_logits}
        if self.reduction != "sum_over_batch_size":
            config["reduction"] = self.reduction
        return config

    def __repr__(self):
        return f"{type(self).__name__}(from_logits={self.from_logits})"


class _PlainLoss(Loss):
    """A Keras loss without ``from_logits``."""

    def __init__(self, reduction="sum_over_batch_size", name=None, dtype=None):
        super().__init__(False, reduction)

    def __repr__(self):
        return f"{type(self).__name__}(reduction={self.reduction!r})"


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


class Huber(_PlainLoss):
    """``0.5 e²`` where ``|e| <= delta``, else ``delta (|e| - 0.5 delta)``, ``e = y_pred -
    y_true``."""

    name = "huber"

    def __init__(self, delta=1.0, reduction="sum_over_batch_size", name="huber_loss", dtype=None):
        super().__init__(reduction)
        if (
            isinstance(delta, (bool, str))
            or not isinstance(delta, numbers.Real)
            or not (math.isfinite(delta) and delta >= 0)
        ):
            raise ValueError(f"Huber: delta must be a finite number >= 0, got {delta!r}")
        self.delta = float(delta)

    def get_config(self):
        return {**super().get_config(), "delta": self.delta}


class LogCosh(_PlainLoss):
    name = "log_cosh"


class MeanAbsolutePercentageError(_PlainLoss):
    name = "mean_absolute_percentage_error"


class MeanSquaredLogarithmicError(_PlainLoss):
    name = "mean_squared_logarithmic_error"


class KLDivergence(_PlainLoss):
    name = "kl_divergence"


class Hinge(_PlainLoss):
    """Targets in {-1, 1}; targets that are all 0 or 1 are converted to -1 or 1 (Keras)."""

    name = "hinge"


class SquaredHinge(Hinge):
    name = "squared_hinge"


class CategoricalHinge(_PlainLoss):
    name = "categorical_hinge"


class CosineSimilarity(_PlainLoss):
    """``-cos(y_true, y_pred)`` over the last axis (the only axis supported)."""

    name = "cosine_similarity"

    def __init__(
        self, axis=-1, reduction="sum_over_batch_size", name="cosine_similarity", dtype=None
    ):
        super().__init__(reduction)
        if axis != -1:
            raise NotImplementedError(
                f"CosineSimilarity: only axis=-1 is implemented in rustyml, got axis={axis!r}"
            )


def _built_in(base):
    """``base`` and every class below it, as defined at import (later subclasses, a user's
    own, stay out: one inheriting ``name`` must not replace the built-in loss)."""
    classes = [base]
    for sub in base.__subclasses__():
        classes += _built_in(sub)
    return classes


# each built-in loss's native name, from its class: the class is the one place it is written
_BY_NAME = {cls.name: cls for cls in _built_in(Loss) if cls.name is not None}


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
        cls = type(get(str(identifier.get("name", ""))))
        kwargs = {"reduction": identifier.get("reduction", "sum_over_batch_size")}
        if issubclass(cls, _PlainLoss):
            if "delta" in identifier:
                kwargs["delta"] = identifier["delta"]
        else:
            kwargs["from_logits"] = identifier.get("from_logits", False)
        return cls(**kwargs)
    raise ValueError(f"loss must be a name or a Loss, got {identifier!r}")


__all__ = [
    "BinaryCrossentropy",
    "CategoricalCrossentropy",
    "CategoricalHinge",
    "CosineSimilarity",
    "Hinge",
    "Huber",
    "KLDivergence",
    "LogCosh",
    "Loss",
    "MeanAbsoluteError",
    "MeanAbsolutePercentageError",
    "MeanSquaredError",
    "MeanSquaredLogarithmicError",
    "SparseCategoricalCrossentropy",
    "SquaredHinge",
    "get",
]
