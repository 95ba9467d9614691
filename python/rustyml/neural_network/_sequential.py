"""Keras's ``Sequential`` over one native model.

The model crosses into Rust as the list of layer configs plus arrays; the native class builds
the Rust layers, trains batch by batch with the GIL released (checking for Ctrl-C between
batches) and hands weights back in Keras's shapes and order. Epoch-level orchestration
(validation, metrics, callbacks, progress) stays here.
"""

import json
import os
import sys
import time
import warnings

import numpy as np

from rustyml import _native
from rustyml.exceptions import NotFittedError
from rustyml.neural_network import _metrics
from rustyml.neural_network import callbacks as callbacks_module
from rustyml.neural_network import layers as layers_module
from rustyml.neural_network import losses as losses_module
from rustyml.neural_network import optimizers as optimizers_module

_FORMAT = "rustyml.Sequential/1"


def _as_float32(a, name):
    try:
        arr = np.ascontiguousarray(a, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric array-like: {exc}") from None
    if arr.ndim == 0:
        raise ValueError(f"{name} must have a batch axis, got a scalar")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} is empty: found 0 samples")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinity")
    return arr


class _Progress:
    """Keras's per-epoch progress line: ``12/47 [====>....] - ETA: 1s - loss: 0.31``."""

    def __init__(self, verbose, total, epoch, epochs, stream=None):
        self.verbose = verbose
        self.total = total
        self.stream = stream or sys.stdout
        self.start = time.perf_counter()
        self.last_draw = 0.0
        if verbose:
            print(f"Epoch {epoch + 1}/{epochs}", file=self.stream)

    def update(self, done, loss):
        if self.verbose != 1:
            return
        now = time.perf_counter()
        if done < self.total and now - self.last_draw < 0.1:
            return
        self.last_draw = now
        elapsed = now - self.start
        width = 30
        filled = int(width * done / self.total)
        bar = (
            "=" * max(filled - 1, 0) + (">" if done < self.total else "=") + "." * (width - filled)
        )
        eta = elapsed / done * (self.total - done) if done else 0.0
        self.stream.write(
            f"\r{done}/{self.total} [{bar[:width]}] - ETA: {eta:.0f}s - loss: {loss:.4f}"
        )
        self.stream.flush()

    def finish(self, logs):
        if not self.verbose:
            return
        elapsed = time.perf_counter() - self.start
        per_step = elapsed / max(self.total, 1) * 1e3
        items = " - ".join(f"{k}: {v:.4f}" for k, v in logs.items())
        prefix = "\r" if self.verbose == 1 else ""
        print(
            f"{prefix}{self.total}/{self.total} - {elapsed:.0f}s {per_step:.0f}ms/step - {items}",
            file=self.stream,
        )


class Sequential:
    """A linear stack of layers, as in Keras.

    >>> model = Sequential([layers.Dense(8, activation="relu", input_shape=(4,)),
    ...                     layers.Dense(1)], seed=0)
    >>> model.compile(optimizer="adam", loss="mse")
    """

    def __init__(self, layers=None, seed=None, name=None):
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ValueError(f"seed must be None or a non-negative integer, got {seed!r}")
        self.name = name or "sequential"
        self.seed = seed
        self.layers = []
        self._native = None
        self._input_shape = None
        self._compiled = None
        self.stop_training = False
        self.history = None
        for layer in layers or []:
            self.add(layer)

    # -- building ------------------------------------------------------------------------
    def add(self, layer):
        if not isinstance(layer, layers_module.Layer):
            raise TypeError(f"Sequential.add expects a layer, got {layer!r}")
        if self._native is not None:
            raise ValueError("cannot add layers to a built model; create a new Sequential")
        self.layers.append(layer)
        if len(self.layers) == 1 and layer.input_shape is not None:
            self._input_shape = tuple(layer.input_shape)

    def get_config(self):
        return {
            "name": self.name,
            "seed": self.seed,
            "input_shape": None if self._input_shape is None else list(self._input_shape),
            "layers": [layers_module.serialize(layer) for layer in self.layers],
        }

    @classmethod
    def from_config(cls, config):
        """The model ``get_config`` describes; a malformed config is a ``ValueError``."""
        # a malformed config is bad data (a file's contents), so ValueError, as Keras raises
        if not isinstance(config, dict) or not isinstance(config.get("layers"), list):
            raise ValueError(  # noqa: TRY004
                "Sequential.from_config needs a dict with a 'layers' list, got "
                f"{type(config).__name__}"
            )
        specs = config["layers"]
        for i, spec in enumerate(specs):
            if not isinstance(spec, dict) or not isinstance(spec.get("config", {}), dict):
                raise ValueError(  # noqa: TRY004
                    f"Sequential.from_config: layer {i} must be a dict "
                    f"{{'class_name': ..., 'config': {{...}}}}, got {type(spec).__name__}"
                )
        try:
            model = cls(
                [layers_module.deserialize(spec) for spec in specs],
                seed=config.get("seed"),
                name=config.get("name"),
            )
            if config.get("input_shape") is not None:
                model._input_shape = layers_module._shape_tuple(
                    config["input_shape"], "input_shape", "Sequential"
                )
        except (TypeError, AttributeError, RecursionError, OverflowError) as exc:
            raise ValueError(f"Sequential.from_config: invalid layer config: {exc}") from None
        return model

    def build(self, input_shape=None):
        """Build the native layers for samples of ``input_shape`` (no batch axis); a layer
        that does not fit its predecessor is refused here, naming both."""
        if input_shape is not None:
            self._input_shape = tuple(int(v) for v in input_shape)
        if self._input_shape is None:
            raise ValueError(
                "the model has no input shape: pass input_shape to the first layer or call "
                "fit/predict with data"
            )
        if not self.layers:
            raise ValueError("the model has no layers")
        specs = json.dumps([layers_module.serialize(layer) for layer in self.layers])
        self._native = _native.neural_network.NativeSequential(
            specs, list(self._input_shape), self.seed
        )
        if self._compiled is not None:
            self._native.compile(*self._compiled[:2])

    def _ensure_built(self, x):
        if self._native is None:
            self.build(self._input_shape or x.shape[1:])

    # -- training ------------------------------------------------------------------------
    def compile(self, optimizer="rmsprop", loss=None, metrics=None):
        if loss is None:
            raise ValueError("compile needs a loss (e.g. loss='mse')")
        opt = optimizers_module.get(optimizer)
        loss_obj = losses_module.get(loss)
        metric_fns = _metrics.resolve(metrics)
        opt_json = json.dumps(optimizers_module.serialize(opt))
        loss_json = json.dumps(loss_obj.get_config())
        if self._native is not None:
            self._native.compile(opt_json, loss_json)
        self._compiled = (opt_json, loss_json, loss_obj, metric_fns)
        self.optimizer = opt
        self.loss = loss_obj

    def _check_compiled(self):
        if self._compiled is None:
            raise ValueError("the model must be compiled before fit/evaluate: call compile()")

    def _prepare_y(self, y, n):
        loss_obj = self._compiled[2]
        if loss_obj.name == "sparse_categorical_crossentropy":
            raw = np.asarray(y)
            if raw.ndim == 2 and raw.shape[1] == 1:
                raw = raw[:, 0]
            if raw.ndim != 1:
                raise ValueError(
                    f"sparse_categorical_crossentropy needs integer labels of shape (n,), got {raw.shape}"
                )
            if raw.dtype.kind == "f":
                if not np.isfinite(raw).all():
                    raise ValueError("y contains NaN or infinity")
                if not np.array_equal(raw, np.round(raw)):
                    raise ValueError("sparse_categorical_crossentropy labels must be integers")
            elif raw.dtype.kind not in "iub":
                raise ValueError(f"labels must be integers, got dtype {raw.dtype}")
            n_classes = self._native.output_shape()[-1]
            if raw.size and (raw.min() < 0 or raw.max() >= n_classes):
                raise ValueError(
                    f"labels must be in [0, {n_classes}) for this model's {n_classes} outputs, "
                    f"got values in [{raw.min()}, {raw.max()}]"
                )
            y = raw.astype(np.float32).reshape(-1, 1)
        else:
            y = _as_float32(y, "y")
            out = tuple(self._native.output_shape())
            if y.ndim == 1 and len(out) == 1:
                y = y.reshape(-1, 1)
            if tuple(y.shape[1:]) != out:
                raise ValueError(
                    f"y has per-sample shape {tuple(y.shape[1:])} but the model outputs {out}"
                )
        if len(y) != n:
            raise ValueError(f"x and y have different numbers of samples ({n} and {len(y)})")
        return y

    def _prepare_x(self, x):
        x = _as_float32(x, "x")
        self._ensure_built(x)
        expected = tuple(self._input_shape)
        if tuple(x.shape[1:]) != expected:
            raise ValueError(
                f"x has per-sample shape {tuple(x.shape[1:])} but the model expects {expected}"
            )
        return x

    def fit(
        self,
        x,
        y,
        batch_size=32,
        epochs=1,
        verbose="auto",
        callbacks=None,
        validation_split=0.0,
        validation_data=None,
        shuffle=True,
        initial_epoch=0,
    ):
        """Keras's ``fit``; returns a ``History`` whose ``.history`` holds ``loss``, every
        metric and their ``val_`` counterparts per epoch."""
        self._check_compiled()
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 0:
            raise ValueError(f"epochs must be a non-negative integer, got {epochs!r}")
        if not 0.0 <= float(validation_split) < 1.0:
            raise ValueError(f"validation_split must be in [0, 1), got {validation_split!r}")
        verbose = 1 if verbose == "auto" else int(verbose)
        x = self._prepare_x(x)
        y = self._prepare_y(y, len(x))
        if validation_data is not None:
            vx = self._prepare_x(validation_data[0])
            vy = self._prepare_y(validation_data[1], len(vx))
        elif validation_split:
            # Keras holds out the last samples, before any shuffling.
            n_val = int(len(x) * float(validation_split))
            if n_val == 0 or n_val == len(x):
                raise ValueError(
                    f"validation_split={validation_split} leaves no samples on one side of {len(x)}"
                )
            x, vx = x[:-n_val], x[-n_val:]
            y, vy = y[:-n_val], y[-n_val:]
        else:
            vx = vy = None

        history = callbacks_module.History()
        cbs = list(callbacks or []) + [history]
        for cb in cbs:
            if hasattr(cb, "set_model"):
                cb.set_model(self)
            else:
                cb.model = self
        self.stop_training = False
        _call(cbs, "on_train_begin", None)
        n_batches = -(-len(x) // batch_size)
        for epoch in range(initial_epoch, epochs):
            _call(cbs, "on_epoch_begin", epoch, None)
            progress = _Progress(verbose, n_batches, epoch, epochs)
            metric_fns = self._compiled[3]
            running = _RunningMetrics(metric_fns, y, self.loss) if metric_fns else None
            loss = self._native.train_epoch(
                x,
                y,
                batch_size,
                bool(shuffle),
                epoch,
                progress.update,
                running.add if running else None,
            )
            logs = {"loss": loss}
            if running:
                logs.update(running.results())
            if vx is not None:
                logs["val_loss"] = self._native.evaluate(vx, vy, max(batch_size, 256))
                if metric_fns:
                    vpred = self._native.predict(vx, max(batch_size, 256))
                    for name, fn in metric_fns:
                        logs["val_" + name] = fn(vy, vpred, self.loss.name, self.loss.from_logits)
            progress.finish(logs)
            _call(cbs, "on_epoch_end", epoch, logs)
            if self.stop_training:
                break
        _call(cbs, "on_train_end", None)
        self.history = history
        return history

    def evaluate(self, x, y, batch_size=32, verbose=0, return_dict=False):
        """The loss (and metrics) on ``x, y``; a float, a list, or a dict."""
        self._check_compiled()
        x = self._prepare_x(x)
        y = self._prepare_y(y, len(x))
        logs = {"loss": self._native.evaluate(x, y, int(batch_size))}
        metric_fns = self._compiled[3]
        if metric_fns:
            pred = self._native.predict(x, int(batch_size))
            for name, fn in metric_fns:
                logs[name] = fn(y, pred, self.loss.name, self.loss.from_logits)
        if verbose:
            print(" - ".join(f"{k}: {v:.4f}" for k, v in logs.items()))
        if return_dict:
            return logs
        return logs["loss"] if len(logs) == 1 else list(logs.values())

    def train_on_batch(self, x, y):
        """Keras's ``train_on_batch``: one optimizer step on ``x, y`` as a single batch, in the
        given order; returns the batch's loss (before the step)."""
        self._check_compiled()
        x = self._prepare_x(x)
        y = self._prepare_y(y, len(x))
        if len(x) == 0:
            raise ValueError("train_on_batch needs at least one sample")
        return self._native.train_epoch(x, y, len(x), False, 0, None)

    def predict(self, x, batch_size=32, verbose=0):
        """Inference outputs (float32), dropout and noise off, running statistics used."""
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        x = self._prepare_x(x)
        return _warn_non_finite(self, x, self._native.predict(x, batch_size))

    def __call__(self, x):
        return self.predict(x)

    # -- weights, summary, persistence -----------------------------------------------------
    def _built(self):
        if self._native is None:
            if self._input_shape is None:
                raise NotFittedError(
                    "This Sequential model is not built yet: give the first layer an input_shape "
                    "or call fit/predict first."
                )
            self.build()
        return self._native

    def get_weights(self):
        """Every layer's weights as NumPy arrays, in Keras's shapes and order."""
        return self._built().get_weights()

    def set_weights(self, weights):
        """Load weights in Keras's shapes and order; on error nothing changes.

        Every value must be a finite real number within float32's range (a float64 value
        beyond it would become infinity) and a BatchNormalization moving variance must be
        >= 0; anything else is a ValueError naming the layer and the weight."""
        arrays = []
        for i, w in enumerate(weights):
            a = np.asarray(w)
            if np.iscomplexobj(a):
                raise ValueError(
                    f"set_weights: weight array {i} is complex ({a.dtype}); weights are real"
                )
            if a.dtype.kind not in "fiub":
                raise ValueError(
                    f"set_weights: weight array {i} has dtype {a.dtype}, not a real number type"
                )
            # out-of-range float64 values become infinity here and are named by the native check
            with np.errstate(over="ignore", invalid="ignore"):
                arrays.append(np.ascontiguousarray(a, dtype=np.float32))
        self._built().set_weights(arrays)

    @property
    def learning_rate(self):
        self._check_compiled()
        return self._built().learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        self._check_compiled()
        self._built().learning_rate = float(value)

    def count_params(self):
        return sum(row[3] for row in self._built().layer_summaries())

    def summary(self, print_fn=print):
        rows = self._built().layer_summaries()
        header = f'Model: "{self.name}"'
        lines = [
            header,
            "-" * 65,
            f"{'Layer (type)':<30}{'Output Shape':<22}{'Param #':>12}",
            "=" * 65,
        ]
        for layer, (name, kind, shape, params) in zip(self.layers, rows):
            label = f"{layer.name or name} ({kind})"
            lines.append(f"{label:<30}{(None, *shape)!s:<22}{params:>12,}")
        lines.append("=" * 65)
        lines.append(f"Total params: {sum(r[3] for r in rows):,}")
        lines.append("-" * 65)
        for line in lines:
            print_fn(line)

    def save(self, path):
        """One safetensors file: the weights as tensors, the architecture in its metadata and
        a SHA-256 digest of both (checked by ``load``).

        ``path`` may be a symlink (its target is written); a FIFO, device or directory there
        is refused. The file is written to a temporary file beside it and renamed into place,
        so a failed save leaves an earlier file whole."""
        native = self._built()
        meta = {"format": _FORMAT, "config": json.dumps(self.get_config())}
        if self._compiled is not None:
            meta["optimizer"] = self._compiled[0]
            meta["loss"] = self._compiled[1]
        _native.neural_network.save_safetensors(os.fspath(path), meta, native.get_weights())

    @classmethod
    def load(cls, path):
        """Rebuild a model written by ``save``; predicts bit-identically.

        A file whose contents do not match its stored digest, whose architecture or weights
        are invalid, is a ``ValueError``; a file written before digests were stored loads
        with a ``UserWarning`` that it cannot be verified."""
        meta, weights, verified = _native.neural_network.load_safetensors(os.fspath(path))
        if meta.get("format") != _FORMAT or "config" not in meta:
            raise ValueError(f"{path} is not a rustyml Sequential file")
        if not verified:
            warnings.warn(
                f"{path} holds no digest (written by an older rustyml): its contents cannot "
                "be verified; save it again to add one",
                UserWarning,
                stacklevel=2,
            )
        try:
            config = json.loads(meta["config"])
            model = cls.from_config(config)
            model.build()
            if "optimizer" in meta and "loss" in meta:
                loss = losses_module.get(json.loads(meta["loss"]))
                model._native.compile(meta["optimizer"], meta["loss"])
                model._compiled = (meta["optimizer"], meta["loss"], loss, [])
                model.loss = loss
            model.set_weights(weights)
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
            raise ValueError(
                f"{path}: unreadable model architecture, compile state or weights: {exc}"
            ) from None
        return model


def _warn_non_finite(model, x, out):
    """``out`` unchanged; a ``RuntimeWarning`` naming the first layer whose output went
    non-finite when ``out`` holds NaN or infinity (the input is finite: ``_prepare_x`` refuses
    anything else), e.g. weights near float32's limit overflowing. The check is one pass over
    the output; the layer search reruns only the first offending sample."""
    bad = ~np.isfinite(out)
    if not bad.any():
        return out
    row = int(np.argmax(bad.reshape(len(out), -1).any(axis=1)))
    where = "a layer"
    try:
        found = model._native.first_non_finite_layer(x[row : row + 1])
    except ValueError:
        found = None
    if found is not None:
        index, kind = found
        name = model.layers[index].name if index < len(model.layers) else None
        where = f"layer {index} ({name or kind})"
    warnings.warn(
        f"predict: finite input gave {int(bad.sum())} NaN or infinite outputs; the first "
        f"sample affected ({row}) becomes non-finite at {where} (weights or activations "
        "beyond float32's range?)",
        RuntimeWarning,
        stacklevel=3,
    )
    return out


class _RunningMetrics:
    """Keras's training metrics: each batch's value on its training-mode output (dropout on,
    weights as they were before that batch's step), averaged over the epoch weighted by batch
    size. ``add`` receives every batch's output and sample indices from the native loop."""

    def __init__(self, metric_fns, y, loss):
        self.metric_fns, self.y, self.loss = metric_fns, y, loss
        self.totals = dict.fromkeys((name for name, _ in metric_fns), 0.0)
        self.seen = 0

    def add(self, output, indices):
        y = self.y[indices]
        for name, fn in self.metric_fns:
            value = fn(y, output, self.loss.name, self.loss.from_logits)
            self.totals[name] += value * len(indices)
        self.seen += len(indices)

    def results(self):
        return {name: total / max(self.seen, 1) for name, total in self.totals.items()}


def _call(cbs, hook, *args):
    for cb in cbs:
        fn = getattr(cb, hook, None)
        if fn is not None:
            fn(*args)
