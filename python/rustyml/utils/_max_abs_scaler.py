from rustyml import _native
from rustyml.utils._scaler_base import (
    InverseMixin,
    PartialFitMixin,
    TransformerBase,
    fitted_attribute,
)


class MaxAbsScaler(PartialFitMixin, InverseMixin, TransformerBase):
    """Divide each feature by its largest absolute value (an all-zero feature by 1)."""

    _native_class = _native.utils.MaxAbsScaler

    def __init__(self, *, copy=True):
        self.copy = copy

    max_abs_ = fitted_attribute("max_abs_", "Per-feature maximum absolute value.")
    scale_ = fitted_attribute("scale_", "Per-feature divisor.")
    n_samples_seen_ = fitted_attribute("n_samples_seen_", "Samples seen by the fits.")
