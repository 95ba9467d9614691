"""Keras's metric objects (``keras.metrics``): ``update_state`` / ``result`` /
``reset_state``, usable standalone and in ``compile(metrics=[...])``, where History logs them
under their ``name``.

The running state is Keras's: mean metrics keep a total and a count of per-sample values;
confusion metrics (Precision, Recall, AUC) keep true/false positive/negative counts per
threshold, so a value accumulated over batches equals the value on all of them at once. The
arithmetic is NumPy (float64 accumulators), cheap next to a forward pass.
"""

import math
import numbers

import numpy as np

_EPSILON = 1e-7

# How many metrics took each default name: Keras names the first "auc", the next "auc_1"...
_NAME_UIDS = {}


def _auto_name(base):
    count = _NAME_UIDS.get(base, 0) + 1
    _NAME_UIDS[base] = count
    return base if count == 1 else f"{base}_{count - 1}"


def _reset_names():
    """Forget the default names given (as ``keras.backend.clear_session`` does)."""
    _NAME_UIDS.clear()


def _arrays(y_true, y_pred):
    y_true = np.asarray(y_true)
    y_pred = np.asarray(y_pred, dtype=np.float32)
    # Keras squeezes or expands the last axis of one side when the ranks differ by one
    if y_true.ndim == y_pred.ndim + 1 and y_true.shape[-1] == 1:
        y_true = y_true[..., 0]
    elif y_pred.ndim == y_true.ndim + 1 and y_pred.shape[-1] == 1:
        y_pred = y_pred[..., 0]
    return y_true, y_pred


class Metric:
    """Base class: ``update_state(y_true, y_pred, sample_weight=None)``, ``result()``,
    ``reset_state()``; calling the metric updates it and returns the result."""

    def __init__(self, name=None, dtype=None):
        self.name = name if name is not None else _auto_name(self._default_name)
        self.reset_state()

    def __call__(self, y_true, y_pred, sample_weight=None):
        self.update_state(y_true, y_pred, sample_weight)
        return self.result()

    def get_config(self):
        return {"name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def _fresh(self):
        """A metric of the same configuration with an empty state."""
        return type(self).from_config(self.get_config())

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"


class Mean(Metric):
    """The (weighted) mean of the values given."""

    _default_name = "mean"

    def reset_state(self):
        self.total, self.count = 0.0, 0.0

    def update_state(self, values, sample_weight=None):
        values = np.asarray(values, dtype=np.float64)
        if sample_weight is None:
            self.total += float(values.sum())
            self.count += float(values.size)
        else:
            w = np.broadcast_to(np.asarray(sample_weight, dtype=np.float64), values.shape)
            self.total += float((values * w).sum())
            self.count += float(w.sum())

    def result(self):
        return self.total / self.count if self.count else 0.0


class MeanMetricWrapper(Mean):
    """The mean over samples of a per-sample function ``fn(y_true, y_pred)``."""

    def update_state(self, y_true, y_pred, sample_weight=None):
        values = self._per_sample(*_arrays(y_true, y_pred))
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight, dtype=np.float64)
            if sample_weight.ndim > values.ndim:
                sample_weight = sample_weight.reshape(values.shape)
        super().update_state(values, sample_weight)


class Accuracy(MeanMetricWrapper):
    """How often predictions equal the targets exactly (mean over the last axis)."""

    _default_name = "accuracy"

    def _per_sample(self, y_true, y_pred):
        return np.mean(y_true.astype(np.float32) == y_pred, axis=-1)


class BinaryAccuracy(MeanMetricWrapper):
    """How often ``y_pred > threshold`` equals the target."""

    _default_name = "binary_accuracy"

    def __init__(self, name=None, dtype=None, threshold=0.5):
        self.threshold = float(threshold)
        super().__init__(name, dtype)

    def get_config(self):
        return {"name": self.name, "threshold": self.threshold}

    def _per_sample(self, y_true, y_pred):
        predicted = (y_pred > self.threshold).astype(np.float32)
        return np.mean(y_true.astype(np.float32) == predicted, axis=-1)


class CategoricalAccuracy(MeanMetricWrapper):
    """How often the arg-max of the prediction equals the arg-max of the one-hot target."""

    _default_name = "categorical_accuracy"

    def _per_sample(self, y_true, y_pred):
        return (np.argmax(y_true, axis=-1) == np.argmax(y_pred, axis=-1)).astype(np.float64)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    """How often the arg-max of the prediction equals the integer target."""

    _default_name = "sparse_categorical_accuracy"

    def _per_sample(self, y_true, y_pred):
        if y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1:
            y_true = y_true[..., 0]
        return (np.argmax(y_pred, axis=-1) == y_true.astype(np.int64)).astype(np.float64)


class TopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the one-hot target's class is among the ``k`` largest predictions."""

    _default_name = "top_k_categorical_accuracy"

    def __init__(self, k=5, name=None, dtype=None):
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
            raise ValueError(f"TopKCategoricalAccuracy: k must be an integer >= 1, got {k!r}")
        self.k = int(k)
        super().__init__(name, dtype)

    def get_config(self):
        return {"name": self.name, "k": self.k}

    def _per_sample(self, y_true, y_pred):
        target = np.argmax(y_true, axis=-1)
        pred2 = y_pred.reshape(-1, y_pred.shape[-1])
        score = np.take_along_axis(pred2, target.reshape(-1, 1), axis=-1)
        # the target is in the top k when fewer than k classes score strictly higher
        higher = (pred2 > score).sum(axis=-1)
        return (higher < self.k).astype(np.float64).reshape(target.shape)


class MeanAbsoluteError(MeanMetricWrapper):
    _default_name = "mean_absolute_error"

    def _per_sample(self, y_true, y_pred):
        return np.mean(np.abs(y_pred.astype(np.float64) - y_true), axis=-1)


class MeanSquaredError(MeanMetricWrapper):
    _default_name = "mean_squared_error"

    def _per_sample(self, y_true, y_pred):
        return np.mean((y_pred.astype(np.float64) - y_true) ** 2, axis=-1)


class RootMeanSquaredError(Mean):
    """``sqrt`` of the mean squared error over every element seen."""

    _default_name = "root_mean_squared_error"

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = _arrays(y_true, y_pred)
        squared = (y_pred.astype(np.float64) - y_true) ** 2
        if sample_weight is not None:
            w = np.asarray(sample_weight, dtype=np.float64)
            sample_weight = w.reshape(w.shape + (1,) * (squared.ndim - w.ndim))
        super().update_state(squared, sample_weight)

    def result(self):
        return math.sqrt(super().result())


def _thresholds(thresholds, default):
    if thresholds is None:
        return np.array([default]), True
    single = isinstance(thresholds, numbers.Real)
    values = np.atleast_1d(np.asarray(thresholds, dtype=np.float64))
    if np.any(values < 0) or np.any(values > 1):
        raise ValueError(f"thresholds must lie in [0, 1], got {thresholds!r}")
    return values, single


class _ConfusionCounts(Metric):
    """True/false positive/negative counts per threshold (``y_pred > threshold``), over every
    element (or one class column with ``class_id``)."""

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        if top_k is not None:
            raise NotImplementedError(
                f"{type(self).__name__}(top_k=) is not implemented in rustyml"
            )
        self.init_thresholds = thresholds
        self.thresholds, self._single = _thresholds(thresholds, 0.5)
        self.top_k, self.class_id = top_k, class_id
        super().__init__(name, dtype)

    def get_config(self):
        return {
            "name": self.name,
            "thresholds": self.init_thresholds,
            "top_k": self.top_k,
            "class_id": self.class_id,
        }

    def reset_state(self):
        n = len(self.thresholds)
        self.true_positives = np.zeros(n)
        self.false_positives = np.zeros(n)
        self.true_negatives = np.zeros(n)
        self.false_negatives = np.zeros(n)

    def _prepare(self, y_true, y_pred):
        y_true, y_pred = _arrays(y_true, y_pred)
        if self.class_id is not None:
            y_true, y_pred = y_true[..., self.class_id], y_pred[..., self.class_id]
        return y_true, y_pred

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = self._prepare(y_true, y_pred)
        y_true = np.broadcast_to(y_true, y_pred.shape).astype(bool)
        if sample_weight is None:
            w = np.ones(y_pred.size)
        else:
            # one weight per sample, spread over the sample's elements
            w = np.asarray(sample_weight, dtype=np.float64)
            w = w.reshape(w.shape + (1,) * (y_pred.ndim - w.ndim))
            w = np.broadcast_to(w, y_pred.shape).ravel()
        y_true, y_pred = y_true.ravel(), y_pred.ravel()
        above = y_pred[None, :] > self.thresholds.astype(np.float32)[:, None]
        self.true_positives += (above & y_true) @ w
        self.false_positives += (above & ~y_true) @ w
        self.true_negatives += (~above & ~y_true) @ w
        self.false_negatives += (~above & y_true) @ w

    @staticmethod
    def _ratio(num, den):
        return np.divide(num, den, out=np.zeros_like(num), where=den != 0)

    def _out(self, values):
        return float(values[0]) if self._single else values


class Precision(_ConfusionCounts):
    _default_name = "precision"

    def result(self):
        tp, fp = self.true_positives, self.false_positives
        return self._out(self._ratio(tp, tp + fp))


class Recall(_ConfusionCounts):
    _default_name = "recall"

    def result(self):
        tp, fn = self.true_positives, self.false_negatives
        return self._out(self._ratio(tp, tp + fn))


class AUC(_ConfusionCounts):
    """Area under the ROC or PR curve from confusion counts at ``num_thresholds`` thresholds
    (Keras's Riemann sums; PR with ``"interpolation"`` uses Davis & Goadrich's interpolation,
    as Keras does)."""

    _default_name = "auc"

    def __init__(
        self,
        num_thresholds=200,
        curve="ROC",
        summation_method="interpolation",
        name=None,
        dtype=None,
        thresholds=None,
        multi_label=False,
        num_labels=None,
        label_weights=None,
        from_logits=False,
    ):
        if multi_label or label_weights is not None:
            raise NotImplementedError("AUC(multi_label=True) is not implemented in rustyml")
        if str(curve).upper() not in ("ROC", "PR"):
            raise ValueError(f'Invalid `curve` argument value "{curve}"')
        if summation_method not in ("interpolation", "minoring", "majoring"):
            raise ValueError(f'Invalid `summation_method` argument value "{summation_method}"')
        if thresholds is not None:
            inner = sorted(float(t) for t in thresholds)
        else:
            if isinstance(num_thresholds, bool) or num_thresholds <= 1:
                raise ValueError(
                    f"Argument `num_thresholds` must be an integer > 1. Received: "
                    f"num_thresholds={num_thresholds}"
                )
            inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        self.num_thresholds = len(inner) + 2
        self.curve = str(curve).upper()
        self.summation_method = summation_method
        self.from_logits = bool(from_logits)
        self._init = {"thresholds": thresholds, "num_thresholds": num_thresholds}
        self.thresholds = np.array([0.0 - _EPSILON, *inner, 1.0 + _EPSILON])
        self._single, self.init_thresholds = True, None
        self.top_k = self.class_id = None
        Metric.__init__(self, name, dtype)

    def get_config(self):
        return {
            "name": self.name,
            "num_thresholds": self._init["num_thresholds"],
            "thresholds": self._init["thresholds"],
            "curve": self.curve,
            "summation_method": self.summation_method,
            "from_logits": self.from_logits,
        }

    def _prepare(self, y_true, y_pred):
        y_true, y_pred = _arrays(y_true, y_pred)
        if self.from_logits:
            y_pred = (1.0 / (1.0 + np.exp(-y_pred.astype(np.float64)))).astype(np.float32)
        return y_true, y_pred

    def result(self):
        tp, fp = self.true_positives, self.false_positives
        tn, fn = self.true_negatives, self.false_negatives
        if self.curve == "PR" and self.summation_method == "interpolation":
            return self._interpolated_pr()
        recall = self._ratio(tp, tp + fn)
        if self.curve == "ROC":
            x, y = self._ratio(fp, fp + tn), recall
        else:
            x, y = recall, self._ratio(tp, tp + fp)
        if self.summation_method == "interpolation":
            heights = (y[:-1] + y[1:]) / 2.0
        elif self.summation_method == "minoring":
            heights = np.minimum(y[:-1], y[1:])
        else:
            heights = np.maximum(y[:-1], y[1:])
        return float(np.sum((x[:-1] - x[1:]) * heights))

    def _interpolated_pr(self):
        tp, fp, fn = self.true_positives, self.false_positives, self.false_negatives
        dtp = tp[:-1] - tp[1:]
        p = tp + fp
        dp = p[:-1] - p[1:]
        slope = self._ratio(dtp, np.maximum(dp, 0))
        intercept = tp[1:] - slope * p[1:]
        both = (p[:-1] > 0) & (p[1:] > 0)
        ratio = np.where(both, self._ratio(p[:-1], np.maximum(p[1:], 0)), 1.0)
        increment = self._ratio(
            slope * (dtp + intercept * np.log(ratio)), np.maximum(tp[1:] + fn[1:], 0)
        )
        return float(np.sum(increment))


_BY_CLASS = {
    cls.__name__: cls
    for cls in (
        Accuracy,
        BinaryAccuracy,
        CategoricalAccuracy,
        SparseCategoricalAccuracy,
        TopKCategoricalAccuracy,
        AUC,
        Precision,
        Recall,
        MeanAbsoluteError,
        MeanSquaredError,
        RootMeanSquaredError,
        Mean,
    )
}


def get(identifier):
    """A metric object from an instance, a class name or a ``{"class_name", "config"}``."""
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, dict):
        cls = _BY_CLASS.get(identifier.get("class_name"))
        if cls is None:
            raise ValueError(f"unknown metric config {identifier!r}")
        return cls.from_config(dict(identifier.get("config", {})))
    if isinstance(identifier, str) and identifier in _BY_CLASS:
        return _BY_CLASS[identifier]()
    raise ValueError(f"unknown metric {identifier!r}")


__all__ = [
    "AUC",
    "Accuracy",
    "BinaryAccuracy",
    "CategoricalAccuracy",
    "Mean",
    "MeanAbsoluteError",
    "MeanMetricWrapper",
    "MeanSquaredError",
    "Metric",
    "Precision",
    "Recall",
    "RootMeanSquaredError",
    "SparseCategoricalAccuracy",
    "TopKCategoricalAccuracy",
    "get",
]
