"""``keras.callbacks``."""

from rustyml.keras._missing import stand_ins, unknown_attribute
from rustyml.neural_network import callbacks as _callbacks
from rustyml.neural_network.callbacks import *

globals().update(
    stand_ins(
        __name__,
        [
            "TensorBoard",
            "BackupAndRestore",
            "LambdaCallback",
            "ProgbarLogger",
            "RemoteMonitor",
        ],
    )
)
__getattr__ = unknown_attribute(__name__)
__all__ = list(_callbacks.__all__)
