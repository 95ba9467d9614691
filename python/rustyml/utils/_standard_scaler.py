from __future__ import annotations

from typing import Optional

from rustyml import _native
from rustyml.machine_learning._fitted import F64, Fitted
from rustyml.utils._scaler_base import InverseMixin, PartialFitMixin, TransformerBase


class StandardScaler(PartialFitMixin, InverseMixin, TransformerBase):
    """Standardise features: ``z = (x - mean_) / scale_``.

    Like scikit-learn's: ``var_`` is the population variance, ``scale_`` its square root
    with near-constant features (variance within rounding of zero) given a scale of 1, so no
    division by ~0 and no NaN ever comes out. NaN or infinity in ``X`` raises ``ValueError``.
    Statistics are deterministic blocked Welford/Chan moments (same bits at any thread count).
    """

    _native_class = _native.utils.StandardScaler
    _native_params = ("with_mean", "with_std")

    def __init__(self, *, copy: bool = True, with_mean: bool = True, with_std: bool = True) -> None:
        self._store_params(locals())

    mean_ = Fitted[Optional[F64]]("Per-feature mean (None without centring or scaling).")
    var_ = Fitted[Optional[F64]]("Per-feature population variance (None unless with_std).")
    scale_ = Fitted[Optional[F64]]("Per-feature divisor (None unless with_std).")
    n_samples_seen_ = Fitted[int]("Samples seen by the fits.")
