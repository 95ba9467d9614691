"""Preprocessing: scikit-learn-style scalers, the original crate's ``standardize`` and
``normalize``, ``train_test_split`` and label encoding (mirrors ``rustyml::utils``)."""

from rustyml.utils._functions import normalize, standardize, train_test_split
from rustyml.utils._label_encoder import LabelEncoder, to_categorical, to_sparse_categorical
from rustyml.utils._max_abs_scaler import MaxAbsScaler
from rustyml.utils._min_max_scaler import MinMaxScaler
from rustyml.utils._normalizer import Normalizer
from rustyml.utils._robust_scaler import RobustScaler
from rustyml.utils._standard_scaler import StandardScaler

__all__ = [
    "LabelEncoder",
    "MaxAbsScaler",
    "MinMaxScaler",
    "Normalizer",
    "RobustScaler",
    "StandardScaler",
    "normalize",
    "standardize",
    "to_categorical",
    "to_sparse_categorical",
    "train_test_split",
]
