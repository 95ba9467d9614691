"""Exceptions raised by rustyml."""


class NotFittedError(ValueError, AttributeError):
    """An estimator was used before ``fit`` (same bases as scikit-learn's)."""
