"""Keras's ``Sequential`` over one native model.

The model crosses into Rust as the list of layer configs plus arrays; the native class builds
the Rust layers, trains batch by batch with the GIL released (checking for Ctrl-C between
batches) and hands weights back in Keras's shapes and order. Epoch-level orchestration
(validation, metrics, callbacks, progress) stays here.
"""

import contextlib
import json
import numbers
import operator
import os
import sys
import threading
import time
import warnings

import numpy as np

from rustyml import _native
from rustyml.exceptions import NotFittedError
from rustyml.neural_network import _batches, _metrics
from rustyml.neural_network import _sample_weights as _sw
from rustyml.neural_network import callbacks as callbacks_module
from rustyml.neural_network import initializers as _initializers
from rustyml.neural_network import layers as layers_module
from rustyml.neural_network import losses as losses_module
from rustyml.neural_network import optimizers as optimizers_module

_FORMAT = "rustyml.Sequential/1"
_PICKLE_FORMAT = "rustyml.Sequential.pickle/1"


_MAX_INT = 2**63 - 1


def _int_arg(value, name, minimum, maximum=_MAX_INT):
    """``value`` as a Python int: any integer type (NumPy's too, not bool), in
    ``[minimum, maximum]``; ``ValueError`` otherwise."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")  # noqa: TRY004
    value = operator.index(value)
    if not minimum <= value <= maximum:
        raise ValueError(f"{name} must be an integer in [{minimum}, {maximum}], got {value!r}")
    return value


def _aligned(arr):
    """``arr`` itself, or an aligned copy: an unpickled or offset buffer (what dask and joblib
    hand over) may be unaligned, and no native view may point at it."""
    return arr if arr.flags.aligned else arr.copy()


def _float32_contiguous(a):
    """A C-contiguous, aligned float32 array of ``a`` (weights and gradients crossing in),
    of ``a``'s shape (``ascontiguousarray`` alone makes a 0-d weight, such as a
    Normalization's ``count``, 1-d)."""
    return _aligned(np.ascontiguousarray(a, dtype=np.float32).reshape(np.shape(a)))


def _as_float32(a, name):
    try:
        raw = np.asarray(a)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric array-like: {exc}") from None
    if raw.dtype.kind == "c" or (
        raw.dtype.kind == "O" and any(isinstance(v, complex) for v in raw.ravel())
    ):
        raise ValueError(f"{name} holds complex numbers; only real values are accepted")
    try:
        arr = np.ascontiguousarray(raw, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric array-like: {exc}") from None
    arr = _aligned(arr)
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
        if (self.total is None or done < self.total) and now - self.last_draw < 0.1:
            return
        self.last_draw = now
        elapsed = now - self.start
        width = 30
        filled = int(width * done / (self.total or done))
        if self.total is None:  # a generator's length is known only at its end
            self.stream.write(f"\r{done}/Unknown - {now - self.start:.0f}s - loss: {loss:.4f}")
            self.stream.flush()
            return
        bar = (
            "=" * max(filled - 1, 0) + (">" if done < self.total else "=") + "." * (width - filled)
        )
        eta = elapsed / done * (self.total - done) if done else 0.0
        self.stream.write(
            f"\r{done}/{self.total} [{bar[:width]}] - ETA: {eta:.0f}s - loss: {loss:.4f}"
        )
        self.stream.flush()

    def finish(self, logs, done=None):
        if not self.verbose:
            return
        if self.total is None:
            self.total = done
        elapsed = time.perf_counter() - self.start
        per_step = elapsed / max(self.total, 1) * 1e3
        items = " - ".join(f"{k}: {v:.4f}" for k, v in logs.items())
        prefix = "\r" if self.verbose == 1 else ""
        print(
            f"{prefix}{self.total}/{self.total} - {elapsed:.0f}s {per_step:.0f}ms/step - {items}",
            file=self.stream,
        )


class _ModelFiles:
    """What ``Sequential`` and the functional ``Model`` share: the compiled check, and their
    files (rustyml's safetensors file, Keras's ``.weights.h5``). A class names its file format
    (``_FILE_FORMAT``) and the compile settings its file keeps (``_compile_metadata``)."""

    _FILE_FORMAT = None

    def _check_compiled(self):
        if self._compiled is None:
            raise ValueError("the model must be compiled before fit/evaluate: call compile()")

    def save_weights(self, filepath, overwrite=True):
        """Keras's ``.weights.h5`` file: every layer's arrays in Keras 3's h5 layout (Keras's
        ``load_weights`` reads it). The optimizer's state is not written."""
        from rustyml.keras import _keras_format

        _keras_format.save_weights(self, filepath, overwrite)

    def _save_file(self, path):
        """``save``: a path ending in ``.keras`` as Keras 3's archive, any other as one
        safetensors file of the weights, with the format, the config, the frozen layers and
        the compile settings in its metadata."""
        if os.fspath(path).endswith(".keras"):
            from rustyml.keras import _keras_format

            _keras_format.save_archive(self, path)
            return
        meta = {"format": self._FILE_FORMAT, "config": json.dumps(self.get_config())}
        frozen = _frozen_layer_indices(self.layers)
        if frozen:
            meta["frozen_layers"] = json.dumps(frozen)
        if self._compiled is not None:
            meta["optimizer"] = json.dumps(optimizers_module.serialize(self.optimizer))
            meta.update(self._compile_metadata())
        _native.neural_network.save_safetensors(os.fspath(path), meta, self.get_weights())


def _frozen_layer_indices(layers):
    """The positions of the layers set ``trainable = False``."""
    return [i for i, layer in enumerate(layers) if not getattr(layer, "trainable", True)]


class Sequential(_ModelFiles):
    """A linear stack of layers, as in Keras.

    >>> model = Sequential([layers.Dense(8, activation="relu", input_shape=(4,)),
    ...                     layers.Dense(1)], seed=0)
    >>> model.compile(optimizer="adam", loss="mse")
    """

    _FILE_FORMAT = _FORMAT

    def __init__(self, layers=None, seed=None, name=None):
        if seed is not None:
            seed = _int_arg(seed, "seed", 0, 2**64 - 1)
        self.name = name or "sequential"
        self.seed = seed
        self.layers = []
        self._native = None
        self._input_shape = None
        self._compiled = None
        self._metric_specs = []
        self._metrics_arg = None
        self._trainable_mask = None
        self._training_thread = None
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
        that does not fit its predecessor is refused here, naming both. On error the model is
        left as it was."""
        shape = self._input_shape
        if input_shape is not None:
            if isinstance(input_shape, (str, bytes)) or not hasattr(input_shape, "__iter__"):
                raise ValueError(f"input_shape must be a tuple of sizes, got {input_shape!r}")
            shape = tuple(_int_arg(v, "every input_shape size", 1, _MAX_INT) for v in input_shape)
        if shape is None:
            raise ValueError(
                "the model has no input shape: pass input_shape to the first layer or call "
                "fit/predict with data"
            )
        if not self.layers:
            raise ValueError("the model has no layers")
        specs = json.dumps([layers_module.serialize(layer) for layer in self.layers])
        native = _native.neural_network.NativeSequential(specs, list(shape), self.seed)
        _initializers.apply_layer_initializers(native, self.layers, self.seed)
        layers_module.apply_adapted_statistics(
            self, native, self.layers, [len(names) for names in native.weight_names()]
        )
        if self._compiled is not None:
            native.compile(*self._compiled[:2])
            native.learning_rate = self.optimizer.learning_rate
        self._native, self._input_shape = native, shape
        self._trainable_mask = None
        layers_module.remember_model(self, self.layers)

    def _load_adapted_statistics(self, layer):
        """Called by a ``Normalization`` of this model when it is adapted again."""
        native = self._native
        if native is None or all(lay is not layer for lay in self.layers):
            return
        counts = [len(names) for names in native.weight_names()]
        native.set_weights(layers_module.adapted_layer_weights(native, self.layers, counts, layer))

    def _ensure_built(self, x):
        if self._native is None:
            self.build(self._input_shape or x.shape[1:])

    # -- training ------------------------------------------------------------------------
    def compile(self, optimizer="rmsprop", loss=None, metrics=None, weighted_metrics=None):
        _refuse_weighted_metrics(weighted_metrics)
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
        if isinstance(metrics, str):
            metrics = [metrics]
        self._metric_specs = [m for m in metrics or [] if isinstance(m, str)]
        self._metrics_arg = None if metrics is None else list(metrics)
        self._trainable_mask = None
        self.optimizer = opt
        self.loss = loss_obj
        opt._compiled_into(self)

    def _apply_trainable(self):
        """Keras reads ``layer.trainable`` when the first training call after ``compile``
        builds its step; a later change needs ``compile`` again (Keras 3 refuses to train
        on otherwise)."""
        mask = [bool(getattr(layer, "trainable", True)) for layer in self.layers]
        if self._trainable_mask is None:
            self._native.set_trainable(mask)
            self._trainable_mask = mask
        elif mask != self._trainable_mask:
            raise ValueError(
                "a layer's trainable flag changed after this model was compiled and trained: "
                "call compile() again for the change to take effect"
            )

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

    def _call_keeping_state(self, fn):
        """Runs ``fn``; if it fails, a model it built (from the data it then refused) goes
        back to unbuilt, so the next call with correct data builds it afresh."""
        native, shape, mask = self._native, self._input_shape, self._trainable_mask
        try:
            return fn()
        except Exception:
            if native is None:
                self._native, self._input_shape, self._trainable_mask = native, shape, mask
            raise

    def _begin_training(self, what):
        me = threading.get_ident()
        if self._training_thread == me:
            raise RuntimeError(
                f"{what} was called from inside this model's own fit (a metric or callback); "
                "a model cannot train inside its own training loop"
            )

    @contextlib.contextmanager
    def _training_run(self, cbs):
        """One ``fit``'s epochs: this thread marked as training the model (``_begin_training``
        refuses a nested fit) from the callbacks' ``on_train_begin`` on; their
        ``on_train_end`` once the epochs are done."""
        self._training_thread = threading.get_ident()
        try:
            _call(cbs, "on_train_begin", None)
            yield
        finally:
            self._training_thread = None
        _call(cbs, "on_train_end", None)

    def fit(
        self,
        x=None,
        y=None,
        batch_size=32,
        epochs=1,
        verbose="auto",
        callbacks=None,
        validation_split=0.0,
        validation_data=None,
        shuffle=True,
        class_weight=None,
        sample_weight=None,
        initial_epoch=0,
        steps_per_epoch=None,
        validation_steps=None,
        validation_freq=1,
    ):
        """Keras's ``fit``; returns a ``History`` whose ``.history`` holds ``loss``, every
        metric and their ``val_`` counterparts per epoch (only for the epochs that validate:
        ``validation_freq`` is an int ``k``, every ``k``-th epoch counting from 1, or a list
        of epoch numbers).

        ``sample_weight`` (one weight per sample) and ``class_weight`` (``{class: weight}``,
        turned into per-sample weights from ``y``: its integer labels or the argmax of its
        rows) weight each sample's loss as Keras does: a batch's loss is ``sum(w_i loss_i) /
        batch_size``. ``validation_split`` splits ``sample_weight`` too; ``class_weight``
        weights the training samples only. Batches read from a source may carry their weights
        as ``(x, y, sample_weight)``. Metrics stay unweighted, as Keras's ``metrics``.

        ``x`` is an array (with ``y``), or data read batch by batch: a generator or any
        iterable of ``(x, y)`` batches, a ``PyDataset``-like object (``__len__`` and
        ``__getitem__``; ``shuffle`` permutes its batch order each epoch), or a dask array
        (with ``y``; read block by block, never computed whole). ``steps_per_epoch`` and
        ``validation_steps`` work as in Keras 3 (see ``rustyml.neural_network._batches``);
        ``validation_data`` may be any of these kinds.

        A step whose loss or weights become NaN or infinite raises ``ValueError`` and puts the
        weights and optimizer state back to their values before this call, unless a
        ``TerminateOnNaN`` callback is given: training then stops after the batch whose loss
        is not finite, with the weights as it left them (as in Keras)."""
        self._check_compiled()
        self._begin_training("fit")
        validation_freq = _sw.check_validation_freq(validation_freq)
        if sample_weight is not None and class_weight is not None:
            raise ValueError(
                "sample_weight and class_weight cannot be given together: pass one of them"
            )
        class_weight = _sw.check_class_weight(class_weight)
        batch_size = _int_arg(batch_size, "batch_size", 1)
        epochs = _int_arg(epochs, "epochs", 0)
        initial_epoch = _int_arg(initial_epoch, "initial_epoch", 0)
        if (
            isinstance(validation_split, (bool, np.bool_))
            or not isinstance(validation_split, numbers.Real)
            or not 0.0 <= float(validation_split) < 1.0
        ):
            raise ValueError(
                f"validation_split must be a number in [0, 1), got {validation_split!r}"
            )
        verbose = 1 if verbose == "auto" else int(verbose)
        cbs = _check_callbacks(callbacks)
        steps_per_epoch = _optional_steps(steps_per_epoch, "steps_per_epoch")
        validation_steps = _optional_steps(validation_steps, "validation_steps")
        streamed = _batches.is_batch_source(x) or _batches.is_dask_array(x)
        val_streamed = _batches.is_batch_source(validation_data) or (
            isinstance(validation_data, (tuple, list))
            and len(validation_data) > 0
            and _batches.is_dask_array(validation_data[0])
        )
        if streamed or val_streamed:
            if streamed and sample_weight is not None:
                raise ValueError(
                    "sample_weight cannot be given with a generator, PyDataset, iterable or "
                    "dask array: yield (x, y, sample_weight) batches instead"
                )
            if validation_split:
                raise ValueError(
                    "validation_split is only supported for in-memory arrays (NumPy, lists, "
                    "DataFrames); pass validation_data for a generator, PyDataset or dask array"
                )
            if not streamed and steps_per_epoch is not None:
                raise ValueError(
                    "steps_per_epoch applies to generators, PyDatasets, iterables and dask "
                    "arrays; for in-memory arrays the epoch is the whole data"
                )
            return self._call_keeping_state(
                lambda: self._fit_stream(
                    x,
                    y,
                    batch_size,
                    epochs,
                    verbose,
                    cbs,
                    validation_data,
                    shuffle,
                    initial_epoch,
                    steps_per_epoch,
                    validation_steps,
                    class_weight,
                    validation_freq,
                )
            )
        if steps_per_epoch is not None:
            raise ValueError(
                "steps_per_epoch applies to generators, PyDatasets, iterables and dask arrays; "
                "for in-memory arrays the epoch is the whole data"
            )
        if y is None:
            raise ValueError("fit on arrays needs y (the targets)")
        if validation_data is not None and (
            not isinstance(validation_data, (tuple, list)) or len(validation_data) not in (2, 3)
        ):
            raise ValueError(
                "validation_data must be a tuple (x_val, y_val) or (x_val, y_val, "
                f"val_sample_weight), got {type(validation_data).__name__} "
                f"of length {len(validation_data) if hasattr(validation_data, '__len__') else '?'}"
            )
        return self._call_keeping_state(
            lambda: self._fit(
                x,
                y,
                batch_size,
                epochs,
                verbose,
                cbs,
                validation_split,
                validation_data,
                shuffle,
                initial_epoch,
                sample_weight,
                class_weight,
                validation_freq,
            )
        )

    def _fit(
        self,
        x,
        y,
        batch_size,
        epochs,
        verbose,
        cbs,
        validation_split,
        validation_data,
        shuffle,
        initial_epoch,
        sample_weight,
        class_weight,
        validation_freq,
    ):
        x = self._prepare_x(x)
        y = self._prepare_y(y, len(x))
        sw = None if sample_weight is None else _sw.as_sample_weight(sample_weight, len(x))
        vw = None
        if validation_data is not None:
            vx = self._prepare_x(validation_data[0])
            vy = self._prepare_y(validation_data[1], len(vx))
            if len(validation_data) == 3 and validation_data[2] is not None:
                vw = _sw.as_sample_weight(validation_data[2], len(vx), "val_sample_weight")
        elif validation_split:
            # Keras holds out the last samples, before any shuffling, with their weights.
            split_at = _split_point(len(x), validation_split)
            x, vx = x[:split_at], x[split_at:]
            y, vy = y[:split_at], y[split_at:]
            if sw is not None:
                sw, vw = sw[:split_at], sw[split_at:]
        else:
            vx = vy = None
        if class_weight is not None:
            sw = _sw.class_weight_to_sample_weight(y, class_weight)
        terminators = _sw.terminating_callbacks(cbs)
        self._apply_trainable()
        batch_size = min(batch_size, len(x))
        eval_batch = min(max(batch_size, 256), len(vx)) if vx is not None else 0

        cbs, history = _attach_callbacks(self, cbs)
        snapshot = self._native.snapshot()
        with self._training_run(cbs):
            n_batches = -(-len(x) // batch_size)
            for epoch in range(initial_epoch, epochs):
                _call(cbs, "on_epoch_begin", epoch, None)
                progress = _Progress(verbose, n_batches, epoch, epochs)
                metric_fns = self._compiled[3]
                running = (
                    _metrics.RunningMetrics.for_single_output(metric_fns, y, self.loss)
                    if metric_fns
                    else None
                )
                done = [0]

                def on_progress(batches, mean_loss, done=done, progress=progress):
                    done[0] = batches
                    progress.update(batches, mean_loss)

                loss = self._native.train_epoch(
                    x,
                    y,
                    batch_size,
                    bool(shuffle),
                    epoch,
                    on_progress,
                    running.add if running else None,
                    snapshot,
                    sw,
                    bool(terminators),
                )
                if terminators and not np.isfinite(loss):
                    _sw.report_non_finite(terminators, done[0] - 1, loss)
                logs = {"loss": loss}
                if running:
                    logs.update(running.results())
                if vx is not None and _sw.should_validate(epoch, validation_freq):
                    logs["val_loss"] = self._native.evaluate(vx, vy, eval_batch, vw)
                    if metric_fns:
                        vpred = self._native.predict(vx, eval_batch)
                        for name, fn in metric_fns:
                            logs["val_" + name] = fn(
                                vy, vpred, self.loss.name, self.loss.from_logits
                            )
                progress.finish(logs)
                _call(cbs, "on_epoch_end", epoch, logs)
                if self.stop_training:
                    break
        self.history = history
        return history

    def _stream_source(self, x, y, what, batch_size, shuffle):
        if y is not None and not _batches.is_dask_array(x) and not _batches.is_batch_source(x):
            raise ValueError(f"{what}: x and y must be of the same kind")
        return _batches.source(
            x, y, what=what, batch_size=batch_size, shuffle=shuffle, seed=self.seed
        )

    def _stream_batch(self, raw, kind, need_y):
        """One batch of a source, checked and converted as an in-memory call's arrays are
        (the model is built from the first batch's shape)."""
        bx, by, bw = _batches.unpack(raw, kind)
        xs = self._prepare_x(bx)
        if not need_y:
            return xs, None, None
        if by is None:
            raise ValueError(f"a {kind} batch for fit/evaluate must hold targets: (x, y)")
        ys = self._prepare_y(by, len(xs))
        if bw is not None:
            bw = _as_float32(bw, "sample_weight")
            if bw.shape != (len(xs),):
                raise ValueError(
                    f"a batch's sample_weight must hold one weight per sample ({len(xs)},), "
                    f"got shape {bw.shape}"
                )
        return xs, ys, bw

    def _fit_stream(
        self,
        x,
        y,
        batch_size,
        epochs,
        verbose,
        cbs,
        validation_data,
        shuffle,
        initial_epoch,
        steps_per_epoch,
        validation_steps,
        class_weight,
        validation_freq,
    ):
        """``fit`` on data read batch by batch: only the batch training (and the one being
        read) is held; each batch trains as one step of the native loop, so batches equal
        to an in-memory epoch's give the same bits. A batch's weights (its third element, or
        ``class_weight`` applied to its targets) weight its loss."""
        if _batches.is_batch_source(x) or _batches.is_dask_array(x):
            epochs_iter = _batches.Epochs(
                self._stream_source(x, y, "fit", batch_size, shuffle), steps_per_epoch
            )
        else:
            raise ValueError(
                "fit: validation_data of a generator, PyDataset or dask array needs x of such "
                "a kind too; for in-memory x give validation_data as arrays"
            )
        val_epochs = val_arrays = None
        if validation_data is not None:
            if _batches.is_batch_source(validation_data):
                val_epochs = _batches.Epochs(
                    self._stream_source(validation_data, None, "fit", batch_size, False),
                    validation_steps,
                )
            elif isinstance(validation_data, (tuple, list)) and len(validation_data) in (2, 3):
                if _batches.is_dask_array(validation_data[0]):
                    val_epochs = _batches.Epochs(
                        self._stream_source(
                            validation_data[0], validation_data[1], "fit", batch_size, False
                        ),
                        validation_steps,
                    )
                else:
                    val_arrays = validation_data
            else:
                raise ValueError(
                    "validation_data must be a tuple (x_val, y_val[, val_sample_weight]), a "
                    f"generator, a PyDataset or an iterable of batches, got {validation_data!r}"
                )
        kind = epochs_iter.src.kind
        if class_weight is not None and kind in ("generator", "iterable"):
            raise ValueError(
                f"class_weight is not supported when x is a {kind} (Keras refuses it there "
                "too): yield (x, y, sample_weight) batches, or use a PyDataset or arrays"
            )
        terminators = _sw.terminating_callbacks(cbs)
        metric_fns = self._compiled[3]
        cbs, history = _attach_callbacks(self, cbs)
        snapshot = None
        with self._training_run(cbs):
            for epoch in range(initial_epoch, epochs):
                progress = None
                total = 0.0
                seen = 0
                running = (
                    _metrics.RunningMetrics.for_single_output(metric_fns, None, self.loss)
                    if metric_fns
                    else None
                )
                for step, raw in enumerate(epochs_iter.epoch(epoch)):
                    xs, ys, bw = self._stream_batch(raw, kind, True)
                    if class_weight is not None:
                        if bw is not None:
                            raise ValueError(
                                "class_weight cannot be used with batches that carry their "
                                "own sample weights (x, y, sample_weight)"
                            )
                        bw = _sw.class_weight_to_sample_weight(ys, class_weight)
                    if step == 0:
                        if snapshot is None:  # the model is built from the first batch
                            self._apply_trainable()
                            snapshot = self._native.snapshot()
                        _call(cbs, "on_epoch_begin", epoch, None)
                        progress = _Progress(verbose, epochs_iter.total, epoch, epochs)
                    on_output = None
                    if running is not None:
                        on_output = running.batch_adder(ys)
                    loss = self._native.train_epoch(
                        xs, ys, len(xs), False, 0, None, on_output, snapshot, bw, bool(terminators)
                    )
                    total += float(loss) * len(xs)
                    seen += len(xs)
                    progress.update(step + 1, total / seen)
                    if terminators and not np.isfinite(loss):
                        _sw.report_non_finite(terminators, step, total / seen)
                        if self.stop_training:
                            break
                if seen == 0:
                    _batches.end_empty_epoch(kind, epoch == initial_epoch, stacklevel=5)
                    break
                logs = {"loss": float(np.float32(total / seen))}
                if running:
                    logs.update(running.results())
                validates = _sw.should_validate(epoch, validation_freq)
                if val_epochs is not None and validates:
                    vlogs = self._evaluate_batches(val_epochs, epoch)
                    if vlogs is None:
                        warnings.warn(
                            "validation_data ran out of batches: no val_ logs for epoch "
                            f"{epoch + 1} (a generator can be read only once; use a PyDataset "
                            "or an iterable to validate every epoch)",
                            UserWarning,
                            stacklevel=5,
                        )
                    else:
                        logs.update({"val_" + k: v for k, v in vlogs.items()})
                elif val_arrays is not None and validates:
                    vlogs = self._evaluate(
                        val_arrays[0],
                        val_arrays[1],
                        max(batch_size, 256),
                        0,
                        True,
                        None if len(val_arrays) < 3 else val_arrays[2],
                        "val_sample_weight",
                    )
                    logs.update({"val_" + k: v for k, v in vlogs.items()})
                progress.finish(logs, step + 1)
                _call(cbs, "on_epoch_end", epoch, logs)
                if self.stop_training:
                    break
        self.history = history
        return history

    def _evaluate_batches(self, epochs_iter, index=0):
        """Loss and metrics over one pass of a batch source, each batch's value weighted by
        its size (Keras's mean metrics); ``None`` when the source yields no batch."""
        kind = epochs_iter.src.kind
        metric_fns = self._compiled[3]
        total = 0.0
        seen = 0
        sums = dict.fromkeys((name for name, _ in metric_fns), 0.0)
        for raw in epochs_iter.epoch(index):
            xs, ys, bw = self._stream_batch(raw, kind, True)
            n = len(xs)
            total += float(self._native.evaluate(xs, ys, n, bw)) * n
            if metric_fns:
                pred = self._native.predict(xs, n)
                for name, fn in metric_fns:
                    sums[name] += fn(ys, pred, self.loss.name, self.loss.from_logits) * n
            seen += n
        if seen == 0:
            return None
        logs = {"loss": float(np.float32(total / seen))}
        logs.update({name: v / seen for name, v in sums.items()})
        return logs

    def evaluate(
        self,
        x=None,
        y=None,
        batch_size=32,
        verbose=0,
        sample_weight=None,
        steps=None,
        return_dict=False,
    ):
        """The loss (and metrics) on ``x, y``; a float, a list, or a dict. ``x`` may be data
        read batch by batch, as for ``fit`` (``steps`` caps the batches read; a batch's third
        element weights its samples). ``sample_weight`` (one per sample, arrays only)
        weights the loss as Keras does: ``sum(w_i loss_i) / n``; metrics stay unweighted."""
        self._check_compiled()
        batch_size = _int_arg(32 if batch_size is None else batch_size, "batch_size", 1)
        steps = _optional_steps(steps, "steps")
        if _batches.is_batch_source(x) or _batches.is_dask_array(x):
            if sample_weight is not None:
                raise ValueError(
                    "sample_weight cannot be given with a generator, PyDataset, iterable or "
                    "dask array: yield (x, y, sample_weight) batches instead"
                )

            def run():
                epochs_iter = _batches.Epochs(
                    self._stream_source(x, y, "evaluate", batch_size, False), steps
                )
                logs = self._evaluate_batches(epochs_iter)
                if logs is None:
                    raise ValueError(f"evaluate: the {epochs_iter.src.kind} yielded no batches")
                return self._report(logs, verbose, return_dict)

            return self._call_keeping_state(run)
        if steps is not None:
            raise ValueError("steps applies to generators, PyDatasets, iterables and dask arrays")
        if y is None:
            raise ValueError("evaluate on arrays needs y (the targets)")
        return self._call_keeping_state(
            lambda: self._report(
                self._evaluate(x, y, batch_size, weights=sample_weight), verbose, return_dict
            )
        )

    def _evaluate(
        self,
        x,
        y,
        batch_size,
        verbose=0,
        return_dict=True,
        weights=None,
        weights_name="sample_weight",
    ):
        x = self._prepare_x(x)
        y = self._prepare_y(y, len(x))
        if self._trainable_mask is None:
            # a frozen layer's weights carry no regularization penalty, in evaluate too
            self._apply_trainable()
        batch_size = min(batch_size, len(x))
        w = None if weights is None else _sw.as_sample_weight(weights, len(x), weights_name)
        logs = {"loss": self._native.evaluate(x, y, batch_size, w)}
        metric_fns = self._compiled[3]
        if metric_fns:
            pred = self._native.predict(x, batch_size)
            for name, fn in metric_fns:
                logs[name] = fn(y, pred, self.loss.name, self.loss.from_logits)
        return logs

    @staticmethod
    def _report(logs, verbose, return_dict):
        if verbose:
            print(" - ".join(f"{k}: {v:.4f}" for k, v in logs.items()))
        if return_dict:
            # Keras returns the names sorted; the list keeps loss first
            return dict(sorted(logs.items()))
        return logs["loss"] if len(logs) == 1 else list(logs.values())

    def train_on_batch(self, x, y, sample_weight=None, class_weight=None, return_dict=False):
        """Keras's ``train_on_batch``: one optimizer step on ``x, y`` as a single batch, in the
        given order, its samples' losses weighted by ``sample_weight`` or ``class_weight`` as
        in ``fit``. Returns the batch's loss (before the step), or, with compiled metrics,
        ``[loss, *metrics]`` measured on the step's training-mode output (a dict with
        ``return_dict=True``). A step whose loss or weights become NaN or infinite raises
        ``ValueError`` and is undone."""
        self._check_compiled()
        self._begin_training("train_on_batch")
        if sample_weight is not None and class_weight is not None:
            raise ValueError(
                "sample_weight and class_weight cannot be given together: pass one of them"
            )
        class_weight = _sw.check_class_weight(class_weight)

        def step():
            xs = self._prepare_x(x)
            ys = self._prepare_y(y, len(xs))
            w = None if sample_weight is None else _sw.as_sample_weight(sample_weight, len(xs))
            if class_weight is not None:
                w = _sw.class_weight_to_sample_weight(ys, class_weight)
            self._apply_trainable()
            metric_fns = self._compiled[3]
            running = (
                _metrics.RunningMetrics.for_single_output(metric_fns, ys, self.loss)
                if metric_fns
                else None
            )
            on_output = running.batch_adder(ys) if running else None
            snapshot = self._native.snapshot()
            loss = self._native.train_epoch(xs, ys, len(xs), False, 0, None, on_output, snapshot, w)
            logs = {"loss": float(loss)}
            if running:
                logs.update(running.results())
            return logs

        return self._report(self._call_keeping_state(step), 0, return_dict)

    def test_on_batch(self, x, y, sample_weight=None, return_dict=False):
        """Keras's ``test_on_batch``: ``evaluate`` on ``x, y`` as one batch."""
        self._check_compiled()
        return self._call_keeping_state(
            lambda: self._report(
                self._evaluate(x, y, _ONE_BATCH, weights=sample_weight),
                0,
                return_dict,
            )
        )

    def predict_on_batch(self, x):
        """Keras's ``predict_on_batch``: ``predict`` on ``x`` as one batch."""
        return self.predict(x, batch_size=_ONE_BATCH)

    def compute_gradients(self, x, y, fraction=1.0):
        """The mean loss of ``x, y`` as one batch and the gradients of ``fraction`` times it,
        one flat float32 array per parameter (every layer's, in order); the weights and the
        optimizer do not change. Data-parallel training computes a global batch's shards
        with ``fraction = shard rows / batch rows`` and sums the gradients; with
        ``fraction=1`` they are the ones ``train_on_batch`` would apply, bit for bit."""
        self._check_compiled()

        def run():
            xs = self._prepare_x(x)
            ys = self._prepare_y(y, len(xs))
            self._apply_trainable()
            return self._native.loss_and_gradients(xs, ys, float(fraction))

        return self._call_keeping_state(run)

    def apply_gradients(self, gradients):
        """One optimizer step with ``gradients`` (laid out as ``compute_gradients`` returns
        them) in place of a batch's: clipping, step count and update as ``train_on_batch``.
        The model must have computed gradients (or trained) once, so that its layers list
        their parameters. Weights that become NaN or infinite raise ``ValueError`` and the
        step is undone."""
        self._check_compiled()
        self._begin_training("apply_gradients")
        arrays = [_float32_contiguous(g).ravel() for g in gradients]
        native = self._built()
        self._apply_trainable()
        snapshot = native.snapshot()
        native.apply_gradients(arrays)
        if not all(np.isfinite(w).all() for w in native.get_weights()):
            if snapshot is not None:
                native.restore(snapshot)
            raise ValueError(
                "the weights became NaN or infinite (the step diverged): lower the learning "
                "rate or scale the inputs"
            )

    def predict(self, x, batch_size=32, verbose=0, steps=None):
        """Inference outputs (float32), dropout and noise off, running statistics used.

        ``x`` may be data read batch by batch, as for ``fit`` (each batch's ``x`` is used, a
        batch's targets ignored; ``steps`` caps the batches read); the outputs of every batch
        come back as one array, as Keras returns them."""
        batch_size = _int_arg(32 if batch_size is None else batch_size, "batch_size", 1)
        steps = _optional_steps(steps, "steps")
        # an ndarray is never read batch by batch: skip the type probes on the common call
        if type(x) is not np.ndarray and (_batches.is_batch_source(x) or _batches.is_dask_array(x)):
            return self._call_keeping_state(lambda: self._predict_batches(x, batch_size, steps))
        if steps is not None:
            raise ValueError("steps applies to generators, PyDatasets, iterables and dask arrays")

        def run():
            xs = self._prepare_x(x)
            return _warn_non_finite(self, xs, self._native.predict(xs, min(batch_size, len(xs))))

        return self._call_keeping_state(run)

    def _predict_batches(self, x, batch_size, steps):
        epochs_iter = _batches.Epochs(
            self._stream_source(x, None, "predict", batch_size, False), steps
        )
        kind = epochs_iter.src.kind
        outs = []
        for raw in epochs_iter.epoch(0):
            xs, _, _ = self._stream_batch(raw, kind, False)
            outs.append(_warn_non_finite(self, xs, self._native.predict(xs, len(xs))))
        if not outs:
            raise ValueError(f"predict: the {kind} yielded no batches")
        return outs[0] if len(outs) == 1 else np.concatenate(outs)

    def __call__(self, x):
        return self.predict(x)

    # -- weights, summary, persistence -----------------------------------------------------
    def __getstate__(self):
        """What ``pickle``, ``copy`` and ``joblib`` keep: the architecture config, the
        compile settings (optimizer config at its current learning rate, loss, metrics), each
        layer's ``trainable`` flag and, once built, the native training state (weights,
        optimizer moments and step counters, shuffling position) behind a SHA-256 digest, so
        that a copy predicts and continues ``fit`` with the original's bits. The training
        history and callbacks are not kept."""
        if self._training_thread is not None:
            raise RuntimeError("cannot pickle or copy a model while it is training")
        compiled = None
        if self._compiled is not None:
            compiled = {
                "optimizer": optimizers_module.serialize(self.optimizer),
                "loss": self._compiled[1],
                "metrics": self._metrics_arg,
            }
        native = self._native
        return {
            "format": _PICKLE_FORMAT,
            "config": self.get_config(),
            "trainable": [bool(getattr(layer, "trainable", True)) for layer in self.layers],
            "compiled": compiled,
            "trainable_mask": self._trainable_mask,
            "learning_rate": None if native is None or compiled is None else native.learning_rate,
            "state": None if native is None else bytes(native.state_bytes()),
        }

    def __setstate__(self, state):
        """Rebuilds from ``__getstate__``'s dict; a damaged or foreign state is a
        ``ValueError``."""
        if not isinstance(state, dict) or state.get("format") != _PICKLE_FORMAT:
            raise ValueError(
                "not a pickled rustyml Sequential (damaged, or written by a newer rustyml)"
            )
        try:
            fresh = type(self).from_config(state["config"])
            self.__dict__.update(fresh.__dict__)
            for layer, flag in zip(self.layers, state["trainable"]):
                layer.trainable = bool(flag)
            data = state["state"]
            if data is not None:
                self.build()
            compiled = state["compiled"]
            if compiled is not None:
                self.compile(
                    compiled["optimizer"], json.loads(compiled["loss"]), metrics=compiled["metrics"]
                )
            if data is not None:
                if state["learning_rate"] is not None:
                    self._native.learning_rate = state["learning_rate"]
                mask = state["trainable_mask"]
                if mask is not None:
                    self._native.set_trainable(list(mask))
                    self._trainable_mask = list(mask)
                self._native.load_state_bytes(data)
        except (KeyError, TypeError, AttributeError, IndexError, json.JSONDecodeError) as exc:
            raise ValueError(f"unreadable pickled Sequential: {exc!r}") from None

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
                arrays.append(_float32_contiguous(a))
        self._built().set_weights(arrays)

    def _weights_by_trainability(self):
        native = self._built()
        return _split_by_trainability(self.layers, native.get_weights(), native.weight_names())

    @property
    def weights(self):
        """Every layer's weight arrays (``get_weights``), as Keras's ``model.weights``."""
        return self.get_weights()

    @property
    def trainable_weights(self):
        return self._weights_by_trainability()[0]

    @property
    def non_trainable_weights(self):
        return self._weights_by_trainability()[1]

    def get_layer(self, name=None, index=None):
        """The layer called ``name``, or the one at ``index`` (Keras's ``get_layer``)."""
        return _get_layer(self.layers, name, index)

    @property
    def learning_rate(self):
        self._check_compiled()
        return self._built().learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        self._check_compiled()
        self._built()
        # through the optimizer, so that model.optimizer.learning_rate reads it back
        self.optimizer.learning_rate = value

    def _optimizer_learning_rate_changed(self, optimizer):
        """Called by an optimizer compiled into this model when its learning rate is set."""
        if self._native is not None and getattr(self, "optimizer", None) is optimizer:
            self._native.learning_rate = optimizer.learning_rate

    def count_params(self):
        return sum(row[3] for row in self._built().layer_summaries())

    def summary(self, print_fn=print):
        rows = self._built().layer_summaries()
        trainable = sum(a.size for a in self.trainable_weights)
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
        total = sum(r[3] for r in rows)
        lines.append("=" * 65)
        lines.append(f"Total params: {total:,}")
        lines.append(f"Trainable params: {trainable:,}")
        lines.append(f"Non-trainable params: {total - trainable:,}")
        lines.append("-" * 65)
        for line in lines:
            print_fn(line)

    def _layer_weight_counts(self):
        """How many weight arrays each layer has (``get_weights`` lists them in order)."""
        return [len(names) for names in self._built().weight_names()]

    def to_json(self, **kwargs):
        """Keras 3's JSON of the built model (what ``keras.models.model_from_json`` reads)."""
        from rustyml.keras import _keras_format

        return json.dumps(_keras_format.model_to_keras(self), **kwargs)

    def load_weights(self, filepath):
        """Loads a Keras 3 ``.weights.h5`` file (written by Keras or ``save_weights``) into
        this built model; a file that does not fit it is refused and nothing changes."""
        from rustyml.keras import _keras_format

        _keras_format.load_weights(self, filepath)

    def save(self, path):
        """One safetensors file: the weights as tensors, the architecture in its metadata and
        a SHA-256 digest of both (checked by ``load``). A path ending in ``.keras`` is written
        as Keras 3's ``.keras`` archive instead (config, compile settings, weights; see
        ``rustyml.keras._keras_format``).

        ``path`` may be a symlink (its target is written); a FIFO, device or directory there
        is refused. The file is written to a temporary file beside it and renamed into place,
        so a failed save leaves an earlier file whole."""
        self._built()  # an unbuilt model is refused before anything is written
        self._save_file(path)

    def _compile_metadata(self):
        return {"loss": self._compiled[1], "metrics": json.dumps(self._metric_specs)}

    @classmethod
    def load(cls, path):
        """Rebuild a model written by ``save``; predicts bit-identically. The compiled
        optimizer, loss and (named) metrics come back with it.

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
            for i in json.loads(meta.get("frozen_layers", "[]")):
                model.layers[i].trainable = False
            model.build()
            if "optimizer" in meta and "loss" in meta:
                metrics = json.loads(meta.get("metrics", "[]"))
                model.compile(
                    json.loads(meta["optimizer"]), json.loads(meta["loss"]), metrics=metrics
                )
            model.set_weights(weights)
        except (ValueError, KeyError, TypeError, IndexError, AttributeError, RecursionError) as exc:
            raise ValueError(
                f"{path}: unreadable model architecture, compile state or weights: {exc}"
            ) from None
        return model


# statistics, never trained: BatchNormalization's moving ones, Normalization's adapted ones
# a batch size that takes every row at once (the calls cap it at the row count)
_ONE_BATCH = 2**31 - 1

_MOVING = frozenset({"running_mean", "running_var", "mean", "variance", "count"})


def _split_by_trainability(layers, arrays, names):
    """``(trainable, non_trainable)`` weight arrays as Keras lists them: a frozen layer's
    weights and every layer's moving statistics are non-trainable. ``names`` holds each
    layer's weight names, ``arrays`` every weight in the same order."""
    trainable, frozen = [], []
    it = iter(arrays)
    for layer, layer_names in zip(layers, names):
        on = bool(getattr(layer, "trainable", True))
        for name in layer_names:
            a = next(it)
            (trainable if on and name not in _MOVING else frozen).append(a)
    return trainable, frozen


def _get_layer(layers, name, index):
    """Keras's ``get_layer``: by name, or by position (negative counts from the end)."""
    if index is not None:
        if name is not None:
            raise ValueError("get_layer: give a name or an index, not both")
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise ValueError(f"get_layer: index must be an integer, got {index!r}")
        if not -len(layers) <= index < len(layers):
            raise ValueError(f"get_layer: index {index} is out of range for {len(layers)} layers")
        return layers[index]
    if name is None:
        raise ValueError("get_layer: provide a layer name or an index")
    for layer in layers:
        if layer.name == name:
            return layer
    raise ValueError(
        f"No such layer: {name}. Existing layers are: {[layer.name for layer in layers]}"
    )


def _split_point(n, validation_split):
    """Where Keras splits ``n`` samples for ``validation_split``: the first
    ``floor(n (1 - split))`` train, the rest validate."""
    split_at = int(np.floor(n * (1.0 - float(validation_split))))
    if split_at in (0, n):
        raise ValueError(
            f"validation_split={validation_split} leaves no samples on one side of {n} "
            "(provide more data or another split)"
        )
    return split_at


def _refuse_weighted_metrics(weighted_metrics):
    """Keras's ``compile(weighted_metrics=)`` (metrics weighted by the sample weights) is
    not implemented; an empty value is accepted."""
    if weighted_metrics:
        raise ValueError(
            "compile(weighted_metrics=...) is not supported by rustyml: metrics are computed "
            "unweighted, as Keras computes compile(metrics=...); the loss is weighted by "
            "sample_weight / class_weight"
        )


def _optional_steps(value, name):
    return None if value is None else _int_arg(value, name, 1)


def _attach_callbacks(model, cbs):
    """``fit``'s callbacks with a fresh ``History`` appended, each pointed at ``model``, and
    the model ready to train (``stop_training`` cleared)."""
    history = callbacks_module.History()
    cbs = [*cbs, history]
    for cb in cbs:
        if hasattr(cb, "set_model"):
            cb.set_model(model)
        else:
            cb.model = model
    model.stop_training = False
    return cbs, history


def _check_callbacks(callbacks):
    if callbacks is None:
        return []
    if isinstance(callbacks, (str, bytes)) or not isinstance(callbacks, (list, tuple)):
        if hasattr(callbacks, "on_epoch_end") or isinstance(callbacks, callbacks_module.Callback):
            callbacks = [callbacks]
        else:
            raise TypeError(f"callbacks must be a list of Callback objects, got {callbacks!r}")
    hooks = ("on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end", "set_model")
    for cb in callbacks:
        if isinstance(cb, (str, bytes, numbers.Number)) or not any(hasattr(cb, h) for h in hooks):
            raise TypeError(
                f"callbacks must be Callback objects (with on_epoch_end etc.), got {cb!r}"
            )
    return list(callbacks)


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


def _call(cbs, hook, *args):
    for cb in cbs:
        fn = getattr(cb, hook, None)
        if fn is not None:
            fn(*args)
