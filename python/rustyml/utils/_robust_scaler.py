from rustyml import _native
from rustyml.utils._scaler_base import InverseMixin, TransformerBase, fitted_attribute


class RobustScaler(InverseMixin, TransformerBase):
    """Centre on the median and divide by the ``quantile_range`` spread (NumPy's linear
    percentiles; a zero spread counts as 1): robust to outliers."""

    _native_class = _native.utils.RobustScaler

    def __init__(
        self, *, with_centering=True, with_scaling=True, quantile_range=(25.0, 75.0), copy=True
    ):
        self.with_centering = with_centering
        self.with_scaling = with_scaling
        self.quantile_range = quantile_range
        self.copy = copy

    def _new_native(self):
        q_min, q_max = self.quantile_range
        return self._build_native(
            bool(self.with_centering), bool(self.with_scaling), (float(q_min), float(q_max))
        )

    center_ = fitted_attribute("center_", "Per-feature median (None without centring).")
    scale_ = fitted_attribute("scale_", "Per-feature quantile range (None without scaling).")
