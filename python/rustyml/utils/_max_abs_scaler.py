from __future__ import annotations

from rustyml import _native
from rustyml.machine_learning._fitted import F64, Fitted
from rustyml.utils._scaler_base import InverseMixin, PartialFitMixin, TransformerBase


class MaxAbsScaler(PartialFitMixin, InverseMixin, TransformerBase):
    """Divide each feature by its largest absolute value (an all-zero feature by 1)."""

    _native_class = _native.utils.MaxAbsScaler

    def __init__(self, *, copy: bool = True) -> None:
        self._store_params(locals())

    max_abs_ = Fitted[F64]("Per-feature maximum absolute value.")
    scale_ = Fitted[F64]("Per-feature divisor.")
    n_samples_seen_ = Fitted[int]("Samples seen by the fits.")
