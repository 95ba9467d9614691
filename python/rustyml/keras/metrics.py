"""``keras.metrics``: metric objects (``update_state`` / ``result`` / ``reset_state``), usable
in ``compile(metrics=[...])`` beside the names ``"accuracy"``, ``"mae"``, ``"mse"``."""

from rustyml.keras._missing import stand_ins, unknown_attribute
from rustyml.neural_network import metrics as _metrics
from rustyml.neural_network.metrics import *

globals().update(
    stand_ins(
        __name__,
        [
            "SparseTopKCategoricalAccuracy",
            "F1Score",
            "FBetaScore",
            "MeanIoU",
            "IoU",
            "PrecisionAtRecall",
            "RecallAtPrecision",
            "SensitivityAtSpecificity",
            "SpecificityAtSensitivity",
            "TruePositives",
            "TrueNegatives",
            "FalsePositives",
            "FalseNegatives",
            "R2Score",
            "Sum",
        ],
    )
)
__getattr__ = unknown_attribute(__name__)
__all__ = list(_metrics.__all__)
