"""``keras.saving``: ``load_model`` and ``save_model`` (Keras 3's ``.keras`` archives and
rustyml's own files)."""

from rustyml.keras._missing import stand_ins, unknown_attribute
from rustyml.keras.models import load_model, save_model

globals().update(stand_ins(__name__, ["register_keras_serializable", "get_custom_objects"]))
__getattr__ = unknown_attribute(__name__)
__all__ = ["load_model", "save_model"]
