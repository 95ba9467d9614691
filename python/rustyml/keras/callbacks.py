"""``keras.callbacks``."""

from rustyml.keras._missing import stand_ins, unknown_attribute
from rustyml.neural_network.callbacks import (
    Callback,
    EarlyStopping,
    History,
    LearningRateScheduler,
    ModelCheckpoint,
)

globals().update(
    stand_ins(
        __name__,
        [
            "ReduceLROnPlateau",
            "CSVLogger",
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
__all__ = ["Callback", "EarlyStopping", "History", "LearningRateScheduler", "ModelCheckpoint"]
