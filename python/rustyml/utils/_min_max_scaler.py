from __future__ import annotations

from typing import Any

from rustyml import _native
from rustyml.machine_learning._fitted import F64, Fitted
from rustyml.utils._scaler_base import InverseMixin, PartialFitMixin, TransformerBase


class MinMaxScaler(PartialFitMixin, InverseMixin, TransformerBase):
    """Scale each feature onto ``feature_range``: ``x * scale_ + min_``.

    ``scale_ = (hi - lo) / data_range_`` with a constant feature's range counted as 1;
    ``clip=True`` clips transformed values to the range.
    """

    _native_class = _native.utils.MinMaxScaler

    def __init__(
        self, feature_range: tuple[float, float] = (0, 1), *, copy: bool = True, clip: bool = False
    ) -> None:
        self._store_params(locals())

    def _native_kwargs(self) -> dict[str, Any]:
        lo, hi = self.feature_range
        return {"feature_range": (float(lo), float(hi)), "clip": bool(self.clip)}

    data_min_ = Fitted[F64]("Per-feature minimum seen.")
    data_max_ = Fitted[F64]("Per-feature maximum seen.")
    data_range_ = Fitted[F64]("data_max_ - data_min_.")
    scale_ = Fitted[F64]("Per-feature factor.")
    min_ = Fitted[F64]("Per-feature offset.")
    n_samples_seen_ = Fitted[int]("Samples seen by the fits.")
