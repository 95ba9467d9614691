"""``keras.activations``: layers take activations by name here (``activation="relu"``)."""

from rustyml.keras._missing import unknown_attribute

__getattr__ = unknown_attribute(__name__)
__all__ = []
