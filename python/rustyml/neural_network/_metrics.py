"""Keras metric names, computed in NumPy on predictions (cheap next to a forward pass)."""

import numpy as np


def _accuracy_kind(loss_name, y_pred):
    if loss_name == "sparse_categorical_crossentropy":
        return "sparse"
    if loss_name == "categorical_crossentropy":
        return "categorical"
    if loss_name == "binary_crossentropy" or (y_pred.ndim == 2 and y_pred.shape[1] == 1):
        return "binary"
    return "categorical" if y_pred.ndim == 2 and y_pred.shape[1] > 1 else "binary"


def accuracy(y_true, y_pred, loss_name, from_logits=False):
    """Keras's "accuracy": the variant that matches the loss, as Keras chooses it."""
    kind = _accuracy_kind(loss_name, y_pred)
    if kind == "sparse":
        return float(np.mean(np.argmax(y_pred, axis=-1) == y_true.reshape(len(y_true), -1)[:, 0]))
    if kind == "categorical":
        return float(np.mean(np.argmax(y_pred, axis=-1) == np.argmax(y_true, axis=-1)))
    threshold = 0.0 if from_logits else 0.5
    return float(np.mean((y_pred > threshold) == (y_true.reshape(y_pred.shape) > 0.5)))


def _aligned(y_true, y_pred):
    """``y_true`` shaped to meet ``y_pred``: the same shape, or one value per sample broadcast
    over the outputs (Keras's rule, e.g. sparse labels against class scores)."""
    if y_true.size == y_pred.size:
        return y_true.reshape(y_pred.shape)
    if y_pred.ndim >= 2 and y_true.size == y_pred.shape[0]:
        return y_true.reshape((y_pred.shape[0],) + (1,) * (y_pred.ndim - 1))
    raise ValueError(
        f"targets of shape {y_true.shape} do not match outputs of shape {y_pred.shape}"
    )


def mean_absolute_error(y_true, y_pred, *_):
    return float(np.mean(np.abs(_aligned(y_true, y_pred) - y_pred)))


def mean_squared_error(y_true, y_pred, *_):
    return float(np.mean((_aligned(y_true, y_pred) - y_pred) ** 2))


_BY_NAME = {
    "accuracy": ("accuracy", accuracy),
    "acc": ("accuracy", accuracy),
    "mae": ("mae", mean_absolute_error),
    "mean_absolute_error": ("mae", mean_absolute_error),
    "mse": ("mse", mean_squared_error),
    "mean_squared_error": ("mse", mean_squared_error),
}


def resolve(metrics):
    """``[(log name, fn)]`` for Keras metric names; ``ValueError`` for unknown ones."""
    out = []
    for m in metrics or []:
        if callable(m):
            out.append((getattr(m, "__name__", "metric"), lambda t, p, *_, f=m: float(f(t, p))))
            continue
        entry = _BY_NAME.get(str(m).lower())
        if entry is None:
            raise ValueError(f"unknown metric {m!r}; known: {sorted(_BY_NAME)}")
        out.append(entry)
    return out
