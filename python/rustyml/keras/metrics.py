"""``keras.metrics``: metrics are given to ``compile`` by name here (``"accuracy"``,
``"mae"``, ``"mse"``); Keras's metric objects are not implemented yet."""

from rustyml.keras._missing import stand_ins, unknown_attribute

globals().update(
    stand_ins(
        __name__,
        [
            "Accuracy",
            "BinaryAccuracy",
            "CategoricalAccuracy",
            "SparseCategoricalAccuracy",
            "TopKCategoricalAccuracy",
            "AUC",
            "Precision",
            "Recall",
            "MeanAbsoluteError",
            "MeanSquaredError",
            "RootMeanSquaredError",
            "Mean",
            "Metric",
        ],
        {"Accuracy": 'give metrics by name, e.g. metrics=["accuracy"]'},
    )
)
__getattr__ = unknown_attribute(__name__)
__all__ = []
