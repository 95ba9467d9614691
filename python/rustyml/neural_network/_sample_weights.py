"""Keras's per-sample loss weights at the Python door: ``sample_weight`` and ``class_weight``
turned into one float32 weight per sample (the native step applies them), and
``validation_freq``. Shared by ``Sequential`` and the functional ``Model``."""

import numbers

import numpy as np


def as_sample_weight(value, n, name="sample_weight"):
    """``value`` as a contiguous float32 array of ``n`` finite weights (Keras also takes
    shape ``(n, 1)``); ``ValueError`` naming ``name`` otherwise. Negative weights are kept,
    as Keras keeps them."""
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an array of numbers: {exc}") from None
    if raw.dtype.kind not in "fiub":
        raise ValueError(f"{name} must hold real numbers, got dtype {raw.dtype}")
    if raw.ndim == 2 and raw.shape[1] == 1:
        raw = raw[:, 0]
    if raw.ndim != 1:
        raise ValueError(
            f"{name} must hold one weight per sample, shape ({n},), got shape {raw.shape}"
        )
    if len(raw) != n:
        raise ValueError(f"{name} must hold one weight per sample ({n}), got {len(raw)} weights")
    with np.errstate(over="ignore", invalid="ignore"):
        w = np.ascontiguousarray(raw, dtype=np.float32)
    if not np.isfinite(w).all():
        raise ValueError(f"{name} contains NaN or infinity (or values beyond float32's range)")
    return w


def check_class_weight(class_weight):
    """``class_weight`` checked: a dict ``{class index: weight}`` of finite numbers."""
    if class_weight is None:
        return None
    # bad arguments are ValueErrors, as Keras raises for them
    if not isinstance(class_weight, dict):
        raise ValueError(  # noqa: TRY004
            "class_weight must be a dict {class index: weight}, got "
            f"{type(class_weight).__name__}"
        )
    out = {}
    for key, value in class_weight.items():
        if isinstance(key, (bool, np.bool_)) or not isinstance(key, numbers.Integral):
            raise ValueError(f"class_weight keys must be integer class indices, got {key!r}")  # noqa: TRY004
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise ValueError(f"class_weight[{key!r}] must be a number, got {value!r}")  # noqa: TRY004
        if not np.isfinite(float(value)):
            raise ValueError(f"class_weight[{key!r}] must be finite, got {value!r}")
        out[int(key)] = float(value)
    return out


def class_weight_to_sample_weight(y, class_weight):
    """Keras's rule: each sample's class is its label (targets of one value per sample,
    rounded) or the argmax of its row (one-hot or probability targets); its weight is that
    class's entry, 1 for a class not listed."""
    y = np.asarray(y)
    if y.ndim > 1:
        y = y[..., 0] if y.shape[-1] == 1 else np.argmax(y, axis=-1)
    if y.ndim != 1:
        raise ValueError(
            "class_weight needs one class per sample: targets of shape (n,), (n, 1) or "
            f"(n, classes); got targets whose classes have shape {y.shape}"
        )
    labels = np.round(y).astype(np.int64)
    w = np.ones(len(labels), dtype=np.float32)
    for cls, weight in class_weight.items():
        w[labels == cls] = weight
    return w


def check_validation_freq(value):
    """Keras's ``validation_freq``: an int ``k >= 1`` (validate after every ``k``-th epoch,
    counting from 1) or a collection of epoch numbers (from 1)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        if value < 1:
            raise ValueError(f"validation_freq must be an integer >= 1, got {value!r}")
        return int(value)
    if isinstance(value, (list, tuple, set, frozenset, range)):
        epochs = set()
        for e in value:
            if isinstance(e, (bool, np.bool_)) or not isinstance(e, numbers.Integral):
                raise ValueError(f"validation_freq lists epoch numbers (integers), got {e!r}")  # noqa: TRY004
            epochs.add(int(e))
        return frozenset(epochs)
    raise ValueError(
        f"validation_freq must be an integer or a list of epoch numbers, got {value!r}"
    )


def should_validate(epoch, freq):
    """Whether epoch ``epoch`` (numbered from 0) validates under ``check_validation_freq``'s
    value."""
    if isinstance(freq, int):
        return (epoch + 1) % freq == 0
    return epoch + 1 in freq


def terminating_callbacks(callbacks):
    """The ``TerminateOnNaN`` callbacks among ``callbacks``."""
    from rustyml.neural_network.callbacks import TerminateOnNaN

    return [cb for cb in callbacks if isinstance(cb, TerminateOnNaN)]


def report_non_finite(terminators, batch, loss):
    """Hands a non-finite loss at ``batch`` to each ``TerminateOnNaN``: it stops training (or
    raises, with ``raise_error``)."""
    for cb in terminators:
        cb.on_batch_end(batch, {"loss": loss})
