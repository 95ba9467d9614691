"""``keras.callbacks``."""

from rustyml.keras._missing import stand_ins, unknown_attribute
from rustyml.neural_network.callbacks import (
    Callback,
    CSVLogger,
    EarlyStopping,
    History,
    LearningRateScheduler,
    ModelCheckpoint,
    ReduceLROnPlateau,
)

globals().update(
    stand_ins(
        __name__,
        [
            "TerminateOnNaN",
            "TensorBoard",
            "BackupAndRestore",
            "LambdaCallback",
            "ProgbarLogger",
            "RemoteMonitor",
        ],
    )
)
__getattr__ = unknown_attribute(__name__)
__all__ = [
    "CSVLogger",
    "Callback",
    "EarlyStopping",
    "History",
    "LearningRateScheduler",
    "ModelCheckpoint",
    "ReduceLROnPlateau",
]
