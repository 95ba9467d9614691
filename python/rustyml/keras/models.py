"""``keras.models``: ``Model`` (the functional API), ``Sequential``, ``load_model``."""

import os

from rustyml import _native
from rustyml.keras import _keras_format, _seeding
from rustyml.keras._functional import Model
from rustyml.keras._missing import stand_ins, unknown_attribute
from rustyml.keras.layers import InputSpec
from rustyml.neural_network import Sequential as _Sequential


class Sequential(_Sequential):
    """Keras's ``Sequential``: a list of layers, optionally starting with ``keras.Input``.

    Without a ``seed`` the weights are drawn from the seed stream
    ``keras.utils.set_random_seed`` starts (so a seeded program builds the same weights
    each run), or from fresh entropy when no seed was set.
    """

    def __init__(self, layers=None, trainable=True, name=None, seed=None):
        if seed is None:
            seed = _seeding.next_seed()
        super().__init__(None, seed=seed, name=name)
        self.trainable = trainable
        for layer in layers or []:
            self.add(layer)

    def add(self, layer):
        if isinstance(layer, InputSpec):
            if self.layers or self._input_shape is not None:
                raise ValueError("keras.Input must be the first entry of a Sequential")
            self._input_shape = tuple(layer.shape[1:])
            return
        if self._native is None:
            super().add(layer)
            return
        # Keras lets a built model grow: rebuild with the new layer, keeping every weight
        # the existing layers had (they come first in the weight list).
        weights = self.get_weights()
        self._rebuild(lambda: self.layers.append(layer), weights)

    def pop(self):
        """Remove the last layer; the others keep their weights."""
        if not self.layers:
            raise TypeError("There are no layers in the model.")
        if self._native is None:
            return self.layers.pop()
        weights = self.get_weights()
        popped = []
        self._rebuild(lambda: popped.append(self.layers.pop()), weights)
        return popped[0]

    def _rebuild(self, change, weights):
        """Apply ``change`` to the layer list and build again, restoring the leading
        ``weights``; on any error the model is left as it was."""
        layers_before, native_before = list(self.layers), self._native
        try:
            change()
            self._native = None
            if self.layers:
                self.build(self._input_shape)
                fresh = self.get_weights()
                kept = weights[: min(len(weights), len(fresh))]
                self.set_weights(kept + fresh[len(kept) :])
        except Exception:
            self.layers[:], self._native = layers_before, native_before
            raise


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """A model saved by ``model.save``: a Keras 3 ``.keras`` archive (written by Keras or by
    rustyml; see ``docs/KERAS.md`` for what is read), or rustyml's safetensors file.
    ``compile=False`` leaves the model uncompiled."""
    path = os.fspath(filepath)
    if custom_objects:
        raise NotImplementedError("load_model(custom_objects=) is not implemented in rustyml")
    if path.endswith(".keras"):
        return _keras_format.load_archive(path, compile=compile)
    if path.endswith(".h5"):
        raise NotImplementedError(
            f"reading Keras 2's legacy .h5 model files ({path}) is not implemented in rustyml; "
            "it reads Keras 3's .keras archives and .weights.h5 files"
        )
    meta, weights, verified = _native.neural_network.load_safetensors(path)
    if meta.get("format") == _FUNCTIONAL_FORMAT:
        model = Model._from_file(path, meta, weights, verified)
    else:
        model = Sequential.load(path)
    if not compile:
        model._compiled = None
    return model


def save_model(model, filepath, overwrite=True, **kwargs):
    """``model.save(filepath)``: a ``.keras`` path gives Keras 3's archive, any other
    rustyml's safetensors file."""
    if kwargs:
        raise NotImplementedError(f"save_model arguments {sorted(kwargs)} are not implemented")
    if not overwrite and os.path.exists(os.fspath(filepath)):
        raise FileExistsError(f"save_model: {filepath} exists and overwrite=False")
    model.save(filepath)


def model_from_json(json_string, custom_objects=None):
    """The model Keras's ``model.to_json()`` describes, with fresh weights."""
    if custom_objects:
        raise NotImplementedError("model_from_json(custom_objects=) is not implemented")
    return _keras_format.model_from_json(json_string)


_FUNCTIONAL_FORMAT = "rustyml.functional.v1"
globals().update(stand_ins(__name__, ["clone_model"]))
__getattr__ = unknown_attribute(__name__)
__all__ = ["Model", "Sequential", "load_model", "model_from_json", "save_model"]
