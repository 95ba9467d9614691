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


class RunningMetrics:
    """Keras's training metrics over an epoch, per output: each batch's value on its
    training-mode output (dropout on, weights as they were before that batch's step),
    averaged weighted by batch size; a metric object (AUC, Precision...) instead accumulates
    its own state batch by batch, as Keras's do. The native loop calls ``add`` with each
    batch's outputs and sample indices.

    ``metric_fns`` holds ``(output index, log name, fn)``; ``ys`` the targets per output.
    """

    def __init__(self, metric_fns, ys, losses, single_output=False):
        self.metric_fns, self.ys, self.losses = metric_fns, ys, losses
        # a one-output model's native loop passes the output itself, not a list of one
        self.single_output = single_output
        self.totals = dict.fromkeys((name for _, name, _ in metric_fns), 0.0)
        self.seen = 0
        for _, _, fn in metric_fns:
            if hasattr(fn, "metric"):
                fn.metric.reset_state()

    @classmethod
    def for_single_output(cls, metric_fns, y, loss):
        """A one-output model's metrics: ``metric_fns`` as ``(log name, fn)``."""
        fns = [(0, name, fn) for name, fn in metric_fns]
        return cls(fns, None if y is None else [y], [loss], single_output=True)

    def add(self, outputs, indices):
        self._add(self.ys, outputs, indices)

    def batch_adder(self, ys):
        """``add`` for a batch trained on its own: its targets are ``ys`` themselves."""
        if self.single_output:
            ys = [ys]
        return lambda outputs, indices: self._add(ys, outputs, indices)

    def _add(self, ys, outputs, indices):
        if self.single_output:
            outputs = [outputs]
        for j, name, fn in self.metric_fns:
            y, output = ys[j][indices], outputs[j]
            if hasattr(fn, "metric"):
                fn.metric.update_state(y, output)
                continue
            loss = self.losses[j]
            self.totals[name] += fn(y, output, loss.name, loss.from_logits) * len(indices)
        self.seen += len(indices)

    def results(self):
        out = {name: total / max(self.seen, 1) for name, total in self.totals.items()}
        for _, name, fn in self.metric_fns:
            if hasattr(fn, "metric"):
                out[name] = fn.metric.result()
        return out
