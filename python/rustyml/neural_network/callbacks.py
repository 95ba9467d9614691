"""Keras-style training callbacks. Any object with Keras's hook methods works as a callback;
these are the common ones."""

import csv
import math
import os
import warnings

import numpy as np


class Callback:
    """Keras's hooks; ``self.model`` is set by ``fit``."""

    model = None

    def set_model(self, model):
        self.model = model

    def on_train_begin(self, logs=None):
        pass

    def on_train_end(self, logs=None):
        pass

    def on_epoch_begin(self, epoch, logs=None):
        pass

    def on_epoch_end(self, epoch, logs=None):
        pass


def _better(mode, monitor):
    if mode == "auto":
        mode = "max" if ("acc" in monitor or monitor.endswith("accuracy")) else "min"
    if mode not in ("min", "max"):
        raise ValueError(f"mode must be 'auto', 'min' or 'max', got {mode!r}")
    return (lambda a, b: a < b) if mode == "min" else (lambda a, b: a > b), mode


class EarlyStopping(Callback):
    """Stops training when ``monitor`` has not improved by ``min_delta`` for ``patience``
    epochs; with ``restore_best_weights`` the best epoch's weights are put back. With a
    ``baseline``, an epoch counts as progress only once it also beats the baseline (Keras's
    rule); ``verbose`` prints Keras's messages when training stops and weights come back."""

    def __init__(
        self,
        monitor="val_loss",
        min_delta=0.0,
        patience=0,
        verbose=0,
        mode="auto",
        baseline=None,
        restore_best_weights=False,
        start_from_epoch=0,
    ):
        self.monitor = monitor
        self.min_delta = abs(float(min_delta))
        self.patience = int(patience)
        self.verbose = verbose
        self.baseline = None if baseline is None else float(baseline)
        self.restore_best_weights = bool(restore_best_weights)
        self.start_from_epoch = int(start_from_epoch)
        _, self.mode = _better(mode, monitor)
        self.stopped_epoch = 0

    def on_train_begin(self, logs=None):
        self.wait = 0
        self.best = None
        self.best_weights = None
        self.best_epoch = 0
        self.stopped_epoch = 0

    def _is_improvement(self, current, reference):
        if reference is None:
            return True
        if self.mode == "min":
            return current < reference - self.min_delta
        return current > reference + self.min_delta

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(
                f"Early stopping conditioned on metric `{self.monitor}` which is not "
                f"available. Available metrics are: {','.join(logs)}",
                stacklevel=2,
            )
            return
        if epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            # never set yet: the current weights are the best so far
            self.best_weights = self.model.get_weights()
            self.best_epoch = epoch
        self.wait += 1
        if self._is_improvement(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self._is_improvement(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")
        # Keras restores the best epoch's weights whether training stopped early or ran to
        # its last epoch
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print(
                    "Restoring model weights from the end of the best epoch: "
                    f"{self.best_epoch + 1}."
                )
            self.model.set_weights(self.best_weights)


class ModelCheckpoint(Callback):
    """Saves the model (``save``), or only its weights (``save_weights``, to a
    ``.weights.h5`` path), to ``filepath`` formatted with ``epoch`` and the logs after each
    epoch; with ``save_best_only`` only when ``monitor`` beats the best value so far
    (starting from ``initial_value_threshold``). ``verbose`` prints Keras's messages."""

    def __init__(
        self,
        filepath,
        monitor="val_loss",
        verbose=0,
        save_best_only=False,
        save_weights_only=False,
        mode="auto",
        save_freq="epoch",
        initial_value_threshold=None,
    ):
        self.filepath = os.fspath(filepath)
        self.monitor = monitor
        self.verbose = verbose
        self.save_best_only = bool(save_best_only)
        self.save_weights_only = bool(save_weights_only)
        self._improves, self.mode = _better(mode, monitor)
        self.initial_value_threshold = initial_value_threshold
        if isinstance(save_freq, int) and not isinstance(save_freq, bool):
            raise NotImplementedError(
                "ModelCheckpoint(save_freq=<number of batches>) is not implemented in "
                "rustyml (callbacks see epochs, not batches): use save_freq='epoch'"
            )
        if save_freq != "epoch":
            raise ValueError(
                f"Unrecognized save_freq: {save_freq}. Expected save_freq are 'epoch' or "
                "integer values"
            )
        self.save_freq = save_freq
        if self.save_weights_only and not self.filepath.endswith(".weights.h5"):
            raise ValueError(
                "When using `save_weights_only=True` in `ModelCheckpoint`, the filepath "
                "provided must end in `.weights.h5` (Keras weights format). Received: "
                f"filepath={self.filepath}"
            )

    def on_train_begin(self, logs=None):
        self.best = self.initial_value_threshold

    def _should_save(self, epoch, logs, path):
        if not self.save_best_only:
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1}: saving model to {path}")
            return True
        current = logs.get(self.monitor)
        if current is None:
            # Keras saves anyway, with this warning
            warnings.warn(f"Can save best model only with {self.monitor} available.", stacklevel=3)
            return True
        shown = "None" if self.best is None else f"{self.best:.5f}"
        if self.best is None or self._improves(current, self.best):
            if self.verbose > 0:
                print(
                    f"\nEpoch {epoch + 1}: {self.monitor} improved from {shown} to "
                    f"{current:.5f}, saving model to {path}"
                )
            self.best = current
            return True
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: {self.monitor} did not improve from {shown}")
        return False

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        path = self.filepath.format(epoch=epoch + 1, **logs)
        if not self._should_save(epoch, logs, path):
            return
        folder = os.path.dirname(path)
        if folder:
            os.makedirs(folder, exist_ok=True)
        if self.save_weights_only:
            self.model.save_weights(path)
        else:
            self.model.save(path)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: finished saving model to {path}")


class LearningRateScheduler(Callback):
    """Sets the learning rate to ``schedule(epoch, lr)`` before each epoch."""

    def __init__(self, schedule, verbose=0):
        self.schedule = schedule
        self.verbose = verbose

    def on_epoch_begin(self, epoch, logs=None):
        lr = float(self.schedule(epoch, self.model.learning_rate))
        if not (lr >= 0.0 and math.isfinite(lr)):
            raise ValueError(f"LearningRateScheduler: schedule returned {lr!r} for epoch {epoch}")
        self.model.learning_rate = lr
        if self.verbose:
            print(f"Epoch {epoch + 1}: LearningRateScheduler setting learning rate to {lr}.")


class ReduceLROnPlateau(Callback):
    """Multiplies the learning rate by ``factor`` once ``monitor`` has not improved by
    ``min_delta`` for ``patience`` epochs, then waits ``cooldown`` epochs; never below
    ``min_lr``. Adds ``learning_rate`` to each epoch's logs, as Keras does."""

    def __init__(
        self,
        monitor="val_loss",
        factor=0.1,
        patience=10,
        verbose=0,
        mode="auto",
        min_delta=1e-4,
        cooldown=0,
        min_lr=0.0,
    ):
        if factor >= 1.0:
            raise ValueError(
                f"ReduceLROnPlateau does not support a factor >= 1.0. Received factor={factor}"
            )
        self.monitor = monitor
        self.factor = float(factor)
        self.patience = int(patience)
        self.verbose = verbose
        self.min_delta = abs(float(min_delta))
        self.cooldown = int(cooldown)
        self.min_lr = float(min_lr)
        _, self.mode = _better(mode, monitor)
        self._reset()

    def _reset(self):
        self.best = None
        self.cooldown_counter = 0
        self.wait = 0

    def on_train_begin(self, logs=None):
        self._reset()

    def _is_improvement(self, current):
        if self.best is None:
            return True
        if self.mode == "min":
            return current + self.min_delta < self.best
        return current - self.min_delta > self.best

    def on_epoch_end(self, epoch, logs=None):
        if logs is None:
            logs = {}
        logs["learning_rate"] = float(self.model.learning_rate)
        current = logs.get(self.monitor)
        if current is None:
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self._is_improvement(current):
            self.best = current
            self.wait = 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                old_lr = float(self.model.learning_rate)
                # Keras compares with min_lr rounded to float32 (its variables' type).
                if old_lr > float(_as_float32(self.min_lr)):
                    new_lr = max(old_lr * self.factor, self.min_lr)
                    self.model.learning_rate = new_lr
                    if self.verbose > 0:
                        print(
                            f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate "
                            f"to {new_lr}."
                        )
                    self.cooldown_counter = self.cooldown
                    self.wait = 0


def _as_float32(value):
    return np.float32(value)


class CSVLogger(Callback):
    """Writes one CSV row per epoch: ``epoch`` and the logs in sorted key order (with the
    ``val_`` columns added when the first epoch has none), as Keras does; ``append``
    continues an existing file without a second header."""

    def __init__(self, filename, separator=",", append=False):
        self.filename = os.fspath(filename)
        self.sep = separator
        self.append = bool(append)
        self.csv_file = None
        self.writer = None
        self.keys = None
        self.append_header = True

    def on_train_begin(self, logs=None):
        if self.append:
            if os.path.exists(self.filename):
                with open(self.filename) as f:
                    self.append_header = not bool(len(f.readline()))
            mode = "a"
        else:
            mode = "w"
        if self.csv_file and not self.csv_file.closed:
            self.csv_file.close()
        self.csv_file = open(self.filename, mode, newline="")  # noqa: SIM115 - kept open per epoch
        self.writer = None
        self.keys = None

    @staticmethod
    def _cell(value):
        if isinstance(value, str):
            return value
        if hasattr(value, "__iter__") and getattr(value, "ndim", 1) != 0:
            return '"[' + ", ".join(map(str, value)) + ']"'
        return value

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs)
            if self.keys and not any(k.startswith("val_") for k in self.keys):
                self.keys.extend([f"val_{k}" for k in self.keys])
        if self.writer is None:
            self.writer = csv.DictWriter(
                self.csv_file, fieldnames=["epoch", *self.keys], delimiter=self.sep
            )
            if self.append_header:
                self.writer.writeheader()
        row = {"epoch": epoch}
        row.update((key, self._cell(logs.get(key, "NA"))) for key in self.keys)
        self.writer.writerow(row)
        self.csv_file.flush()

    def on_train_end(self, logs=None):
        if self.csv_file and not self.csv_file.closed:
            self.csv_file.close()
        self.writer = None


class TerminateOnNaN(Callback):
    """Stops training at the first batch whose loss is NaN or infinite: that batch's step
    stays applied (the weights are left as it made them), the epoch is closed and logged
    (validation included), and ``fit`` returns. With ``raise_error=True`` a
    ``RuntimeError`` is raised there instead (no further epoch-end or train-end hooks run).

    Without this callback ``fit`` raises ``ValueError`` on a non-finite loss and puts the
    weights back to their values before the call."""

    def __init__(self, raise_error=False):
        self.raise_error = bool(raise_error)

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is None or np.isfinite(loss):
            return
        if self.raise_error:
            raise RuntimeError(
                f"TerminateOnNaN: the loss became {loss} at batch {batch}; training stopped"
            )
        print(f"Batch {batch}: the loss became {loss}, stopping training")
        self.model.stop_training = True

    on_train_batch_end = on_batch_end


class History(Callback):
    """``history[name]`` is the list of per-epoch values of every logged quantity."""

    def __init__(self):
        self.history = {}
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)


__all__ = [
    "CSVLogger",
    "Callback",
    "EarlyStopping",
    "History",
    "LearningRateScheduler",
    "ModelCheckpoint",
    "ReduceLROnPlateau",
    "TerminateOnNaN",
]
