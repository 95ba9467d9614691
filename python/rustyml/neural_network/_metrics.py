"""Keras metric names, computed in NumPy on predictions (cheap next to a forward pass)."""

import numpy as np


def _accuracy_kind(y_true, y_pred):
    """Keras 3's choice for the name "accuracy", from the shapes alone (not the loss): binary
    when the model has one output per sample, sparse categorical when the targets are class
    indices (one fewer axis, or one column against several outputs), else categorical."""
    if y_pred.shape[-1] == 1:
        return "binary"
    if y_true.ndim < y_pred.ndim or (y_true.shape[-1] == 1 and y_pred.shape[-1] > 1):
        return "sparse"
    return "categorical"


def accuracy(y_true, y_pred, loss_name=None, from_logits=False):
    """Keras's "accuracy": binary accuracy at threshold 0.5 (whatever the loss, logits too),
    sparse categorical or categorical accuracy, chosen as Keras 3 chooses it."""
    kind = _accuracy_kind(y_true, y_pred)
    if kind == "sparse":
        labels = y_true.reshape(len(y_true), -1)[:, 0]
        return float(np.mean(np.argmax(y_pred, axis=-1) == labels))
    if kind == "categorical":
        return float(np.mean(np.argmax(y_pred, axis=-1) == np.argmax(y_true, axis=-1)))
    # BinaryAccuracy: the thresholded prediction equals the target as given
    predicted = (y_pred > 0.5).astype(y_pred.dtype)
    return float(np.mean(predicted == _aligned(y_true, y_pred)))


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


def _snake(name):
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i and (not name[i - 1].isupper() or name[i + 1 : i + 2].islower()):
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


def _metric_object_names():
    from rustyml.neural_network import metrics as objects

    names = {}
    for cls_name in objects.__all__:
        cls = getattr(objects, cls_name)
        if isinstance(cls, type) and issubclass(cls, objects.Metric) and cls_name != "Metric":
            names[cls_name] = cls
            names[_snake(cls_name)] = cls
    return names


def _stateful(metric):
    """``fn(y_true, y_pred, ...)``: the metric's value on the whole arrays (a fresh copy, the
    object's own state untouched); ``fn.metric`` is the object, which the training loop
    updates batch by batch."""

    def fn(y_true, y_pred, *_):
        fresh = metric._fresh()
        fresh.update_state(y_true, y_pred)
        return fresh.result()

    fn.metric = metric
    return fn


def resolve(metrics):
    """``[(log name, fn)]`` for Keras metric names (logged under the name given, as Keras
    does) and metric objects (logged under their ``name``); ``ValueError`` for unknown
    ones."""
    from rustyml.neural_network import metrics as objects

    if isinstance(metrics, (str, objects.Metric)) or callable(metrics):
        metrics = [metrics]
    out = []
    for m in metrics or []:
        if isinstance(m, objects.Metric):
            out.append((m.name, _stateful(m)))
            continue
        if isinstance(m, str) and m.lower() not in _BY_NAME and m in _metric_object_names():
            metric = _metric_object_names()[m]()
            metric.name = m
            out.append((m, _stateful(metric)))
            continue
        if callable(m):
            out.append((getattr(m, "__name__", "metric"), lambda t, p, *_, f=m: float(f(t, p))))
            continue
        if not isinstance(m, str):
            raise TypeError(f"a metric must be a name or a callable, got {m!r}")
        entry = _BY_NAME.get(m.lower())
        if entry is None:
            raise ValueError(f"unknown metric {m!r}; known: {sorted(_BY_NAME)}")
        out.append((m, entry[1]))
    return out
