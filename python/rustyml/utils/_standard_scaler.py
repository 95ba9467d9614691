from rustyml import _native
from rustyml.utils._scaler_base import (
    InverseMixin,
    PartialFitMixin,
    TransformerBase,
    fitted_attribute,
)


class StandardScaler(PartialFitMixin, InverseMixin, TransformerBase):
    """Standardise features: ``z = (x - mean_) / scale_``.

    Like scikit-learn's: ``var_`` is the population variance, ``scale_`` its square root
    with near-constant features (variance within rounding of zero) given a scale of 1, so no
    division by ~0 and no NaN ever comes out. NaN or infinity in ``X`` raises ``ValueError``.
    Statistics are deterministic blocked Welford/Chan moments (same bits at any thread count).
    """

    _native_class = _native.utils.StandardScaler
    _native_params = ("with_mean", "with_std")

    def __init__(self, *, copy=True, with_mean=True, with_std=True):
        self.copy = copy
        self.with_mean = with_mean
        self.with_std = with_std

    mean_ = fitted_attribute("mean_", "Per-feature mean (None without centring or scaling).")
    var_ = fitted_attribute("var_", "Per-feature population variance (None unless with_std).")
    scale_ = fitted_attribute("scale_", "Per-feature divisor (None unless with_std).")
    n_samples_seen_ = fitted_attribute("n_samples_seen_", "Samples seen by the fits.")
