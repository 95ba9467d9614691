from rustyml import _native
from rustyml.utils._scaler_base import (
    InverseMixin,
    PartialFitMixin,
    TransformerBase,
    fitted_attribute,
)


class MinMaxScaler(PartialFitMixin, InverseMixin, TransformerBase):
    """Scale each feature onto ``feature_range``: ``x * scale_ + min_``.

    ``scale_ = (hi - lo) / data_range_`` with a constant feature's range counted as 1;
    ``clip=True`` clips transformed values to the range.
    """

    _native_class = _native.utils.MinMaxScaler
    _native_params = ("feature_range", "clip")

    def __init__(self, feature_range=(0, 1), *, copy=True, clip=False):
        self.feature_range = feature_range
        self.copy = copy
        self.clip = clip

    def _new_native(self):
        lo, hi = self.feature_range
        return self._build_native((float(lo), float(hi)), bool(self.clip))

    data_min_ = fitted_attribute("data_min_", "Per-feature minimum seen.")
    data_max_ = fitted_attribute("data_max_", "Per-feature maximum seen.")
    data_range_ = fitted_attribute("data_range_", "data_max_ - data_min_.")
    scale_ = fitted_attribute("scale_", "Per-feature factor.")
    min_ = fitted_attribute("min_", "Per-feature offset.")
    n_samples_seen_ = fitted_attribute("n_samples_seen_", "Samples seen by the fits.")
