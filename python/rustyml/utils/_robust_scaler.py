from __future__ import annotations

from typing import Any, Optional

from rustyml import _native
from rustyml.machine_learning._fitted import F64, Fitted
from rustyml.utils._scaler_base import InverseMixin, TransformerBase


class RobustScaler(InverseMixin, TransformerBase):
    """Centre on the median and divide by the ``quantile_range`` spread (NumPy's linear
    percentiles; a zero spread counts as 1): robust to outliers."""

    _native_class = _native.utils.RobustScaler

    def __init__(
        self,
        *,
        with_centering: bool = True,
        with_scaling: bool = True,
        quantile_range: tuple[float, float] = (25.0, 75.0),
        copy: bool = True,
    ) -> None:
        self._store_params(locals())

    def _native_kwargs(self) -> dict[str, Any]:
        q_min, q_max = self.quantile_range
        return {
            "with_centering": bool(self.with_centering),
            "with_scaling": bool(self.with_scaling),
            "quantile_range": (float(q_min), float(q_max)),
        }

    center_ = Fitted[Optional[F64]]("Per-feature median (None without centring).")
    scale_ = Fitted[Optional[F64]]("Per-feature quantile range (None without scaling).")
