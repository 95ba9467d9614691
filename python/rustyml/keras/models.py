"""``keras.models``: ``Model`` (the functional API), ``Sequential``, ``load_model``."""

from rustyml import _native
from rustyml.keras import _seeding
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
    """A model saved by ``model.save`` (rustyml's safetensors file). Keras's ``.keras``
    archives are not read yet."""
    path = str(filepath)
    if path.endswith((".keras", ".h5")):
        raise NotImplementedError(
            f"reading Keras's own model files ({path}) is not implemented in rustyml yet; "
            "rustyml saves and loads .safetensors files"
        )
    if custom_objects:
        raise NotImplementedError("load_model(custom_objects=) is not implemented in rustyml")
    meta, weights, verified = _native.neural_network.load_safetensors(path)
    if meta.get("format") == _FUNCTIONAL_FORMAT:
        model = Model._from_file(path, meta, weights, verified)
    else:
        model = Sequential.load(path)
    if not compile:
        model._compiled = None
    return model


_FUNCTIONAL_FORMAT = "rustyml.functional.v1"
globals().update(stand_ins(__name__, ["clone_model", "model_from_json", "save_model"]))
__getattr__ = unknown_attribute(__name__)
__all__ = ["Model", "Sequential", "load_model"]
